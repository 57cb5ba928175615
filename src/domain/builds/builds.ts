/**
 * Builds as the REST API sees them (docs/compatibility.md#builds-endpoints, docs/compatibility.md#builds-creating-builds, docs/compatibility.md#builds-fixed-issues, docs/compatibility.md#builds-pull-request-current-builds): reading a build and its
 * sub-lists with job-scoped permissions, deleting, running jobs, rebuilding, cancelling, the
 * build log, fixed issue ids and pull-request current builds.
 */
import type { Db } from '../../db/database.js';
import type { BuildRow, ProjectRow } from '../../db/schema.js';
import { BadRequest, Conflict, NotFound } from '../../errors.js';
import { parseIntegerValue, QuerySyntaxError } from '../../query/index.js';
import { revList } from '../../git/commits.js';
import { recordAudit } from '../audit/index.js';
import { uniquely } from '../unique.js';
import { ANONYMOUS_ID, UNKNOWN_ID, type Context } from '../context.js';
import { reassignAuthor } from '../entities.js';
import { fixedIssueIdsBetween } from '../issues/index.js';
import {
  findProjectByPath,
  getProjectRow,
  jobPermissions,
  type JobPermissions,
  labelSpecExists,
  loadProjectWith,
  projectPermissions,
} from '../projects/index.js';
import { deny, requireUser } from '../actor.js';
import { getMergePreview, loadReadablePullRequest } from '../pulls/index.js';
import { followLog } from './log-signals.js';
import { readLogFrom, removeBuildStorage } from './storage.js';
import { cancelBuildRow, checkRefAndCommit, FINISHED, newPipeline, resubmitBuild, submitBuild } from './submit.js';

/** The job-scoped privilege an operation needs. */
export type BuildNeed = keyof Omit<JobPermissions, 'accessibleReports'>;

/**
 * Loads a build the caller may see and checks a job privilege on it (docs/compatibility.md#builds-endpoints:
 * AccessBuild, AccessBuildLog, RunJob, ManageJob). A missing build, or one whose project or job
 * the caller cannot see, is 404; a visible build lacking `need` is 401/403.
 *
 * @returns the build, its project and the caller's privileges on the build's job.
 */
export async function loadBuild(
  ctx: Context,
  buildId: number,
  need: BuildNeed = 'accessBuild',
): Promise<{ build: BuildRow; project: ProjectRow; job: JobPermissions }> {
  const build = await ctx.db.selectFrom('builds').selectAll().where('id', '=', buildId).executeTakeFirst();
  if (!build) throw new NotFound(`Build not found: ${buildId}`);
  const project = await getProjectRow(ctx.db, build.projectId);
  const permissions = await projectPermissions(ctx, project);
  const job = jobPermissions(permissions.access ? permissions : { ...permissions, roles: [] }, build.jobName, ctx.actor.userId === ANONYMOUS_ID);
  if (!permissions.access || !job.accessBuild) throw new NotFound(`Build not found: ${buildId}`);
  if (!job[need]) deny(ctx.actor);
  return { build, project, job };
}

/** Get Basic Info (docs/compatibility.md#builds-endpoints). */
export async function getBuild(ctx: Context, buildId: number): Promise<BuildRow> {
  return (await loadBuild(ctx, buildId)).build;
}

/** Get Labels (docs/compatibility.md#builds-endpoints). */
export async function getBuildLabels(ctx: Context, buildId: number) {
  await loadBuild(ctx, buildId);
  return ctx.db.selectFrom('buildLabels').selectAll().where('buildId', '=', buildId).orderBy('id').execute();
}

/**
 * Create Build Label (`POST /build-labels`, docs/compatibility.md#builds-endpoints): ManageJob on the
 * build; the label spec must exist (400); a label once per build (409).
 *
 * @returns the new label id.
 */
