/** The issue lists: `/<project>/~issues` and `/~issues`, filtered by the issue query language, paged, with saved and watched queries. */
import { issueListNames, queryIssues } from '../../../domain/issues/index.js';
import { avatarVersions } from '../../../domain/users/index.js';
import { avatarsOf } from '../../components/avatar.js';
import { Layout } from '../../components/layout.js';
import { ProjectLayout } from '../../components/project-layout.js';
import { QueryBox } from '../../components/query-box.js';
import { Pager, queryPage } from '../../components/query-list.js';
import { SavedQueries } from '../../components/saved-queries.js';
import type { PageContext, PageResult, ProjectPageContext } from '../../page.js';

const EXAMPLE = '"State" is "Open" and "Priority" is "Major"';

/** One page of issues for a list with their projects' paths and submitters' names, or the query's error (400). */
async function listedIssues(page: PageContext, projectId: number | undefined) {
  const list = await queryPage(page, '', (query, offset, count) => queryIssues(page.ctx, query, offset, count, projectId));
  const [names, versions] = await Promise.all([
    issueListNames(page.ctx, list.rows),
    avatarVersions(
      page.ctx.db,
      list.rows.map((i) => i.submitterId),
    ),
  ]);
  return { ...list, ...names, avatarOf: avatarsOf(versions, 16) };
}

function IssueList({ list, action, showProject }: { list: Awaited<ReturnType<typeof listedIssues>>; action: string; showProject: boolean }) {
  return (
    <>
      {!list.error && list.rows.length === 0 && <p class="empty">No issue found.</p>}
      {list.rows.length > 0 && (
        <ul class="list issues">
          {list.rows.map((issue) => {
            const path = list.paths.get(issue.projectId) ?? '';
            return (
              <li key={issue.id}>
                <span class={`state state-${issue.state.toLowerCase()}`}>{issue.state}</span>{' '}
                <a href={`/${path}/~issues/${issue.number}`}>{`${showProject ? path : ''}#${issue.number} ${issue.title}`}</a>
                <span class="meta">
                  {' — opened by '}
                  {list.avatarOf(issue.submitterId)}
                  {`${list.names.get(issue.submitterId) ?? 'unknown'}, ${issue.commentCount} comments, ${issue.voteCount} votes`}
                </span>
              </li>
            );
          })}
        </ul>
      )}
      <Pager action={action} list={list} />
    </>
  );
}

/** GET `/<project>/~issues`. */
export async function projectIssueList(page: ProjectPageContext): Promise<PageResult> {
  const base = `/${page.project.path}/~issues`;
  const list = await listedIssues(page, page.project.id);
  return (
    <ProjectLayout page={page} tab="issues" title="Issues">
      <h1>Issues</h1>
      {page.user && (
        <p>
          <a class="button" href={`${base}/new`}>
            New issue
          </a>
        </p>
      )}
      <QueryBox action={base} query={list.query} example={EXAMPLE} error={list.error} />
      {await SavedQueries({ page, kind: 'issue', action: base })}
      <IssueList list={list} action={base} showProject={false} />
    </ProjectLayout>
  );
}

/** GET `/~issues`: the issues of every project the visitor can read. */
export async function allIssueList(page: PageContext): Promise<PageResult> {
  const list = await listedIssues(page, undefined);
  return (
    <Layout page={page} title="Issues">
      <h1>Issues</h1>
      <QueryBox action="/~issues" query={list.query} example={EXAMPLE} error={list.error} />
      {await SavedQueries({ page, kind: 'issue', action: '/~issues' })}
      <IssueList list={list} action="/~issues" showProject />
    </Layout>
  );
}
