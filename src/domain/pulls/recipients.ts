/**
 * Who hears about a pull request (docs/compatibility.md#mentions-and-notifications): its watchers, its pending reviewers and its assignees.
 */
import type { Db } from '../../db/database.js';

/** The ids of the users watching pull request `requestId` now (`watching=true`; opt-outs excluded). */
export async function pullRequestWatcherIds(db: Db, requestId: number): Promise<number[]> {
  return (await db.selectFrom('pullRequestWatches').select('userId').where('requestId', '=', requestId).where('watching', '=', 1).execute()).map(
    (r) => r.userId,
  );
}

/** The ids of the users whose review of pull request `requestId` is requested and not given yet (status PENDING). */
export async function pendingReviewerIds(db: Db, requestId: number): Promise<number[]> {
  return (await db.selectFrom('pullRequestReviews').select('userId').where('requestId', '=', requestId).where('status', '=', 'PENDING').execute()).map(
    (r) => r.userId,
  );
}

/** The ids of the users assigned to pull request `requestId`. */
export async function assigneeIds(db: Db, requestId: number): Promise<number[]> {
  return (await db.selectFrom('pullRequestAssignments').select('userId').where('requestId', '=', requestId).orderBy('id').execute()).map((r) => r.userId);
}
