/**
 * Code comment rows as background work (the outbox) reads them, without a caller's permissions.
 */
import type { Db } from '../../db/database.js';
import type { CodeCommentRow } from '../../db/schema.js';

/** The code comment row with id `commentId`, or null when there is none (deleted meanwhile). */
export async function findCodeCommentRow(db: Db, commentId: number): Promise<CodeCommentRow | null> {
  return (await db.selectFrom('codeComments').selectAll().where('id', '=', commentId).executeTakeFirst()) ?? null;
}