export async function createBuildLabel(ctx: Context, data: { buildId: number; specId: number }): Promise<number> {
  await loadBuild(ctx, data.buildId, 'manageJob');
  if (!(await labelSpecExists(ctx.db, data.specId))) {
    throw new BadRequest(`Label spec not found: ${data.specId}`);
  }
  const message = `Build ${data.buildId} already has label ${data.specId}`;
  return uniquely(message, () =>
    ctx.db.transaction().execute(async (tx) => {
      if (await tx.selectFrom('buildLabels').select('id').where('buildId', '=', data.buildId).where('specId', '=', data.specId).executeTakeFirst()) {
        throw new Conflict(message);
      }
      return (await tx.insertInto('buildLabels').values(data).returning('id').executeTakeFirstOrThrow()).id;
    }),
  );
}

/** Delete Build Label (`DELETE /build-labels/{id}`): ManageJob on its build; 404 when absent or invisible. */
export async function deleteBuildLabel(ctx: Context, labelId: number): Promise<void> {
  const row = await ctx.db.selectFrom('buildLabels').selectAll().where('id', '=', labelId).executeTakeFirst();
  if (!row) throw new NotFound(`Build label not found: ${labelId}`);
  await loadBuild(ctx, row.buildId, 'manageJob');
  await ctx.db.deleteFrom('buildLabels').where('id', '=', labelId).execute();
}

/** Get Params (docs/compatibility.md#builds-endpoints): secret values are masked by the wire mapper. */
export async function getBuildParams(ctx: Context, buildId: number) {
  await loadBuild(ctx, buildId);
  return ctx.db.selectFrom('buildParams').selectAll().where('buildId', '=', buildId).orderBy('id').execute();
}

/** Get Dependencies (`dependentId == buildId`) or Dependents (`dependencyId == buildId`) (docs/compatibility.md#builds-endpoints). */
export async function getBuildDependences(ctx: Context, buildId: number, side: 'dependencies' | 'dependents') {
  await loadBuild(ctx, buildId);
  return ctx.db
    .selectFrom('buildDependences')
    .selectAll()
    .where(side === 'dependencies' ? 'dependentId' : 'dependencyId', '=', buildId)
    .orderBy('id')
    .execute();
}

/**
 * Delete (docs/compatibility.md#builds-endpoints): ManageJob; cascades to params, labels and dependences; removes the storage dir.
 * Audited as `build.delete` (docs/audit-log.md#actions).
 * A running execution notices the missing row and stops.
 */
export async function deleteBuild(ctx: Context, buildId: number): Promise<void> {
  requireUser(ctx.actor);
  const { build, project } = await loadBuild(ctx, buildId, 'manageJob');
  await ctx.db.transaction().execute(async (tx) => {
    await tx.deleteFrom('builds').where('id', '=', buildId).execute();
    await recordAudit(ctx, tx, {
      action: 'build.delete',
      targetType: 'build',
      targetId: buildId,
      targetName: `${project.path}#${build.number}`,
      projectId: build.projectId,
      before: { jobName: build.jobName, status: build.status, refName: build.refName, commitHash: build.commitHash },
    });
  });
  await removeBuildStorage(ctx.config, build);
}

/** A JobRun body (docs/compatibility.md#builds-creating-builds), after schema validation. */
export type JobRun =
  | { '@type': 'JobRunOnCommit'; projectId: number; commitHash: string; refName: string; jobName: string; params?: Record<string, string[]>; reason: string }
  | { '@type': 'JobRunOnPullRequest'; pullRequestId: number; jobName: string; params?: Record<string, string[]>; reason: string };

/**
 * Run Build (docs/compatibility.md#builds-creating-builds): RunJob on the job; a fresh pipeline; every declared param must be supplied.
 * JobRunOnPullRequest builds the merge preview commit on `refs/pulls/N/merge`.
 *
 * @returns the new build id.
 * @throws BadRequest for a bad ref/commit, missing spec/job, param errors, merge conflicts; NotFound for an unknown ref.
 */
