/**
 * Mentions on pull requests (docs/compatibility.md#mentions-and-notifications).
 */
import type { Db } from '../../db/database.js';
import { insertMissing } from '../entities.js';
import { mentionedUserIds } from '../users/index.js';
import { autoWatch } from './changes.js';

/**
 * Records the users mentioned in `text` (a pull request's description, comment, or code comment
 * made while comparing it) on pull request `requestId` (docs/compatibility.md#mentions-and-notifications):
 * one mention row per user (existing rows kept), and the mentioned user auto-watches it
 * (`watching=true`, only when no watch row exists). Unknown names are ignored. Run it inside the
 * transaction that stores the text.
 */
export async function recordPullRequestMentions(db: Db, requestId: number, text: string | null | undefined): Promise<void> {
  const ids = await mentionedUserIds(db, text);
  if (ids.length === 0) return;
  await insertMissing(
    db,
    'pullRequestMentions',
    ids.map((userId) => ({ requestId, userId })),
    ['requestId', 'userId'],
  );
  await autoWatch(db, requestId, ids);
}
