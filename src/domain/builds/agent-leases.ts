/**
 * Builds run by agents (docs/compatibility.md#build-agents): an agent's lease request claims the
 * oldest PENDING build that a remote executor selecting the agent has room for on it — with the
 * same claim as a server process's scheduler (src/domain/builds/scheduler.ts), so each build runs
 * once — and hands it the job with a job token; the agent's heartbeats renew the leases of the
 * builds it runs. The lease owner of such a build is `agent:<agent id>:<session>`: when the agent
 * stops, its leases expire and any server process ends its builds (FAILED, or WAITING for a
 * retry), as it ends those of a dead server process.
 */
import { randomBytes } from 'node:crypto';
import {
  LEASE_WAIT_MS,
  type AgentJob,
  type ConnectRequest,
  type ConnectResponse,
  type HeartbeatRequest,
  type HeartbeatResponse,
  type JobDependency,
} from '../../wire/agent-protocol.js';
import type { Config } from '../../config.js';
import { matchingArtifacts } from '../../ci/artifact-storage.js';
import { dialectOf } from '../../db/dialect.js';
import { onAnnouncement } from '../../db/notifications.js';
import type { BuildRow } from '../../db/schema.js';
import { agentSelected, connectAgent, touchAgent, type ConnectedAgent } from '../agents/index.js';
import type { Context } from '../context.js';
import { findPullRequestRow } from '../pulls/index.js';
import { hashToken } from '../token-hash.js';
import { finishBuild } from './finish.js';
import { evictUnusedJobCaches } from './job-caches.js';
import { jobInputs, JobPlanner, pendingBuilds, type Plan } from './job-inputs.js';
import { endInterrupted } from './job-outcomes.js';
import { jobVariables } from './spec.js';
import { appendLog, artifactStorage } from './storage.js';
import { BUILDS_TOPIC, onWakeup } from './wakeup.js';

/**
 * How long a build's lease lasts without renewal, milliseconds: 15 s, or three fallback polling
 * intervals when `GITLOOM_FALLBACK_POLL_MS` is longer (src/server.ts gives the scheduler the
 * same); an agent's heartbeats come three times per lease.
 */
export function buildLeaseMs(config: Pick<Config, 'fallbackPollMs'>): number {
  return config.fallbackPollMs === null ? 15_000 : Math.max(15_000, 3 * config.fallbackPollMs);
}

/**
 * An agent's connect (docs/compatibility.md#build-agents "The agent protocol"): registers it
 * (src/domain/agents/connections.ts) and, when the connection replaced the agent's own previous
 * session (killed and started again), ends that session's builds as a lost agent's — FAILED, or
 * WAITING for a retry when the job's retry condition holds — rather than when their leases
 * expire. A failure to end one is told to `onError`: its lease, no longer renewed, expires and
 * the schedulers end it then.
 *
 * @throws what connectAgent throws.
 */
export async function agentConnect(
  ctx: Context,
  tokenId: number,
  report: ConnectRequest,
  ipAddress: string,
  onError: (error: unknown) => void,
): Promise<ConnectResponse> {
  const leaseMs = buildLeaseMs(ctx.config);
  const { replaced, ...connected } = await connectAgent(ctx, tokenId, report, ipAddress, leaseMs);
  if (replaced !== null) {
    const builds = await ctx.db
      .selectFrom('builds')
      .selectAll()
      .where('status', '=', 'RUNNING')
      .where('leaseOwner', '=', agentLeaseOwner(connected.agentId, replaced))
      .execute();
    for (const build of builds) {
      await endInterrupted(ctx, build, 'Build interrupted: the agent running it was started again').catch(onError);
    }
  }
  return { ...connected, heartbeatMs: Math.floor(leaseMs / 3), leaseMs };
}

/**
 * An agent's heartbeat (docs/compatibility.md#build-agents): keeps it online, renews the leases
 * of the builds it runs and answers what it must know — paused, its attributes, the builds to stop.
 *
 * @throws Conflict `GITLOOM_ERR_AGENT_SESSION` for a session no longer the agent's.
 */