export async function runJob(ctx: Context, run: JobRun): Promise<number> {
  const userId = requireUser(ctx.actor);
  if (!run.reason || run.reason.trim() === '') throw new BadRequest('reason is required');
  if (!run.jobName) throw new BadRequest('jobName is required');
  let projectId: number;
  let commitHash: string;
  let refName: string;
  let requestId: number | null = null;
  if (run['@type'] === 'JobRunOnCommit') {
    projectId = run.projectId;
    const { project } = await loadProjectWith(ctx, projectId, 'access');
    await requireRunJob(ctx, project, run.jobName);
    await checkRefAndCommit(ctx, projectId, run.refName, run.commitHash);
    commitHash = run.commitHash;
    refName = run.refName;
  } else {
    const pr = await loadReadablePullRequest(ctx, run.pullRequestId);
    const { project } = await loadProjectWith(ctx, pr.targetProjectId, 'access');
    await requireRunJob(ctx, project, run.jobName);
    const preview = await getMergePreview(ctx, pr.id);
    if (!preview) throw new BadRequest('Pull request merge preview not calculated yet');
    if (!preview.mergeCommitHash) throw new BadRequest('Pull request has merge conflicts');
    projectId = pr.targetProjectId;
    commitHash = preview.mergeCommitHash;
    refName = `refs/pulls/${pr.number}/merge`;
    requestId = pr.id;
  }
  return submitBuild(ctx, {
    projectId,
    commitHash,
    refName,
    jobName: run.jobName,
    params: run.params ?? {},
    reason: run.reason,
    pipeline: newPipeline(),
    submitterId: userId,
    requestId,
    strictParams: true,
  });
}

async function requireRunJob(ctx: Context, project: ProjectRow, jobName: string): Promise<void> {
  const permissions = await projectPermissions(ctx, project);
  if (!jobPermissions(permissions, jobName, ctx.actor.userId === ANONYMOUS_ID).runJob) deny(ctx.actor);
}

/** Rebuild (docs/compatibility.md#builds-creating-builds): RunJob; the build must be finished (409 otherwise). */
export async function rebuild(ctx: Context, buildId: number, reason: string): Promise<void> {
  const userId = requireUser(ctx.actor);
  if (!reason || reason.trim() === '') throw new BadRequest('reason is required');
  const { build } = await loadBuild(ctx, buildId, 'runJob');
  await resubmitBuild(ctx, build, reason, userId);
}

/** Cancel Build (docs/compatibility.md#builds-creating-builds): RunJob; a no-op when already finished. */
export async function cancelBuild(ctx: Context, buildId: number): Promise<void> {
  const userId = requireUser(ctx.actor);
  const { build } = await loadBuild(ctx, buildId, 'runJob');
  if (FINISHED.includes(build.status)) return;
  await cancelBuildRow(ctx, buildId, userId);
}

/** Milliseconds a followed log waits at most for a signal of new lines before it is read again (unless `GITLOOM_FALLBACK_POLL_MS`). */
const LOG_FALLBACK_MS = 1000;

/**
 * The build log (AccessBuildLog) as a byte stream from byte `from` (default 0: the whole log);
 * with `follow` the stream stays open while the build is unfinished and ends once it finished
 * and the whole log was sent. New lines are read when the process writing them signals them
 * (src/domain/builds/log-signals.ts, from another process through PostgreSQL), and at the
 * latest every `GITLOOM_FALLBACK_POLL_MS` (1 s by default).
 *
 * @throws BadRequest for a negative or fractional `from`.
 */
