/**
 * Builds as background work and operations read them, without a caller's permissions: one row
 * for the outbox, the counts and durations of the metrics, the workspaces start-up recovery keeps.
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

/** The job workspaces of running builds whose lease is still valid at `now` (another process runs them). */
export async function leasedJobWorkspaces(db: Db, now: number): Promise<string[]> {
  const rows = await db
    .selectFrom('builds')
    .select('jobWorkspace')
    .where('status', '=', 'RUNNING')
    .where('leaseExpires', '>', now)
    .where('jobWorkspace', 'is not', null)
    .execute();
  return rows.flatMap((r) => (r.jobWorkspace ? [r.jobWorkspace] : []));
}
