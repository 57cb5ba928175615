import type { Selectable } from 'kysely';
import type { PullRequestLabelTable, PullRequestRow } from '../../db/schema.js';
import { BadRequest, Conflict } from '../../errors.js';
import { uniquely } from '../unique.js';
import type { Context } from '../context.js';
import { loadRow } from '../entities.js';
import { deny, requireUser } from '../actor.js';
import { labelSpecExists } from '../projects/index.js';
import { canModifyPullRequest, loadReadablePullRequest, referencedPullRequest } from './pull-requests.js';

export type PullRequestLabelRow = Selectable<PullRequestLabelTable>;

/** Get Labels (docs/compatibility.md#pull-requests-endpoints item 2): read code; by id. */
export async function listLabels(ctx: Context, requestId: number): Promise<PullRequestLabelRow[]> {
  await loadReadablePullRequest(ctx, requestId);
  return ctx.db.selectFrom('pullRequestLabels').selectAll().where('requestId', '=', requestId).orderBy('id').execute();
}

async function checkModifiable(ctx: Context, pr: PullRequestRow): Promise<void> {
  requireUser(ctx.actor);
  if (!(await canModifyPullRequest(ctx, pr))) deny(ctx.actor);
}

/**
 * `POST /pull-request-labels` (docs/compatibility.md#pull-requests-sub-resources): canModify; the label spec exists (400
 * `Label spec not found: X`); once per request (409). Returns the id.
 */
export async function createLabel(ctx: Context, data: { requestId: number; specId: number }): Promise<number> {
  const pr = await referencedPullRequest(ctx, data.requestId);
  await checkModifiable(ctx, pr);
  if (!(await labelSpecExists(ctx.db, data.specId))) {
    throw new BadRequest(`Label spec not found: ${data.specId}`);
  }
  const message = `Pull request ${pr.id} already has label ${data.specId}`;
  return uniquely(message, () =>
    ctx.db.transaction().execute(async (tx) => {
      if (await tx.selectFrom('pullRequestLabels').select('id').where('requestId', '=', pr.id).where('specId', '=', data.specId).executeTakeFirst()) {
        throw new Conflict(message);
      }
      return (await tx.insertInto('pullRequestLabels').values({ requestId: pr.id, specId: data.specId }).returning('id').executeTakeFirstOrThrow()).id;
    }),
  );
}

/** `DELETE /pull-request-labels/{id}`: canModify. */
export async function deleteLabel(ctx: Context, id: number): Promise<void> {
  const row = await loadRow(ctx.db, 'pullRequestLabels', id, 'Pull request label');
  const pr = await loadReadablePullRequest(ctx, row.requestId);
  await checkModifiable(ctx, pr);
  await ctx.db.deleteFrom('pullRequestLabels').where('id', '=', id).execute();
}