export async function buildLog(ctx: Context, buildId: number, follow: boolean, from = 0): Promise<AsyncGenerator<Buffer>> {
  if (!Number.isSafeInteger(from) || from < 0) throw new BadRequest(`Invalid log offset: ${from}`);
  const { build } = await loadBuild(ctx, buildId, 'accessLog');
  const config = ctx.config;
  const fallbackMs = config.fallbackPollMs ?? LOG_FALLBACK_MS;
  return (async function* stream() {
    let offset = from;
    const follower = follow ? followLog(ctx.db, buildId) : null;
    try {
      for (;;) {
        const current = await ctx.db.selectFrom('builds').select(['status']).where('id', '=', buildId).executeTakeFirst();
        for await (const chunk of readLogFrom(config, build, offset)) {
          offset += chunk.length;
          yield chunk;
        }
        if (!follower || !current || FINISHED.includes(current.status)) {
          if (follower && current) for await (const chunk of readLogFrom(config, build, offset)) yield chunk;
          return;
        }
        await follower.next(fallbackMs);
      }
    } finally {
      follower?.close();
    }
  })();
}

/**
 * Fixed issue ids (docs/compatibility.md#builds-fixed-issues): the issues fixed by commits `prev..this`, where prev
 * is the commit of the stream-previous SUCCESSFUL build of the job (same ref preferred) that is
 * an ancestor of this build's commit; empty without one.
 */
export async function fixedIssueIds(ctx: Context, buildId: number): Promise<number[]> {
  const { build } = await loadBuild(ctx, buildId);
  const repo = ctx.repoPath(build.projectId);
  const candidates = await ctx.db
    .selectFrom('builds')
    .select(['commitHash', 'refName'])
    .where('projectId', '=', build.projectId)
    .where('jobName', '=', build.jobName)
    .where('status', '=', 'SUCCESSFUL')
    .where('number', '<', build.number)
    .orderBy('number', 'desc')
    .limit(500)
    .execute();
  const sameRef = candidates.filter((c) => c.refName === build.refName);
  const pool = sameRef.length > 0 ? sameRef : candidates;
  if (pool.length === 0) return [];
  const poolCommits = new Set(pool.map((c) => c.commitHash));
  let previous: string | null = null;
  for (const hash of await revList(repo, [build.commitHash], [], { max: 10_000 })) {
    if (poolCommits.has(hash)) {
      previous = hash;
      break;
    }
  }
  if (!previous) return [];
  return fixedIssueIdsBetween(ctx, build.projectId, previous, build.commitHash);
}

/** A deleted user's builds' submitters and cancellers go to the unknown user (the `userDeleting` reaction, docs/compatibility.md#users-deletion). */
export function reassignBuildUsers(db: Db, userId: number): Promise<void> {
  return reassignAuthor(
    db,
    [
      { table: 'builds', column: 'submitterId' },
      { table: 'builds', column: 'cancellerId' },
    ],
    userId,
    UNKNOWN_ID,
  );
}

/** `proj#n` → the build it names (its project, commit and id); QuerySyntaxError otherwise. */
export async function buildByReference(ctx: Context, value: string): Promise<{ id: number; projectId: number; commit: string }> {
  const match = /^(.+)#(\d+)$/.exec(value.trim());
  if (!match) throw new QuerySyntaxError(`Project is not specified: ${value}`);
  const project = await findProjectByPath(ctx.db, match[1]);
  if (!project) throw new QuerySyntaxError(`Unable to find project: ${match[1]}`);
  const build = await ctx.db
    .selectFrom('builds')
    .select(['id', 'commitHash'])
    .where('projectId', '=', project.id)
    .where('number', '=', parseIntegerValue('Number', match[2]))
    .executeTakeFirst();
  if (!build) throw new QuerySyntaxError(`Unable to find build: ${value}`);
  return { id: build.id, projectId: project.id, commit: build.commitHash };
}

/**
 * The commit of build number `number` of project `projectId` (the `build` revision of the commit
 * query, docs/compatibility.md#gitloom-differs-additions-to-the-interface), or null when there is none. Answers the
 * repositories area's question (src/domain/repositories/commit-query.ts).
 */
export async function buildCommitOf(db: Db, projectId: number, number: number): Promise<string | null> {
  const build = await db.selectFrom('builds').select('commitHash').where('projectId', '=', projectId).where('number', '=', number).executeTakeFirst();
  return build?.commitHash ?? null;
}
