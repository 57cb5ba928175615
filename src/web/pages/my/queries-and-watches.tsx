/**
 * `/~my/saved-queries`: every saved query of the signed-in user — the cross-project lists of
 * queries-and-watches (projects, issues, pull requests, builds) and the per-project query
 * personalizations (issues, pull requests, builds, commits, code comments) — each with a link
 * loading it, its watch state and a delete button (posted to `/~saved-queries`, the query boxes'
 * own endpoint, which comes back here).
 * `/~my/watches`: the issues and pull requests the user watches or explicitly ignores, with a
 * toggle (the `/~api/issue-watches` and `/~api/pull-request-watches` updates).
 */
import { getIssue, getIssueWatch, listUserIssueWatches, updateIssueWatch } from '../../../domain/issues/index.js';
import {
  listSavedQueries,
  listUserPersonalizations,
  type NamedQuery,
  type PersonalizationKind,
  type SavedQueryKind,
} from '../../../domain/personalizations/index.js';
import { getPullRequest, getWatch, projectPaths, updateWatch, userPullRequestLists } from '../../../domain/pulls/index.js';
import { BadRequest, GitloomError, NotFound } from '../../../errors.js';
import { InlineForm } from '../../components/forms.js';
import { formId, me, settingsPost, settingsRoute, SettingsLayout } from '../../components/settings.js';
import { redirect, type PageContext, type PageModule, type PageResult } from '../../page.js';

/** The cross-project lists: kind, heading, list page. */
const GLOBAL_LISTS = [
  ['project', 'Projects', '/~projects'],
  ['issue', 'Issues', '/~issues'],
  ['pullRequest', 'Pull requests', '/~pulls'],
  ['build', 'Builds', '/~builds'],
] as const;

/** The per-project personalizations: kind, heading, list page under the project (null: none). */
const PROJECT_LISTS = [
  ['issue', 'Issues', '~issues'],
  ['pullRequest', 'Pull requests', '~pulls'],
  ['build', 'Builds', '~builds'],
  ['commit', 'Commits', '~commits'],
  ['codeComment', 'Code comments', null],
] as const satisfies readonly (readonly [PersonalizationKind, string, string | null])[];

/** One group of saved queries as listed: where they load, which project, which are watched. */
interface QueryGroup {
  key: string;
  heading: string;
  kind: SavedQueryKind;
  projectId: number | null;
  /** The list page loading the queries, null when the kind has no list page. */
  action: string | null;
  queries: NamedQuery[];
  watched: Set<string>;
}

function QueryGroupList({ page, group }: { page: PageContext; group: QueryGroup }) {
  const headingId = `queries-${group.key}`;
  return (
    <section aria-labelledby={headingId}>
      <h3 id={headingId}>{group.heading}</h3>
      <ul class="list">
        {group.queries.map((q) => (
          <li key={q.name} class="row">
            <span>
              {group.action === null ? (
                <strong>{q.name}</strong>
              ) : (
                <a href={q.query === null ? group.action : `${group.action}?${new URLSearchParams({ query: q.query })}`}>{q.name}</a>
              )}
              {group.watched.has(q.name) && <span class="badge">watched</span>} <code class="meta">{q.query ?? 'all'}</code>
            </span>
            <InlineForm
              page={page}
              action="/~saved-queries"
              label={`Delete ${q.name}`}
              fields={{
                op: 'delete',
                kind: group.kind,
                project: group.projectId === null ? '' : String(group.projectId),
                name: q.name,
                return: '/~my/saved-queries',
              }}
              buttonClass="danger"
              buttonLabel={`Delete saved query ${q.name} of ${group.heading}`}
            >
              Delete
            </InlineForm>
          </li>
        ))}
      </ul>
    </section>
  );
}

async function savedQueriesPage(page: PageContext): Promise<PageResult> {
  const global: QueryGroup[] = await Promise.all(
    GLOBAL_LISTS.map(async ([kind, heading, action]) => {
      const { queries, watched } = await listSavedQueries(page.ctx, kind, null);
      return { key: kind, heading, kind, projectId: null, action, queries, watched: watched ?? new Set<string>() };
    }),
  );
  const personal = await Promise.all(
    PROJECT_LISTS.map(async ([kind, heading, tab]) => ({
      kind,
      heading,
      tab,
      rows: await listUserPersonalizations(page.ctx, kind, me(page)),
    })),
  );
  const paths = await projectPaths(
    page.ctx,
    personal.flatMap((p) => p.rows.map((r) => r.projectId)),
  );
  const perProject: QueryGroup[] = personal.flatMap(({ kind, heading, tab, rows }) =>
    rows.flatMap((row) => {
      const path = paths.get(row.projectId);
      if (!path || row.queries.length === 0) return [];
      const watched = new Set(
        Object.entries(row.queryWatches ?? {})
          .filter(([k, on]) => on && k.startsWith('p:'))
          .map(([k]) => k.slice(2)),
      );
      return [
        {
          key: `${kind}-${row.projectId}`,
          heading: `${heading} of ${path}`,
          kind,
          projectId: row.projectId,
          action: tab && `/${path}/${tab}`,
          queries: row.queries,
          watched,
        },
      ];
    }),
  );
  const shown = (groups: QueryGroup[]) => groups.filter((g) => g.queries.length > 0);
  return (
    <SettingsLayout page={page} area="my" section="saved-queries" title="Saved queries">
      <p class="meta">Queries are saved from the query box of a list page.</p>
      <section aria-labelledby="global-queries-heading">
        <h2 id="global-queries-heading">Across projects</h2>
        {shown(global).length === 0 ? <p class="empty">No saved query.</p> : shown(global).map((g) => <QueryGroupList key={g.key} page={page} group={g} />)}
      </section>
      <section aria-labelledby="project-queries-heading">
        <h2 id="project-queries-heading">In projects</h2>
        {perProject.length === 0 ? <p class="empty">No saved query.</p> : perProject.map((g) => <QueryGroupList key={g.key} page={page} group={g} />)}
      </section>
    </SettingsLayout>
  );
}

