/**
 * Which job executor runs a build (docs/compatibility.md#builds-job-executors; OneDev 8.6
 * `DefaultJobManager.getJobExecutor` and `isApplicable`): the one the job's `jobExecutor` names,
 * which must exist, be enabled and accept the build; else the first enabled executor whose
 * `jobRequirement` accepts it; with no executor configured, one auto-discovered — server docker
 * when a container engine can be had, else server shell (and a job that needs containers is told
 * what to install).
 */
import os from 'node:os';
import type { BuildSpec, Job } from '../../ci/build-spec.js';
import { ENGINE_UNAVAILABLE } from '../../ci/container-engine.js';
import type { RegistryLogin } from '../../ci/image-registries.js';
import type { ExecutorKind } from '../../ci/executor.js';
import { createVariableResolver, interpolate, VariableError } from '../../ci/variables.js';
import type { BuildRow } from '../../db/schema.js';
import { QuerySyntaxError, type Criteria } from '../../query/index.js';
import { branchesContaining } from '../../git/files.js';
import type { Context } from '../context.js';
import { getProjectRow } from '../projects/index.js';
import { findPullRequestRow } from '../pulls/index.js';
import { jobMatches, parseJobMatch, type JobMatchSubject } from '../query/index.js';
import { parseExecutorAgentQuery } from '../agents/index.js';
import {
  isDockerExecutor,
  isRemoteExecutor,
  loadJobExecutors,
  newJobExecutor,
  parseConcurrency,
  parseCpuLimit,
  parseMemoryLimit,
  type JobExecutor,
} from './job-executors.js';
import { userFacts } from './secrets.js';
import { jobVariables } from './spec.js';

/** OneDev's name of an auto-discovered executor. */
export const AUTO_DISCOVERED = 'auto-discovered';

/** A job executor as the scheduler runs it. */
export interface ExecutorPlacement {
  /** How its jobs run: with containers (server or remote docker) or without (server or remote shell). */
  readonly kind: ExecutorKind;
  readonly name: string;
  /**
   * Null for an executor of the server; for a remote executor, the agents it selects (its
   * `agentQuery` parsed; null criteria: every agent) and its `concurrency` per agent (null: the
   * agent's CPU count).
   */
  readonly agents: { readonly query: Criteria | null; readonly concurrency: number | null } | null;
  /** Jobs and services it runs at once in this process (its `concurrency`, else the CPU count). */
  readonly concurrency: number;
  /** Days an unused job cache is kept. */
  readonly cacheTTL: number;
  readonly containerLimits: { readonly memoryMb: number | null; readonly cpus: number | null };
  readonly registryLogins: readonly RegistryLogin[];
  /** The engine's socket of its jobs, or null for the server's engine. */
  readonly dockerSockPath: string | null;
  /** Log lines saying how it was found (auto-discovery), written before the job runs. */
  readonly discovery: readonly string[];
}

/** The executor chosen for a build, or why there is none (OneDev's message, for the build log). */
export type ExecutorChoice = { readonly executor: ExecutorPlacement } | { readonly failure: string };

/** OneDev's display names of the executor types, for the discovery line. */
const DISPLAY_NAMES: Record<ExecutorKind, string> = { ServerDockerExecutor: 'Server Docker Executor', ServerShellExecutor: 'Server Shell Executor' };

