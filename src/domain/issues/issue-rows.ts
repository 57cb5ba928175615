/**
 * Issue rows and watchers as background work (the outbox) reads them, without a caller's permissions.
 */
import type { Db } from '../../db/database.js';
import type { IssueRow } from '../../db/schema.js';

/** The issue row with id `issueId`, or null when there is none (deleted meanwhile). */
export async function findIssueRow(db: Db, issueId: number): Promise<IssueRow | null> {
  return (await db.selectFrom('issues').selectAll().where('id', '=', issueId).executeTakeFirst()) ?? null;
}

/** The ids of the users watching issue `issueId` now (`watching=true`; opt-outs excluded), docs/compatibility.md#issue-watches-and-votes. */
export async function issueWatcherIds(db: Db, issueId: number): Promise<number[]> {
  return (await db.selectFrom('issueWatches').select('userId').where('issueId', '=', issueId).where('watching', '=', 1).execute()).map((r) => r.userId);
}
