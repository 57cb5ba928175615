/**
 * The build scheduler (docs/compatibility.md#builds-lifecycle): a loop in every server process that
 * moves WAITING builds to PENDING (or FAILED) when their dependencies finish, chooses the job
 * executor of each PENDING build (docs/compatibility.md#builds-job-executors), claims those whose
 * executor has room in this process from the database with a lease and runs them, renews the
 * leases of its running builds, notices cancels and deletions, and fails builds whose owner
 * died (lease expired) so no build stays RUNNING after a crash or restart.
 *
 * Claiming, one build at a time: `UPDATE … WHERE id = (SELECT … WHERE id = ? AND status =
 * 'PENDING' FOR UPDATE SKIP LOCKED)` on PostgreSQL, so several processes share the work and each
 * build runs once; a conditional `UPDATE … WHERE status = 'PENDING'` on SQLite, whose file one
 * process owns. Room is counted per process, as OneDev counts it per server: the executor's
 * `concurrency` (its CPU count when blank) within `GITLOOM_JOB_CONCURRENCY`; a build whose
 * executor is full stays PENDING, and another process with room may take it.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { ContainerEngines } from '../../ci/container-engine.js';
import { CacheStore } from '../../ci/job-caches.js';
import { CACHES_DIR, CONTAINERS_DIR } from '../../data-dir.js';
import { formatLogLine, runJob, type CheckoutOptions, type ExecutorKind, type JobResult, type JobStatus } from '../../ci/executor.js';
import { relativeSegments } from '../../ci/job-directory.js';
import { retrieveArtifacts } from '../../ci/artifact-storage.js';
import { recordWhenAvailable } from '../../db/availability.js';
import { availabilityOf } from '../../db/database.js';
import { dialectOf } from '../../db/dialect.js';
import type { BuildRow } from '../../db/schema.js';
import { checkoutCommit } from '../../git/files.js';
import { checkoutLfsObjects } from '../lfs/index.js';
import { createContext, systemActor, type Context, type Services } from '../context.js';
import { PollingLoop } from '../polling-loop.js';
import { AGENT_LEASE, claimPendingBuild, extendAgentLeases } from './agent-leases.js';
import type { ExecutorPlacement } from './executor-selection.js';
import { finishBuild } from './finish.js';
import { jobInputs, JobPlanner, pendingBuilds, type JobInputs, type Plan } from './job-inputs.js';
import { storedJobCaches } from './job-caches.js';
import { archiveFinishedLog, endInterrupted, recordJobOutcome } from './job-outcomes.js';
import { findPullRequestRow } from '../pulls/index.js';
import { jobVariables } from './spec.js';
import { appendLog, artifactStorage, buildDir, logPath } from './storage.js';
import { logAppended } from './log-signals.js';
import { ScheduleRunner } from './schedules.js';
import { announceBuildsChanged, BUILDS_TOPIC, onWakeup } from './wakeup.js';

/** Options of {@link BuildScheduler}. */
export interface SchedulerOptions {
  /** This process's lease owner id: its id in the registry of server processes (default: a random one). */
  owner?: string;
  /** Milliseconds between ticks (default 500). */
  tickMs?: number;
  /** Lease length in milliseconds (default 15000); renewed every tick while running. */
  leaseMs?: number;
  /** Logs scheduler faults. */
  onError?: (error: unknown) => void;
  /** Milliseconds between evaluations of `!ScheduleTrigger` cron expressions (default 1000). */
  scheduleMs?: number;
  /** The engine of container steps; without it jobs with container steps fail, saying what to install. */
  containers?: ContainerEngines | null;
}

interface Execution {
  /** The executor running it and the slots of it the job takes (1, plus one per service on docker, as OneDev). */
  executor: string;
  slots: number;
  controller: AbortController;
  /** Why the execution was stopped from outside: cancelled/deleted, or the server stops. */
  stop: 'cancelled' | 'shutdown' | null;
  done: Promise<void>;
}

/**
 * One process's scheduler. `start()` after the server listens, `stop()` on close: running
 * builds are stopped and end FAILED (`Server stopped while the build was running`).
 */
export class BuildScheduler {
  /** This process's lease owner id. */
  readonly owner: string;
  private readonly ctx: Context;
  private readonly leaseMs: number;
  private readonly executions = new Map<number, Execution>();
  private readonly loop: PollingLoop;
  private unsubscribe: (() => void) | null = null;
  private readonly schedules: ScheduleRunner;
  private listening = false;
  /** The executor chosen for each PENDING build lately. */
  private readonly planner: JobPlanner;
  /** The engines of docker executors with a `dockerSockPath`, by socket. */
  private readonly engines = new Map<string, ContainerEngines>();

