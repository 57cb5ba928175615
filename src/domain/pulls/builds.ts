import type { BuildRow, BuildStatus, PullRequestRow } from '../../db/schema.js';
import { currentBuildRows } from '../builds/required-builds.js';
import type { Context } from '../context.js';
import type { Condition } from '../query/compile.js';
import { loadReadablePullRequest } from './pull-requests.js';

/**
 * The builds of a request on its build commit (docs/compatibility.md#pull-requests-endpoints item 9 "Builds whose commit ==
 * buildCommitHash"), newest first.
 */
export async function currentBuilds(ctx: Context, pr: PullRequestRow): Promise<BuildRow[]> {
  return currentBuildRows(ctx, pr);
}

/** Get Current Builds (docs/compatibility.md#pull-requests-endpoints item 9): read code on the target project. */
export async function getCurrentBuilds(ctx: Context, requestId: number): Promise<BuildRow[]> {
  return currentBuilds(ctx, await loadReadablePullRequest(ctx, requestId));
}

/**
 * `has failed builds` / `to be verified by builds` (docs/compatibility.md#pull-requests-query-language): a current build of the
 * request — on its `buildCommitHash`, as Get Current Builds (docs/compatibility.md#builds-pull-request-current-builds) — with one of `statuses`.
 */
export function buildStatusCondition(statuses: readonly BuildStatus[]): Condition {
  return (eb) =>
    eb.exists(
      eb
        .selectFrom('builds')
        .select('builds.id')
        .whereRef('builds.requestId', '=', 'pullRequests.id')
        .whereRef('builds.commitHash', '=', 'pullRequests.buildCommitHash')
        .where('builds.status', 'in', statuses),
    );
}
