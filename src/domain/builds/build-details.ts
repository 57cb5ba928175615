/**
 * Reads of one build beyond its row, for the web UI's build pages (docs/compatibility.md#gitloom-differs-web-ui): the build
 * by project and number with the caller's job privileges, the names of its submitter and
 * canceller, its params with secrets masked, the tail of its log, its artifact files, and the
 * jobs of a project the caller may run by hand. Permissions are the API's (docs/compatibility.md#builds-endpoints): every read goes through {@link loadBuild}.
 */
import { artifactFiles } from '../../ci/artifact-storage.js';
import type { ParamSpec } from '../../ci/spec-types.js';
import type { BuildRow, ProjectRow } from '../../db/schema.js';
import { NotFound } from '../../errors.js';
import { defaultBranchHead, refHead, resolveCommit } from '../../git/refs.js';
import { ANONYMOUS_ID, type Context } from '../context.js';
import { jobPermissions, type JobPermissions, projectPathsByIds, projectPermissions, roleJobPrivileges } from '../projects/index.js';
import { requireUser } from '../actor.js';
import { loadBuild } from './builds.js';
import { specAt } from './spec.js';
import { artifactStorage, logSize, readLogFrom } from './storage.js';
import { agentName } from '../agents/index.js';
import { userNamesByIds } from '../users/index.js';

/** The value shown for a `Secret` param (the API's mask, docs/compatibility.md#builds-endpoints getParams). */
export const SECRET_MASK = '*****';

/** A build with what a page shows around it. */
export interface BuildDetails {
  build: BuildRow;
  /** The caller's privileges on the build's job (AccessBuild is given). */
  job: JobPermissions;
  /** Login names by user id of the submitter and canceller (the system user for automatic builds). */
  userNames: Map<number, string>;
  /** Params in declaration order; `Secret` values masked. */
  params: { name: string; type: string; value: string | null }[];
  /** The name of the agent that ran it, or null (run by a server process, or the agent removed). */
  agentName: string | null;
}

/**
 * A build of a project by its number (`/<project>/~builds/<number>`), with its params and
 * people. Needs AccessBuild on the job.
 *
 * @throws NotFound `Build not found: <path>#<number>` when there is no such build or the caller
 *   cannot see its job (existence is not leaked).
 */
export async function buildByNumber(ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>, number: number): Promise<BuildDetails> {
  const row = Number.isSafeInteger(number)
    ? await ctx.db.selectFrom('builds').select('id').where('projectId', '=', project.id).where('number', '=', number).executeTakeFirst()
    : undefined;
  if (!row) throw new NotFound(`Build not found: ${project.path}#${number}`);
  let loaded;
  try {
    loaded = await loadBuild(ctx, row.id);
  } catch (error) {
    if (error instanceof NotFound) throw new NotFound(`Build not found: ${project.path}#${number}`);
    throw error;
  }
  const { build, job } = loaded;
  const people = [build.submitterId, ...(build.cancellerId === null ? [] : [build.cancellerId])];
  const [userNames, params, ranOn] = await Promise.all([
    userNamesByIds(ctx.db, people),
    ctx.db.selectFrom('buildParams').select(['name', 'type', 'value']).where('buildId', '=', build.id).orderBy('id').execute(),
    build.agentId === null ? null : agentName(ctx, build.agentId),
  ]);
  return {
    build,
    job,
    userNames,
    params: params.map((p) => ({ ...p, value: p.type === 'Secret' && p.value !== null ? SECRET_MASK : p.value })),
    agentName: ranOn,
  };
}

/** The end of a build log. */
export interface LogTail {
  /** Whole lines (UTF-8 text) from the tail of the log; '' when there is no log yet. */
  text: string;
  /** Byte offset just after `text`: where a follower continues ({@link buildLog} `from`). */
  end: number;
  /** Whether earlier lines were left out to keep within the byte limit. */
  truncated: boolean;
}

/**
 * The last whole lines of a build's log, at most `maxBytes` bytes (AccessBuildLog). A line still
 * being written (no newline yet) is left for the follower.
 *
 * @throws NotFound / Forbidden / Unauthorized as {@link loadBuild} with `accessLog`.
 */