  constructor(
    private readonly services: Services,
    private readonly options: SchedulerOptions = {},
  ) {
    this.ctx = createContext(services, systemActor);
    this.owner = options.owner ?? randomUUID();
    this.leaseMs = options.leaseMs ?? 15_000;
    this.loop = new PollingLoop(() => this.tick(), options.tickMs ?? 500, options.onError).wakeOn(services.db, BUILDS_TOPIC);
    this.schedules = new ScheduleRunner(this.ctx, (error) => options.onError?.(error), options.scheduleMs ?? 1000);
    const discover = (): ExecutorKind => (options.containers?.discoverable() ? 'ServerDockerExecutor' : 'ServerShellExecutor');
    this.planner = new JobPlanner(this.ctx, discover, (error) => options.onError?.(error));
  }

  /**
   * Starts the loop. When one process owns the database (SQLite), builds a previous process left
   * RUNNING fail at once, and builds running on agents get a lease period from now: their agents
   * renew them if they still run them (docs/compatibility.md#build-agents "Loss and restarts").
   */
  async start(): Promise<void> {
    if (dialectOf(this.ctx.db).ownedByOneProcess) {
      await extendAgentLeases(this.ctx, this.leaseMs);
      await this.failInterrupted(false);
    }
    this.unsubscribe = onWakeup(() => this.wake());
    if (!this.listening) {
      this.listening = true;
      this.services.events.on('refsUpdated', (event) => this.schedules.projectChanged(event.projectId));
    }
    this.schedules.start();
    this.loop.start();
  }

  /** Runs a tick now (coalesced with one in progress). */
  wake(): void {
    this.loop.wake();
  }

  /** Stops the loop and every running build of this process; resolves when all are written back. */
  async stop(): Promise<void> {
    const looping = this.loop.stop();
    this.unsubscribe?.();
    await this.schedules.stop();
    await looping;
    for (const execution of this.executions.values()) {
      execution.stop ??= 'shutdown';
      execution.controller.abort();
    }
    await Promise.all([...this.executions.values()].map((e) => e.done));
    await Promise.all([...this.engines.values()].map((e) => e.close()));
  }

  private async tick(): Promise<void> {
    await this.failInterrupted(true);
    await this.watchRunning();
    await this.promoteWaiting();
    await this.claimPending();
  }

  /** Whether this process runs fewer jobs than `GITLOOM_JOB_CONCURRENCY`. */
  private hasRoom(): boolean {
    return !this.loop.stopped && this.executions.size < Math.max(1, this.services.config.jobConcurrency);
  }

  /** Whether `slots` more fit on an executor in this process (a job larger than the whole executor runs alone on it). */
  private fits(executor: ExecutorPlacement, slots: number): boolean {
    let used = 0;
    for (const e of this.executions.values()) if (e.executor === executor.name) used += e.slots;
    return used === 0 || used + slots <= executor.concurrency;
  }

  /**
   * Claims the PENDING builds, oldest first, whose executor has room in this process and runs
   * them; a build without an executor (none found, disabled, not authorized…) is claimed and
   * fails with the reason in its log.
   */
  private async claimPending(): Promise<void> {
    if (!this.hasRoom()) return;
    const pending = await pendingBuilds(this.ctx);
    this.planner.retain(pending);
    for (const build of pending) {
      if (!this.hasRoom()) break;
      const plan = await this.planner.planOf(build);
      // the builds of remote executors are leased by agents (src/domain/builds/agent-leases.ts)
      if ('executor' in plan && (plan.executor.agents !== null || !this.fits(plan.executor, plan.slots))) continue;
      const claimed = await this.claim(build.id);
      this.planner.forget(build.id);
      if (!claimed) continue;
      if ('failure' in plan) await this.finish(claimed, 'FAILED', {}, plan.failure);
      else this.launch(claimed, plan);
    }
  }

