import type { Db } from '../../db/database.js';
import { BadRequest, Conflict, NotFound } from '../../errors.js';
import { parseQuery } from '../../query/index.js';
import { isForeignKeyViolation, isUniqueViolation } from '../unique.js';
import type { Context } from '../context.js';
import { parseIssueQuery } from '../issues/index.js';
import { findProjectRow, loadProjectWith } from '../projects/index.js';
import { requireUser } from '../actor.js';
import { getUserRow, requireSelfOrAdmin, userExists } from '../users/index.js';
import { commonQueryNames, type NamedQuery, type PersonalizationKind } from './common-queries.js';

/** A query personalization of any kind (docs/compatibility.md#query-personalizations); absent parts are undefined. */
export interface Personalization {
  id: number;
  projectId: number;
  userId: number;
  queries: NamedQuery[];
  queryWatches?: Record<string, boolean>;
  querySubscriptions?: string[];
}

/** Input of create/update: the personalization's fields (update merges them). */
export interface PersonalizationData {
  projectId?: number;
  userId?: number;
  queries?: NamedQuery[];
  queryWatches?: Record<string, boolean>;
  querySubscriptions?: string[];
}

const TABLES = {
  issue: { table: 'issueQueryPersonalizations', extra: 'queryWatches' },
  pullRequest: { table: 'pullRequestQueryPersonalizations', extra: 'queryWatches' },
  build: { table: 'buildQueryPersonalizations', extra: 'querySubscriptions' },
  commit: { table: 'commitQueryPersonalizations', extra: 'querySubscriptions' },
  codeComment: { table: 'codeCommentQueryPersonalizations', extra: null },
} as const;

const LABELS: Record<PersonalizationKind, string> = {
  issue: 'Issue query personalization',
  pullRequest: 'Pull request query personalization',
  build: 'Build query personalization',
  commit: 'Commit query personalization',
  codeComment: 'Code comment query personalization',
};

function toPersonalization(kind: PersonalizationKind, row: Record<string, any>): Personalization {
  const result: Personalization = { id: row.id, projectId: row.projectId, userId: row.userId, queries: JSON.parse(row.queries) as NamedQuery[] };
  const extra = TABLES[kind].extra;
  if (extra === 'queryWatches') result.queryWatches = JSON.parse(row.queryWatches) as Record<string, boolean>;
  if (extra === 'querySubscriptions') result.querySubscriptions = JSON.parse(row.querySubscriptions) as string[];
  return result;
}

/**
 * Validates saved queries: non-empty unique names; query texts of the issue, pull request and
 * code comment languages must parse (400 naming the query).
 */
export function checkQueries(kind: PersonalizationKind | 'project', queries: readonly NamedQuery[]): NamedQuery[] {
  const names = new Set<string>();
  return queries.map((item, i) => {
    const name = typeof item?.name === 'string' ? item.name.trim() : '';
    if (!name) throw new BadRequest(`queries[${i}].name is required`);
    if (names.has(name)) throw new BadRequest(`Duplicate query name: ${name}`);
    names.add(name);
    const query = item.query ?? null;
    if (query !== null) {
      try {
        if (kind === 'issue') parseIssueQuery(query);
        else if (kind === 'pullRequest') parseQuery('pulls', query);
        else if (kind === 'codeComment') parseQuery('codeComments', query);
        else if (kind === 'project') parseQuery('projects', query);
      } catch (error) {
        throw new BadRequest(`Invalid query '${name}': ${(error as Error).message}`);
      }
    }
    return { name, query };
  });
}

/** Keeps the watch/subscription keys that name an own query (`p:`) or a common query (`g:`). */
export function pruneKeys(keys: readonly string[], own: readonly NamedQuery[], common: readonly string[]): string[] {
  return keys.filter((key) => (key.startsWith('p:') && own.some((q) => q.name === key.slice(2))) || (key.startsWith('g:') && common.includes(key.slice(2))));
}

async function loadRow(db: Db, kind: PersonalizationKind, id: number): Promise<Personalization> {
  const row = await (db as any).selectFrom(TABLES[kind].table).selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFound(`${LABELS[kind]} not found: ${id}`);
  return toPersonalization(kind, row);
}

/** Get (docs/compatibility.md#query-personalizations): administrator or owner. */
export async function getPersonalization(ctx: Context, kind: PersonalizationKind, id: number): Promise<Personalization> {
  const item = await loadRow(ctx.db, kind, id);
  requireSelfOrAdmin(ctx, item.userId);
  return item;
}