export async function buildLogTail(ctx: Context, buildId: number, maxBytes: number): Promise<LogTail> {
  const { build } = await loadBuild(ctx, buildId, 'accessLog');
  const size = await logSize(ctx.config, build);
  if (size === 0) return { text: '', end: 0, truncated: false };
  const start = Math.max(0, size - maxBytes);
  const chunks: Buffer[] = [];
  let read = 0;
  for await (const chunk of readLogFrom(ctx.config, build, start)) {
    chunks.push(chunk);
    read += chunk.length;
    if (read >= size - start) break;
  }
  const buffer = Buffer.concat(chunks).subarray(0, size - start);
  const first = start === 0 ? 0 : buffer.indexOf(10) + 1;
  const last = buffer.lastIndexOf(10) + 1;
  if (last <= first) return { text: '', end: start + first, truncated: start > 0 };
  return { text: buffer.subarray(first, last).toString('utf8'), end: start + last, truncated: start > 0 };
}

/** One artifact file of a build. */
export interface ArtifactFile {
  /** Path relative to the artifacts root, `/`-separated. */
  path: string;
  /** Bytes. */
  length: number;
}

/**
 * The artifact files of a build, depth-first in the API's order (directories first, then files,
 * by path), at most `limit` (AccessBuild).
 *
 * @throws NotFound / Forbidden / Unauthorized as {@link loadBuild}.
 */
export async function listArtifactFiles(ctx: Context, buildId: number, limit: number): Promise<{ files: ArtifactFile[]; truncated: boolean }> {
  const { build } = await loadBuild(ctx, buildId);
  const files: ArtifactFile[] = [];
  for await (const file of artifactFiles(artifactStorage(ctx.config, build))) {
    if (files.length === limit) return { files, truncated: true };
    files.push({ path: file.path, length: file.length });
  }
  return { files, truncated: false };
}

/** A job the caller may run by hand, with the params a run must supply. */
export interface RunnableJob {
  name: string;
  paramSpecs: readonly ParamSpec[];
}

/**
 * The jobs of the build spec at the head of the project's default branch that the caller may
 * run (RunJob, docs/compatibility.md#builds-endpoints), for the "Run job" control. Empty for anonymous callers,
 * an empty repository, or a missing or invalid spec.
 */
export async function runnableJobs(ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>): Promise<{ branch: string | null; jobs: RunnableJob[] }> {
  if (ctx.actor.userId === ANONYMOUS_ID) return { branch: null, jobs: [] };
  const permissions = await projectPermissions(ctx, project);
  // no role may run any job: no need to read the spec
  const mayRun =
    permissions.manage || permissions.manageBuilds || permissions.roles.some((role) => roleJobPrivileges(role).some((p) => p.runJob || p.manageJob));
  if (!mayRun) return { branch: null, jobs: [] };
  const repo = ctx.repoPath(project.id);
  const head = await defaultBranchHead(repo);
  if (!head) return { branch: null, jobs: [] };
  const { branch } = head;
  const spec = await specAt(repo, head.commitHash);
  if (spec.kind !== 'valid') return { branch, jobs: [] };
  const jobs = spec.spec.jobs.filter((job) => jobPermissions(permissions, job.name, false).runJob);
  return { branch, jobs: jobs.map((job) => ({ name: job.name, paramSpecs: job.paramSpecs })) };
}

/**
 * The head commit of a branch of a project the caller can see, for running a job on it.
 *
 * @throws Unauthorized for anonymous callers; NotFound `Branch not found: x` when the branch does not exist.
 */
export async function branchCommit(ctx: Context, project: Pick<ProjectRow, 'id'>, branch: string): Promise<{ refName: string; commitHash: string }> {
  requireUser(ctx.actor);
  const refName = `refs/heads/${branch}`;
  const repo = ctx.repoPath(project.id);
  const head = branch.trim() === '' ? null : await refHead(repo, refName);
  const commitHash = head && (await resolveCommit(repo, head));
  if (!commitHash) throw new NotFound(`Branch not found: ${branch}`);
  return { refName, commitHash };
}

/**
 * The paths of the projects of some builds the caller already read (one query), for lists
 * across projects.
 *
 * @returns project path by project id.
 */
export async function buildProjectPaths(ctx: Context, builds: readonly Pick<BuildRow, 'projectId'>[]): Promise<Map<number, string>> {
  return projectPathsByIds(
    ctx.db,
    builds.map((b) => b.projectId),
  );
}
