import type { Insertable } from 'kysely';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';

/** A conversation a comment joins: its row in its area's table and the column counting its comments. */
export interface Conversation {
  table: 'issues' | 'pullRequests' | 'codeComments';
  id: number;
  counter: 'commentCount' | 'replyCount';
  /** The last activity the comment sets (`commented`, `replied`). */
  activity: string;
}

/**
 * Adds a comment to a conversation in the caller's transaction `db`: inserts `values` into
 * `table`, then counts it on the conversation, whose last activity becomes the commenter's at
 * the comment's date (docs/compatibility.md#issue-comments, docs/compatibility.md#pull-requests-sub-resources,
 * docs/compatibility.md#code-comment-replies). Each area passes its own tables. Returns the
 * comment's id.
 */
export async function insertComment<T extends 'issueComments' | 'pullRequestComments' | 'codeCommentReplies'>(
  db: Db,
  table: T,
  values: Insertable<Database[T]> & { userId: number; date: number },
  conversation: Conversation,
): Promise<number> {
  const { id } = await (db as any).insertInto(table).values(values).returning('id').executeTakeFirstOrThrow();
  await (db as any)
    .updateTable(conversation.table)
    .set((eb: any) => ({
      [conversation.counter]: eb(conversation.counter, '+', 1),
      lastActivityUserId: values.userId,
      lastActivityDate: values.date,
      lastActivityDescription: conversation.activity,
    }))
    .where('id', '=', conversation.id)
    .execute();
  return id as number;
}
