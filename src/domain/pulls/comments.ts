import type { Selectable } from 'kysely';
import type { PullRequestCommentTable } from '../../db/schema.js';
import { BadRequest } from '../../errors.js';
import type { Context } from '../context.js';
import { loadRow } from '../entities.js';
import { insertComment } from '../conversations.js';
import { recordPullRequestMentions } from './pull-request-mentions.js';
import { loadProjectWith } from '../projects/index.js';
import { deny, requireUser } from '../actor.js';
import { parseReferences, recordReferences } from '../issues/index.js';
import { autoWatch } from './changes.js';
import { assertUsersExist, loadReadablePullRequest, MAX_DESCRIPTION, referencedPullRequest, withReadablePullRequest } from './pull-requests.js';

export type PullRequestCommentRow = Selectable<PullRequestCommentTable>;

/** PullRequestComment input (docs/compatibility.md#pull-requests-sub-entities); `date` in epoch milliseconds. */
export interface CommentData {
  requestId?: number;
  userId?: number;
  content?: string;
  date?: number;
}

function validContent(content: unknown): string {
  if (typeof content !== 'string' || !content.trim()) throw new BadRequest('Comment content is required');
  if (content.length > MAX_DESCRIPTION) throw new BadRequest('Comment too long');
  return content;
}

/** Get Comments (docs/compatibility.md#pull-requests-endpoints item 6): read code; oldest first. */
export async function listComments(ctx: Context, requestId: number): Promise<PullRequestCommentRow[]> {
  await loadReadablePullRequest(ctx, requestId);
  return ctx.db.selectFrom('pullRequestComments').selectAll().where('requestId', '=', requestId).orderBy('id').execute();
}

/** `GET /pull-request-comments/{id}`: read code. */
export async function getComment(ctx: Context, id: number): Promise<PullRequestCommentRow> {
  return withReadablePullRequest(ctx, await loadRow(ctx.db, 'pullRequestComments', id, 'Pull request comment'));
}

/**
 * `POST /pull-request-comments` (docs/compatibility.md#pull-requests-sub-resources): read code and yourself unless
 * administrator; content required, ≤ 100,000 characters (400); allowed on closed requests.
 * Increments `commentCount`, sets the last activity `commented`, records @mentions and makes the
 * author and mentioned users watch. Returns the id.
 */
export async function createComment(ctx: Context, data: CommentData): Promise<number> {
  const actorId = requireUser(ctx.actor);
  if (data.requestId === undefined) throw new BadRequest('Missing field "requestId"');
  const pr = await referencedPullRequest(ctx, data.requestId);
  const userId = data.userId ?? actorId;
  if (!ctx.actor.isAdmin && userId !== actorId) deny(ctx.actor);
  await assertUsersExist(ctx.db, [userId], 'comment');
  const content = validContent(data.content);
  const date = data.date ?? ctx.now();
  return ctx.db.transaction().execute(async (tx) => {
    const conversation = { table: 'pullRequests', id: pr.id, counter: 'commentCount', activity: 'commented' } as const;
    const id = await insertComment(tx, 'pullRequestComments', { requestId: pr.id, userId, content, date }, conversation);
    await autoWatch(tx, pr.id, [userId]);
    await recordPullRequestMentions(tx, pr.id, content);
    await recordReferences(
      tx,
      { kind: 'pullRequest', requestId: pr.id, projectId: pr.targetProjectId },
      userId,
      ctx.now(),
      parseReferences(content, 'markdown'),
    );
    await ctx.events.dispatchInTransaction('activity', {
      db: tx,
      activity: { type: 'PULL_REQUEST', action: 'COMMENTED', requestId: pr.id, actorId: userId, date, text: content },
    });
    return id;
  });
}

/**
 * `POST /pull-request-comments/{id}` (docs/compatibility.md#pull-requests-sub-resources): partial update by the comment's
 * author or an administrator (pull request managers cannot edit others' comments); new @mentions
 * are recorded. Minor: no last activity.
 */
export async function updateComment(ctx: Context, id: number, patch: CommentData): Promise<void> {
  requireUser(ctx.actor);
  const current = await loadRow(ctx.db, 'pullRequestComments', id, 'Pull request comment');
  const pr = await loadReadablePullRequest(ctx, current.requestId);
  if (!ctx.actor.isAdmin && current.userId !== ctx.actor.userId) deny(ctx.actor);
  if (patch.requestId !== undefined && patch.requestId !== current.requestId) throw new BadRequest('A comment can not move to another pull request');
  if (patch.userId !== undefined && patch.userId !== current.userId) {
    if (!ctx.actor.isAdmin) deny(ctx.actor);
    await assertUsersExist(ctx.db, [patch.userId], 'comment');
  }
  const content = patch.content === undefined ? current.content : validContent(patch.content);
  const date = patch.date ?? current.date;
  await ctx.db.transaction().execute(async (tx) => {
    await tx
      .updateTable('pullRequestComments')
      .set({ content, date, userId: patch.userId ?? current.userId })
      .where('id', '=', id)
      .execute();
    await recordPullRequestMentions(tx, current.requestId, content);
    await recordReferences(
      tx,
      { kind: 'pullRequest', requestId: pr.id, projectId: pr.targetProjectId },
      ctx.actor.userId,
      ctx.now(),
      parseReferences(content, 'markdown'),
    );
  });
}

/**
 * `DELETE /pull-request-comments/{id}` (docs/compatibility.md#pull-requests-sub-resources): the author or a pull request
 * manager of the target project; decrements `commentCount`.
 */
export async function deleteComment(ctx: Context, id: number): Promise<void> {
  requireUser(ctx.actor);
  const comment = await getComment(ctx, id);
  if (comment.userId !== ctx.actor.userId) {
    const pr = await loadReadablePullRequest(ctx, comment.requestId);
    await loadProjectWith(ctx, pr.targetProjectId, 'managePullRequests');
  }
  await ctx.db.transaction().execute(async (tx) => {
    const done = await tx.deleteFrom('pullRequestComments').where('id', '=', id).executeTakeFirst();
    if (Number(done.numDeletedRows) === 1) {
      await tx
        .updateTable('pullRequests')
        .set((eb) => ({ commentCount: eb('commentCount', '-', 1) }))
        .where('id', '=', comment.requestId)
        .execute();
    }
  });
}
