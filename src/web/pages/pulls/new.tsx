/**
 * `/<project>/~pulls/new`: choose the target branch (of this project) and the source branch (of
 * this project or one of its forks), see the commits and the diff the request would bring, then
 * give a title and description and open it with the API's create function (`POST /~api/pulls`,
 * docs/compatibility.md#pull-requests-opening) and its messages.
 */
import type { VNode } from 'preact';
import { canReadCode, projectForks } from '../../../domain/projects/index.js';
import { type CommitDiff, diffCommits, getRepositoryDefaultBranch, listBranchNames } from '../../../domain/repositories/index.js';
import { type BranchComparison, compareBranches, getPullRequest, openPullRequest } from '../../../domain/pulls/index.js';
import { BadRequest, GitloomError } from '../../../errors.js';
import { DiffView, type DiffViewState } from '../../components/diff.js';
import { DiffLayoutToggle, diffViewState } from '../../components/diff-state.js';
import { Field, PostForm } from '../../components/forms.js';
import { Flash } from '../../components/flash.js';
import { ProjectLayout } from '../../components/project-layout.js';
import { redirect, submitForm, type PageResult, type ProjectPageContext } from '../../page.js';
import { pullUrl, When } from './shared.js';
import { Select, TextArea } from '../../components/controls.js';

interface SourceChoice {
  value: string;
  label: string;
}

/** A source as a form value: `<project id>:<branch>`. */
function parseSource(value: string | undefined): { projectId: number; branch: string } | null {
  const match = /^(\d{1,12}):(.+)$/.exec(value ?? '');
  return match ? { projectId: Number(match[1]), branch: match[2] } : null;
}

async function sourceChoices(page: ProjectPageContext): Promise<SourceChoice[]> {
  const forks = [];
  for (const fork of await projectForks(page.ctx, page.project.id)) if (await canReadCode(page.ctx, fork)) forks.push(fork);
  const choices: SourceChoice[] = [];
  for (const project of [page.project, ...forks]) {
    for (const branch of await listBranchNames(page.ctx, project.id)) {
      choices.push({ value: `${project.id}:${branch}`, label: project.id === page.project.id ? branch : `${project.path}:${branch}` });
    }
  }
  return choices;
}

interface Draft {
  title?: string;
  description?: string;
}

/**
 * Compares `targetBranch` with the chosen source: the comparison and, when the source brings
 * commits, their diff; a refusal of the comparison (unknown branch, unreadable fork) is its message.
 */
async function compareChoice(
  page: ProjectPageContext,
  targetBranch: string,
  chosen: { projectId: number; branch: string },
): Promise<{ comparison: BranchComparison | null; diff: CommitDiff | null; state: DiffViewState | null; compareError: string | null }> {
  try {
    const comparison = await compareBranches(page.ctx, {
      targetProjectId: page.project.id,
      targetBranch,
      sourceProjectId: chosen.projectId,
      sourceBranch: chosen.branch,
    });
    const diff = comparison.base && comparison.commits.length > 0 ? await diffCommits(page.ctx, page.project.id, comparison.base, comparison.sourceHead) : null;
    const state = diff && (await diffViewState(page, page.project.id, diff));
    return { comparison, diff, state, compareError: null };
  } catch (failure) {
    if (!(failure instanceof GitloomError) || failure.status >= 500) throw failure;
    return { comparison: null, diff: null, state: null, compareError: failure.message };
  }
}

