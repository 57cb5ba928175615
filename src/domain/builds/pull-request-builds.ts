/**
 * Builds and pull requests together (docs/compatibility.md#builds-pull-request-current-builds): a
 * request's current builds, and the builds it is queried by.
 */
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import type { BuildRow, BuildStatus, PullRequestRow } from '../../db/schema.js';
import type { Context } from '../context.js';
import { loadReadablePullRequest } from '../pulls/index.js';
import type { Condition } from '../query/index.js';
import { removeBuildStorage } from './storage.js';

/** The request's builds on its current build commit (`buildCommitHash`), newest first. */
export async function currentBuildRows(ctx: Context, pr: Pick<PullRequestRow, 'id' | 'buildCommitHash'>): Promise<BuildRow[]> {
  if (!pr.buildCommitHash) return [];
  return ctx.db.selectFrom('builds').selectAll().where('requestId', '=', pr.id).where('commitHash', '=', pr.buildCommitHash).orderBy('id', 'desc').execute();
}

/** Get Current Builds (docs/compatibility.md#pull-requests-endpoints item 9): read code on the target project. */
export async function getCurrentBuilds(ctx: Context, requestId: number): Promise<BuildRow[]> {
  return currentBuildRows(ctx, await loadReadablePullRequest(ctx, requestId));
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

/**
 * The `pullRequestDeleting` reaction: the request's builds go with it (their params, labels and
 * dependences cascade; running ones notice the missing row and stop), their storage once the
 * deletion committed.
 */
export async function deletePullRequestBuilds(config: Config, db: Db, requestId: number, afterCommit: (() => Promise<void>)[]): Promise<void> {
  const doomed = await db.deleteFrom('builds').where('requestId', '=', requestId).returning(['projectId', 'number']).execute();
  afterCommit.push(async () => {
    for (const build of doomed) await removeBuildStorage(config, build);
  });
}
