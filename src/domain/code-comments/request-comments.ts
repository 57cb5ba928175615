/**
 * The code comments of a pull request as its changes tab (`/<project>/~pulls/<number>/changes`)
 * shows them: the comments with their replies, and the compare range a comment was made in; and
 * the projects of code comments an issue page names as referrers.
 */
import type { Db } from '../../db/database.js';
import type { CodeCommentReplyRow, CodeCommentRow, PullRequestRow } from '../../db/schema.js';
import { NotFound } from '../../errors.js';
import type { Context } from '../context.js';

/** Row types the pages name (src/web may not import src/db). */
export type { CodeCommentReplyRow, CodeCommentRow } from '../../db/schema.js';

/** Most code comments shown on the changes tab (the newest). */
export const MAX_INLINE_COMMENTS = 1000;

/** The code comments of a request with their replies (oldest first). */
export interface RequestCodeComments {
  /** Oldest first, at most {@link MAX_INLINE_COMMENTS} (the newest). */
  comments: CodeCommentRow[];
  /** Replies by comment id, oldest first. */
  replies: Map<number, CodeCommentReplyRow[]>;
}

/** The code comments made on a readable request (`compareContext.pullRequestId`) and their replies, in two queries. */
export async function requestCodeComments(ctx: Context, pr: PullRequestRow): Promise<RequestCodeComments> {
  const comments = (
    await ctx.db.selectFrom('codeComments').selectAll().where('comparePullRequestId', '=', pr.id).orderBy('id', 'desc').limit(MAX_INLINE_COMMENTS).execute()
  ).reverse();
  const replies = new Map<number, CodeCommentReplyRow[]>();
  if (comments.length > 0) {
    const rows = await ctx.db
      .selectFrom('codeCommentReplies')
      .selectAll()
      .where(
        'commentId',
        'in',
        comments.map((c) => c.id),
      )
      .orderBy('id')
      .execute();
    for (const reply of rows) replies.set(reply.commentId, [...(replies.get(reply.commentId) ?? []), reply]);
  }
  return { comments, replies };
}

/**
 * The two commits a code comment of a readable request was made on (its compare context), for
 * the changes tab's `comment=<id>` view. 404 `Code comment not found: N` unless the comment is
 * one of the request's.
 */
export async function requestCommentRange(ctx: Context, pr: PullRequestRow, commentId: number): Promise<{ oldCommitHash: string; newCommitHash: string }> {
  const comment = await ctx.db
    .selectFrom('codeComments')
    .select(['compareOldCommitHash', 'compareNewCommitHash'])
    .where('id', '=', commentId)
    .where('comparePullRequestId', '=', pr.id)
    .executeTakeFirst();
  if (!comment) throw new NotFound(`Code comment not found: ${commentId}`);
  return { oldCommitHash: comment.compareOldCommitHash, newCommitHash: comment.compareNewCommitHash };
}

/** The code comments with ids `ids` that exist: their project, in one query (none for no ids). */
export async function codeCommentProjects(db: Db, ids: readonly number[]): Promise<{ id: number; projectId: number }[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('codeComments').select(['id', 'projectId']).where('id', 'in', ids).execute();
}
