/**
 * `/~projects/new` (create a project) and `/<project>/~fork` (fork one: a new project holding
 * every branch and tag of its origin), through the function of the API's Create route
 * (docs/compatibility.md#projects-endpoints item 12, `forkedFromId`). Both lead to the new project's page.
 */
import { deny } from '../../domain/actor.js';
import { createProject, getProject } from '../../domain/projects/index.js';
import { TextArea } from '../components/controls.js';
import { Field, PostForm } from '../components/forms.js';
import { Layout } from '../components/layout.js';
import { ProjectLayout } from '../components/project-layout.js';
import { redirect, submitForm, type PageContext, type PageModule, type PageResult, type ProjectPageContext } from '../page.js';
import { parentIdOf } from './settings/general.js';
import { Flash } from '../components/flash.js';

/** Creates the project the form describes (forking `forkOf` when given) and redirects to it; a refusal shows the form again. */
async function create(page: PageContext, show: (error: string) => PageResult, forkOf: number | null): Promise<PageResult> {
  return submitForm(
    page,
    async () =>
      createProject(page.ctx, {
        name: (page.form.name ?? '').trim(),
        parentId: await parentIdOf(page, page.form.parent),
        description: (page.form.description ?? '').trim() || null,
        forkedFromId: forkOf,
      }),
    async (id) => redirect(`/${(await getProject(page.ctx, id)).path}`),
    show,
  );
}

function ProjectForm({ page, action, button, values }: { page: PageContext; action: string; button: string; values: Record<string, string> }) {
  return (
    <PostForm page={page} action={action} label={button} class="settings-form">
      <Field name="name" label="Name" required value={values.name} autofocus />
      <Field name="parent" label="Parent project (path; empty for a root project)" value={values.parent} />
      <TextArea name="description" label="Description" value={values.description} />
      <p>
        <button type="submit">{button}</button>
      </p>
    </PostForm>
  );
}

function newProjectPage(page: PageContext, error: string | null) {
  return (
    <Layout page={page} title="New project" styles={['settings.css']}>
      <h1>New project</h1>
      <Flash error={error} />
      <ProjectForm page={page} action="/~projects/new" button="Create project" values={error ? page.form : { parent: page.query.parent ?? '' }} />
    </Layout>
  );
}

/** Forking needs read code on the project (the API's 401/403 otherwise). */
function checkForkable(page: ProjectPageContext): void {
  if (!page.permissions.readCode) deny(page.ctx.actor, 'Not authorized to fork this project');
}

function forkPage(page: ProjectPageContext, error: string | null) {
  return (
    <ProjectLayout page={page} tab="code" title="Fork" styles={['settings.css']}>
      <h1>{`Fork ${page.project.path}`}</h1>
      <p class="meta">The fork starts with every branch and tag of this project; pull requests can go back to it.</p>
      <Flash error={error} />
      <ProjectForm
        page={page}
        action={`/${page.project.path}/~fork`}
        button="Fork project"
        values={error ? page.form : { name: page.project.name, description: page.project.description ?? '' }}
      />
    </ProjectLayout>
  );
}

/** `/~projects/new` (signed-in users; creation rights checked by the domain) and `/<project>/~fork`. */
export const newProjectPages: PageModule = {
  pages: [
    { method: 'GET', path: '/~projects/new', access: 'user', handler: async (page) => newProjectPage(page, null) },
    { method: 'POST', path: '/~projects/new', access: 'user', handler: (page) => create(page, (error) => newProjectPage(page, error), null) },
  ],
  projectPages: [
    {
      method: 'GET',
      path: '/~fork',
      access: 'user',
      handler: async (page) => {
        checkForkable(page);
        return forkPage(page, null);
      },
    },
    {
      method: 'POST',
      path: '/~fork',
      access: 'user',
      handler: (page) => {
        checkForkable(page);
        return create(page, (error) => forkPage(page, error), page.project.id);
      },
    },
  ],
};
