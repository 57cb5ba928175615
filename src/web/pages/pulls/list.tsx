import type { VNode } from 'preact';
/**
 * `/<project>/~pulls` and `/~pulls`: pull requests filtered by the pull request query language
 * (docs/compatibility.md#pull-requests-query-language, the API's `GET /~api/pulls?query=…`), newest activity first, paged.
 * Without a query the open requests are listed.
 */
import { projectPaths, userNames, type PullRequestRow } from '../../../domain/pulls/page-views.js';
import { queryPullRequests } from '../../../domain/pulls/pull-request-query.js';
import { BadRequest } from '../../../errors.js';
import { Layout } from '../../components/layout.js';
import { ProjectLayout } from '../../components/project-layout.js';
import { QueryBox } from '../../components/query-box.js';
import { SavedQueries } from '../../components/saved-queries.js';
import type { PageContext, PageResult, ProjectPageContext } from '../../page.js';
import { pullUrl, StatusBadge, When } from './shared.js';

/** Requests per page. */
export const PAGE_SIZE = 25;
const DEFAULT_QUERY = 'open';

interface Listing {
  query: string;
  pageNumber: number;
  error: string | null;
  pulls: PullRequestRow[];
  hasNext: boolean;
  paths: Map<number, string>;
  names: Map<number, string>;
}

async function listing(page: PageContext, targetProjectId?: number): Promise<Listing> {
  const query = page.query.query ?? DEFAULT_QUERY;
  const pageNumber = /^\d{1,6}$/.test(page.query.page ?? '') ? Math.max(1, Number(page.query.page)) : 1;
  let pulls: PullRequestRow[] = [];
  let error: string | null = null;
  try {
    pulls = await queryPullRequests(page.ctx, query, (pageNumber - 1) * PAGE_SIZE, PAGE_SIZE + 1, { targetProjectId });
  } catch (failure) {
    if (!(failure instanceof BadRequest)) throw failure;
    page.reply.code(400);
    error = failure.message;
  }
  const hasNext = pulls.length > PAGE_SIZE;
  pulls = pulls.slice(0, PAGE_SIZE);
  const [paths, names] = await Promise.all([
    projectPaths(page.ctx, pulls.map((p) => p.targetProjectId)),
    userNames(page.ctx, pulls.map((p) => p.submitterId)),
  ]);
  return { query, pageNumber, error, pulls, hasNext, paths, names };
}

function PullList({ action, list, showProject, saved }: { action: string; list: Listing; showProject: boolean; saved: VNode | null }) {
  const pageLink = (n: number) => `${action}?${new URLSearchParams({ query: list.query, page: String(n) })}`;
  return (
    <>
      <QueryBox action={action} query={list.query} example={'open and "Target Branch" is "main"'} error={list.error} />
      {saved}
      {!list.error && list.pulls.length === 0 && <p class="empty">No pull request found.</p>}
      {list.pulls.length > 0 && (
        <ul class="list pulls">
          {list.pulls.map((pr) => {
            const path = list.paths.get(pr.targetProjectId) ?? '';
            return (
              <li key={pr.id}>
                <StatusBadge status={pr.status} />{' '}
                <a href={pullUrl(path, pr.number)}>{pr.title}</a>
                <span class="meta">
                  {` ${showProject ? path : ''}#${pr.number} · ${list.names.get(pr.submitterId) ?? 'unknown'} · ${pr.sourceBranch} → ${pr.targetBranch} · ${pr.lastActivityDescription} `}
                  <When date={pr.lastActivityDate} />
                  {pr.commentCount > 0 && ` · ${pr.commentCount} ${pr.commentCount === 1 ? 'comment' : 'comments'}`}
                </span>
              </li>
            );
          })}
        </ul>
      )}
      {(list.pageNumber > 1 || list.hasNext) && (
        <nav class="pager" aria-label="Pages">
          {list.pageNumber > 1 && <a href={pageLink(list.pageNumber - 1)} rel="prev">Previous</a>}
          <span>{`Page ${list.pageNumber}`}</span>
          {list.hasNext && <a href={pageLink(list.pageNumber + 1)} rel="next">Next</a>}
        </nav>
      )}
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
        {page.user && page.permissions.readCode && <a class="button" href={`${base}/new`}>New pull request</a>}
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
