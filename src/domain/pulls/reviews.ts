import type { Selectable } from 'kysely';
import type { PullRequestReviewTable, ReviewStatus } from '../../db/schema.js';
import { BadRequest, Conflict } from '../../errors.js';
import { uniquely } from '../unique.js';
import type { Context } from '../context.js';
import { loadRow } from '../entities.js';
import { deny, requireUser } from '../actor.js';
import { autoWatch, recordChange } from './changes.js';
import { assertUsersExist, loadReadablePullRequest, referencedPullRequest, withReadablePullRequest } from './pull-requests.js';

export type PullRequestReviewRow = Selectable<PullRequestReviewTable>;

/** PullRequestReview input (docs/compatibility.md#pull-requests-sub-resources): create needs `requestId` and `userId`. */
export interface ReviewData {
  requestId?: number;
  userId?: number;
  status?: ReviewStatus;
  /** Epoch milliseconds; default now. */
  statusDate?: number;
}

/** Get Reviews (docs/compatibility.md#pull-requests-endpoints item 5): read code; EXCLUDED reviews are left out; by id. */
export async function listReviews(ctx: Context, requestId: number): Promise<PullRequestReviewRow[]> {
  await loadReadablePullRequest(ctx, requestId);
  return ctx.db.selectFrom('pullRequestReviews').selectAll().where('requestId', '=', requestId).where('status', '<>', 'EXCLUDED').orderBy('id').execute();
}

/** `GET /pull-request-reviews/{id}`: read code on the request's target project. */
export async function getReview(ctx: Context, id: number): Promise<PullRequestReviewRow> {
  return withReadablePullRequest(ctx, await loadRow(ctx.db, 'pullRequestReviews', id, 'Pull request review'));
}

/**
 * The review rules of docs/compatibility.md#pull-requests-sub-resources on the merged result: read code; yourself unless
 * administrator (401/403); the user exists (400); not the submitter (400 `Pull request submitter
 * can not be reviewer`); the request not merged (409 `Pull request is merged`).
 */
async function checkReview(ctx: Context, requestId: number, userId: number) {
  requireUser(ctx.actor);
  const pr = await referencedPullRequest(ctx, requestId);
  if (!ctx.actor.isAdmin && userId !== ctx.actor.userId) deny(ctx.actor);
  await assertUsersExist(ctx.db, [userId], 'reviewer');
  if (userId === pr.submitterId) throw new BadRequest('Pull request submitter can not be reviewer');
  if (pr.status === 'MERGED') throw new Conflict('Pull request is merged');
  return pr;
}

/** Records Approve / RequestedForChanges data when the status moved to one of them through the API. */
async function recordStatusChange(
  ctx: Context,
  db: Parameters<typeof recordChange>[0],
  requestId: number,
  before: ReviewStatus | null,
  after: ReviewStatus,
  date: number,
) {
  if (before === after) return;
  if (after === 'APPROVED') await recordChange(db, requestId, ctx.actor.userId, date, { '@type': 'PullRequestApproveData' });
  else if (after === 'REQUESTED_FOR_CHANGES') await recordChange(db, requestId, ctx.actor.userId, date, { '@type': 'PullRequestRequestedForChangesData' });
}

/**
 * `POST /pull-request-reviews` (docs/compatibility.md#pull-requests-sub-resources): adds a review (default PENDING), one per
 * user and request (409 `Reviewer already added`). Approving or requesting changes records the
 * change (activity `approved` / `requested for changes`) and re-checks the request. Returns the id.
 */
export async function createReview(ctx: Context, data: ReviewData): Promise<number> {
  if (data.requestId === undefined) throw new BadRequest('Missing field "requestId"');
  const userId = data.userId ?? requireUser(ctx.actor);
  const pr = await checkReview(ctx, data.requestId, userId);
  const status = data.status ?? 'PENDING';
  const now = ctx.now();
  const id = await uniquely('Reviewer already added', () =>
    ctx.db.transaction().execute(async (tx) => {
      const existing = await tx.selectFrom('pullRequestReviews').select('id').where('requestId', '=', pr.id).where('userId', '=', userId).executeTakeFirst();
      if (existing) throw new Conflict('Reviewer already added');
      const row = await tx
        .insertInto('pullRequestReviews')
        .values({ requestId: pr.id, userId, status, statusDate: data.statusDate ?? now })
        .returning('id')
        .executeTakeFirstOrThrow();
      await autoWatch(tx, pr.id, [userId]);
      await recordStatusChange(ctx, tx, pr.id, null, status, now);
      if (status === 'PENDING')
        await ctx.events.dispatchInTransaction('activity', {
          db: tx,
          activity: {
            type: 'PULL_REQUEST',
            action: 'REVIEW_REQUESTED',
            requestId: pr.id,
            reviewerId: userId,
            actorId: ctx.actor.userId,
            date: now,
          },
        });
      return row.id;
    }),
  );
  if (pr.status === 'OPEN') ctx.events.emit('pullRequestChanged', { requestId: pr.id });
  return id;
}

/**
 * `POST /pull-request-reviews/{id}` (docs/compatibility.md#pull-requests-sub-resources): partial update checked like a
 * create on the merged result; a status change dates the review now and, for approve / request
 * changes, records the change.
 */
export async function updateReview(ctx: Context, id: number, patch: ReviewData): Promise<void> {
  const current = await getReview(ctx, id);
  const merged: PullRequestReviewRow = {
    ...current,
    requestId: patch.requestId ?? current.requestId,
    userId: patch.userId ?? current.userId,
    status: patch.status ?? current.status,
  };
  const pr = await checkReview(ctx, merged.requestId, merged.userId);
  const now = ctx.now();
  const statusChanged = merged.status !== current.status;
  await uniquely('Reviewer already added', () =>
    ctx.db.transaction().execute(async (tx) => {
      await tx
        .updateTable('pullRequestReviews')
        .set({
          requestId: merged.requestId,
          userId: merged.userId,
          status: merged.status,
          statusDate: patch.statusDate ?? (statusChanged ? now : current.statusDate),
        })
        .where('id', '=', id)
        .execute();
      await recordStatusChange(ctx, tx, merged.requestId, current.status, merged.status, now);
    }),
  );
  if (pr.status === 'OPEN') ctx.events.emit('pullRequestChanged', { requestId: pr.id });
}