export async function agentHeartbeat(ctx: Context, tokenId: number, request: HeartbeatRequest): Promise<HeartbeatResponse> {
  const leaseMs = buildLeaseMs(ctx.config);
  const agent = await touchAgent(ctx, tokenId, request.session, leaseMs);
  const stop = await renewAgentLeases(ctx, agentLeaseOwner(agent.id, request.session), request.running, leaseMs);
  return { paused: agent.paused, attributes: agent.attributes, stop };
}

/**
 * An agent's lease request: waits up to `waitMs` (at most {@link LEASE_WAIT_MS}) for a job it can
 * run now ({@link leaseAgentJob}); null when none came or the agent went away (`signal`).
 *
 * @throws Conflict `GITLOOM_ERR_AGENT_SESSION` for a session no longer the agent's.
 */
export async function agentLease(
  ctx: Context,
  tokenId: number,
  session: string,
  waitMs: number,
  signal: AbortSignal,
  onError: (error: unknown) => void,
): Promise<AgentJob | null> {
  const leaseMs = buildLeaseMs(ctx.config);
  return waitForAgentJob(
    ctx,
    async () => leaseAgentJob(ctx, await touchAgent(ctx, tokenId, session, leaseMs), session, leaseMs, onError),
    Math.min(waitMs, LEASE_WAIT_MS),
    signal,
  );
}

/** The prefix of the lease owner of a build running on an agent. */
export const AGENT_LEASE = 'agent:';

/** The lease owner of the builds an agent runs in one connection. */
export function agentLeaseOwner(agentId: number, session: string): string {
  return `${AGENT_LEASE}${agentId}:${session}`;
}

/**
 * Claims PENDING build `id` (RUNNING, leased to `owner` for `leaseMs`, on agent `agentId` or on
 * a server process for null), or null when it is no longer PENDING or another claimant holds it:
 * `FOR UPDATE SKIP LOCKED` on PostgreSQL, a conditional update on SQLite.
 */
export async function claimPendingBuild(ctx: Context, id: number, owner: string, leaseMs: number, agentId: number | null): Promise<BuildRow | null> {
  const now = ctx.now();
  const set = { status: 'RUNNING' as const, runningDate: now, leaseOwner: owner, leaseExpires: now + leaseMs, paused: 0, agentId };
  const [row] = await dialectOf(ctx.db).claim(ctx.db.selectFrom('builds').select('id').where('id', '=', id).where('status', '=', 'PENDING'), (ids) =>
    ctx.db.updateTable('builds').set(set).where('id', 'in', ids).where('status', '=', 'PENDING').returningAll().execute(),
  );
  return row ?? null;
}

/**
 * Gives the builds leased to agents a lease period from now: on SQLite start (the server was down
 * meanwhile and no agent could renew them), their agents then renew them or they expire.
 */
export async function extendAgentLeases(ctx: Context, leaseMs: number): Promise<void> {
  await ctx.db
    .updateTable('builds')
    .set({ leaseExpires: ctx.now() + leaseMs })
    .where('status', '=', 'RUNNING')
    .where('leaseOwner', 'like', `${AGENT_LEASE}%`)
    .execute();
}

/**
 * Renews, for `leaseMs`, the leases of the builds an agent says it runs under `owner`, and
 * answers those of them it must stop: no longer RUNNING under that lease (cancelled, deleted,
 * finished, or ended after the lease expired).
 */
export async function renewAgentLeases(ctx: Context, owner: string, running: readonly number[], leaseMs: number): Promise<number[]> {
  if (running.length === 0) return [];
  await ctx.db
    .updateTable('builds')
    .set({ leaseExpires: ctx.now() + leaseMs })
    .where('id', 'in', running)
    .where('status', '=', 'RUNNING')
    .where('leaseOwner', '=', owner)
    .execute();
  const live = await ctx.db
    .selectFrom('builds')
    .select('id')
    .where('id', 'in', running)
    .where('status', '=', 'RUNNING')
    .where('leaseOwner', '=', owner)
    .execute();
  const kept = new Set(live.map((row) => row.id));
  return running.filter((id) => !kept.has(id));
}

