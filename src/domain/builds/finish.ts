/**
 * The one way a build reaches a final status (docs/compatibility.md#builds-lifecycle, docs/compatibility.md#builds-creating-builds, docs/compatibility.md#builds-build-spec): SUCCESSFUL, FAILED,
 * CANCELLED or TIMED_OUT with its finish date, written in one transaction with the BUILD outbox
 * event (webhooks, mail), so a process killed at any instruction leaves both or neither; then,
 * after the commit, the `buildFinished` reactions (src/domain/event-handlers.ts: schedulers
 * woken, dependency-finished triggers, post-build actions).
 */
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { FinalStatus } from '../../ci/conditions.js';
import type { BuildRow, Database } from '../../db/schema.js';
import type { Context } from '../context.js';
import { faultPoint } from '../fault-points.js';
import { announceLogChanged, logChanged } from './log-signals.js';
import { announceBuildsChanged } from './wakeup.js';

/** Columns written with the final status. */
export interface BuildFinish {
  status: FinalStatus;
  /** Who cancelled it (CANCELLED; null: the system). */
  cancellerId?: number | null;
  /** The version and description a `SetBuildVersion`/`SetBuildDescription` step reported. */
  version?: string;
  description?: string;
}

/**
 * Finishes build `buildId` when `guard` still holds for its row (the caller's expectation, e.g.
 * RUNNING and leased by this process, or WAITING): sets the status, finish date (`ctx.now()`),
 * canceller, version and description, clears the lease, the paused flag and the job token of an
 * agent's build, and enqueues the
 * BUILD event — all in one transaction, which also announces the change to the other processes'
 * schedulers and log followers — then wakes the log's followers in this process and dispatches
 * `buildFinished` to its reactions.
 *
 * @returns the build's project and number when this call finished it, null when the guard no
 *   longer held.
 * @throws the first error of a failing reaction (the build is finished all the same).
 */
export async function finishBuild(
  ctx: Context,
  buildId: number,
  finish: BuildFinish,
  guard: (eb: ExpressionBuilder<Database, 'builds'>) => Expression<SqlBool>,
): Promise<Pick<BuildRow, 'projectId' | 'number'> | null> {
  const finishDate = ctx.now();
  const finished = await ctx.db.transaction().execute(async (tx) => {
    const done = await tx
      .updateTable('builds')
      .set({
        status: finish.status,
        finishDate,
        leaseOwner: null,
        leaseExpires: null,
        paused: 0,
        ...(finish.cancellerId !== undefined && { cancellerId: finish.cancellerId }),
        ...(finish.version !== undefined && { version: finish.version }),
        ...(finish.description !== undefined && { description: finish.description.slice(0, 12000) }),
      })
      .where('id', '=', buildId)
      .where(guard)
      .returning(['projectId', 'number'])
      .executeTakeFirst();
    if (!done) return null;
    // a job token holds only while its build runs (src/domain/builds/agent-jobs.ts)
    await tx.deleteFrom('jobTokens').where('buildId', '=', buildId).execute();
    faultPoint('build-finish-written');
    await ctx.events.dispatchInTransaction('activity', { db: tx, activity: { type: 'BUILD', buildId, actorId: finish.cancellerId ?? null, date: finishDate } });
    // the other processes' schedulers (a cancelled build they run, dependents) and the followers of its log
    await announceBuildsChanged(tx);
    await announceLogChanged(tx, buildId);
    return done;
  });
  if (finished) {
    logChanged(buildId);
    const [failed] = await ctx.events.dispatch('buildFinished', { buildId });
    if (failed !== undefined) throw failed;
  }
  return finished;
}