/** A watch as listed: its kind and id, the watched item's link and title, and its state. */
interface WatchItem {
  kind: 'issue' | 'pull';
  id: number;
  href: string;
  label: string;
  watching: boolean;
}

/** Loads a watched item the caller can still see; null when it is gone or out of reach. */
async function visible<T>(load: () => Promise<T>): Promise<T | null> {
  try {
    return await load();
  } catch (error) {
    if (error instanceof GitloomError && error.status < 500) return null;
    throw error;
  }
}

async function watchesPage(page: PageContext, error: string | null = null): Promise<PageResult> {
  const [issueWatches, pullWatches] = await Promise.all([
    listUserIssueWatches(page.ctx, me(page)),
    userPullRequestLists(page.ctx, me(page), 'pullRequestWatches'),
  ]);
  const issues = await Promise.all(issueWatches.map(async (w) => ({ w, issue: await visible(() => getIssue(page.ctx, w.issueId)) })));
  const pulls = await Promise.all(pullWatches.map(async (w) => ({ w, pr: await visible(() => getPullRequest(page.ctx, w.requestId)) })));
  const paths = await projectPaths(page.ctx, [...issues.map(({ issue }) => issue?.projectId ?? 0), ...pulls.map(({ pr }) => pr?.targetProjectId ?? 0)]);
  const items: WatchItem[] = [
    ...issues.flatMap(({ w, issue }) =>
      issue && paths.has(issue.projectId)
        ? [
            {
              kind: 'issue' as const,
              id: w.id,
              href: `/${paths.get(issue.projectId)}/~issues/${issue.number}`,
              label: `${paths.get(issue.projectId)}#${issue.number} ${issue.title}`,
              watching: w.watching === 1,
            },
          ]
        : [],
    ),
    ...pulls.flatMap(({ w, pr }) =>
      pr && paths.has(pr.targetProjectId)
        ? [
            {
              kind: 'pull' as const,
              id: w.id,
              href: `/${paths.get(pr.targetProjectId)}/~pulls/${pr.number}`,
              label: `${paths.get(pr.targetProjectId)}#${pr.number} ${pr.title}`,
              watching: w.watching === 1,
            },
          ]
        : [],
    ),
  ];
  const section = (kind: WatchItem['kind'], heading: string) => {
    const list = items.filter((i) => i.kind === kind);
    return (
      <section aria-labelledby={`${kind}-watches-heading`}>
        <h2 id={`${kind}-watches-heading`}>{heading}</h2>
        {list.length === 0 ? (
          <p class="empty">Nothing watched.</p>
        ) : (
          <ul class="list">
            {list.map((item) => (
              <li key={item.id} class="row">
                <span>
                  <a href={item.href}>{item.label}</a>
                  {!item.watching && <span class="badge">ignored</span>}
                </span>
                <InlineForm
                  page={page}
                  action="/~my/watches"
                  label={`${item.watching ? 'Unwatch' : 'Watch'} ${item.label}`}
                  fields={{ kind: item.kind, id: String(item.id), watching: item.watching ? 'false' : 'true' }}
                  buttonClass="link"
                  buttonLabel={`${item.watching ? 'Unwatch' : 'Watch'} ${item.label}`}
                >
                  {item.watching ? 'Unwatch' : 'Watch'}
                </InlineForm>
              </li>
            ))}
          </ul>
        )}
      </section>
    );
  };
  return (
    <SettingsLayout page={page} area="my" section="watches" title="Watches" error={error}>
      <p class="meta">
        You are notified of the activity of what you watch. Watched saved queries are listed under <a href="/~my/saved-queries">Saved queries</a>.
      </p>
      {section('issue', 'Issues')}
      {section('pull', 'Pull requests')}
    </SettingsLayout>
  );
}

async function changeWatch(page: PageContext): Promise<PageResult> {
  const { kind, watching } = page.form;
  const id = formId(page, 'watch');
  if (kind !== 'issue' && kind !== 'pull') throw new BadRequest(`Unknown watch kind: ${kind ?? ''}`);
  const watch = kind === 'issue' ? await getIssueWatch(page.ctx, id) : await getWatch(page.ctx, id);
  // this page changes the signed-in user's watches only, administrators included
  if (watch.userId !== me(page)) throw new NotFound(`Watch not found: ${id}`);
  const patch = { watching: watching === 'true' };
  if (kind === 'issue') await updateIssueWatch(page.ctx, id, patch);
  else await updateWatch(page.ctx, id, patch);
  return redirect('/~my/watches');
}

export const queryAndWatchPages: PageModule = {
  pages: [
    settingsRoute('my', 'GET', '/saved-queries', savedQueriesPage),
    settingsRoute('my', 'GET', '/watches', (page) => watchesPage(page)),
    settingsPost(
      'my',
      '/watches',
      (page) => changeWatch(page),
      (page, message) => watchesPage(page, message),
    ),
  ],
};
