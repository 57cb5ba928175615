/**
 * One job leased to a build agent (docs/compatibility.md#build-agents), run with the server's own
 * executor (src/ci/executor.ts `runJob`) in `<work dir>/jobs/<build id>-<uuid>`: the checkout and
 * the dependencies' artifacts come from the server over HTTP with the job's token, the log goes
 * to it as it is written (src/agent/log-shipper.ts), published artifacts are streamed to it, the
 * caches stay on the agent unless the server keeps them in its bucket (src/agent/caches.ts), and the outcome is posted to `/~agent/job/finish` — tried again while
 * the server does not answer. The job directory is removed afterwards, as the server's
 * scheduler does.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { AGENT_PATHS, type AgentJob, type FinishRequest } from '../wire/agent-protocol.js';
import type { ArtifactStorage } from '../ci/artifact-storage.js';
import { artifactTooLarge, writeArtifact } from '../ci/artifacts.js';
import type { ContainerEngines } from '../ci/container-engine.js';
import { runJob, type JobResult } from '../ci/executor.js';
import { CacheStore } from '../ci/job-caches.js';
import { relativeSegments } from '../ci/job-directory.js';
import type { JobSandboxConfig } from '../ci/sandbox.js';
import { serverJobCaches } from './caches.js';
import { checkoutJob } from './checkout.js';
import { LogShipper } from './log-shipper.js';
import { Backoff, callServer, ServerRefusal, ServerUnreachable } from './server-client.js';

/** What every job of an agent runs with. */
export interface JobEnvironment {
  /** The server's URL. */
  readonly server: string;
  /** `<work dir>/jobs`. */
  readonly jobsDir: string;
  /** The agent's caches (`<work dir>/caches`, bounded by `--cache-mb`), for jobs whose server keeps none. */
  readonly caches: CacheStore;
  readonly sandbox: JobSandboxConfig;
  /** The agent's container engine, or null when it has none. */
  readonly containers: ContainerEngines | null;
  /** The agent's own log (stderr). */
  readonly report: (message: string) => void;
  /** Milliseconds between SIGTERM and SIGKILL when a step is stopped (default 2000, as the server's). */
  readonly killGraceMs?: number;
}

/** Why a running job was stopped from outside. */
export type JobStop = 'cancelled' | 'shutdown';

/** A job running on the agent. */
export class AgentJobRun {
  private readonly controller = new AbortController();
  private stopped: JobStop | null = null;
  private readonly log: LogShipper;
  /** Resolves when the job ended and its outcome was posted (or given up). */
  readonly done: Promise<void>;

  constructor(
    readonly job: AgentJob,
    private readonly env: JobEnvironment,
  ) {
    this.log = new LogShipper({
      send: async (text) => void (await this.call(AGENT_PATHS.log, { text })),
      onDropped: (reason) => env.report(`Build ${job.buildId}: log lines dropped: ${reason}`),
      onRetry: (error) => env.report(`Build ${job.buildId}: log not sent yet: ${error.message}`),
    });
    this.done = this.run();
  }

  /**
   * Stops the job: `cancelled` when the server said so (its build ended or is no longer this
   * agent's; nothing is posted), `shutdown` when the agent stops (the build ends FAILED, saying so).
   */
  stop(why: JobStop): void {
    this.stopped ??= why;
    this.controller.abort();
    if (why !== 'shutdown') return;
    // a stopping agent does not wait for ever for a server that does not answer
    const timer = setTimeout(() => this.log.abandon('the agent stops and the server does not answer'), SHUTDOWN_FINISH_MS);
    timer.unref();
    const clear = () => clearTimeout(timer);
    // the outcome of `done` is its owner's (src/agent/agent.ts reports it): here only the timer goes
    void this.done.then(clear, clear);
  }

