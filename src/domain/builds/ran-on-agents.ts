/**
 * Builds and the agents that ran them (docs/compatibility.md#build-agents): what the agents area
 * asks of builds (`has running builds`, `ran build "proj#N"` of the agent query, answered through
 * src/domain/providers.ts), what the Agents pages show of an agent's builds, and what a removed
 * agent leaves: builds that no longer name it.
 */
import type { Db } from '../../db/database.js';
import type { BuildRow } from '../../db/schema.js';
import { requireAdmin } from '../actor.js';
import type { Context } from '../context.js';
import type { Condition } from '../query/index.js';
import { buildByReference } from './builds.js';

/**
 * `has running builds` of the agent query: true where the agent id in column `agentIdColumn`
 * runs a RUNNING build (the subquery leaves out builds on no agent, so `not(…)` reads right).
 */
export function agentsRunningBuildsCondition(agentIdColumn: string): Condition {
  return (eb) =>
    eb(agentIdColumn, 'in', eb.selectFrom('builds').select('builds.agentId').where('builds.status', '=', 'RUNNING').where('builds.agentId', 'is not', null));
}

/**
 * `ran build "proj#N"` of the agent query: the id of the agent build `reference` ran on, or null
 * when it ran on none. QuerySyntaxError (400) for a reference naming no build.
 */
export async function agentOfBuildReference(ctx: Context, reference: string): Promise<number | null> {
  const build = await buildByReference(ctx, reference);
  const row = await ctx.db.selectFrom('builds').select('agentId').where('id', '=', build.id).executeTakeFirstOrThrow();
  return row.agentId;
}

/**
 * The `agentsDeleting` reaction: builds that ran on the removed agents keep their history but no
 * longer name them (`agentId` null; OneDev `removeReferences`), so no build names an agent that is
 * gone. Runs in the removal's transaction.
 */
export async function forgetAgents(db: Db, agentIds: readonly number[]): Promise<void> {
  if (agentIds.length === 0) return;
  await db.updateTable('builds').set({ agentId: null }).where('agentId', 'in', agentIds).execute();
}

/** How many RUNNING builds each of `agentIds` runs (agents running none are absent). Administrators only. */
export async function runningBuildCounts(ctx: Context, agentIds: readonly number[]): Promise<Map<number, number>> {
  requireAdmin(ctx.actor);
  if (agentIds.length === 0) return new Map();
  const rows = await ctx.db
    .selectFrom('builds')
    .select(['agentId', (eb) => eb.fn.countAll<number>().as('count')])
    .where('agentId', 'in', agentIds)
    .where('status', '=', 'RUNNING')
    .groupBy('agentId')
    .execute();
  return new Map(rows.map((row) => [row.agentId!, Number(row.count)]));
}

/**
 * The builds agent `agentId` ran, newest first: its RUNNING ones (`running` true) or the others
 * (`running` false), at most `limit`. Administrators only (the Agents pages).
 */
export async function buildsRanOnAgent(ctx: Context, agentId: number, options: { running: boolean; limit: number }): Promise<BuildRow[]> {
  requireAdmin(ctx.actor);
  return ctx.db
    .selectFrom('builds')
    .selectAll()
    .where('agentId', '=', agentId)
    .where('status', options.running ? '=' : '<>', 'RUNNING')
    .orderBy('id', 'desc')
    .limit(options.limit)
    .execute();
}
