import { BadRequest, Conflict, NotFound } from '../../errors.js';
import { uniquely } from '../unique.js';
import type { Context } from '../context.js';
import { loadRow } from '../entities.js';
import { insertComment } from '../conversations.js';
import { autoWatchIssue, recordIssueMentions } from './issue-mentions.js';
import { deny, requireUser } from '../actor.js';
import { getUserRow, requireSelfOrAdmin, userExists } from '../users/index.js';
import { loadAccessibleIssue, MAX_CONTENT, type LoadedIssue } from './issues.js';
import { parseReferences, recordReferences } from './references.js';

/**
 * Issue comments, watches and votes (docs/compatibility.md#issue-comments, docs/compatibility.md#issue-watches-and-votes). Checks use
 * canAccess(issue) — confidential issues included, unlike OneDev — and "administrator or
 * the row's own user" for writes. Counters (`commentCount`, `voteCount`) change in the same
 * transaction as the row.
 */

/**
 * The user and issue a create body names: `userId` (the caller by default) must be the caller
 * unless an administrator (401/403), the issue must exist (400) and be accessible, the user
 * must exist (400).
 */
async function bodyUserAndIssue(ctx: Context, data: { issueId: number; userId?: number }): Promise<LoadedIssue & { userId: number }> {
  const userId = data.userId ?? requireUser(ctx.actor);
  requireSelfOrAdmin(ctx, userId);
  const exists = await ctx.db.selectFrom('issues').select('id').where('id', '=', data.issueId).executeTakeFirst();
  if (!exists) throw new BadRequest(`Issue not found: ${data.issueId}`);
  const loaded = await loadAccessibleIssue(ctx, data.issueId);
  if (!(await userExists(ctx.db, userId))) throw new BadRequest(`Unable to find user with id: ${userId}`);
  return { ...loaded, userId };
}

/** `row` (one naming its issue) when its issue is accessible: canAccess(issue). */
async function withAccessibleIssue<R extends { issueId: number }>(ctx: Context, row: R): Promise<R> {
  await loadAccessibleIssue(ctx, row.issueId);
  return row;
}

function checkContent(content: unknown): string {
  if (typeof content !== 'string' || content.trim() === '') throw new BadRequest('Content is required');
  if (content.length > MAX_CONTENT) throw new BadRequest(`Content should not exceed ${MAX_CONTENT} characters`);
  return content;
}

function unchanged(field: string, given: number | undefined, stored: number): void {
  if (given !== undefined && given !== stored) throw new BadRequest(`'${field}' can not be changed`);
}

// ---------------------------------------------------------------- comments (docs/compatibility.md#issue-comments)

export interface IssueCommentData {
  issueId: number;
  userId?: number;
  content: string;
  date?: number;
}

/** Get: canAccess(issue). */
export async function getIssueComment(ctx: Context, id: number) {
  return withAccessibleIssue(ctx, await loadRow(ctx.db, 'issueComments', id, 'Issue comment'));
}

/**
 * Create (docs/compatibility.md#issue-comments): canAccess(issue) and (administrator or `userId` = caller; `userId` defaults to
 * the caller). `commentCount` +1, lastActivity `commented`, the commenter watches the issue and
 * mentioned users are recorded and watch it. Returns the id.
 */
export async function createIssueComment(ctx: Context, data: IssueCommentData): Promise<number> {
  const { userId, issue } = await bodyUserAndIssue(ctx, data);
  const content = checkContent(data.content);
  const date = data.date ?? ctx.now();
  return ctx.db.transaction().execute(async (tx) => {
    const conversation = { table: 'issues', id: data.issueId, counter: 'commentCount', activity: 'commented' } as const;
    const id = await insertComment(tx, 'issueComments', { issueId: data.issueId, userId, content, date }, conversation);
    await autoWatchIssue(tx, data.issueId, [userId]);
    await recordIssueMentions(tx, data.issueId, content);
    await recordReferences(tx, { kind: 'issue', issueId: issue.id, projectId: issue.projectId }, userId, ctx.now(), parseReferences(content, 'markdown'));
    await ctx.events.dispatchInTransaction('activity', {
      db: tx,
      activity: { type: 'ISSUE', action: 'COMMENTED', issueId: issue.id, actorId: userId, date, text: content },
    });
    return id;
  });
}

