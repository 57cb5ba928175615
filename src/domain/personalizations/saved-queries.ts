import { BadRequest } from '../../errors.js';
import { ANONYMOUS_ID, type Context } from '../context.js';
import { requireUser } from '../actor.js';
import type { NamedQuery, PersonalizationKind } from './common-queries.js';
import { createPersonalization, listUserPersonalizations, updatePersonalization } from './personalizations.js';
import { getQueriesAndWatches, setQueriesAndWatches, type QueriesAndWatches } from './queries-and-watches.js';

/**
 * The saved queries of the query boxes (docs/compatibility.md#query-personalizations): one read/write over the
 * personalization resources the API serves, so the pages and `/~api` show the same lists.
 *
 * - In a project (`projectId` given), a kind's queries are the caller's
 *   `<kind>-query-personalization` of that project (`/~api/issue-query-personalizations`, …),
 *   created on the first save.
 * - Outside projects (`projectId` null), they are the caller's cross-project lists of
 *   QueriesAndWatches (`/~api/users/{id}/queries-and-watches`): `projectQueries`,
 *   `issueQueries`, `pullRequestQueries`, `buildQueries`. Commits and code comments have no
 *   cross-project list (400).
 */

/** What a query box lists: a personalization kind, or `project` for the project list. */
export type SavedQueryKind = PersonalizationKind | 'project';

const MAX_NAME = 255;

const GLOBAL_FIELDS: Partial<Record<SavedQueryKind, 'projectQueries' | 'issueQueries' | 'pullRequestQueries' | 'buildQueries'>> = {
  project: 'projectQueries',
  issue: 'issueQueries',
  pullRequest: 'pullRequestQueries',
  build: 'buildQueries',
};

function globalField(kind: SavedQueryKind): keyof QueriesAndWatches {
  const field = GLOBAL_FIELDS[kind];
  if (!field) throw new BadRequest(`Queries of kind ${kind} are saved per project only`);
  return field;
}

function projectKind(kind: SavedQueryKind): PersonalizationKind {
  if (kind === 'project') throw new BadRequest('Project queries are saved outside projects only');
  return kind;
}

async function ownPersonalization(ctx: Context, kind: PersonalizationKind, projectId: number, userId: number) {
  return (await listUserPersonalizations(ctx, kind, userId)).find((p) => p.projectId === projectId);
}

/** A query box's saved queries and, for issues and pull requests, which of them the caller watches. */
export interface SavedQueries {
  queries: NamedQuery[];
  /** Watched saved queries by name (`p:<name>` keys of the personalization); null: the kind has no watches. */
  watched: Set<string> | null;
}

const WATCH_FIELDS: Partial<Record<SavedQueryKind, 'issueQueryWatches' | 'pullRequestQueryWatches'>> = {
  issue: 'issueQueryWatches',
  pullRequest: 'pullRequestQueryWatches',
};

function watchedNames(watches: Record<string, boolean> | undefined): Set<string> {
  return new Set(
    Object.entries(watches ?? {})
      .filter(([key, on]) => on && key.startsWith('p:'))
      .map(([key]) => key.slice(2)),
  );
}

/**
 * The caller's saved queries of `kind`, in their saved order, with the watched ones for issues
 * and pull requests; anonymous visitors have none.
 * @param projectId the project of a project list page, null for the cross-project lists.
 * @throws BadRequest for a kind without a list at that scope.
 */
export async function listSavedQueries(ctx: Context, kind: SavedQueryKind, projectId: number | null): Promise<SavedQueries> {
  const userId = ctx.actor.userId;
  const watchField = WATCH_FIELDS[kind];
  if (userId === ANONYMOUS_ID) return { queries: [], watched: watchField ? new Set() : null };
  if (projectId === null) {
    const all = await getQueriesAndWatches(ctx, userId);
    return { queries: all[globalField(kind)] as NamedQuery[], watched: watchField ? watchedNames(all[watchField]) : null };
  }
  const own = await ownPersonalization(ctx, projectKind(kind), projectId, userId);
  return { queries: own?.queries ?? [], watched: watchField ? watchedNames(own?.queryWatches) : null };
}

