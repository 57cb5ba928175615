/**
 * `/<project>/~settings`: the project's name, description, parent (moving the project), default
 * role and default branch, its Git LFS usage (docs/compatibility.md#git-lfs), a link to fork it, and its deletion — through the functions of the
 * API's Update Basic Info, default-branch and Delete routes (docs/compatibility.md#projects-endpoints items 13, 15, docs/compatibility.md#projects-repository-and-default-branch).
 */
import { lfsUsage } from '../../../domain/lfs/index.js';
import { deleteProject, getProject, grantableRoles, updateProject } from '../../../domain/projects/index.js';
import { projectByPath, revisionNames, setRepositoryDefaultBranch, trimSlashes } from '../../../domain/repositories/index.js';
import { BadRequest, NotFound } from '../../../errors.js';
import { Select, TextArea } from '../../components/controls.js';
import { Field, PostForm } from '../../components/forms.js';
import { formatBytes, formatCount } from '../../components/sizes.js';
import type { PageContext, ProjectPageRoute, ProjectPageContext } from '../../page.js';
import { chosenId, FormName, formValues, optionalText, SettingsLayout, settingsChange, settingsUrl } from './shared.js';

/**
 * The id of the project at `path` (a parent typed in a form; empty = none): visible to the
 * visitor, else BadRequest `Parent project not found: <path>`.
 */
export async function parentIdOf(page: PageContext, path: string | undefined): Promise<number | null> {
  const trimmed = trimSlashes((path ?? '').trim());
  if (trimmed === '') return null;
  try {
    return (await projectByPath(page.ctx, trimmed)).project.id;
  } catch (e) {
    if (e instanceof NotFound) throw new BadRequest(`Parent project not found: ${trimmed}`);
    throw e;
  }
}

async function show(page: ProjectPageContext, error: string | null) {
  const { project } = page;
  const [roles, names, parent, lfs] = await Promise.all([
    grantableRoles(page.ctx, project.id),
    page.permissions.readCode ? revisionNames(page.ctx, project) : null,
    project.parentId === null ? null : getProject(page.ctx, project.parentId),
    lfsUsage(page.ctx, project.id),
  ]);
  const general = formValues(page, error, 'general', {
    name: project.name,
    description: project.description ?? '',
    parent: parent?.path ?? '',
    defaultRoleId: String(project.defaultRoleId ?? ''),
  });
  const branch = formValues(page, error, 'default-branch', { defaultBranch: names?.defaultBranch ?? '' });
  const base = settingsUrl(page, 'general');
  return (
    <SettingsLayout page={page} section="general" error={error}>
      <PostForm page={page} action={base} label="General" class="settings-form">
        <FormName name="general" />
        <Field name="name" label="Name" required value={general.name} />
        <TextArea name="description" label="Description" value={general.description} />
        <Field name="parent" label="Parent project (path; empty for a root project)" value={general.parent} />
        <Select
          name="defaultRoleId"
          label="Default role (granted to every user who can sign in)"
          value={general.defaultRoleId}
          options={[{ value: '', label: 'None' }, ...roles.map((r) => ({ value: String(r.id), label: r.name }))]}
        />
        <p>
          <button type="submit">Save</button>
        </p>
      </PostForm>
      {names && names.branches.length > 0 && (
        <section aria-labelledby="default-branch">
          <h2 id="default-branch">Default branch</h2>
          <PostForm page={page} action={`${base}/default-branch`} label="Default branch" class="settings-form">
            <FormName name="default-branch" />
            <Select name="defaultBranch" label="Default branch" value={branch.defaultBranch} options={names.branches.map((b) => ({ value: b, label: b }))} />
            <p>
              <button type="submit">Change default branch</button>
            </p>
          </PostForm>
        </section>
      )}
      <section aria-labelledby="lfs-usage">
        <h2 id="lfs-usage">Git LFS</h2>
        <p>
          {lfs.objects === 0
            ? 'No files are stored with Git LFS.'
            : `${formatCount(lfs.objects, 'object', 'objects')} stored with Git LFS, ${formatBytes(lfs.bytes)} in all.`}
        </p>
      </section>
      <section aria-labelledby="fork">
        <h2 id="fork">Fork and child projects</h2>
        <p>
          <a href={`/${project.path}/~fork`}>Fork this project</a>
          {' · '}
          <a href={`/~projects/new?${new URLSearchParams({ parent: project.path })}`}>New child project</a>
        </p>
      </section>
      <section aria-labelledby="danger" class="danger-zone">
        <h2 id="danger">Delete this project</h2>
        <p>Deleting removes the project, its child projects, repositories, pull requests, issues and builds. This cannot be undone.</p>
        <PostForm page={page} action={`${base}/delete`} label="Delete this project" class="settings-form">
          <FormName name="delete" />
          <Field name="confirm" label={`Type the project path (${project.path}) to confirm`} required autocomplete="off" />
          <p>
            <button type="submit" class="danger">
              Delete project
            </button>
          </p>
        </PostForm>
      </section>
    </SettingsLayout>
  );
}

/** `/~settings` (GET, POST), `/~settings/default-branch` and `/~settings/delete` (POST). */
export const generalSettingsPages: ProjectPageRoute[] = [
  { method: 'GET', path: '/~settings', handler: (page) => show(page, null) },
  {
    method: 'POST',
    path: '/~settings',
    access: 'user',
    handler: async (page) => {
      let path = page.project.path;
      return settingsChange(
        page,
        show,
        async () => {
          await updateProject(page.ctx, page.project.id, {
            name: (page.form.name ?? '').trim(),
            description: optionalText(page, 'description'),
            parentId: await parentIdOf(page, page.form.parent),
            defaultRoleId: chosenId(page, 'defaultRoleId', 'role'),
          });
          path = (await getProject(page.ctx, page.project.id)).path;
        },
        () => `/${path}/~settings`,
      );
    },
  },
  {
    method: 'POST',
    path: '/~settings/default-branch',
    access: 'user',
    handler: (page) =>
      settingsChange(page, show, () => setRepositoryDefaultBranch(page.ctx, page.project.id, page.form.defaultBranch ?? ''), settingsUrl(page, 'general')),
  },
  {
    method: 'POST',
    path: '/~settings/delete',
    access: 'user',
    handler: (page) =>
      settingsChange(
        page,
        show,
        async () => {
          if ((page.form.confirm ?? '').trim() !== page.project.path)
            throw new BadRequest(`Type the project path (${page.project.path}) to confirm the deletion`);
          await deleteProject(page.ctx, page.project.id);
        },
        '/~projects',
      ),
  },
];