/** The plans of PENDING builds, one planner per database in this process (the executors of agents are never auto-discovered). */
const planners = new WeakMap<object, JobPlanner>();

function plannerOf(ctx: Context, onError: (error: unknown) => void): JobPlanner {
  let planner = planners.get(ctx.db);
  if (!planner) {
    planner = new JobPlanner(ctx, () => 'ServerShellExecutor', onError);
    planners.set(ctx.db, planner);
  }
  return planner;
}

/** Whether a plan is a remote executor's that selects the agent and has room on it for the job. */
function fitsAgent(plan: Plan, agent: ConnectedAgent, used: readonly { executor: string; slots: number }[]): plan is Extract<Plan, { executor: unknown }> {
  if (!('executor' in plan) || plan.executor.agents === null) return false;
  const { executor, slots } = plan;
  if (!agentSelected(executor.agents!.query, agent)) return false;
  if (executor.kind === 'ServerDockerExecutor' && agent.engine === null) return false;
  const capacity = executor.agents!.concurrency ?? agent.cpus;
  const taken = used.filter((u) => u.executor === executor.name).reduce((sum, u) => sum + u.slots, 0);
  // as on a server: a job larger than the whole executor runs alone on it
  return taken === 0 || taken + slots <= capacity;
}

/**
 * Leases to an agent the oldest PENDING build it can run now (see the module's docs), or null:
 * the build becomes RUNNING on the agent, a job token is made for it, and its log names the
 * executor and the agent. A build that cannot run (its inputs cannot be had) fails with the
 * reason in its log, and the next is tried.
 */
async function leaseAgentJob(
  ctx: Context,
  agent: ConnectedAgent,
  session: string,
  leaseMs: number,
  onError: (error: unknown) => void,
): Promise<AgentJob | null> {
  if (agent.paused) return null;
  const owner = agentLeaseOwner(agent.id, session);
  const planner = plannerOf(ctx, onError);
  const pending = await pendingBuilds(ctx);
  planner.retain(pending);
  const used = await ctx.db
    .selectFrom('jobTokens')
    .innerJoin('builds', 'builds.id', 'jobTokens.buildId')
    .select(['jobTokens.executor', 'jobTokens.slots'])
    .where('jobTokens.agentId', '=', agent.id)
    .where('builds.status', '=', 'RUNNING')
    .execute();
  for (const build of pending) {
    const plan = await planner.planOf(build);
    if (!fitsAgent(plan, agent, used)) continue;
    const claimed = await claimPendingBuild(ctx, build.id, owner, leaseMs, agent.id);
    planner.forget(build.id);
    if (!claimed) continue;
    const job = await jobFor(ctx, claimed, plan, agent, owner);
    if (job) return job;
  }
  return null;
}

