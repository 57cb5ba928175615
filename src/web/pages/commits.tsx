/**
 * `/<project>/~commits`: the commit log of a revision (default: the default branch), paged,
 * with the commit graph of the page's commits (their lanes drawn from their parents,
 * commit-graph.ts), a branch and tag switcher and the commit query box (`?revision=…&query=…&page=N`);
 * `/<project>/~commits/<hash>`: one commit — message, author, committer, parents as links — and
 * its diff against its first parent (a root commit: everything added).
 */
import { commitGraph, commitLog, diffCommits, getCommit, revisionNames } from '../../domain/repositories/index.js';
import { BadRequest } from '../../errors.js';
import { codeUrl, CommitList, commitUrl, DateTime, RevisionSwitcher, subjectOf } from '../components/code.js';
import { DiffView } from '../components/diff.js';
import { DiffLayoutToggle, diffViewState } from '../components/diff-state.js';
import { ProjectLayout } from '../components/project-layout.js';
import { QueryBox } from '../components/query-box.js';
import { PAGE_SIZE, pageNumber } from '../components/query-list.js';
import type { PageModule } from '../page.js';

export const commitPages: PageModule = {
  projectPages: [
    {
      method: 'GET',
      path: '/~commits',
      handler: async (page) => {
        const project = page.project.path;
        const names = await revisionNames(page.ctx, page.project);
        const revision = page.query.revision?.trim() || names.defaultBranch;
        const query = page.query.query ?? '';
        const number = pageNumber(page.query.page);
        let error: string | null = null;
        let log: Awaited<ReturnType<typeof commitLog>> = { commits: [], hasMore: false };
        if (revision !== null) {
          try {
            log = await commitLog(page.ctx, page.project, { revision, query, page: number, pageSize: PAGE_SIZE });
          } catch (e) {
            // a query the domain refuses is shown under the box, as on the other list pages
            if (!(e instanceof BadRequest)) throw e;
            error = e.message;
            page.reply.code(400);
          }
        }
        const link = (n: number) => `/${project}/~commits?${new URLSearchParams({ ...(revision && { revision }), ...(query && { query }), page: String(n) })}`;
        return (
          <ProjectLayout page={page} tab="commits" title={revision ? `Commits of ${revision}` : 'Commits'} scripts={['switcher.js']}>
            <h1>Commits</h1>
            {revision === null ? (
              <p class="empty">This repository is empty.</p>
            ) : (
              <>
                <RevisionSwitcher
                  action={`/${project}/~commits`}
                  name="revision"
                  current={revision}
                  branches={names.branches}
                  tags={names.tags}
                  hrefOf={(name) => `/${project}/~commits?${new URLSearchParams({ revision: name, ...(query && { query }) })}`}
                  hidden={query ? { query } : {}}
                />
                <QueryBox action={`/${project}/~commits`} query={query} example="author(alice*) path(src)" error={error} hidden={{ revision }} />
                {!error && log.commits.length === 0 && <p class="empty">No commits.</p>}
                {log.commits.length > 0 && <CommitList projectPath={project} commits={log.commits} graph={commitGraph(log.commits)} />}
                {(number > 1 || log.hasMore) && (
                  <nav aria-label="Pages" class="pager">
                    {number > 1 && (
                      <a href={link(number - 1)} rel="prev">
                        Newer
                      </a>
                    )}
                    <span>Page {number}</span>
                    {log.hasMore && (
                      <a href={link(number + 1)} rel="next">
                        Older
                      </a>
                    )}
                  </nav>
                )}
              </>
            )}
          </ProjectLayout>
        );
      },
    },
    {
      method: 'GET',
      path: '/~commits/:hash',
      handler: async (page) => {
        const project = page.project.path;
        const commit = await getCommit(page.ctx, page.project.id, page.params.hash);
        const diff = await diffCommits(page.ctx, page.project.id, commit.parents[0] ?? null, commit.hash);
        const state = await diffViewState(page, page.project.id, diff);
        const subject = subjectOf(commit);
        const body = commit.message.slice(subject.length).trim();
        const sameCommitter = commit.committer.name === commit.author.name && commit.committer.email === commit.author.email;
        return (
          <ProjectLayout page={page} tab="commits" title={`${subject} · ${commit.hash.slice(0, 8)}`} scripts={['diff-view.js']}>
            <h1>{subject}</h1>
            {body && <pre class="commit-message">{body}</pre>}
            <dl class="commit-meta">
              <dt>Commit</dt>
              <dd>
                <code>{commit.hash}</code> · <a href={codeUrl(project, 'files', commit.hash)}>Browse files</a>
              </dd>
              <dt>Author</dt>
              <dd>
                {commit.author.name} · <DateTime date={commit.author.date} />
              </dd>
              {!sameCommitter && (
                <>
                  <dt>Committer</dt>
                  <dd>
                    {commit.committer.name} · <DateTime date={commit.committer.date} />
                  </dd>
                </>
              )}
              <dt>{commit.parents.length === 1 ? 'Parent' : 'Parents'}</dt>
              <dd>
                {commit.parents.length === 0
                  ? 'none (root commit)'
                  : commit.parents.map((p, i) => (
                      <span key={p}>
                        {i > 0 && ', '}
                        <a href={commitUrl(project, p)}>
                          <code>{p.slice(0, 8)}</code>
                        </a>
                      </span>
                    ))}
              </dd>
            </dl>
            <section aria-labelledby="changes">
              <h2 id="changes">Changes{commit.parents.length > 1 && ' (against the first parent)'}</h2>
              <DiffLayoutToggle page={page} layout={state.layout} />
              <DiffView
                diff={diff}
                state={state}
                renderFileActions={(file) =>
                  file.newPath !== null && (
                    <a href={codeUrl(project, 'files', commit.hash, file.newPath)} class="diff-view-file">
                      View file
                    </a>
                  )
                }
              />
            </section>
          </ProjectLayout>
        );
      },
    },
  ],
};
