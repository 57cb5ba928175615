import type { Selectable } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Context } from '../context.js';
import { accessibleProjectsCondition } from '../projects/index.js';
import { getUserRow, requireSelfOrAdmin } from '../users/index.js';

/**
 * A user's pull request reviews, assignments or watches (docs/compatibility.md#users-endpoints): the user
 * or an administrator; rows of pull requests whose target project the caller can no longer read
 * are left out (filtered in SQL). Ordered by id. NotFound for an unknown user.
 */
export async function userPullRequestLists<K extends 'pullRequestReviews' | 'pullRequestAssignments' | 'pullRequestWatches'>(
  ctx: Context,
  userId: number,
  kind: K,
): Promise<Selectable<Database[K]>[]> {
  requireSelfOrAdmin(ctx, userId);
  await getUserRow(ctx.db, userId);
  const readable = await accessibleProjectsCondition(ctx, 'readCode');
  const table = kind as 'pullRequestReviews';
  let query = ctx.db.selectFrom(table).selectAll(table).where('userId', '=', userId);
  if (readable) {
    query = query.where('requestId', 'in', (eb) =>
      eb
        .selectFrom('pullRequests')
        .select('pullRequests.id')
        .where((inner) => readable(inner, 'pullRequests.targetProjectId')),
    );
  }
  return (await query.orderBy('id').execute()) as unknown as Selectable<Database[K]>[];
}
