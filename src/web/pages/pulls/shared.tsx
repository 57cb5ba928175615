/**
 * Pieces shared by the pull request pages: the request's header with its tabs, status badges,
 * dates, and {@link pullAction} — the one way a pull request form is
 * answered (the domain call, then 303 back; a refused call shows the domain's message on the page
 * with its status).
 */
import type { ComponentChildren, VNode } from 'preact';
import { pullRequestByNumber, type PullRequestRow } from '../../../domain/pulls/index.js';
import { redirect, submitForm, type PageResult, type ProjectPageContext, type ProjectPageRoute } from '../../page.js';

/** `/<project>/~pulls/<number>` of a request. */
export function pullUrl(projectPath: string, number: number, rest = ''): string {
  return `/${projectPath}/~pulls/${number}${rest}`;
}

/** The URL of an action of a request's pages (`comment`, `merge`, …): `/<project>/~pulls/<number>/<action>`. */
export function pullActionUrl(page: ProjectPageContext, pr: PullRequestRow, action: string): string {
  return pullUrl(page.project.path, pr.number, `/${action}`);
}

/** The request named by the `:number` path parameter of a project page (404 when none). */
export function requestOfPage(page: ProjectPageContext): Promise<PullRequestRow> {
  const number = /^\d{1,9}$/.test(page.params.number ?? '') ? Number(page.params.number) : Number.NaN;
  return pullRequestByNumber(page.ctx, page.project.id, number);
}

/** A date (epoch ms) as a `<time>` in UTC, minute precision. */
export function When({ date }: { date: number }) {
  const iso = new Date(date).toISOString();
  return <time datetime={iso}>{`${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`}</time>;
}

/** The status of a request as a badge. */
export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status.toLowerCase()}`}>{status.charAt(0) + status.slice(1).toLowerCase()}</span>;
}

/** The tabs of a request's pages (`conflicts` is a page of its own, reached from the merge box, with no tab). */
export type PullTab = 'overview' | 'changes' | 'code-comments' | 'conflicts';

/** Title, number, status, branches and the request's tabs; the page's `<h1>`. */
export function PullHeader({
  page,
  pr,
  tab,
  submitter,
  sourcePath,
  children,
}: {
  page: ProjectPageContext;
  pr: PullRequestRow;
  tab: PullTab;
  submitter: string;
  sourcePath: string | null;
  children?: ComponentChildren;
}) {
  const tabs: { tab: PullTab; label: string; rest: string }[] = [
    { tab: 'overview', label: 'Overview', rest: '' },
    { tab: 'changes', label: 'Changes', rest: '/changes' },
    { tab: 'code-comments', label: 'Code comments', rest: '/code-comments' },
  ];
  const source =
    sourcePath === null ? `(deleted project):${pr.sourceBranch}` : sourcePath === page.project.path ? pr.sourceBranch : `${sourcePath}:${pr.sourceBranch}`;
  return (
    <header class="pr-head">
      <h1>
        {pr.title} <span class="meta">{`#${pr.number}`}</span>
      </h1>
      <p>
        <StatusBadge status={pr.status} />
        {` ${submitter} wants to merge `}
        <code>{source}</code>
        {' into '}
        <code>{pr.targetBranch}</code>
        {' · opened '}
        <When date={pr.submitDate} />
      </p>
      {children}
      <ul class="tabs" aria-label="Pull request">
        {tabs.map((t) => (
          <li key={t.tab}>
            <a href={pullUrl(page.project.path, pr.number, t.rest)} aria-current={t.tab === tab ? 'page' : undefined}>
              {t.label}
            </a>
          </li>
        ))}
      </ul>
    </header>
  );
}

/**
 * A form action of a request's pages, `POST /<project>/~pulls/<number>/<path>` for signed-in
 * users: runs `run` (a domain function the API route calls too) on the page's request and
 * redirects (303) to `back` (given the action's result); when the domain refuses (400, 403,
 * 409, …) the page `render` draws is shown with the domain's message and status instead. A
 * missing request or project stays a 404 page and an anonymous visitor is sent to sign in.
 */
export function pullAction<T>(
  path: string,
  run: (page: ProjectPageContext, pr: PullRequestRow) => Promise<T>,
  back: (page: ProjectPageContext, pr: PullRequestRow, result: T) => string,
  render: (page: ProjectPageContext, pr: PullRequestRow, error: string) => Promise<VNode>,
): ProjectPageRoute {
  return {
    method: 'POST',
    path: `/~pulls/:number/${path}`,
    access: 'user',
    handler: async (page): Promise<PageResult> => {
      const pr = await requestOfPage(page);
      return submitForm(
        page,
        () => run(page, pr),
        (result) => redirect(back(page, pr, result)),
        async (message) => render(page, await requestOfPage(page), message),
      );
    },
  };
}
