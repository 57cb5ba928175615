import type { Selectable } from 'kysely';
import type { PullRequestWatchTable } from '../../db/schema.js';
import { BadRequest, Conflict } from '../../errors.js';
import { uniquely } from '../unique.js';
import type { Context } from '../context.js';
import { loadRow } from '../entities.js';
import { deny, requireUser } from '../actor.js';
import { assertUsersExist, loadReadablePullRequest, referencedPullRequest, withReadablePullRequest } from './pull-requests.js';

export type PullRequestWatchRow = Selectable<PullRequestWatchTable>;

/** PullRequestWatch input (docs/compatibility.md#pull-requests-sub-entities): `watching` defaults to false on create. */
export interface WatchData {
  requestId?: number;
  userId?: number;
  watching?: boolean;
}

/** Get Watches (docs/compatibility.md#pull-requests-endpoints item 7): read code; by id. */
export async function listWatches(ctx: Context, requestId: number): Promise<PullRequestWatchRow[]> {
  await loadReadablePullRequest(ctx, requestId);
  return ctx.db.selectFrom('pullRequestWatches').selectAll().where('requestId', '=', requestId).orderBy('id').execute();
}

/** `GET /pull-request-watches/{id}`: read code. */
export async function getWatch(ctx: Context, id: number): Promise<PullRequestWatchRow> {
  return withReadablePullRequest(ctx, await loadRow(ctx.db, 'pullRequestWatches', id, 'Pull request watch'));
}

async function checkWatch(ctx: Context, requestId: number, userId: number): Promise<void> {
  requireUser(ctx.actor);
  await referencedPullRequest(ctx, requestId);
  if (!ctx.actor.isAdmin && userId !== ctx.actor.userId) deny(ctx.actor);
  await assertUsersExist(ctx.db, [userId], 'watch');
}

const duplicate = (userId: number) => `User ${userId} already has a watch on this pull request`;

/**
 * `POST /pull-request-watches` (docs/compatibility.md#pull-requests-sub-resources): read code and yourself unless
 * administrator; one watch per user and request (409). Returns the id.
 */
export async function createWatch(ctx: Context, data: WatchData): Promise<number> {
  if (data.requestId === undefined) throw new BadRequest('Missing field "requestId"');
  const userId = data.userId ?? requireUser(ctx.actor);
  await checkWatch(ctx, data.requestId, userId);
  const requestId = data.requestId;
  return uniquely(duplicate(userId), () =>
    ctx.db.transaction().execute(async (tx) => {
      if (await tx.selectFrom('pullRequestWatches').select('id').where('requestId', '=', requestId).where('userId', '=', userId).executeTakeFirst()) {
        throw new Conflict(duplicate(userId));
      }
      return (
        await tx
          .insertInto('pullRequestWatches')
          .values({ requestId, userId, watching: data.watching ? 1 : 0 })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
    }),
  );
}

/** `POST /pull-request-watches/{id}`: partial update, checked like a create on the merged result. */
export async function updateWatch(ctx: Context, id: number, patch: WatchData): Promise<void> {
  const current = await getWatch(ctx, id);
  const requestId = patch.requestId ?? current.requestId;
  const userId = patch.userId ?? current.userId;
  if (!ctx.actor.isAdmin && current.userId !== ctx.actor.userId) deny(ctx.actor);
  await checkWatch(ctx, requestId, userId);
  const watching = patch.watching === undefined ? current.watching : patch.watching ? 1 : 0;
  await uniquely(duplicate(userId), () => ctx.db.updateTable('pullRequestWatches').set({ requestId, userId, watching }).where('id', '=', id).execute());
}

/** `DELETE /pull-request-watches/{id}`: administrators or the watch's owner. */
export async function deleteWatch(ctx: Context, id: number): Promise<void> {
  requireUser(ctx.actor);
  const current = await getWatch(ctx, id);
  if (!ctx.actor.isAdmin && current.userId !== ctx.actor.userId) deny(ctx.actor);
  await ctx.db.deleteFrom('pullRequestWatches').where('id', '=', id).execute();
}
