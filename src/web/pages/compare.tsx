/**
 * `/<project>/~compare?left=…&right=…`: what `right` brings to `left`, as a pull request would
 * show it — the commits of `left..right` and the diff from their merge base to `right`. Without
 * both revisions, the two selectors only (left defaults to the default branch).
 */
import { compareRevisions, MAX_COMPARE_COMMITS, revisionNames } from '../../domain/repositories/index.js';
import { CommitList, codeUrl, RevisionOptions } from '../components/code.js';
import { DiffView, type DiffViewState } from '../components/diff.js';
import { DiffLayoutToggle, diffViewState } from '../components/diff-state.js';
import { ProjectLayout } from '../components/project-layout.js';
import type { PageModule, PageResult, ProjectPageContext } from '../page.js';

type RevisionComparison = Awaited<ReturnType<typeof compareRevisions>>;

/** The form choosing the two revisions, with the branches and tags as suggestions. */
function CompareForm({ project, left, right, names }: { project: string; left: string; right: string; names: { branches: string[]; tags: string[] } }) {
  return (
    <form method="get" action={`/${project}/~compare`} class="query compare-form">
      <label for="compare-left">Base</label>
      <input id="compare-left" name="left" value={left} list="compare-revisions" required autocomplete="off" />
      <label for="compare-right">Compare</label>
      <input id="compare-right" name="right" value={right} list="compare-revisions" required autocomplete="off" />
      <RevisionOptions id="compare-revisions" branches={names.branches} tags={names.tags} />
      <button type="submit">Compare</button>
    </form>
  );
}

/** The merge base, the commits `right` brings and the diff of a comparison. */
function ComparisonView({
  page,
  left,
  right,
  comparison,
  state,
}: {
  page: ProjectPageContext;
  left: string;
  right: string;
  comparison: RevisionComparison;
  state: DiffViewState;
}) {
  const project = page.project.path;
  return (
    <>
      <p class="meta">
        {comparison.mergeBase ? (
          <>
            Merge base{' '}
            <a href={`/${project}/~commits/${comparison.mergeBase}`}>
              <code>{comparison.mergeBase.slice(0, 8)}</code>
            </a>
          </>
        ) : (
          'The two revisions share no history: the diff is against the base itself.'
        )}
        {' · '}
        <a href={codeUrl(project, 'files', right)}>Browse {right}</a>
      </p>
      <section aria-labelledby="compare-commits">
        <h2 id="compare-commits">
          Commits ({comparison.commits.length}
          {comparison.moreCommits && '+'})
        </h2>
        {comparison.commits.length === 0 ? (
          <p class="empty">
            {right} has no commits that {left} lacks.
          </p>
        ) : (
          <CommitList projectPath={project} commits={comparison.commits} />
        )}
        {comparison.moreCommits && (
          <p class="meta" role="note">
            Only the newest {MAX_COMPARE_COMMITS} commits are listed.
          </p>
        )}
      </section>
      <section aria-labelledby="compare-changes">
        <h2 id="compare-changes">Changes</h2>
        <DiffLayoutToggle page={page} layout={state.layout} />
        <DiffView diff={comparison.diff} state={state} emptyMessage="No changes." />
      </section>
    </>
  );
}

async function comparePage(page: ProjectPageContext): Promise<PageResult> {
  const project = page.project.path;
  const names = await revisionNames(page.ctx, page.project);
  const left = page.query.left?.trim() || names.defaultBranch || '';
  const right = page.query.right?.trim() ?? '';
  const comparison = left && right ? await compareRevisions(page.ctx, page.project, left, right) : null;
  const state = comparison ? await diffViewState(page, page.project.id, comparison.diff) : null;
  const title = comparison ? `Compare ${left}...${right}` : 'Compare';
  return (
    <ProjectLayout page={page} tab="code" title={title} scripts={['diff-view.js']}>
      <h1>
        {comparison ? (
          <>
            Compare <code>{left}</code> … <code>{right}</code>
          </>
        ) : (
          'Compare revisions'
        )}
      </h1>
      <CompareForm project={project} left={left} right={right} names={names} />
      {comparison && state && <ComparisonView page={page} left={left} right={right} comparison={comparison} state={state} />}
    </ProjectLayout>
  );
}

export const comparePages: PageModule = {
  projectPages: [{ method: 'GET', path: '/~compare', handler: comparePage }],
};