async function columns(ctx: Context, kind: PersonalizationKind, merged: Personalization) {
  const queries = checkQueries(kind, merged.queries);
  const common = await commonQueryNames(ctx.db, merged.projectId, kind);
  const values: Record<string, string> = { queries: JSON.stringify(queries) };
  if (TABLES[kind].extra === 'queryWatches') {
    const watches = merged.queryWatches ?? {};
    const kept = pruneKeys(Object.keys(watches), queries, common);
    values.queryWatches = JSON.stringify(Object.fromEntries(kept.map((k) => [k, Boolean(watches[k])])));
  } else if (TABLES[kind].extra === 'querySubscriptions') {
    values.querySubscriptions = JSON.stringify([...new Set(pruneKeys(merged.querySubscriptions ?? [], queries, common))]);
  }
  return values;
}

async function checkScope(ctx: Context, projectId: number, userId: number): Promise<void> {
  requireSelfOrAdmin(ctx, userId);
  if (!(await findProjectRow(ctx.db, projectId))) throw new BadRequest(`Project not found: ${projectId}`);
  if (!(await userExists(ctx.db, userId))) throw new BadRequest(`User not found: ${userId}`);
  await loadProjectWith(ctx, projectId, 'access');
}

/**
 * Create (docs/compatibility.md#query-personalizations): access to the project (builds included, unlike OneDev) and
 * (administrator or `userId` = caller; defaults to the caller); one per project and user (409);
 * queries validated; watch/subscription keys naming no own or common query are dropped. Returns the id.
 */
export async function createPersonalization(ctx: Context, kind: PersonalizationKind, data: PersonalizationData): Promise<number> {
  if (data.projectId === undefined) throw new BadRequest('projectId is required');
  const userId = data.userId ?? requireUser(ctx.actor);
  await checkScope(ctx, data.projectId, userId);
  const values = await columns(ctx, kind, {
    id: 0,
    projectId: data.projectId,
    userId,
    queries: data.queries ?? [],
    queryWatches: data.queryWatches,
    querySubscriptions: data.querySubscriptions,
  });
  const { table } = TABLES[kind];
  return ctx.db
    .transaction()
    .execute(async (tx) => {
      const existing = await (tx as any).selectFrom(table).select('id').where('projectId', '=', data.projectId).where('userId', '=', userId).executeTakeFirst();
      if (existing) throw new Conflict(`${LABELS[kind]} already exists for this user and project`);
      const row = await (tx as any)
        .insertInto(table)
        .values({ projectId: data.projectId, userId, ...values })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id as number;
    })
    .catch((error: unknown) => {
      // the checks above passed, but a concurrent request won: a twin was created (409) or the
      // project or user was deleted meanwhile (404)
      if (isUniqueViolation(error)) throw new Conflict(`${LABELS[kind]} already exists for this user and project`, { cause: error });
      if (isForeignKeyViolation(error)) throw new NotFound('Project or user not found', { cause: error });
      throw error;
    });
}

/** Update (docs/compatibility.md#query-personalizations): partial merge, checked as create on the merged object; keys pruned again. */
export async function updatePersonalization(ctx: Context, kind: PersonalizationKind, id: number, patch: PersonalizationData): Promise<void> {
  const stored = await getPersonalization(ctx, kind, id);
  const merged: Personalization = {
    ...stored,
    ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)),
  } as Personalization;
  await checkScope(ctx, merged.projectId, merged.userId);
  const values = await columns(ctx, kind, merged);
  const { table } = TABLES[kind];
  await ctx.db.transaction().execute(async (tx) => {
    if (merged.projectId !== stored.projectId || merged.userId !== stored.userId) {
      const clash = await (tx as any)
        .selectFrom(table)
        .select('id')
        .where('projectId', '=', merged.projectId)
        .where('userId', '=', merged.userId)
        .where('id', '<>', id)
        .executeTakeFirst();
      if (clash) throw new Conflict(`${LABELS[kind]} already exists for this user and project`);
    }
    await (tx as any)
      .updateTable(table)
      .set({ projectId: merged.projectId, userId: merged.userId, ...values })
      .where('id', '=', id)
      .execute();
  });
}

/** Delete (docs/compatibility.md#query-personalizations): administrator or owner. */
export async function deletePersonalization(ctx: Context, kind: PersonalizationKind, id: number): Promise<void> {
  await getPersonalization(ctx, kind, id);
  await (ctx.db as any).deleteFrom(TABLES[kind].table).where('id', '=', id).execute();
}

/** `/users/{id}/project-<kind>-query-personalizations` (docs/compatibility.md#users-endpoints): administrator or self. */
export async function listUserPersonalizations(ctx: Context, kind: PersonalizationKind, userId: number): Promise<Personalization[]> {
  requireSelfOrAdmin(ctx, userId);
  await getUserRow(ctx.db, userId);
  const rows = await (ctx.db as any).selectFrom(TABLES[kind].table).selectAll().where('userId', '=', userId).orderBy('id').execute();
  return (rows as Record<string, unknown>[]).map((row) => toPersonalization(kind, row));
}