  private async run(): Promise<void> {
    const { job, env } = this;
    const log = this.log;
    const jobDir = path.join(env.jobsDir, `${job.buildId}-${randomUUID()}`);
    let result: JobResult | null = null;
    let failure: string | null = null;
    try {
      log.line(`Job directory on the agent: ${jobDir}`);
      result = await runJob({
        jobDir,
        steps: job.steps,
        checkout: (target, options) => checkoutJob(env.server, job, target, options),
        artifactsDir: this.artifacts(),
        artifactMaxBytes: job.artifactMaxBytes,
        log,
        variables: job.variables,
        prepare: (workspace) => this.retrieveDependencies(workspace, log),
        env: job.env,
        secrets: job.secrets,
        signal: this.controller.signal,
        timeoutSeconds: Math.max(0.001, job.timeoutSeconds),
        killGraceMs: env.killGraceMs ?? 2000,
        sandbox: env.sandbox,
        containers: job.executorKind === 'ServerDockerExecutor' ? env.containers : null,
        services: job.services,
        caches: {
          store: job.sharedCaches === null ? env.caches : serverJobCaches(env.server, job.jobToken, job.sharedCaches.maxBytes, this.controller.signal),
          specs: job.caches,
          ttlDays: job.cacheTTL,
        },
        projectId: job.projectId,
        executorKind: job.executorKind,
        containerLimits: job.containerLimits,
        registryLogins: job.registryLogins,
      });
    } catch (error) {
      failure = `Build failed: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      // Safe: runJob returned only once no process of the job's uid runs (src/ci/job-directory.ts
      // rule 1), and fs.rm removes links themselves, never what they point to.
      await rm(jobDir, { recursive: true, force: true }).catch((e: Error) => env.report(`Build ${job.buildId}: job directory not removed: ${e.message}`));
    }
    if (this.stopped === 'cancelled') {
      await log.close();
      return env.report(`Build ${job.buildId}: stopped, as the server asked`);
    }
    let finish: FinishRequest;
    if (failure !== null || result === null) {
      log.line(failure ?? 'Build failed');
      finish = { status: 'FAILED' };
    } else if (this.stopped === 'shutdown') {
      log.line('Agent stopped while the build was running');
      finish = { status: 'FAILED', version: result.version, description: result.description };
    } else finish = { status: result.status, version: result.version, description: result.description };
    await log.close();
    await this.finish(finish);
  }

  /**
   * Posts the outcome, trying again while the server does not answer (for ever, or, once the
   * agent stops, for {@link SHUTDOWN_FINISH_MS}); a refusal means the server ended the build
   * meanwhile (cancelled, or its lease expired): it is reported here and dropped.
   */
  private async finish(request: FinishRequest): Promise<void> {
    const backoff = new Backoff();
    const giveUpAt = () => (this.stopped === 'shutdown' ? Date.now() + SHUTDOWN_FINISH_MS : Infinity);
    let deadline = giveUpAt();
    for (;;) {
      try {
        await this.call(AGENT_PATHS.finish, { json: request });
        return this.env.report(`Build ${this.job.buildId}: ${request.status}`);
      } catch (error) {
        if (error instanceof ServerRefusal) {
          return this.env.report(`Build ${this.job.buildId}: ended ${request.status} here, but the server had ended it already (${error.message})`);
        }
        if (!(error instanceof ServerUnreachable)) throw error;
        if (Date.now() > deadline) return this.env.report(`Build ${this.job.buildId}: outcome ${request.status} not reported: ${error.message}`);
        this.env.report(`Build ${this.job.buildId}: outcome not reported yet: ${error.message}`);
      }
      await backoff.wait();
      if (deadline === Infinity) deadline = giveUpAt();
    }
  }

  /** A call of the job (its token), answered 2xx. */
  private call(apiPath: string, body: { text?: string; json?: unknown; stream?: AsyncIterable<Uint8Array> }): Promise<Response> {
    return callServer(this.env.server, apiPath, { token: this.job.jobToken, ...body });
  }

  /**
   * Retrieves the artifacts of the job's dependencies into the workspace (each file through a
   * temp file renamed into place, src/ci/artifacts.ts `writeArtifact`). Safe: runJob calls it
   * before any step ran, while only the agent has touched the workspace, and hands what it made
   * to the job's uid afterwards (src/ci/job-directory.ts rule 3).
   */
  private async retrieveDependencies(workspace: string, log: LogShipper): Promise<void> {
    for (const dep of this.job.dependencies) {
      const dest = path.join(workspace, ...relativeSegments(dep.destinationPath, 'Destination path'));
      await mkdir(dest, { recursive: true });
      for (const file of dep.files) {
        const filePath = `${AGENT_PATHS.dependencies}/${dep.buildId}/${file.split('/').map(encodeURIComponent).join('/')}`;
        const response = await callServer(this.env.server, filePath, { token: this.job.jobToken, signal: this.controller.signal, timeoutMs: 3_600_000 });
        if (!response.body) throw new Error(`Artifact '${file}' of dependency job '${dep.jobName}': the server sent no content`);
        await writeArtifact(dest, file, Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>));
      }
      log.line(`Retrieved ${dep.files.length} artifact file(s) of dependency job '${dep.jobName}'`);
    }
  }

  /**
   * The build's artifacts as the executor's publish step sees them (src/ci/artifact-storage.ts):
   * `write` streams a file to the server; the step calls nothing else.
   */
  private artifacts(): ArtifactStorage {
    const unavailable = (what: string) => () => Promise.reject(new Error(`Artifacts cannot be ${what} on a build agent`));
    return {
      write: async (userPath, source, options = {}) => {
        let length = 0;
        let tooLarge = false;
        const max = options.maxBytes;
        const counted = async function* (): AsyncGenerator<Uint8Array> {
          for await (const chunk of source as AsyncIterable<Uint8Array>) {
            length += chunk.length;
            // a file grown past the limit while sent: the request is cut, so the server keeps nothing
            tooLarge = max !== undefined && length > max;
            if (tooLarge) throw artifactTooLarge(max ?? 0);
            yield chunk;
          }
        };
        const artifactPath = `${AGENT_PATHS.artifacts}/${userPath.split('/').map(encodeURIComponent).join('/')}`;
        try {
          await this.call(artifactPath, { stream: counted() });
        } catch (error) {
          if (tooLarge || (error instanceof ServerRefusal && error.status === 413)) throw artifactTooLarge(max ?? 0);
          throw error;
        }
        return { length };
      },
      info: unavailable('listed'),
      remove: unavailable('removed'),
      open: unavailable('read'),
    };
  }
}

/** Milliseconds a stopping agent keeps trying to report a job's outcome. */
const SHUTDOWN_FINISH_MS = 10_000;
