import type { Context } from '../context.js';
import { getUserRow, requireSelfOrAdmin } from '../users/index.js';
import { GLOBAL_QUERIES, type NamedQuery } from './common-queries.js';
import { checkQueries, pruneKeys } from './personalizations.js';

/** QueriesAndWatches (docs/compatibility.md#users-endpoints): a user's cross-project saved queries and watches. */
export interface QueriesAndWatches {
  projectQueries: NamedQuery[];
  issueQueries: NamedQuery[];
  issueQueryWatches: Record<string, boolean>;
  pullRequestQueries: NamedQuery[];
  pullRequestQueryWatches: Record<string, boolean>;
  buildQueries: NamedQuery[];
  buildQuerySubscriptions: string[];
}

const EMPTY: QueriesAndWatches = {
  projectQueries: [],
  issueQueries: [],
  issueQueryWatches: {},
  pullRequestQueries: [],
  pullRequestQueryWatches: {},
  buildQueries: [],
  buildQuerySubscriptions: [],
};

/** Get Queries And Watches: administrator or self; empty lists until set. */
export async function getQueriesAndWatches(ctx: Context, userId: number): Promise<QueriesAndWatches> {
  requireSelfOrAdmin(ctx, userId);
  await getUserRow(ctx.db, userId);
  const row = await ctx.db.selectFrom('userQueriesAndWatches').select('data').where('userId', '=', userId).executeTakeFirst();
  return row ? { ...EMPTY, ...(JSON.parse(row.data) as Partial<QueriesAndWatches>) } : { ...EMPTY };
}

function watches(map: Record<string, boolean>, own: NamedQuery[], global: readonly NamedQuery[]): Record<string, boolean> {
  const kept = pruneKeys(
    Object.keys(map),
    own,
    global.map((q) => q.name),
  );
  return Object.fromEntries(kept.map((k) => [k, Boolean(map[k])]));
}

/**
 * Set Queries And Watches: administrator or self. Fields given replace the stored ones (absent
 * fields are kept, unlike OneDev's 500); queries are validated (400) and watch and
 * subscription keys that name neither an own query (`p:`) nor a global one (`g:`) are dropped.
 */
export async function setQueriesAndWatches(ctx: Context, userId: number, patch: Partial<QueriesAndWatches>): Promise<void> {
  const current = await getQueriesAndWatches(ctx, userId);
  const merged = { ...current, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined && v !== null)) } as QueriesAndWatches;
  const value: QueriesAndWatches = {
    projectQueries: checkQueries('project', merged.projectQueries),
    issueQueries: checkQueries('issue', merged.issueQueries),
    issueQueryWatches: {},
    pullRequestQueries: checkQueries('pullRequest', merged.pullRequestQueries),
    pullRequestQueryWatches: {},
    buildQueries: checkQueries('build', merged.buildQueries),
    buildQuerySubscriptions: [],
  };
  value.issueQueryWatches = watches(merged.issueQueryWatches, value.issueQueries, GLOBAL_QUERIES.issue);
  value.pullRequestQueryWatches = watches(merged.pullRequestQueryWatches, value.pullRequestQueries, GLOBAL_QUERIES.pullRequest);
  value.buildQuerySubscriptions = [
    ...new Set(
      pruneKeys(
        merged.buildQuerySubscriptions,
        value.buildQueries,
        GLOBAL_QUERIES.build.map((q) => q.name),
      ),
    ),
  ];
  const data = JSON.stringify(value);
  await ctx.db
    .insertInto('userQueriesAndWatches')
    .values({ userId, data })
    .onConflict((oc) => oc.column('userId').doUpdateSet({ data }))
    .execute();
}
