/**
 * Mentions on code comments (docs/compatibility.md#mentions-and-notifications).
 */
import type { Db } from '../../db/database.js';
import { insertMissing } from '../entities.js';
import { mentionedUserIds } from '../users/index.js';

/**
 * Records the users mentioned in `text` (a code comment's content or reply) on code comment
 * `commentId` (docs/compatibility.md#mentions-and-notifications): one mention row per user
 * (existing rows kept). Unknown names are ignored. Run it inside the transaction that stores the text.
 */
export async function recordMentionsOnCodeComment(db: Db, commentId: number, text: string | null | undefined): Promise<void> {
  const ids = await mentionedUserIds(db, text);
  await insertMissing(
    db,
    'codeCommentMentions',
    ids.map((userId) => ({ commentId, userId })),
    ['commentId', 'userId'],
  );
}
