/**
 * `/<project>/~compare?left=…&right=…`: what `right` brings to `left`, as a pull request would
 * show it — the commits of `left..right` and the diff from their merge base to `right`. Without
 * both revisions, the two selectors only (left defaults to the default branch).
 */
import { compareRevisions, MAX_COMPARE_COMMITS, revisionNames } from '../../domain/repositories/index.js';
import { CommitItem, codeUrl } from '../components/code.js';
import { DiffView } from '../components/diff.js';
import { ProjectLayout } from '../components/project-layout.js';
import type { PageModule } from '../page.js';

export const comparePages: PageModule = {
  projectPages: [
    {
      method: 'GET',
      path: '/~compare',
      handler: async (page) => {
        const project = page.project.path;
        const names = await revisionNames(page.ctx, page.project);
        const left = page.query.left?.trim() || names.defaultBranch || '';
        const right = page.query.right?.trim() ?? '';
        const comparison = left && right ? await compareRevisions(page.ctx, page.project, left, right) : null;
        const title = comparison ? `Compare ${left}...${right}` : 'Compare';
        return (
          <ProjectLayout page={page} tab="code" title={title}>
            <h1>
              {comparison ? (
                <>
                  Compare <code>{left}</code> … <code>{right}</code>
                </>
              ) : (
                'Compare revisions'
              )}
            </h1>
            <form method="get" action={`/${project}/~compare`} class="query compare-form">
              <label for="compare-left">Base</label>
              <input id="compare-left" name="left" value={left} list="compare-revisions" required autocomplete="off" />
              <label for="compare-right">Compare</label>
              <input id="compare-right" name="right" value={right} list="compare-revisions" required autocomplete="off" />
              <datalist id="compare-revisions">
                {names.branches.map((b) => (
                  <option key={`b:${b}`} value={b}>
                    branch
                  </option>
                ))}
                {names.tags.map((t) => (
                  <option key={`t:${t}`} value={t}>
                    tag
                  </option>
                ))}
              </datalist>
              <button type="submit">Compare</button>
            </form>
            {comparison && (
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
                    <ol class="list commits" aria-label="Commits">
                      {comparison.commits.map((c) => (
                        <CommitItem key={c.hash} projectPath={project} commit={c} />
                      ))}
                    </ol>
                  )}
                  {comparison.moreCommits && (
                    <p class="meta" role="note">
                      Only the newest {MAX_COMPARE_COMMITS} commits are listed.
                    </p>
                  )}
                </section>
                <section aria-labelledby="compare-changes">
                  <h2 id="compare-changes">Changes</h2>
                  <DiffView diff={comparison.diff} emptyMessage="No changes." />
                </section>
              </>
            )}
          </ProjectLayout>
        );
      },
    },
  ],
};
