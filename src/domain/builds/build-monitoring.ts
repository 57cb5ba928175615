/**
 * Builds as background work and operations read them, without a caller's permissions: one row
 * for the outbox, the counts and durations of the metrics, the running jobs' leases recovery reads.
 */
import type { Db } from '../../db/database.js';
import type { BuildRow } from '../../db/schema.js';

/** The build row with id `buildId`, or null when there is none (deleted meanwhile). */
export async function findBuildRow(db: Db, buildId: number): Promise<BuildRow | null> {
  return (await db.selectFrom('builds').selectAll().where('id', '=', buildId).executeTakeFirst()) ?? null;
}

/** The statuses of unfinished builds: WAITING, PENDING (queued), RUNNING. */
const UNFINISHED_BUILD_STATUSES = ['WAITING', 'PENDING', 'RUNNING'] as const;

/** How many builds are in each of {@link UNFINISHED_BUILD_STATUSES} (0 for a status without builds). */
export async function unfinishedBuildCounts(db: Db): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('builds')
    .select(['status', (eb) => eb.fn.countAll().as('n')])
    .where('status', 'in', [...UNFINISHED_BUILD_STATUSES])
    .groupBy('status')
    .execute();
  return new Map(UNFINISHED_BUILD_STATUSES.map((status) => [status, Number(rows.find((r) => r.status === status)?.n ?? 0)]));
}

/** The builds that ran and finished after `after` (epoch ms): status, running and finish dates, by finish date. */
export async function buildsFinishedAfter(db: Db, after: number): Promise<{ status: BuildRow['status']; runningDate: number; finishDate: number }[]> {
  const rows = await db
    .selectFrom('builds')
    .select(['status', 'runningDate', 'finishDate'])
    .where('finishDate', '>', after)
    .where('runningDate', 'is not', null)
    .orderBy('finishDate')
    .execute();
  return rows.map((r) => ({ status: r.status, runningDate: r.runningDate!, finishDate: r.finishDate! }));
}

/** A running build's job directory and the lease it runs under: its owner's id, and until when (epoch ms). */
export interface JobLease {
  readonly workspace: string;
  readonly owner: string | null;
  readonly expires: number | null;
}

/** The job directories of RUNNING builds and their leases (whose processes recovery keeps). */
export async function runningJobLeases(db: Db): Promise<JobLease[]> {
  const rows = await db
    .selectFrom('builds')
    .select(['jobWorkspace', 'leaseOwner', 'leaseExpires'])
    .where('status', '=', 'RUNNING')
    .where('jobWorkspace', 'is not', null)
    .execute();
  return rows.map((r) => ({ workspace: r.jobWorkspace!, owner: r.leaseOwner, expires: r.leaseExpires }));
}
