/**
 * Mentions and auto-watches of issues (docs/compatibility.md#mentions-and-notifications,
 * docs/compatibility.md#issue-watches-and-votes).
 */
import type { Db } from '../../db/database.js';
import { insertMissing } from '../entities.js';
import { mentionedUserIds } from '../users/index.js';

/**
 * Records the users mentioned in `text` (an issue's description or comment) on issue `issueId`
 * (docs/compatibility.md#mentions-and-notifications): one mention row per user (existing rows
 * kept), access to the issue when it is confidential, and an auto-watch ({@link autoWatchIssue}).
 * Unknown names are ignored. Run it inside the transaction that stores the text.
 */
export async function recordIssueMentions(db: Db, issueId: number, text: string | null | undefined): Promise<void> {
  const ids = await mentionedUserIds(db, text);
  if (ids.length === 0) return;
  await insertMissing(
    db,
    'issueMentions',
    ids.map((userId) => ({ issueId, userId })),
    ['issueId', 'userId'],
  );
  await insertMissing(
    db,
    'issueAuthorizations',
    ids.map((userId) => ({ issueId, userId })),
    ['issueId', 'userId'],
  );
  await autoWatchIssue(db, issueId, ids);
}

/**
 * Auto-watch (docs/compatibility.md#issue-watches-and-votes): each user without a watch row on the issue
 * gets `watching=true`; existing rows (including explicit opt-outs) are never changed. Users
 * with ids ≤ 0 (system, unknown) are skipped.
 */
export async function autoWatchIssue(db: Db, issueId: number, userIds: readonly number[]): Promise<void> {
  const ids = [...new Set(userIds.filter((id) => id > 0))];
  await insertMissing(
    db,
    'issueWatches',
    ids.map((userId) => ({ issueId, userId, watching: 1 })),
    ['issueId', 'userId'],
  );
}
