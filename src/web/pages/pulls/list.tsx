import type { VNode } from 'preact';
/**
 * `/<project>/~pulls` and `/~pulls`: pull requests filtered by the pull request query language
 * (docs/compatibility.md#pull-requests-query-language, the API's `GET /~api/pulls?query=…`), newest activity first, paged.
 * Without a query the open requests are listed.
 */
import { projectPaths, queryPullRequests, userNames } from '../../../domain/pulls/index.js';
import { avatarVersions } from '../../../domain/users/index.js';
import { avatarsOf } from '../../components/avatar.js';
import { Layout } from '../../components/layout.js';
import { ProjectLayout } from '../../components/project-layout.js';
import { QueryBox } from '../../components/query-box.js';
import { Pager, queryPage } from '../../components/query-list.js';
import { SavedQueries } from '../../components/saved-queries.js';
import type { PageContext, PageResult, ProjectPageContext } from '../../page.js';
import { pullUrl, StatusBadge, When } from './shared.js';

const DEFAULT_QUERY = 'open';

/** One page of pull requests with the target projects' paths and the submitters' names. */
async function listing(page: PageContext, targetProjectId?: number) {
  const list = await queryPage(page, DEFAULT_QUERY, (query, offset, count) => queryPullRequests(page.ctx, query, offset, count, { targetProjectId }));
  const [paths, names, versions] = await Promise.all([
    projectPaths(
      page.ctx,
      list.rows.map((p) => p.targetProjectId),
    ),
    userNames(
      page.ctx,
      list.rows.map((p) => p.submitterId),
    ),
    avatarVersions(
      page.ctx.db,
      list.rows.map((p) => p.submitterId),
    ),
  ]);
  return { ...list, paths, names, avatarOf: avatarsOf(versions, 16) };
}

function PullList({
  action,
  list,
  showProject,
  saved,
}: {
  action: string;
  list: Awaited<ReturnType<typeof listing>>;
  showProject: boolean;
  saved: VNode | null;
}) {
  return (
    <>
      <QueryBox action={action} query={list.query} example={'open and "Target Branch" is "main"'} error={list.error} />
      {saved}
      {!list.error && list.rows.length === 0 && <p class="empty">No pull request found.</p>}
      {list.rows.length > 0 && (
        <ul class="list pulls">
          {list.rows.map((pr) => {
            const path = list.paths.get(pr.targetProjectId) ?? '';
            return (
              <li key={pr.id}>
                <StatusBadge status={pr.status} /> <a href={pullUrl(path, pr.number)}>{pr.title}</a>
                <span class="meta">
                  {` ${showProject ? path : ''}#${pr.number} · `}
                  {list.avatarOf(pr.submitterId)}
                  {`${list.names.get(pr.submitterId) ?? 'unknown'} · ${pr.sourceBranch} → ${pr.targetBranch} · ${pr.lastActivityDescription} `}
                  <When date={pr.lastActivityDate} />
                  {pr.commentCount > 0 && ` · ${pr.commentCount} ${pr.commentCount === 1 ? 'comment' : 'comments'}`}
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

/** `/<project>/~pulls`. */
export async function projectPullList(page: ProjectPageContext): Promise<PageResult> {
  const list = await listing(page, page.project.id);
  const base = `/${page.project.path}/~pulls`;
  return (
    <ProjectLayout page={page} tab="pulls" title="Pull requests">
      <div class="heading-row">
        <h1>Pull requests</h1>
        {page.user && page.permissions.readCode && (
          <a class="button" href={`${base}/new`}>
            New pull request
          </a>
        )}
      </div>
      <PullList action={base} list={list} showProject={false} saved={await SavedQueries({ page, kind: 'pullRequest', action: base })} />
    </ProjectLayout>
  );
}

/** `/~pulls`: the same across every project the visitor can read code of. */
export async function allPullList(page: PageContext): Promise<PageResult> {
  const list = await listing(page);
  return (
    <Layout page={page} title="Pull requests">
      <h1>Pull requests</h1>
      <PullList action="/~pulls" list={list} showProject saved={await SavedQueries({ page, kind: 'pullRequest', action: '/~pulls' })} />
    </Layout>
  );
}