  /**
   * Ends RUNNING builds whose owner is gone — lease expired (`expiredOnly`) or, on SQLite start,
   * any other server process — FAILED, or WAITING for a retry when the job's retry condition
   * holds. Within a lease period after a database outage no lease counts as expired: their owners
   * could not renew them during it.
   */
  private async failInterrupted(expiredOnly: boolean): Promise<void> {
    const now = this.ctx.now();
    const outageEnded = availabilityOf(this.services.db).lastOutageEnded;
    if (expiredOnly && outageEnded !== null && Date.now() - outageEnded < this.leaseMs) return;
    let query = this.ctx.db.selectFrom('builds').selectAll().where('status', '=', 'RUNNING');
    query = expiredOnly
      ? query.where('leaseExpires', '<', now)
      : query.where((eb) =>
          eb.or([eb('leaseOwner', 'is', null), eb.and([eb('leaseOwner', '<>', this.owner), eb('leaseOwner', 'not like', `${AGENT_LEASE}%`)])]),
        );
    for (const build of await query.execute()) {
      if (this.executions.has(build.id)) continue;
      const reason = build.leaseOwner?.startsWith(AGENT_LEASE)
        ? 'Build interrupted: the agent running it stopped or lost its connection'
        : 'Build interrupted: the server process running it stopped or crashed';
      await endInterrupted(this.ctx, build, reason).catch((e) => this.options.onError?.(e));
    }
  }

  /** Renews the leases of this process's builds and stops those cancelled or deleted meanwhile. */
  private async watchRunning(): Promise<void> {
    const ids = [...this.executions.keys()];
    if (ids.length === 0) return;
    await this.ctx.db
      .updateTable('builds')
      .set({ leaseExpires: this.ctx.now() + this.leaseMs })
      .where('id', 'in', ids)
      .where('status', '=', 'RUNNING')
      .where('leaseOwner', '=', this.owner)
      .execute();
    const rows = await this.ctx.db.selectFrom('builds').select(['id', 'status', 'leaseOwner']).where('id', 'in', ids).execute();
    const live = new Set(rows.filter((r) => r.status === 'RUNNING' && r.leaseOwner === this.owner).map((r) => r.id));
    for (const id of ids) {
      if (live.has(id)) continue;
      const execution = this.executions.get(id)!;
      execution.stop ??= 'cancelled';
      execution.controller.abort();
    }
  }

