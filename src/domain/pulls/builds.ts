/**
 * What pull requests ask of builds, the area above them (src/domain/providers.ts): a request's
 * current builds (docs/compatibility.md#builds-pull-request-current-builds) and the query
 * criteria over them. Filled at start-up by src/domain/event-handlers.ts.
 */
import type { BuildRow, BuildStatus, PullRequestRow } from '../../db/schema.js';
import type { Context } from '../context.js';
import { Provided } from '../providers.js';
import type { Condition } from '../query/index.js';
import { requiredJobs } from '../projects/index.js';

/** The request's builds on its current build commit (`buildCommitHash`), newest first. */
export const currentBuildsOf = new Provided<(ctx: Context, pr: Pick<PullRequestRow, 'id' | 'buildCommitHash'>) => Promise<BuildRow[]>>(
  "a pull request's current builds",
);

/**
 * `has failed builds` / `to be verified by builds` (docs/compatibility.md#pull-requests-query-language): the requests
 * with a current build in one of `statuses`.
 */
export const buildStatusCondition = new Provided<(statuses: readonly BuildStatus[]) => Condition>('pull requests by their current builds');

/**
 * Whether the branch protection's required jobs are satisfied: every required job has a current
 * build and all of them are SUCCESSFUL (docs/compatibility.md#builds-pull-request-current-builds).
 */
export async function requiredBuildsPassed(ctx: Context, pr: PullRequestRow): Promise<boolean> {
  const jobs = await requiredJobs(ctx, pr.targetProjectId, pr.targetBranch);
  if (jobs.length === 0) return true;
  const builds = await currentBuildsOf.ask(ctx, pr);
  return jobs.every((job) => {
    const mine = builds.filter((b) => b.jobName === job);
    return mine.length > 0 && mine.every((b) => b.status === 'SUCCESSFUL');
  });
}
