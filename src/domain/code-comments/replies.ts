import type { CodeCommentReplyRow } from '../../db/schema.js';
import { BadRequest, NotFound } from '../../errors.js';
import type { Context } from '../context.js';
import { loadRow } from '../entities.js';
import { insertComment } from '../conversations.js';
import { deny, requireUser } from '../actor.js';
import { requireSelfOrAdmin } from '../users/index.js';
import {
  checkContent,
  compareContextColumns,
  loadReadableCodeComment,
  recordCodeCommentMentions,
  recordCodeCommentReferences,
  touchPullRequest,
  type CompareContext,
} from './code-comments.js';

/** CodeCommentReply input (docs/compatibility.md#code-comment-replies). */
export interface CodeCommentReplyData {
  commentId: number;
  userId?: number;
  content: string;
  date?: number;
  compareContext: CompareContext;
}

async function loadReadableReply(ctx: Context, id: number) {
  const reply = await loadRow(ctx.db, 'codeCommentReplies', id, 'Code comment reply');
  const loaded = await loadReadableCodeComment(ctx, reply.commentId);
  return { reply, ...loaded };
}

/** Get (docs/compatibility.md#code-comment-replies; works, unlike OneDev): ReadCode on the comment's project. */
export async function getCodeCommentReply(ctx: Context, id: number): Promise<CodeCommentReplyRow> {
  return (await loadReadableReply(ctx, id)).reply;
}

/** Get Replies of a comment (docs/compatibility.md#code-comments), oldest first. */
export async function listCodeCommentReplies(ctx: Context, commentId: number): Promise<CodeCommentReplyRow[]> {
  await loadReadableCodeComment(ctx, commentId);
  return ctx.db.selectFrom('codeCommentReplies').selectAll().where('commentId', '=', commentId).orderBy('id').execute();
}

/**
 * Create (docs/compatibility.md#code-comment-replies): ReadCode on the comment's project and (administrator or `userId` =
 * caller). The comment's `replyCount` +1 and lastActivity `replied`; mentions recorded. Returns the id.
 */
export async function createCodeCommentReply(ctx: Context, data: CodeCommentReplyData): Promise<number> {
  const userId = data.userId ?? requireUser(ctx.actor);
  requireSelfOrAdmin(ctx, userId);
  const exists = await ctx.db.selectFrom('codeComments').select('id').where('id', '=', data.commentId).executeTakeFirst();
  if (!exists) throw new BadRequest(`Code comment not found: ${data.commentId}`);
  const { comment } = await loadReadableCodeComment(ctx, data.commentId);
  const content = checkContent(data.content);
  const compare = await compareContextColumns(ctx.db, comment.projectId, data.compareContext);
  const date = data.date ?? ctx.now();
  return ctx.db.transaction().execute(async (tx) => {
    const conversation = { table: 'codeComments', id: comment.id, counter: 'replyCount', activity: 'replied' } as const;
    const id = await insertComment(tx, 'codeCommentReplies', { commentId: comment.id, userId, content, date, ...compare }, conversation);
    await recordCodeCommentMentions(tx, comment, content);
    await recordCodeCommentReferences(tx, comment, userId, ctx.now(), content);
    await touchPullRequest(tx, comment.comparePullRequestId, date);
    return id;
  });
}

/** Update (docs/compatibility.md#code-comment-replies): administrator or author; content, date and compare context merge; lastActivity `reply edited`. */
export async function updateCodeCommentReply(ctx: Context, id: number, patch: Partial<CodeCommentReplyData>): Promise<void> {
  const { reply, comment } = await loadReadableReply(ctx, id);
  requireSelfOrAdmin(ctx, reply.userId);
  if (patch.commentId !== undefined && patch.commentId !== reply.commentId) throw new BadRequest("'commentId' can not be changed");
  if (patch.userId !== undefined && patch.userId !== reply.userId) throw new BadRequest("'userId' can not be changed");
  const content = patch.content === undefined ? reply.content : checkContent(patch.content);
  const compare = patch.compareContext === undefined ? {} : await compareContextColumns(ctx.db, comment.projectId, patch.compareContext);
  await ctx.db.transaction().execute(async (tx) => {
    await tx
      .updateTable('codeCommentReplies')
      .set({ content, date: patch.date ?? reply.date, ...compare })
      .where('id', '=', id)
      .execute();
    if (patch.content !== undefined) await recordCodeCommentReferences(tx, comment, ctx.actor.userId, ctx.now(), content);
    await tx
      .updateTable('codeComments')
      .set({ lastActivityUserId: ctx.actor.userId, lastActivityDate: ctx.now(), lastActivityDescription: 'reply edited' })
      .where('id', '=', comment.id)
      .execute();
  });
}

/** Delete (docs/compatibility.md#code-comment-replies): author or ManageCodeComments; `replyCount` −1, lastActivity `reply deleted`. */
export async function deleteCodeCommentReply(ctx: Context, id: number): Promise<void> {
  const { reply, permissions } = await loadReadableReply(ctx, id);
  requireUser(ctx.actor);
  if (reply.userId !== ctx.actor.userId && !permissions.manageCodeComments) deny(ctx.actor);
  await ctx.db.transaction().execute(async (tx) => {
    const done = await tx.deleteFrom('codeCommentReplies').where('id', '=', id).executeTakeFirst();
    if (Number(done.numDeletedRows) !== 1) throw new NotFound(`Code comment reply not found: ${id}`);
    await tx
      .updateTable('codeComments')
      .set((eb) => ({
        replyCount: eb('replyCount', '-', 1),
        lastActivityUserId: ctx.actor.userId,
        lastActivityDate: ctx.now(),
        lastActivityDescription: 'reply deleted',
      }))
      .where('id', '=', reply.commentId)
      .execute();
  });
}