/**
 * Update (docs/compatibility.md#issue-comments): partial merge of `content` and `date`; administrator or author. `issueId` and
 * `userId` can not move (400). A minor event: lastActivity is kept.
 */
export async function updateIssueComment(ctx: Context, id: number, patch: Partial<IssueCommentData>): Promise<void> {
  const comment = await loadRow(ctx.db, 'issueComments', id, 'Issue comment');
  const { issue } = await loadAccessibleIssue(ctx, comment.issueId);
  requireSelfOrAdmin(ctx, comment.userId);
  unchanged('issueId', patch.issueId, comment.issueId);
  unchanged('userId', patch.userId, comment.userId);
  const content = patch.content === undefined ? comment.content : checkContent(patch.content);
  await ctx.db.transaction().execute(async (tx) => {
    await tx
      .updateTable('issueComments')
      .set({ content, date: patch.date ?? comment.date })
      .where('id', '=', id)
      .execute();
    // Reference changes are re-scanned on edit (docs/compatibility.md#issue-comments update).
    await recordReferences(
      tx,
      { kind: 'issue', issueId: issue.id, projectId: issue.projectId },
      ctx.actor.userId,
      ctx.now(),
      parseReferences(content, 'markdown'),
    );
  });
}

/** Delete (docs/compatibility.md#issue-comments): the author or an issue manager; `commentCount` −1. */
export async function deleteIssueComment(ctx: Context, id: number): Promise<void> {
  const comment = await loadRow(ctx.db, 'issueComments', id, 'Issue comment');
  const { permissions } = await loadAccessibleIssue(ctx, comment.issueId);
  requireUser(ctx.actor);
  if (comment.userId !== ctx.actor.userId && !permissions.manageIssues) deny(ctx.actor);
  await ctx.db.transaction().execute(async (tx) => {
    const done = await tx.deleteFrom('issueComments').where('id', '=', id).executeTakeFirst();
    if (Number(done.numDeletedRows) !== 1) throw new NotFound(`Issue comment not found: ${id}`);
    await tx
      .updateTable('issues')
      .set((eb) => ({ commentCount: eb('commentCount', '-', 1) }))
      .where('id', '=', comment.issueId)
      .execute();
  });
}

// ---------------------------------------------------------------- watches (docs/compatibility.md#issue-watches-and-votes)

export interface IssueWatchData {
  issueId: number;
  userId?: number;
  watching: boolean;
}

/** Get: canAccess(issue). */
export async function getIssueWatch(ctx: Context, id: number) {
  return withAccessibleIssue(ctx, await loadRow(ctx.db, 'issueWatches', id, 'Issue watch'));
}

/** Create (docs/compatibility.md#issue-watches-and-votes): canAccess(issue) and (administrator or self); one per issue and user (409). */
export async function createIssueWatch(ctx: Context, data: IssueWatchData): Promise<number> {
  const { userId } = await bodyUserAndIssue(ctx, data);
  return uniquely('The user already has a watch on this issue', () =>
    ctx.db.transaction().execute(async (tx) => {
      const existing = await tx.selectFrom('issueWatches').select('id').where('issueId', '=', data.issueId).where('userId', '=', userId).executeTakeFirst();
      if (existing) throw new Conflict('The user already has a watch on this issue');
      const { id } = await tx
        .insertInto('issueWatches')
        .values({ issueId: data.issueId, userId, watching: data.watching ? 1 : 0 })
        .returning('id')
        .executeTakeFirstOrThrow();
      return id;
    }),
  );
}

