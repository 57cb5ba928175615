import type { Selectable } from 'kysely';
import type { PullRequestAssignmentTable, PullRequestRow } from '../../db/schema.js';
import { Conflict } from '../../errors.js';
import { uniquely } from '../unique.js';
import type { Context } from '../context.js';
import { loadRow } from '../entities.js';
import { deny, requireUser } from '../actor.js';
import { autoWatch } from './changes.js';
import { assertUsersExist, canModifyPullRequest, loadReadablePullRequest, referencedPullRequest, withReadablePullRequest } from './pull-requests.js';

export type PullRequestAssignmentRow = Selectable<PullRequestAssignmentTable>;

/** Get Assignments (docs/compatibility.md#pull-requests-endpoints item 4): read code; by id. */
export async function listAssignments(ctx: Context, requestId: number): Promise<PullRequestAssignmentRow[]> {
  await loadReadablePullRequest(ctx, requestId);
  return ctx.db.selectFrom('pullRequestAssignments').selectAll().where('requestId', '=', requestId).orderBy('id').execute();
}

/** `GET /pull-request-assignments/{id}`: read code. */
export async function getAssignment(ctx: Context, id: number): Promise<PullRequestAssignmentRow> {
  return withReadablePullRequest(ctx, await loadRow(ctx.db, 'pullRequestAssignments', id, 'Pull request assignment'));
}

async function checkModifiable(ctx: Context, pr: PullRequestRow): Promise<void> {
  requireUser(ctx.actor);
  if (!(await canModifyPullRequest(ctx, pr))) deny(ctx.actor);
  if (pr.status === 'MERGED') throw new Conflict('Pull request is merged');
}

/**
 * `POST /pull-request-assignments` (docs/compatibility.md#pull-requests-sub-resources): read code and canModify; the user
 * exists (400); not on a merged request (409 `Pull request is merged`); once per user (409). The
 * assignee starts watching and is told (an `ASSIGNED` activity in the same transaction: OneDev's
 * PullRequestAssigned, docs/compatibility.md#mentions-and-notifications). Returns the id.
 */
export async function createAssignment(ctx: Context, data: { requestId: number; userId: number }): Promise<number> {
  const pr = await referencedPullRequest(ctx, data.requestId);
  await checkModifiable(ctx, pr);
  await assertUsersExist(ctx.db, [data.userId], 'assignee');
  const message = `User ${data.userId} already assigned`;
  return uniquely(message, () =>
    ctx.db.transaction().execute(async (tx) => {
      const existing = await tx
        .selectFrom('pullRequestAssignments')
        .select('id')
        .where('requestId', '=', pr.id)
        .where('userId', '=', data.userId)
        .executeTakeFirst();
      if (existing) throw new Conflict(message);
      const row = await tx.insertInto('pullRequestAssignments').values({ requestId: pr.id, userId: data.userId }).returning('id').executeTakeFirstOrThrow();
      await autoWatch(tx, pr.id, [data.userId]);
      await ctx.events.dispatchInTransaction('activity', {
        db: tx,
        activity: { type: 'PULL_REQUEST', action: 'ASSIGNED', requestId: pr.id, assigneeId: data.userId, actorId: ctx.actor.userId, date: ctx.now() },
      });
      return row.id;
    }),
  );
}

/** `DELETE /pull-request-assignments/{id}`: read code and canModify; not on a merged request (409). */
export async function deleteAssignment(ctx: Context, id: number): Promise<void> {
  const row = await getAssignment(ctx, id);
  const pr = await loadReadablePullRequest(ctx, row.requestId);
  await checkModifiable(ctx, pr);
  await ctx.db.deleteFrom('pullRequestAssignments').where('id', '=', id).execute();
}