function placementOf(executor: JobExecutor, discovery: string[] = []): ExecutorPlacement {
  const docker = isDockerExecutor(executor) ? executor : null;
  const concurrency = executor.concurrency === null ? null : parseConcurrency(executor.concurrency);
  return {
    kind: docker ? 'ServerDockerExecutor' : 'ServerShellExecutor',
    name: executor.name,
    agents: isRemoteExecutor(executor) ? { query: parseExecutorAgentQuery(executor.agentQuery), concurrency } : null,
    concurrency: concurrency || os.availableParallelism(),
    cacheTTL: executor.cacheTTL,
    containerLimits: {
      memoryMb: docker?.memoryLimit ? parseMemoryLimit(docker.memoryLimit) : null,
      cpus: docker?.cpuLimit ? parseCpuLimit(docker.cpuLimit) : null,
    },
    registryLogins: docker?.registryLogins ?? [],
    dockerSockPath: docker?.dockerSockPath?.replace(/^unix:\/\//, '') ?? null,
    discovery,
  };
}

/**
 * The contexts an executor's requirement must accept for a build (OneDev `isApplicable`): a
 * pull request build's source project and branch and its target project and branch, both as
 * submitted by the request's author; any other build its project, the branches holding its
 * commit and its submitter. Each with the job's name.
 */
async function subjectsOf(ctx: Context, build: BuildRow): Promise<JobMatchSubject[]> {
  const pr = build.requestId === null ? null : await findPullRequestRow(ctx.db, build.requestId);
  if (pr && pr.sourceProjectId !== null) {
    const facts = await userFacts(ctx, pr.submitterId);
    const [source, target] = await Promise.all([getProjectRow(ctx.db, pr.sourceProjectId), getProjectRow(ctx.db, pr.targetProjectId)]);
    return [
      { projectPath: source.path, branches: [pr.sourceBranch], ...facts, jobName: build.jobName },
      { projectPath: target.path, branches: [pr.targetBranch], ...facts, jobName: build.jobName },
    ];
  }
  const project = await getProjectRow(ctx.db, build.projectId);
  const branches = await branchesContaining(ctx.repoPath(build.projectId), build.commitHash);
  return [{ projectPath: project.path, branches, ...(await userFacts(ctx, build.submitterId)), jobName: build.jobName }];
}

/** Whether an executor accepts a build: no requirement, or one every subject matches (read once, on first need). */
async function accepts(executor: JobExecutor, subjects: () => Promise<JobMatchSubject[]>): Promise<boolean> {
  if (executor.jobRequirement === null) return true;
  let match;
  try {
    match = parseJobMatch(executor.jobRequirement, { jobCriteria: true });
  } catch (e) {
    // checked when stored; a requirement that no longer reads accepts nothing
    if (e instanceof QuerySyntaxError) return false;
    throw e;
  }
  return (await subjects()).every((subject) => jobMatches(match, subject));
}

/**
 * The job's `jobExecutor` with its variables (`@param:x@`, `@branch@`, …) replaced, or null when
 * it names none.
 *
 * @throws VariableError for a variable without a value.
 */
async function requestedName(ctx: Context, build: BuildRow, spec: BuildSpec, job: Job): Promise<string | null> {
  if (job.jobExecutor === null || job.jobExecutor.trim() === '') return null;
  if (!job.jobExecutor.includes('@')) return job.jobExecutor.trim();
  const project = await getProjectRow(ctx.db, build.projectId);
  const rows = await ctx.db.selectFrom('buildParams').select(['name', 'value']).where('buildId', '=', build.id).where('type', '<>', 'Secret').execute();
  const params: Record<string, string[]> = {};
  for (const row of rows) (params[row.name] ??= []).push(...(row.value === null ? [] : [row.value]));
  const resolve = createVariableResolver(jobVariables(build, project, spec, job, params));
  const name = interpolate(job.jobExecutor, resolve).trim();
  return name === '' ? null : name;
}

/**
 * Chooses the executor of a build about to run (docs/compatibility.md#builds-job-executors), in
 * OneDev 8.6's words when there is none: `Unable to find specified job executor 'x'`,
 * `Specified job executor 'x' is disabled`, `Specified job executor 'x' is not authorized for
 * current job`, `No applicable job executor`.
 *
 * @param discover the executor type auto-discovered when none is configured.
 */
export async function chooseJobExecutor(ctx: Context, build: BuildRow, spec: BuildSpec, job: Job, discover: () => ExecutorKind): Promise<ExecutorChoice> {
  const executors = await loadJobExecutors(ctx);
  let subjects: Promise<JobMatchSubject[]> | null = null;
  const lazySubjects = (): Promise<JobMatchSubject[]> => (subjects ??= subjectsOf(ctx, build));
  let requested: string | null;
  try {
    requested = await requestedName(ctx, build, spec, job);
  } catch (e) {
    if (e instanceof VariableError) return { failure: `Job executor: ${e.message}` };
    throw e;
  }
  if (requested !== null) {
    const executor = executors.find((e) => e.name === requested);
    if (!executor) return { failure: `Unable to find specified job executor '${requested}'` };
    if (!executor.enabled) return { failure: `Specified job executor '${requested}' is disabled` };
    if (!(await accepts(executor, lazySubjects))) return { failure: `Specified job executor '${requested}' is not authorized for current job` };
    return { executor: placementOf(executor) };
  }
  if (executors.length > 0) {
    for (const executor of executors) {
      if (executor.enabled && (await accepts(executor, lazySubjects))) return { executor: placementOf(executor) };
    }
    return { failure: 'No applicable job executor' };
  }
  const kind = discover();
  const discovery = ['No job executor defined, auto-discovering...', `Discovered job executor type: ${DISPLAY_NAMES[kind]}`];
  // a job that needs containers learns what would have given it a server docker executor
  const needsContainers = job.services.length > 0 || job.steps.some((s) => (s.type === 'CommandStep' && s.runInContainer) || s.type === 'RunContainerStep');
  if (kind === 'ServerShellExecutor' && needsContainers) discovery.push(ENGINE_UNAVAILABLE);
  return { executor: placementOf(newJobExecutor(kind, AUTO_DISCOVERED), discovery) };
}
