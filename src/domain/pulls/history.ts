import type { Selectable } from 'kysely';
import type { PullRequestChangeTable } from '../../db/schema.js';
import type { Context } from '../context.js';
import { loadReadablePullRequest } from './pull-requests.js';

export type PullRequestChangeRow = Selectable<PullRequestChangeTable>;

/** Get Changes (docs/compatibility.md#pull-requests-endpoints item 10): read code; oldest first. */
export async function listChanges(ctx: Context, requestId: number): Promise<PullRequestChangeRow[]> {
  await loadReadablePullRequest(ctx, requestId);
  return ctx.db.selectFrom('pullRequestChanges').selectAll().where('requestId', '=', requestId).orderBy('id').execute();
}