/**
 * Watches or unwatches the caller's saved issue or pull request query `name` (the `p:<name>`
 * key of the query watches): the caller is notified of new matches as OneDev does. 400 for
 * other kinds or an unknown name.
 */
export async function watchSavedQuery(ctx: Context, kind: SavedQueryKind, projectId: number | null, name: string, watching: boolean): Promise<void> {
  const userId = requireUser(ctx.actor);
  const watchField = WATCH_FIELDS[kind];
  if (!watchField) throw new BadRequest(`Queries of kind ${kind} can not be watched`);
  const key = `p:${name}`;
  const update = (watches: Record<string, boolean> | undefined) => {
    const next = { ...(watches ?? {}) };
    if (watching) next[key] = true;
    else delete next[key];
    return next;
  };
  if (projectId === null) {
    const all = await getQueriesAndWatches(ctx, userId);
    if (!(all[globalField(kind)] as NamedQuery[]).some((q) => q.name === name)) throw new BadRequest(`No saved query named ${name}`);
    await setQueriesAndWatches(ctx, userId, { [watchField]: update(all[watchField]) });
    return;
  }
  const own = await ownPersonalization(ctx, projectKind(kind), projectId, userId);
  if (!own?.queries.some((q) => q.name === name)) throw new BadRequest(`No saved query named ${name}`);
  await updatePersonalization(ctx, projectKind(kind), own.id, { queryWatches: update(own.queryWatches) });
}

/**
 * Saves `query` under `name` for the caller (signed in): replaces the query of that name, else
 * appends it. The query text is validated by the personalization checks (400 naming the query);
 * an empty text saves "all" (null). Name: 1–255 characters after trimming (400).
 */
export async function saveQuery(ctx: Context, kind: SavedQueryKind, projectId: number | null, name: string, query: string): Promise<void> {
  const userId = requireUser(ctx.actor);
  const trimmed = name.trim();
  if (!trimmed) throw new BadRequest('A name is required to save the query');
  if (trimmed.length > MAX_NAME) throw new BadRequest(`The name should not exceed ${MAX_NAME} characters`);
  const item: NamedQuery = { name: trimmed, query: query.trim() === '' ? null : query };
  const replace = (queries: readonly NamedQuery[]) =>
    queries.some((q) => q.name === trimmed) ? queries.map((q) => (q.name === trimmed ? item : q)) : [...queries, item];
  if (projectId === null) {
    const field = globalField(kind);
    const current = (await getQueriesAndWatches(ctx, userId))[field] as NamedQuery[];
    await setQueriesAndWatches(ctx, userId, { [field]: replace(current) });
    return;
  }
  const personalKind = projectKind(kind);
  const own = await ownPersonalization(ctx, personalKind, projectId, userId);
  if (own) await updatePersonalization(ctx, personalKind, own.id, { queries: replace(own.queries) });
  else await createPersonalization(ctx, personalKind, { projectId, userId, queries: [item] });
}

/** Deletes the caller's saved query `name` (signed in); an unknown name changes nothing. */
export async function deleteSavedQuery(ctx: Context, kind: SavedQueryKind, projectId: number | null, name: string): Promise<void> {
  const userId = requireUser(ctx.actor);
  if (projectId === null) {
    const field = globalField(kind);
    const current = (await getQueriesAndWatches(ctx, userId))[field] as NamedQuery[];
    if (current.some((q) => q.name === name)) await setQueriesAndWatches(ctx, userId, { [field]: current.filter((q) => q.name !== name) });
    return;
  }
  const personalKind = projectKind(kind);
  const own = await ownPersonalization(ctx, personalKind, projectId, userId);
  if (own?.queries.some((q) => q.name === name)) {
    await updatePersonalization(ctx, personalKind, own.id, { queries: own.queries.filter((q) => q.name !== name) });
  }
}
