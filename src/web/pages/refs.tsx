/**
 * `/<project>/~branches` and `/<project>/~tags`: the branches (default first, then the most
 * recently committed) and tags (most recent first) with their commit and date; writers get a
 * create form and a delete button per ref, run by the repository API's domain functions
 * (branch and tag protection included). A refused change shows the list again with the reason.
 */
import {
  branchSummaries,
  createBranch,
  createTag,
  deleteBranch,
  deleteTag,
  type RefSummary,
  revisionNames,
  tagSummaries,
} from '../../domain/repositories/index.js';
import { codeUrl, commitUrl, DateTime, subjectOf } from '../components/code.js';
import { Field, PostForm, InlineForm } from '../components/forms.js';
import { ProjectLayout } from '../components/project-layout.js';
import { redirect, submitForm, type PageModule, type PageResult, type ProjectPageContext } from '../page.js';
import { Flash } from '../components/flash.js';

type Kind = 'branch' | 'tag';

const TITLES: Record<Kind, string> = { branch: 'Branches', tag: 'Tags' };
const TAB: Record<Kind, 'branches' | 'tags'> = { branch: 'branches', tag: 'tags' };

function RefList({ page, kind, refs, defaultBranch }: { page: ProjectPageContext; kind: Kind; refs: RefSummary[]; defaultBranch: string | null }) {
  const project = page.project.path;
  if (refs.length === 0) return <p class="empty">{kind === 'branch' ? 'No branches yet.' : 'No tags yet.'}</p>;
  return (
    <ul class="list refs" aria-label={TITLES[kind]}>
      {refs.map(({ name, commit }) => (
        <li key={name} class="ref">
          <span class="ref-main">
            <a href={codeUrl(project, 'files', name)} class="ref-name">
              {name}
            </a>
            {name === defaultBranch && kind === 'branch' && <span class="badge">default</span>}
            <span class="meta">
              {' '}
              <a href={commitUrl(project, commit.hash)}>
                <code>{commit.hash.slice(0, 8)}</code>
              </a>{' '}
              {subjectOf(commit)} · <DateTime date={commit.committer.date} />
            </span>
          </span>
          <span class="ref-actions">
            {kind === 'branch' && name !== defaultBranch && defaultBranch !== null && (
              <a href={`/${project}/~compare?${new URLSearchParams({ left: defaultBranch, right: name })}`}>Compare</a>
            )}
            {page.permissions.writeCode && !(kind === 'branch' && name === defaultBranch) && (
              <InlineForm
                page={page}
                action={`/${project}/~${TAB[kind]}/delete`}
                label={`Delete ${kind} ${name}`}
                fields={{ name: name }}
                buttonClass="danger"
                buttonLabel={`Delete ${kind} ${name}`}
              >
                Delete
              </InlineForm>
            )}
          </span>
        </li>
      ))}
    </ul>
  );
}

async function refsPage(page: ProjectPageContext, kind: Kind, error: string | null = null): Promise<PageResult> {
  const project = page.project.path;
  const [names, refs] = await Promise.all([
    revisionNames(page.ctx, page.project),
    kind === 'branch' ? branchSummaries(page.ctx, page.project).then((r) => r.branches) : tagSummaries(page.ctx, page.project),
  ]);
  const form = page.request.method === 'POST' && error ? page.form : {};
  return (
    <ProjectLayout page={page} tab={TAB[kind]} title={TITLES[kind]}>
      <h1>{TITLES[kind]}</h1>
      <Flash error={error} />
      {page.permissions.writeCode && names.defaultBranch !== null && (
        <details class="create-ref" open={error !== null}>
          <summary>{kind === 'branch' ? 'New branch' : 'New tag'}</summary>
          <PostForm page={page} action={`/${project}/~${TAB[kind]}`} label={kind === 'branch' ? 'New branch' : 'New tag'}>
            <Field name="name" label={kind === 'branch' ? 'Branch name' : 'Tag name'} required value={form.name} />
            <Field name="revision" label="Create from (branch, tag or commit)" required value={form.revision ?? names.defaultBranch} />
            {kind === 'tag' && (
              <p class="field">
                <label for="field-message">Message (optional: makes an annotated tag)</label>
                <textarea id="field-message" name="message" rows={3}>
                  {form.message ?? ''}
                </textarea>
              </p>
            )}
            <p>
              <button type="submit">{kind === 'branch' ? 'Create branch' : 'Create tag'}</button>
            </p>
          </PostForm>
        </details>
      )}
      <RefList page={page} kind={kind} refs={refs} defaultBranch={names.defaultBranch} />
    </ProjectLayout>
  );
}

/** Runs a change; a refusal (4xx) shows the list again with its message and status. */
async function change(page: ProjectPageContext, kind: Kind, run: () => Promise<void>): Promise<PageResult> {
  return submitForm(
    page,
    run,
    () => redirect(`/${page.project.path}/~${TAB[kind]}`),
    (message) => refsPage(page, kind, message),
  );
}

export const refPages: PageModule = {
  projectPages: [
    { method: 'GET', path: '/~branches', handler: (page) => refsPage(page, 'branch') },
    { method: 'GET', path: '/~tags', handler: (page) => refsPage(page, 'tag') },
    {
      method: 'POST',
      path: '/~branches',
      access: 'user',
      handler: (page) =>
        change(page, 'branch', () =>
          createBranch(page.ctx, page.project.id, { branchName: (page.form.name ?? '').trim(), revision: (page.form.revision ?? '').trim() }),
        ),
    },
    {
      method: 'POST',
      path: '/~branches/delete',
      access: 'user',
      handler: (page) => change(page, 'branch', () => deleteBranch(page.ctx, page.project.id, page.form.name ?? '')),
    },
    {
      method: 'POST',
      path: '/~tags',
      access: 'user',
      handler: (page) =>
        change(page, 'tag', () =>
          createTag(page.ctx, page.project.id, {
            tagName: (page.form.name ?? '').trim(),
            revision: (page.form.revision ?? '').trim(),
            tagMessage: page.form.message ?? null,
          }),
        ),
    },
    {
      method: 'POST',
      path: '/~tags/delete',
      access: 'user',
      handler: (page) => change(page, 'tag', () => deleteTag(page.ctx, page.project.id, page.form.name ?? '')),
    },
  ],
};
