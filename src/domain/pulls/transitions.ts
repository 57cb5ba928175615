/**
 * The pull request state machine (docs/compatibility.md#pull-requests-endpoints items 17–19, docs/compatibility.md#pull-requests-background-check): the only place that moves
 * a request between OPEN, MERGED and DISCARDED. A transition writes, in the caller's transaction,
 * the status (only from the state it leaves, so concurrent transitions have one winner), the
 * change record, the note, and the PULL_REQUEST outbox event; {@link announceTransition} then
 * fires the in-process event once that transaction committed.
 */
import type { Db } from '../../db/database.js';
import type { PullRequestRow } from '../../db/schema.js';
import type { Context } from '../context.js';
import type { TransactionEvents } from '../events.js';
import { recordChange, recordNote } from './changes.js';

/** A state change and what it records. */
export type Transition =
  /** Merged by a user (`reason` null, `mergeCommitHash` the target's new head) or detected (`reason` `merged pull request`). */
  | { to: 'MERGED'; reason: string | null; mergeCommitHash?: string }
  /** Discarded by a user, or by the system when the source or target is gone. */
  | { to: 'DISCARDED' }
  /** Reopened by a user. */
  | { to: 'OPEN' };

/** Who and when: `userId` null for the system; `note` stored as a comment of the actor. */
export interface TransitionBy {
  userId: number | null;
  date: number;
  note?: string | null;
}

/**
 * Applies `transition` to request `requestId` inside the transaction `tx`: OPEN → MERGED or
 * DISCARDED (clearing the stored preview for a detected merge, keeping it otherwise), MERGED or
 * DISCARDED → OPEN. Records the change data (PullRequestMergeData, PullRequestDiscardData,
 * PullRequestReopenData), the note, and the outbox event (MERGED, DISCARDED, REOPENED; the note is
 * its text).
 *
 * @returns true when the request was in a state the transition leaves (and now moved), false
 *   when another writer got there first (nothing written).
 */
export async function applyTransition(ctx: Pick<Context, 'events'>, tx: Db, requestId: number, transition: Transition, by: TransitionBy): Promise<boolean> {
  const { userId, date, note } = by;
  let query = tx.updateTable('pullRequests').where('id', '=', requestId);
  if (transition.to === 'OPEN') {
    query = query.set({ status: 'OPEN', closeDate: null }).where('status', '<>', 'OPEN');
  } else {
    query = query.set({ status: transition.to, closeDate: date }).where('status', '=', 'OPEN');
    if (transition.to === 'MERGED' && transition.mergeCommitHash !== undefined) query = query.set({ previewMergeCommitHash: transition.mergeCommitHash });
    if (transition.to === 'MERGED' && transition.reason !== null) {
      query = query.set({ previewTargetHeadCommitHash: null, previewHeadCommitHash: null, previewMergeStrategy: null, previewMergeCommitHash: null });
    }
  }
  const done = await query.executeTakeFirst();
  if (Number(done.numUpdatedRows) !== 1) return false;
  switch (transition.to) {
    case 'MERGED':
      await recordChange(tx, requestId, userId, date, { '@type': 'PullRequestMergeData', reason: transition.reason });
      break;
    case 'DISCARDED':
      await recordChange(tx, requestId, userId, date, { '@type': 'PullRequestDiscardData' });
      break;
    case 'OPEN':
      await recordChange(tx, requestId, userId, date, { '@type': 'PullRequestReopenData' });
      break;
  }
  await recordNote(tx, requestId, userId, date, note);
  const action = transition.to === 'OPEN' ? 'REOPENED' : transition.to;
  await ctx.events.dispatchInTransaction('activity', {
    db: tx,
    activity: { type: 'PULL_REQUEST', action, requestId, actorId: userId, date, text: note ?? null },
  });
  return true;
}

/**
 * Fires the in-process event of a committed transition: `pullRequestClosed` (build triggers of
 * docs/compatibility.md#builds-triggers) after MERGED or DISCARDED, `pullRequestChanged` (re-check, new preview)
 * after OPEN.
 */
export function announceTransition(ctx: Pick<Context, 'events'>, requestId: number, to: Transition['to']): void {
  if (to === 'OPEN') ctx.events.emit('pullRequestChanged', { requestId });
  else ctx.events.emit('pullRequestClosed', { requestId });
}

/**
 * Applies `transition` in a transaction of its own (with `within`, if given, writing more in the
 * same transaction after the status moved) and announces it once committed.
 *
 * @returns false when the request was no longer in a state the transition leaves.
 */
export async function transitionPullRequest(
  ctx: Context,
  pr: Pick<PullRequestRow, 'id'>,
  transition: Transition,
  by: TransitionBy,
  within?: (tx: Db) => Promise<void>,
): Promise<boolean> {
  const moved = await ctx.db.transaction().execute(async (tx) => {
    if (!(await applyTransition(ctx, tx, pr.id, transition, by))) return false;
    await within?.(tx);
    return true;
  });
  if (moved) announceTransition(ctx, pr.id, transition.to);
  return moved;
}

/** The `journaledMergeApplied` reaction: the request becomes MERGED, announced after the commit. */
export async function onJournaledMergeApplied(ctx: Pick<Context, 'events'>, event: TransactionEvents['journaledMergeApplied']): Promise<void> {
  const { db, requestId, mergeCommitHash, userId, date } = event;
  event.merged = await applyTransition(ctx, db, requestId, { to: 'MERGED', reason: null, mergeCommitHash }, { userId, date });
  if (event.merged) event.afterCommit.push(async () => announceTransition(ctx, requestId, 'MERGED'));
}

/**
 * The `projectsDeleting` reaction: open requests from the doomed projects into projects that stay
 * are DISCARDED (docs/compatibility.md#pull-requests-lifecycle), announced after the commit.
 */
export async function onProjectsDeleting(ctx: Pick<Context, 'events'>, event: TransactionEvents['projectsDeleting']): Promise<void> {
  const { db, projectIds, userId, date } = event;
  const orphaned = await db
    .selectFrom('pullRequests')
    .select('id')
    .where('sourceProjectId', 'in', projectIds)
    .where('targetProjectId', 'not in', projectIds)
    .where('status', '=', 'OPEN')
    .execute();
  for (const { id } of orphaned) {
    if (await applyTransition(ctx, db, id, { to: 'DISCARDED' }, { userId, date })) event.afterCommit.push(async () => announceTransition(ctx, id, 'DISCARDED'));
  }
}
