import { sql, type Kysely, type SqlBool } from 'kysely';
import type { BuildRow, PullRequestRow } from '../../db/schema.js';
import { currentBuildRows } from '../builds/required-builds.js';
import type { Context } from '../context.js';
import { never, type Condition } from '../query/compile.js';
import { loadReadablePullRequest } from './pull-requests.js';

const BUILD_COLUMNS = ['project_id', 'request_id', 'commit_hash', 'status'] as const;
const availability = new WeakMap<object, Promise<boolean>>();

/**
 * Whether the CI area's `builds` table (with `project_id`, `request_id`, `commit_hash` and
 * `status`) is in this database; looked up once per database handle. Pull requests work without
 * builds: no current builds, no failed or pending ones.
 */
export function buildsAvailable(db: Kysely<any>): Promise<boolean> {
  let known = availability.get(db);
  if (!known) {
    known = db.introspection.getTables().then((tables) => {
      const builds = tables.find((t) => t.name === 'builds' && !t.isView);
      return builds !== undefined && BUILD_COLUMNS.every((c) => builds.columns.some((col) => col.name === c));
    });
    availability.set(db, known);
  }
  return known;
}

/**
 * The builds of a request on its build commit (reference/pulls.md §1 #9 "Builds whose commit ==
 * buildCommitHash"), as rows of the `builds` table, oldest first; empty until builds exist.
 */
export async function currentBuilds(ctx: Context, pr: PullRequestRow): Promise<BuildRow[]> {
  return currentBuildRows(ctx, pr);
}

/** Get Current Builds (reference/pulls.md §1 #9): read code on the target project. */
export async function getCurrentBuilds(ctx: Context, requestId: number): Promise<BuildRow[]> {
  return currentBuilds(ctx, await loadReadablePullRequest(ctx, requestId));
}

/**
 * `has failed builds` / `to be verified by builds` (reference/pulls.md §6): a build of the request
 * on its stored preview merge commit with one of `statuses`. False while builds do not exist.
 */
export async function buildStatusCondition(ctx: Context, statuses: readonly string[]): Promise<Condition> {
  if (!(await buildsAvailable(ctx.db))) return never;
  return () => sql<SqlBool>`exists (select 1 from builds b where b.request_id = pull_requests.id and b.commit_hash = pull_requests.preview_merge_commit_hash and b.status in (${sql.join(statuses)}))`;
}