/** Update (docs/compatibility.md#issue-watches-and-votes): `watching`; administrator or the watch's user; issue and user can not move. */
export async function updateIssueWatch(ctx: Context, id: number, patch: Partial<IssueWatchData>): Promise<void> {
  const watch = await getIssueWatch(ctx, id);
  requireSelfOrAdmin(ctx, watch.userId);
  unchanged('issueId', patch.issueId, watch.issueId);
  unchanged('userId', patch.userId, watch.userId);
  if (patch.watching !== undefined)
    await ctx.db
      .updateTable('issueWatches')
      .set({ watching: patch.watching ? 1 : 0 })
      .where('id', '=', id)
      .execute();
}

/** Delete (docs/compatibility.md#issue-watches-and-votes): administrator or the watch's user. */
export async function deleteIssueWatch(ctx: Context, id: number): Promise<void> {
  const watch = await loadRow(ctx.db, 'issueWatches', id, 'Issue watch');
  requireSelfOrAdmin(ctx, watch.userId);
  await ctx.db.deleteFrom('issueWatches').where('id', '=', id).execute();
}

// ---------------------------------------------------------------- votes (docs/compatibility.md#issue-watches-and-votes)

export interface IssueVoteData {
  issueId: number;
  userId?: number;
  date?: number;
}

/** Get: canAccess(issue). */
export async function getIssueVote(ctx: Context, id: number) {
  return withAccessibleIssue(ctx, await loadRow(ctx.db, 'issueVotes', id, 'Issue vote'));
}

/** Create (docs/compatibility.md#issue-watches-and-votes): canAccess(issue) and (administrator or self); one per issue and user (409); `voteCount` +1; date defaults to now. */
export async function createIssueVote(ctx: Context, data: IssueVoteData): Promise<number> {
  const { userId } = await bodyUserAndIssue(ctx, data);
  // a concurrent twin passes the check too: the unique key decides, still 409
  return uniquely('The user already voted for this issue', () =>
    ctx.db.transaction().execute(async (tx) => {
      const existing = await tx.selectFrom('issueVotes').select('id').where('issueId', '=', data.issueId).where('userId', '=', userId).executeTakeFirst();
      if (existing) throw new Conflict('The user already voted for this issue');
      const { id } = await tx
        .insertInto('issueVotes')
        .values({ issueId: data.issueId, userId, date: data.date ?? ctx.now() })
        .returning('id')
        .executeTakeFirstOrThrow();
      await tx
        .updateTable('issues')
        .set((eb) => ({ voteCount: eb('voteCount', '+', 1) }))
        .where('id', '=', data.issueId)
        .execute();
      return id;
    }),
  );
}

/** Delete (docs/compatibility.md#issue-watches-and-votes): administrator or the voter; `voteCount` −1. */
export async function deleteIssueVote(ctx: Context, id: number): Promise<void> {
  const vote = await loadRow(ctx.db, 'issueVotes', id, 'Issue vote');
  requireSelfOrAdmin(ctx, vote.userId);
  await ctx.db.transaction().execute(async (tx) => {
    const done = await tx.deleteFrom('issueVotes').where('id', '=', id).executeTakeFirst();
    if (Number(done.numDeletedRows) !== 1) throw new NotFound(`Issue vote not found: ${id}`);
    await tx
      .updateTable('issues')
      .set((eb) => ({ voteCount: eb('voteCount', '-', 1) }))
      .where('id', '=', vote.issueId)
      .execute();
  });
}

/** `/users/{id}/issue-votes` (docs/compatibility.md#users-endpoints): administrator or self. */
export async function listUserIssueVotes(ctx: Context, userId: number) {
  requireSelfOrAdmin(ctx, userId);
  await getUserRow(ctx.db, userId);
  return ctx.db.selectFrom('issueVotes').selectAll().where('userId', '=', userId).orderBy('id').execute();
}

/** `/users/{id}/issue-watches` (docs/compatibility.md#users-endpoints): administrator or self. */
export async function listUserIssueWatches(ctx: Context, userId: number) {
  requireSelfOrAdmin(ctx, userId);
  await getUserRow(ctx.db, userId);
  return ctx.db.selectFrom('issueWatches').selectAll().where('userId', '=', userId).orderBy('id').execute();
}
