/**
 * How a job's end is recorded, whoever ran it — a server process's scheduler or an agent
 * (docs/compatibility.md#builds-lifecycle "Retry", docs/compatibility.md#build-agents): a failed
 * job whose `retryCondition` holds goes back to WAITING for a retry after `retryDelay × 2^k`
 * seconds; any other outcome is final (src/domain/builds/finish.ts). Each write holds only while
 * the build is still RUNNING under the lease of whoever reports it, so a cancel, a deletion or
 * another owner wins.
 */
import { evaluateCondition } from '../../ci/conditions.js';
import type { Job } from '../../ci/build-spec.js';
import type { JobStatus } from '../../ci/executor.js';
import type { BuildRow } from '../../db/schema.js';
import type { Context } from '../context.js';
import { finishBuild } from './finish.js';
import { conditionParams, jobOf } from './job-inputs.js';
import { appendLog, archiveLog, readLog } from './storage.js';
import { FINISHED } from './submit.js';

/** How a job ended, as its runner reports it. */
export interface JobOutcome {
  readonly status: JobStatus;
  readonly version?: string;
  readonly description?: string;
}

/** The branch of a full ref name, or null for a tag or another ref. */
function branchOf(refName: string): string | null {
  return refName.startsWith('refs/heads/') ? refName.slice('refs/heads/'.length) : null;
}

/**
 * Records the outcome of a build's job run under lease `owner`: a retry when the job failed, has
 * retries left and its retry condition holds over the log, parameters and branch; else the final
 * status, after `finalLines` are appended to the log.
 *
 * @returns whether this call changed the build (false: it no longer ran under `owner`).
 */
export async function recordJobOutcome(
  ctx: Context,
  build: BuildRow,
  owner: string,
  job: Job,
  params: Record<string, string[]>,
  outcome: JobOutcome,
  finalLines: readonly string[] = [],
): Promise<boolean> {
  if (outcome.status === 'FAILED' && build.retryCount < job.maxRetries) {
    const text = await readLog(ctx.config, build);
    if (evaluateCondition(job.retryConditionAst, { logContains: (t) => text.includes(t), params, branch: branchOf(build.refName) })) {
      return retry(ctx, build, owner, job.retryDelay);
    }
  }
  if (finalLines.length > 0) await appendLog(ctx.config, build, ...finalLines);
  const { version, description } = outcome;
  const finished = await finishBuild(ctx, build.id, { status: outcome.status, version, description }, (eb) =>
    eb.and([eb('status', '=', 'RUNNING'), eb('leaseOwner', '=', owner)]),
  );
  return finished !== null;
}

/** Puts a failed build back to WAITING for retry k = retryCount + 1 after `retryDelay × 2^k` seconds. */
async function retry(ctx: Context, build: BuildRow, owner: string, retryDelay: number): Promise<boolean> {
  const k = build.retryCount + 1;
  const retryDate = ctx.now() + retryDelay * 2 ** k * 1000;
  await appendLog(ctx.config, build, `Job will be retried after ${retryDelay * 2 ** k} seconds (retry ${k})`);
  return ctx.db.transaction().execute(async (tx) => {
    const updated = await tx
      .updateTable('builds')
      .set({ status: 'WAITING', retryDate, retryCount: k, pendingDate: null, runningDate: null, leaseOwner: null, leaseExpires: null, agentId: null })
      .where('id', '=', build.id)
      .where('status', '=', 'RUNNING')
      .where('leaseOwner', '=', owner)
      .executeTakeFirst();
    await tx.deleteFrom('jobTokens').where('buildId', '=', build.id).execute();
    return Number(updated.numUpdatedRows) > 0;
  });
}

/**
 * Ends a RUNNING build whose runner is gone (its lease expired, or its server process was
 * replaced): `reason` goes to the log, then the build is retried when its job's retry condition
 * holds, else FAILED. The reason is in the log before the status changes (a reader seeing FAILED
 * finds it).
 */
export async function endInterrupted(ctx: Context, build: BuildRow, reason: string): Promise<void> {
  await appendLog(ctx.config, build, reason);
  const owner = build.leaseOwner;
  const found = owner === null ? null : await jobOf(ctx, build);
  if (owner !== null && found !== null && !('failure' in found)) {
    const params = await conditionParams(ctx, build.id);
    await recordJobOutcome(ctx, build, owner, found.job, params, { status: 'FAILED' }, ['Job failed']);
    return;
  }
  await appendLog(ctx.config, build, 'Job failed');
  await finishBuild(ctx, build.id, { status: 'FAILED' }, (eb) =>
    eb.and([eb('status', '=', 'RUNNING'), owner === null ? eb('leaseOwner', 'is', null) : eb('leaseOwner', '=', owner)]),
  );
}

/**
 * Once a build's job ended, its log goes to the bucket when the build is finished (not when it
 * waits for a retry): nothing writes it any more (docs/architecture.md#object-storage). Without
 * a bucket nothing happens; a failure leaves the log in the data dir, where it is served from.
 */
export async function archiveFinishedLog(ctx: Context, build: BuildRow): Promise<void> {
  if (ctx.config.objectStore === null) return;
  const row = await ctx.db.selectFrom('builds').select('status').where('id', '=', build.id).executeTakeFirst();
  if (row && FINISHED.includes(row.status)) await archiveLog(ctx.config, build);
}