  /** WAITING → PENDING when every dependency finished; → FAILED when a required one did not succeed. */
  private async promoteWaiting(): Promise<void> {
    const now = this.ctx.now();
    const waiting = await this.ctx.db
      .selectFrom('builds')
      .selectAll()
      .where('status', '=', 'WAITING')
      .where((eb) => eb.or([eb('retryDate', 'is', null), eb('retryDate', '<=', now)]))
      .orderBy('id')
      .limit(200)
      .execute();
    if (waiting.length === 0) return;
    const deps = await this.ctx.db
      .selectFrom('buildDependences')
      .innerJoin('builds', 'builds.id', 'buildDependences.dependencyId')
      .select(['buildDependences.dependentId', 'buildDependences.requireSuccessful', 'builds.status'])
      .where(
        'buildDependences.dependentId',
        'in',
        waiting.map((b) => b.id),
      )
      .execute();
    let promoted = 0;
    for (const build of waiting) {
      const mine = deps.filter((d) => d.dependentId === build.id);
      const failed = mine.some((d) => d.requireSuccessful && ['FAILED', 'CANCELLED', 'TIMED_OUT'].includes(d.status));
      const ready = mine.every((d) => ['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(d.status));
      if (failed) {
        // The reason is in the log before the status says FAILED (a reader seeing FAILED finds it).
        await appendLog(this.ctx.config, build, 'Some dependencies are required to be successful but failed', 'Job failed');
        await finishBuild(this.ctx, build.id, { status: 'FAILED' }, (eb) => eb('status', '=', 'WAITING'));
      } else if (ready) {
        const updated = await this.ctx.db
          .updateTable('builds')
          .set({ status: 'PENDING', pendingDate: now, paused: 0 })
          .where('id', '=', build.id)
          .where('status', '=', 'WAITING')
          .executeTakeFirst();
        promoted += Number(updated.numUpdatedRows);
      }
    }
    // the other processes may have room for what this one has not
    if (promoted > 0) await announceBuildsChanged(this.ctx.db);
  }

  /** Claims PENDING build `id` for this process (RUNNING, leased), or null when it is no longer PENDING or another process holds it. */
  private claim(id: number): Promise<BuildRow | null> {
    return claimPendingBuild(this.ctx, id, this.owner, this.leaseMs, null);
  }

  private launch(build: BuildRow, placed: Extract<Plan, { executor: unknown }>): void {
    const execution: Execution = {
      executor: placed.executor.name,
      slots: placed.slots,
      controller: new AbortController(),
      stop: null,
      done: Promise.resolve(),
    };
    this.executions.set(build.id, execution);
    execution.done = this.execute(build, execution, placed.executor)
      .catch(async (error) => {
        this.options.onError?.(error);
        await this.finish(build, 'FAILED', {}, [`Build failed: ${error instanceof Error ? error.message : String(error)}`]).catch((fault) =>
          this.options.onError?.(fault),
        );
      })
      .finally(() => {
        this.executions.delete(build.id);
        this.wake();
      });
  }

  /**
   * Writes a final status (only while this process still owns the running build) and fires the
   * finish hooks; while the database is unavailable the write waits for it (the lease is renewed
   * by the loop once it is back), so a finished build's outcome is not lost.
   */
  private async finish(build: BuildRow, status: JobStatus, extra: { version?: string; description?: string }, lines: string[] = []): Promise<void> {
    if (lines.length > 0) await appendLog(this.ctx.config, build, ...lines);
    await recordWhenAvailable(
      () => finishBuild(this.ctx, build.id, { status, ...extra }, (eb) => eb.and([eb('status', '=', 'RUNNING'), eb('leaseOwner', '=', this.owner)])),
      () => this.loop.stopped,
    );
  }

  /**
   * Runs a claimed build: reads its job and inputs (failing the build when they cannot be had),
   * runs the job in a fresh job directory with the build's log open, and records the outcome.
   */
  private async execute(build: BuildRow, execution: Execution, executor: ExecutorPlacement): Promise<void> {
    const { config } = this.ctx;
    const inputs = await jobInputs(this.ctx, build);
    if (!('job' in inputs)) return this.finish(build, 'FAILED', {}, inputs.failure);
    const request = build.requestId === null ? null : await findPullRequestRow(this.ctx.db, build.requestId);
    const jobDir = path.join(config.jobsDir, `${build.id}-${randomUUID()}`);
    // the build's directory (log, artifacts) lies in the private data dir, out of any job's reach
    await mkdir(buildDir(config, build), { recursive: true });
    await this.ctx.db.updateTable('builds').set({ jobWorkspace: jobDir }).where('id', '=', build.id).execute();
    const log = openBuildLog(logPath(config, build), build.id, () => logAppended(this.ctx.db, build.id, (error) => this.options.onError?.(error)));
    try {
      for (const line of executor.discovery) log.line(line);
      log.line(`Executing job (executor: ${executor.name}, job directory: ${jobDir})...`);
      const prepare = await this.dependencyRetriever(build, log.line);
      const result = await runJob({
        ...this.runOptions(build, inputs, request?.number ?? null, executor),
        jobDir,
        prepare,
        log: log.stream,
        signal: execution.controller.signal,
      });
      await log.close();
      await this.conclude(build, execution, inputs, result);
    } finally {
      await log.close();
      // Safe: runJob returned only once no process of the job's uid runs (src/ci/job-directory.ts
      // rule 1), and fs.rm removes links themselves, never what they point to.
      await rm(jobDir, { recursive: true, force: true });
      await archiveFinishedLog(this.ctx, build).catch((error) => this.options.onError?.(error));
    }
  }

  /**
   * The step that retrieves the artifacts of a build's dependency jobs into the workspace. Safe:
   * runJob calls it before any step ran, while the server alone has touched the workspace, and
   * hands what it made to the job's uid afterwards (src/ci/job-directory.ts rule 3).
   */
  private async dependencyRetriever(build: BuildRow, logLine: (line: string) => void): Promise<(workspace: string) => Promise<void>> {
    const { config } = this.ctx;
    const deps = await this.ctx.db
      .selectFrom('buildDependences')
      .innerJoin('builds', 'builds.id', 'buildDependences.dependencyId')
      .select(['builds.projectId', 'builds.number', 'builds.jobName', 'buildDependences.artifacts', 'buildDependences.destinationPath'])
      .where('buildDependences.dependentId', '=', build.id)
      .execute();
    return async (workspace) => {
      for (const dep of deps) {
        if (dep.artifacts === null) continue;
        const dest = path.join(workspace, ...relativeSegments(dep.destinationPath ?? '', 'Destination path'));
        await mkdir(dest, { recursive: true });
        const copied = await retrieveArtifacts(artifactStorage(config, dep), dep.artifacts, dest);
        logLine(`Retrieved ${copied} artifact file(s) of dependency job '${dep.jobName}'`);
      }
    };
  }

  /** The engine of a docker executor's jobs: the one at its `dockerSockPath`, else the server's. */
  private enginesOf(executor: ExecutorPlacement): ContainerEngines | null | undefined {
    if (executor.kind === 'ServerShellExecutor') return null;
    if (executor.dockerSockPath === null) return this.options.containers;
    let engines = this.engines.get(executor.dockerSockPath);
    if (!engines) {
      const stateDir = path.join(this.ctx.config.dataDir, CONTAINERS_DIR);
      engines = new ContainerEngines({ host: executor.dockerSockPath, stateDir, log: (message) => this.options.onError?.(new Error(message)) });
      this.engines.set(executor.dockerSockPath, engines);
    }
    return engines;
  }

  /** The executor's options for a build's job, but for its directory, log, preparation and signal. */
  private runOptions(build: BuildRow, inputs: JobInputs, pullRequestNumber: number | null, executor: ExecutorPlacement) {
    const { config } = this.ctx;
    const { spec, job, project, params, secrets, secretValues } = inputs;
    const started = build.pendingDate ?? build.runningDate ?? this.ctx.now();
    return {
      steps: job.steps,
      artifactsDir: artifactStorage(config, build),
      artifactMaxBytes: config.artifactMaxBytes,
      timeoutSeconds: Math.max(0.001, job.timeout - (this.ctx.now() - started) / 1000),
      killGraceMs: 2000,
      sandbox: config.jobSandbox,
      executorKind: executor.kind,
      containers: this.enginesOf(executor),
      containerLimits: executor.containerLimits,
      registryLogins: executor.registryLogins,
      services: job.services,
      projectId: build.projectId,
      caches: {
        // in the bucket when there is one, so that every process and agent shares them
        store: config.objectStore === null ? new CacheStore(path.join(config.dataDir, CACHES_DIR), config.jobCacheBytes) : storedJobCaches(this.ctx),
        specs: job.caches,
        ttlDays: executor.cacheTTL,
      },
      secrets: secretValues,
      env: { GITLOOM_BUILD_NUMBER: String(build.number), GITLOOM_COMMIT_HASH: build.commitHash, GITLOOM_REF: build.refName },
      variables: { ...jobVariables(build, project, spec, job, params), pullRequestNumber, secrets },
      checkout: async (target: string, o: CheckoutOptions) => {
        await checkoutCommit(this.ctx.repoPath(build.projectId), target, build.commitHash, build.refName, { signal: o.signal, depth: o.cloneDepth });
        // the objects of Git LFS files come from the server's store (docs/compatibility.md#git-lfs)
        if (o.withLfs) await checkoutLfsObjects(this.ctx, build.projectId, build.commitHash, target, o.log);
      },
    };
  }

  /**
   * Records a job's outcome: nothing when the build was cancelled (its cancel recorded it),
   * FAILED when the server stopped, else the outcome — a retry when a failed job's retry
   * condition holds (src/domain/builds/job-outcomes.ts). While the database is unavailable the
   * write waits for it, so a finished build's outcome is not lost.
   */
  private async conclude(build: BuildRow, execution: Execution, inputs: JobInputs, result: JobResult): Promise<void> {
    if (execution.stop === 'cancelled') return;
    if (execution.stop === 'shutdown') {
      return this.finish(build, 'FAILED', { version: result.version, description: result.description }, ['Server stopped while the build was running']);
    }
    await recordWhenAvailable(
      () => recordJobOutcome(this.ctx, build, this.owner, inputs.job, inputs.params, result),
      () => this.loop.stopped,
    );
  }

  /** Number of builds this process is running (for benchmarks and tests). */
  get runningCount(): number {
    return this.executions.size;
  }
}

/**
 * A build's log file opened for appending while its job runs: `stream` takes the executor's
 * lines, `line` writes a timestamped line, and each write, once in the file, is signalled to
 * the log's followers (`appended`, src/domain/builds/log-signals.ts); `close` ends the file and
 * waits until it is closed (nothing when it already is).
 */
function openBuildLog(file: string, buildId: number, appended: () => void) {
  const output = createWriteStream(file, { flags: 'a' });
  const closed = new Promise<void>((resolve) => output.once('close', () => resolve()));
  // a log that cannot be written (its directory removed, the disk full) must not end the server
  output.once('error', (e) => console.error(`Build ${buildId}: log not written: ${e.message}`));
  const written = (error: Error | null | undefined) => {
    if (!error) appended();
  };
  const stream = { write: (chunk: string) => output.write(chunk, written) };
  return {
    stream,
    line: (line: string): void => {
      stream.write(`${formatLogLine(new Date(), line)}\n`);
    },
    close: async (): Promise<void> => {
      if (output.closed) return;
      output.end();
      await closed;
    },
  };
}
