/**
 * What the job token of a build running on an agent may do (docs/compatibility.md#build-agents
 * "The agent protocol"), and nothing else: fetch its project's repository and LFS objects, read
 * the artifacts of the builds it depends on, append to its log, publish its artifacts, restore
 * and save its project's job caches when the server keeps them in its bucket, and report its end. A token holds only while its build is RUNNING on the agent it was leased to; a
 * finish, a cancel, a retry, a deletion or an expired lease ends it.
 */
import type { Readable } from 'node:stream';
import { artifactTooLarge, type OpenedArtifact } from '../../ci/artifacts.js';
import type { BuildRow } from '../../db/schema.js';
import { BadRequest, Conflict, NotFound, Unauthorized } from '../../errors.js';
import type { Context } from '../context.js';
import { openCheckoutObject, type OpenedObject } from '../lfs/index.js';
import { hashToken } from '../token-hash.js';
import { checkPath } from './artifacts.js';
import { finishBuild } from './finish.js';
import { conditionParams, jobOf } from './job-inputs.js';
import { cacheTooLarge, checkCacheKey, openStoredCache, saveStoredCache } from './job-caches.js';
import { archiveFinishedLog, recordJobOutcome, type JobOutcome } from './job-outcomes.js';
import { logAppended } from './log-signals.js';
import { appendLogText, artifactStorage } from './storage.js';

/** A build running on an agent, as its job token names it. */
export interface JobGrant {
  readonly build: BuildRow;
  readonly agentId: number;
}

/**
 * The build a presented job token is for.
 *
 * @throws Unauthorized for an unknown token; Conflict `GITLOOM_ERR_JOB_ENDED` when its build no
 *   longer runs on that agent.
 */
export async function authorizeJob(ctx: Context, token: string): Promise<JobGrant> {
  const row = await ctx.db.selectFrom('jobTokens').select(['buildId', 'agentId']).where('tokenHash', '=', hashToken(token)).executeTakeFirst();
  if (!row) throw new Unauthorized('Unknown job token');
  const build = await ctx.db.selectFrom('builds').selectAll().where('id', '=', row.buildId).executeTakeFirst();
  if (!build || build.status !== 'RUNNING' || build.agentId !== row.agentId) {
    throw new Conflict('The build of this job token no longer runs on this agent', { code: 'GITLOOM_ERR_JOB_ENDED' });
  }
  return { build, agentId: row.agentId };
}

/**
 * Appends an agent's log text (its `HH:mm:ss message` lines) to the build's log and wakes its
 * followers; `onError` hears of an announcement to the other processes that failed.
 */
export async function appendJobLog(ctx: Context, grant: JobGrant, text: string, onError: (error: unknown) => void): Promise<void> {
  if (text === '') return;
  await appendLogText(ctx.config, grant.build, text.endsWith('\n') ? text : `${text}\n`);
  logAppended(ctx.db, grant.build.id, onError);
}

/**
 * Publishes a file of the job as an artifact of its build (the executor's `!PublishArtifactStep`
 * on the agent), streamed into the build's artifacts.
 *
 * @throws BadRequest (invalid path), Conflict (a directory there), PayloadTooLarge (over `GITLOOM_ARTIFACT_MAX_MB`).
 */
export async function publishJobArtifact(ctx: Context, grant: JobGrant, userPath: string, body: Readable, declaredLength?: string): Promise<void> {
  const maxBytes = ctx.config.artifactMaxBytes;
  if (declaredLength !== undefined && Number(declaredLength) > maxBytes) throw artifactTooLarge(maxBytes);
  await artifactStorage(ctx.config, grant.build).write(checkPath(userPath), body, { maxBytes });
}

/**
 * Opens an artifact of a build the job's build depends on.
 *
 * @throws NotFound when `dependencyId` is not a dependency of the job's build, or no such file.
 */
export async function openDependencyArtifact(ctx: Context, grant: JobGrant, dependencyId: number, userPath: string, range?: string): Promise<OpenedArtifact> {
  const dep = await ctx.db
    .selectFrom('buildDependences')
    .innerJoin('builds', 'builds.id', 'buildDependences.dependencyId')
    .select(['builds.projectId', 'builds.number'])
    .where('buildDependences.dependentId', '=', grant.build.id)
    .where('buildDependences.dependencyId', '=', dependencyId)
    .executeTakeFirst();
  if (!dep) throw new NotFound(`Build ${dependencyId} is not a dependency of this job`);
  return artifactStorage(ctx.config, dep).open(checkPath(userPath), range);
}

/**
 * Opens an LFS object of the job's project.
 *
 * @throws NotFound when the project holds no such object.
 */
export function openJobLfsObject(ctx: Context, grant: JobGrant, oid: string): Promise<OpenedObject> {
  return openCheckoutObject(ctx, grant.build.projectId, oid);
}

/**
 * Opens the archive of cache `key` (normalized) of the job's project, kept in the server's
 * bucket (src/domain/builds/job-caches.ts), and marks it used.
 *
 * @throws BadRequest for a key that is not normalized, or when the server keeps no caches (no
 *   object store); NotFound when the project has no such cache.
 */
export async function openJobCache(ctx: Context, grant: JobGrant, key: string): Promise<{ stream: Readable; size: number }> {
  requireStoredCaches(ctx);
  const opened = await openStoredCache(ctx, grant.build.projectId, checkCacheKey(key));
  if (opened === null) throw new NotFound(`No job cache '${key}' in this project`);
  return opened;
}

/**
 * Saves `archive` (a tar archive made by src/ci/cache-archives.ts) as cache `key` of the job's
 * project, streamed into the server's bucket.
 *
 * @returns its size in bytes.
 * @throws BadRequest as {@link openJobCache}; PayloadTooLarge `GITLOOM_ERR_JOB_CACHE_TOO_LARGE`
 *   over `GITLOOM_JOB_CACHE_MB` (nothing kept).
 */
export async function saveJobCache(ctx: Context, grant: JobGrant, key: string, archive: Readable, declaredLength?: string): Promise<number> {
  requireStoredCaches(ctx);
  checkCacheKey(key);
  if (declaredLength !== undefined && Number(declaredLength) > ctx.config.jobCacheBytes) {
    throw cacheTooLarge(ctx.config.jobCacheBytes);
  }
  return saveStoredCache(ctx, grant.build.projectId, key, archive);
}

function requireStoredCaches(ctx: Context): void {
  if (ctx.config.objectStore === null) throw new BadRequest("This server keeps no job caches: an agent's caches stay on the agent");
}

/**
 * Records how the agent's job ended (src/domain/builds/job-outcomes.ts: a retry when its retry
 * condition holds, else the status), then archives the finished log.
 *
 * @throws Conflict `GITLOOM_ERR_JOB_ENDED` when the build stopped running on the agent meanwhile.
 */
export async function finishAgentJob(ctx: Context, grant: JobGrant, outcome: JobOutcome): Promise<void> {
  const { build } = grant;
  const owner = build.leaseOwner!;
  const found = await jobOf(ctx, build);
  const recorded =
    'failure' in found
      ? (await finishBuild(ctx, build.id, outcome, (eb) => eb.and([eb('status', '=', 'RUNNING'), eb('leaseOwner', '=', owner)]))) !== null
      : await recordJobOutcome(ctx, build, owner, found.job, await conditionParams(ctx, build.id), outcome);
  if (!recorded) throw new Conflict('The build of this job token no longer runs on this agent', { code: 'GITLOOM_ERR_JOB_ENDED' });
  await archiveFinishedLog(ctx, build);
}