/** The commits the source brings (with `more` when the list was cut). */
function Commits({ comparison }: { comparison: BranchComparison }) {
  return (
    <section aria-labelledby="commits">
      <h2 id="commits">{`Commits (${comparison.commits.length}${comparison.more ? '+' : ''})`}</h2>
      <ul class="list commits">
        {comparison.commits.map((c) => (
          <li key={c.hash}>
            <code>{c.hash.slice(0, 8)}</code>
            {` ${c.subject} `}
            <span class="meta">
              {`${c.authorName} · `}
              <When date={c.date} />
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The form opening the request from the compared branches, with the draft's title and description. */
function OpenForm({
  page,
  base,
  target,
  source,
  title,
  description,
}: {
  page: ProjectPageContext;
  base: string;
  target: string;
  source?: string;
  title: string;
  description?: string;
}) {
  return (
    <section aria-labelledby="open">
      <h2 id="open">Open the pull request</h2>
      <PostForm page={page} action={base} label="Open pull request">
        <input type="hidden" name="target" value={target} />
        <input type="hidden" name="source" value={source} />
        <Field name="title" label="Title" value={title} required />
        <TextArea name="description" label="Description (Markdown)" value={description} rows={8} />
        <p>
          <button type="submit">Open pull request</button>
        </p>
      </PostForm>
    </section>
  );
}

async function newPage(page: ProjectPageContext, target: string | undefined, source: string | undefined, draft: Draft, error: string | null): Promise<VNode> {
  const base = `/${page.project.path}/~pulls/new`;
  const [branches, defaultBranch, sources] = await Promise.all([
    listBranchNames(page.ctx, page.project.id),
    getRepositoryDefaultBranch(page.ctx, page.project.id),
    sourceChoices(page),
  ]);
  const targetBranch = target ?? defaultBranch ?? branches[0] ?? '';
  const chosen = parseSource(source);
  const { comparison, diff, state, compareError } =
    chosen && targetBranch ? await compareChoice(page, targetBranch, chosen) : { comparison: null, diff: null, state: null, compareError: null };
  const title = draft.title ?? (comparison?.commits.length === 1 ? comparison.commits[0].subject : (chosen?.branch ?? ''));
  return (
    <ProjectLayout page={page} tab="pulls" title="New pull request" scripts={['diff-view.js']}>
      <h1>New pull request</h1>
      <Flash error={error ?? compareError} />
      <form method="get" action={base} class="compare" aria-label="Branches">
        <Select name="target" label="Target branch" value={targetBranch} options={branches.map((b) => ({ value: b, label: b }))} />
        <Select name="source" label="Source branch" value={source ?? ''} options={[{ value: '', label: 'Choose a branch' }, ...sources]} />
        <p>
          <button type="submit">Compare</button>
        </p>
      </form>
      {comparison && (
        <>
          {comparison.openRequest && (
            <p class="flash">
              {'A pull request is already open for this change: '}
              <a href={pullUrl(page.project.path, comparison.openRequest.number)}>{`#${comparison.openRequest.number} ${comparison.openRequest.title}`}</a>
            </p>
          )}
          {comparison.base === null && <p class="flash error">No common base for target and source</p>}
          {comparison.base !== null && comparison.commits.length === 0 && <p class="empty">{`${chosen!.branch} has no commit that ${targetBranch} lacks.`}</p>}
          {comparison.commits.length > 0 && <Commits comparison={comparison} />}
          {diff && (
            <section aria-labelledby="changes">
              <h2 id="changes">Changes</h2>
              {state && <DiffLayoutToggle page={page} layout={state.layout} />}
              <DiffView diff={diff} state={state ?? undefined} headingLevel={3} />
            </section>
          )}
          {!comparison.openRequest && comparison.commits.length > 0 && (
            <OpenForm page={page} base={base} target={targetBranch} source={source} title={title} description={draft.description} />
          )}
        </>
      )}
    </ProjectLayout>
  );
}

/** GET `/<project>/~pulls/new`. */
export async function newPullForm(page: ProjectPageContext): Promise<PageResult> {
  return newPage(page, page.query.target, page.query.source, {}, null);
}

/** POST `/<project>/~pulls/new`: opens the request (openPullRequest) and goes to it. */
export async function openPull(page: ProjectPageContext): Promise<PageResult> {
  const { target, source, title = '', description = '' } = page.form;
  const chosen = parseSource(source);
  return submitForm(
    page,
    async () => {
      if (!chosen || !target) throw new BadRequest('Choose a target and a source branch');
      return openPullRequest(page.ctx, {
        targetProjectId: page.project.id,
        targetBranch: target,
        sourceProjectId: chosen.projectId,
        sourceBranch: chosen.branch,
        title,
        description: description.trim() ? description : null,
      });
    },
    async (id) => redirect(pullUrl(page.project.path, (await getPullRequest(page.ctx, id)).number)),
    (message) => newPage(page, target, source, { title, description }, message),
  );
}