/** The job of a build just leased to an agent, with its token; null when the build failed instead (its inputs cannot be had). */
async function jobFor(
  ctx: Context,
  build: BuildRow,
  plan: Extract<Plan, { executor: unknown }>,
  agent: ConnectedAgent,
  owner: string,
): Promise<AgentJob | null> {
  const { config } = ctx;
  const inputs = await jobInputs(ctx, build);
  if ('failure' in inputs) {
    await appendLog(config, build, ...inputs.failure);
    await finishBuild(ctx, build.id, { status: 'FAILED' }, (eb) => eb.and([eb('status', '=', 'RUNNING'), eb('leaseOwner', '=', owner)]));
    return null;
  }
  const { spec, job, project, params, secrets, secretValues } = inputs;
  const { executor, slots } = plan;
  const jobToken = randomBytes(32).toString('base64url');
  await ctx.db.transaction().execute(async (tx) => {
    await tx.deleteFrom('jobTokens').where('buildId', '=', build.id).execute();
    await tx
      .insertInto('jobTokens')
      .values({ buildId: build.id, tokenHash: hashToken(jobToken), agentId: agent.id, executor: executor.name, slots })
      .execute();
  });
  const request = build.requestId === null ? null : await findPullRequestRow(ctx.db, build.requestId);
  await appendLog(config, build, `Executing job (executor: ${executor.name}, agent: ${agent.name})...`);
  // caches in the bucket are the server's to evict, as an agent's own are the agent's
  const sharedCaches = config.objectStore !== null && job.caches.length > 0;
  if (sharedCaches) {
    const removed = await evictUnusedJobCaches(ctx, executor.cacheTTL).catch(async (error: Error) => {
      await appendLog(config, build, `Unable to remove the job caches unused for ${executor.cacheTTL} days: ${error.message}`);
      return 0;
    });
    if (removed > 0) await appendLog(config, build, `Removed ${removed} job cache(s) unused for ${executor.cacheTTL} days (cache TTL of the job executor)`);
  }
  const started = build.pendingDate ?? build.runningDate ?? ctx.now();
  return {
    buildId: build.id,
    jobToken,
    executorName: executor.name,
    executorKind: executor.kind,
    slots,
    projectId: build.projectId,
    commitHash: build.commitHash,
    refName: build.refName,
    steps: job.steps,
    services: job.services,
    caches: job.caches,
    cacheTTL: executor.cacheTTL,
    sharedCaches: config.objectStore === null ? null : { maxBytes: config.jobCacheBytes },
    timeoutSeconds: Math.max(0.001, job.timeout - (ctx.now() - started) / 1000),
    variables: { ...jobVariables(build, project, spec, job, params), pullRequestNumber: request?.number ?? null, secrets },
    secrets: secretValues,
    env: { GITLOOM_BUILD_NUMBER: String(build.number), GITLOOM_COMMIT_HASH: build.commitHash, GITLOOM_REF: build.refName },
    registryLogins: executor.registryLogins,
    containerLimits: executor.containerLimits,
    artifactMaxBytes: config.artifactMaxBytes,
    dependencies: await dependenciesOf(ctx, build.id),
  };
}

/** The dependency builds whose artifacts a job retrieves, with the files matching each's pattern. */
async function dependenciesOf(ctx: Context, buildId: number): Promise<JobDependency[]> {
  const deps = await ctx.db
    .selectFrom('buildDependences')
    .innerJoin('builds', 'builds.id', 'buildDependences.dependencyId')
    .select(['builds.id', 'builds.projectId', 'builds.number', 'builds.jobName', 'buildDependences.artifacts', 'buildDependences.destinationPath'])
    .where('buildDependences.dependentId', '=', buildId)
    .execute();
  const result: JobDependency[] = [];
  for (const dep of deps) {
    if (dep.artifacts === null) continue;
    const files = await matchingArtifacts(artifactStorage(ctx.config, dep), dep.artifacts);
    result.push({ buildId: dep.id, jobName: dep.jobName, artifacts: dep.artifacts, destinationPath: dep.destinationPath ?? '', files });
  }
  return result;
}

/**
 * Waits up to `waitMs` for a job for the agent ({@link leaseAgentJob}), trying again whenever
 * builds change in this process or another (a submit, a finish, a dependency done) and at least
 * every second; resolves null when none came or `signal` fired (the agent went away).
 */
async function waitForAgentJob(ctx: Context, lease: () => Promise<AgentJob | null>, waitMs: number, signal: AbortSignal): Promise<AgentJob | null> {
  const deadline = Date.now() + waitMs;
  let wake: (() => void) | null = null;
  const poke = () => wake?.();
  const unsubscribe = [onWakeup(poke), onAnnouncement(ctx.db, BUILDS_TOPIC, poke)];
  signal.addEventListener('abort', poke);
  try {
    while (!signal.aborted) {
      const job = await lease();
      if (job) return job;
      const left = deadline - Date.now();
      if (left <= 0) return null;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 1000));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
    return null;
  } finally {
    for (const off of unsubscribe) off();
    signal.removeEventListener('abort', poke);
  }
}
