/**
 * The server executors (docs/compatibility.md#builds-job-executors: server docker and server
 * shell, told apart by `executorKind`): runs a job's steps serially on this machine — checkout
 * through a callback, command steps as process groups or in containers, publish-artifact and
 * set-build-version steps on the server side — and reports the final status. No database: the
 * scheduler owns build rows, logs, retries and the choice of the executor.
 *
 * Directory ownership: the executor creates the job directory (src/ci/job-directory.ts: the
 * workspace, the job's `HOME` and a root-only directory for what the server gives the steps); the
 * caller removes it afterwards (it stays for inspection until then).
 *
 * Command steps run in the job sandbox (src/ci/sandbox.ts) as a uid of their own, which owns the
 * workspace and `HOME` and nothing else. Checkout, publish and version steps run in the server,
 * as root, outside the sandbox: every file operation they make on the job's tree follows the
 * rules of src/ci/job-directory.ts (frozen tree, no link followed, root writes only what it
 * made), and says at the call why it is safe.
 */
import { closeSync, openSync } from 'node:fs';
import { chown, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ENGINE_UNAVAILABLE, type ContainerEngine, type ContainerEngines } from './container-engine.js';
import { buildImage, parseBuildOptions } from './image-build.js';
import type { RegistryLogin } from './image-registries.js';
import {
  CONTAINER_COMMANDS,
  CONTAINER_WORKSPACE,
  containerArguments,
  runContainerStep,
  type ContainerStepOptions,
  type ContainerStepResult,
  type JobContainers,
} from './container-step.js';
import { startService } from './job-services.js';
import { describeBytes } from './artifacts.js';
import { normalizeCacheKey, type JobCacheStore } from './job-caches.js';
import { chownTree, createJobDirectory, moveInto, relativeSegments, resolveInside, waitForJobProcessesToEnd, type JobDirectory } from './job-directory.js';
import { attachNetwork, openNetworkNamespace, SLIRP_DNS, SLIRP_RESOLV_CONF, type NetworkAttachment, type NetworkNamespace } from './job-network.js';
import { LineAssembler, SecretMasker } from './log-masker.js';
import { runInProcessGroup, terminateProcessGroup, type ProcessGroupResult } from './process-group.js';
import type { ArtifactStorage } from './artifact-storage.js';
import { publishArtifacts } from './publish-artifacts.js';
import {
  acquireJobUid,
  DEFAULT_JOB_SANDBOX,
  JOB_UID_RANGE,
  describeLimits,
  findExecutable,
  limitExceeded,
  planSandbox,
  releaseJobUid,
  SANDBOX_OFF_WARNING,
  SANDBOX_PATH,
  sandboxAccounts,
  sandboxArgv,
  type JobLimits,
  type JobSandboxConfig,
  type SandboxFile,
  type SandboxPlan,
} from './sandbox.js';
import { containerSeccompProfile, seccompFilter } from './seccomp.js';
import type {
  BuildImageStep,
  CheckoutStep,
  CloneCredential,
  CommandStep,
  JobCache,
  JobService,
  RegistryLoginSpec,
  RunContainerStep,
  Step,
} from './spec-types.js';
import { createVariableResolver, interpolate, type VariableContext } from './variables.js';

/**
 * The kind of job executor running a job (docs/compatibility.md#builds-job-executors): a server
 * docker executor runs container steps, services and (unlike OneDev's) `runInContainer: false`
 * steps in the job sandbox; a server shell executor refuses a job with container steps or services.
 */
export type ExecutorKind = 'ServerDockerExecutor' | 'ServerShellExecutor';

/** Final status of a job run (the build status names of docs/compatibility.md#builds-json). */
export type JobStatus = 'SUCCESSFUL' | 'FAILED' | 'CANCELLED' | 'TIMED_OUT';

/** What the checkout callback receives. */
export interface CheckoutOptions {
  /** Clone depth from the step; null = full history. */
  readonly cloneDepth: number | null;
  readonly withLfs: boolean;
  readonly withSubmodules: boolean;
  /** Credential named by the step (secret names, not values). */
  readonly credential: CloneCredential;
  /** Aborted on cancel or timeout; the callback must stop its processes when it fires. */
  readonly signal: AbortSignal;
  /** Writes a line to the build log (secrets masked). */
  readonly log: (line: string) => void;
}

/**
 * Clones the project and checks out the build commit into `targetDir`: an empty directory the
 * server made, which the executor then moves into the workspace (at the step's `checkoutPath`).
 * It runs as the server, so it must not read anything of the job (its `HOME` included). Rejects
 * to fail the step; the rejection message is logged.
 */
export type CheckoutFn = (targetDir: string, options: CheckoutOptions) => Promise<void>;

/**
 * Log destination. A function receives each log line as plain text (no timestamp, no newline);
 * a writable (e.g. a `build.log` file stream) receives `HH:mm:ss message\n` lines.
 */
export type LogSink = ((line: string) => void) | { write(chunk: string): unknown };

/** Options of {@link runJob}. */
export interface RunJobOptions {
  /**
   * Path of the job directory to create (it must not exist; its parent, the jobs dir, is created
   * when missing): the workspace, the job's `HOME` and the server's files of the job live in it.
   * The caller removes it once the job ended.
   */
  readonly jobDir: string;
  /** Steps in order (from `parseBuildSpec`). */
  readonly steps: readonly Step[];
  readonly checkout: CheckoutFn;
  /**
   * Destination of `!PublishArtifactStep`: the build's artifacts in the object store
   * (src/ci/artifact-storage.ts), or a directory created when needed.
   */
  readonly artifactsDir: string | ArtifactStorage;
  /** Largest file `!PublishArtifactStep` publishes, bytes (`GITLOOM_ARTIFACT_MAX_MB`); bigger ones are skipped with a log line. Default: no limit. */
  readonly artifactMaxBytes?: number;
  readonly log: LogSink;
  /**
   * Values for `@...@` variables (without `workspaceDir`, which the executor supplies for
   * `@file:...@`). `@build_version@` reflects a version set earlier in the job. Without it only
   * `@file:...@` and `@build_version@` resolve.
   */
  readonly variables?: Omit<VariableContext, 'workspaceDir'>;
  /**
   * Fills the workspace before the first step (e.g. with the artifacts of dependency jobs): it
   * receives the workspace while only the server has touched it, and it is handed to the job's
   * uid afterwards.
   */
  readonly prepare?: (workspace: string) => Promise<void>;
  /** Extra environment for commands. The server's own environment is not inherited (only PATH and locale). */
  readonly env?: Readonly<Record<string, string>>;
  /** Secret values to mask as `******` in the log; the values of `variables.secrets` are added. */
  readonly secrets?: readonly string[];
  /** Cancels the job: the running process group is terminated, status CANCELLED. */
  readonly signal?: AbortSignal;
  /** Seconds from the start of `runJob` until the job is stopped with TIMED_OUT. */
  readonly timeoutSeconds?: number;
  /** Milliseconds between SIGTERM and SIGKILL when stopping a command (default 5000). */
  readonly killGraceMs?: number;
  /** How command steps are confined (default {@link DEFAULT_JOB_SANDBOX}: sandboxed). */
  readonly sandbox?: JobSandboxConfig;
  /**
   * The engine of command steps with `runInContainer: true` (src/ci/container-engine.ts),
   * connected when the job has such a step; when there is none, the job fails before its first
   * step, saying what to install.
   */
  readonly containers?: Pick<ContainerEngines, 'get'> | null;
  /** The job's services (`requiredServices`), started before the first step. */
  readonly services?: readonly JobService[];
  /**
   * The job's `caches`, restored before the first step and saved after a successful run; with
   * `ttlDays` (the executor's `cacheTTL`), the caches unused for that many days are removed first.
   */
  readonly caches?: { readonly store: JobCacheStore; readonly specs: readonly JobCache[]; readonly ttlDays?: number };
  /** The project of the job: the owner of its caches and of the images its builds make (label BUILT_BY_LABEL). */
  readonly projectId?: number;
  /** The kind of executor running the job (default `ServerDockerExecutor`). */
  readonly executorKind?: ExecutorKind;
  /**
   * The executor's limits of the job's containers (`memoryLimit` in MiB, `cpuLimit` in CPUs);
   * a memory limit applies when stricter than the sandbox's. Null or absent: the sandbox's only.
   */
  readonly containerLimits?: { readonly memoryMb: number | null; readonly cpus: number | null };
  /** The executor's registry logins (OneDev's server docker executor `registryLogins`), for every image of the job. */
  readonly registryLogins?: readonly RegistryLogin[];
}

/** Result of {@link runJob}. */
export interface JobResult {
  readonly status: JobStatus;
  /** Version set by `!SetBuildVersionStep` or `##onedev[SetBuildVersion '…']`. */
  readonly version?: string;
  /** Description set by `!SetBuildDescriptionStep`. */
  readonly description?: string;
  /** Published artifact paths relative to `artifactsDir`. */
  readonly publishedArtifacts: readonly string[];
  /** Names of the steps that failed. */
  readonly failedSteps: readonly string[];
}

const SET_VERSION = /##onedev\[SetBuildVersion\s+'((?:[^'\\]|\\.)*)'\]/;

type StepOutcome = { ok: true } | { ok: false; message: string | null };

/** A command step's script (the server's file), interpreter, extra environment and output. */
interface CommandRun {
  readonly script: string;
  readonly command: string;
  readonly env: Readonly<Record<string, string>>;
  readonly out: LineAssembler;
  readonly err: LineAssembler;
}

/** Formats a log line the way the build log download shows it: `HH:mm:ss message` (local time). */
export function formatLogLine(date: Date, message: string): string {
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())} ${message}`;
}

/**
 * Runs a job's steps and resolves with the outcome; never rejects for build failures (a failed
 * command, a bad variable, a checkout error — all give FAILED with the reason in the log).
 *
 * Steps run serially. Conditions: `ALL_PREVIOUS_STEPS_WERE_SUCCESSFUL` (run only while nothing
 * failed), `ALWAYS` (run even after a failure), `NEVER`. Cancel or timeout stops the current
 * step and skips all remaining ones. A `!CommandStep` writes its commands to a script and runs
 * `sh <script>` (`!DefaultInterpreter`) or `<shell> <script>` (`!ShellInterpreter`) in the
 * workspace, as its own process group; the step fails on a non-zero exit code (there is no
 * implicit `set -e`, as in OneDev). In the sandbox, processes a step leaves running in the
 * background end with the step (its PID namespace dies); unsandboxed, when the job ends.
 *
 * Without bubblewrap (or the seccomp filter, or a job directory the job's uid can reach) the job
 * fails at once with the reason in the log, unless the sandbox is off, which is logged as a
 * warning in the build log.
 *
 * @throws only for file-system faults of the server's own directories and errors of `prepare`.
 */
export async function runJob(options: RunJobOptions): Promise<JobResult> {
  const log = jobLog(options);
  const failed = (...lines: string[]): JobResult => {
    for (const line of [...lines, 'Job failed']) log.line(line);
    return { status: 'FAILED', publishedArtifacts: [], failedSteps: [] };
  };
  if (options.executorKind === 'ServerShellExecutor') {
    const refusal = shellExecutorRefusal(options);
    if (refusal) return failed(refusal);
  }
  const plan = planSandbox(options.sandbox ?? DEFAULT_JOB_SANDBOX);
  if (plan.kind === 'unavailable') return failed(plan.message);
  const usesContainers = options.steps.some(inContainer) || (options.services?.length ?? 0) > 0;
  let engine: ContainerEngine | null = null;
  if (usesContainers) {
    const connected = await connectEngine(options.containers);
    if ('unavailable' in connected) return failed(connected.unavailable);
    engine = connected;
    log.line(`Container engine: ${await connected.describe().catch((e: Error) => `unknown (${e.message})`)}`);
  }
  log.line(plan.kind === 'off' ? SANDBOX_OFF_WARNING : plan.description);
  const sandbox = plan.kind === 'sandbox' ? plan : null;
  let seccomp: Buffer | null = null;
  try {
    if (sandbox) seccomp = await seccompFilter(sandbox.seccompProfile);
  } catch (e) {
    return failed(`Job sandbox unavailable: ${(e as Error).message}`);
  }
  let dir: JobDirectory;
  try {
    dir = await createJobDirectory(options.jobDir, sandbox !== null);
  } catch (e) {
    return failed((e as Error).message);
  }
  // Safe: the workspace was made by the server just now and no step has run (rule 3).
  await options.prepare?.(dir.workspace);
  const confinement = sandbox && seccomp ? { plan: sandbox, seccomp, uid: await acquireJobUid(sandbox.uidBase, usesContainers) } : null;
  const run = new JobRun(options, log, dir, confinement, engine);
  return run.execute();
}

/** Whether a step runs in a container. */
const inContainer = (s: Step): boolean => (s.type === 'CommandStep' && s.runInContainer) || s.type === 'RunContainerStep' || s.type === 'BuildImageStep';

/**
 * Why a server shell executor cannot run a job, in OneDev 8.6 `ServerShellExecutor`'s words: it
 * has services, or a step that runs in a container (named); null when it can run it.
 */
function shellExecutorRefusal(options: RunJobOptions): string | null {
  if ((options.services?.length ?? 0) > 0) return 'This job requires services, which can only be supported by docker aware executors';
  const step = options.steps.find(inContainer);
  if (!step) return null;
  return `Step "${step.name}" failed: This step can only be executed by server docker executor, remote docker executor, or kubernetes executor`;
}

/** The engine of a job's container steps, or why there is none. */
async function connectEngine(engines: RunJobOptions['containers']): Promise<ContainerEngine | { unavailable: string }> {
  if (!engines) return { unavailable: ENGINE_UNAVAILABLE };
  try {
    return await engines.get();
  } catch (e) {
    return { unavailable: (e as Error).message };
  }
}

/**
 * The limits of a job's containers: the sandbox's, with the executor's memory limit when it is
 * stricter and its CPU limit.
 */
function containerLimits(sandbox: JobLimits, executor: RunJobOptions['containerLimits']): JobLimits & { cpus: number | null } {
  const memoryMb = executor?.memoryMb != null ? Math.min(sandbox.memoryMb, executor.memoryMb) : sandbox.memoryMb;
  return { ...sandbox, memoryMb, cpus: executor?.cpus ?? null };
}

/** A job's log: lines masked and written to the sink (see {@link LogSink}). */
interface JobLog {
  readonly masker: SecretMasker;
  /** Writes a line, its secrets masked. */
  line(text: string): void;
  /** Writes a line already masked. */
  masked(text: string): void;
}

/** The log of a job: the given secrets and the values of `variables.secrets` are masked. */
function jobLog(options: RunJobOptions): JobLog {
  const masker = new SecretMasker([...(options.secrets ?? []), ...Object.values(options.variables?.secrets ?? {})]);
  const sink = options.log;
  const masked = (text: string): void => {
    if (typeof sink === 'function') sink(text);
    else sink.write(formatLogLine(new Date(), text) + '\n');
  };
  return { masker, masked, line: (text) => masked(masker.mask(text)) };
}

/** The sandbox plan of a confined job. */
type ConfinedPlan = Extract<SandboxPlan, { kind: 'sandbox' }>;

/** The confinement of a sandboxed job: its plan, seccomp filter and uid. */
interface JobConfinement {
  readonly plan: ConfinedPlan;
  readonly seccomp: Buffer;
  readonly uid: number;
}

/** One run of a job's steps in its job directory, from the first step to the cleanup. */
class JobRun {
  private readonly controller = new AbortController();
  private stopReason: 'CANCELLED' | 'TIMED_OUT' | null = null;
  private readonly killGraceMs: number;
  private readonly baseEnv: NodeJS.ProcessEnv;
  /** The files of {@link SandboxFile} a step receives besides its script (written once per job). */
  private readonly serverFiles: Array<{ host: string; path: string }> = [];
  /** Process groups of the job's commands, terminated when the job ends. */
  private readonly groups = new Set<number>();
  /** Set when processes of the job's uid outlived a step: its tree may change under the server, which then stops. */
  private tainted = false;
  private version: string | undefined;
  private versionSet = false;
  private description: string | undefined;
  private readonly published: string[] = [];
  private readonly failedSteps: string[] = [];
  /** The outward network of the job's containers, opened by the first container step. */
  private containerNetwork: NetworkNamespace | null = null;
  /** What the job's containers share, made by the first one. */
  private containers: JobContainers | null = null;
  /** The containers of the job's services, removed when the job ends. */
  private readonly serviceContainers: string[] = [];
  /** Removals of the job's exited containers under way; the job ends once they are done. */
  private readonly removals: Array<Promise<void>> = [];
  /** Caches at absolute paths: directories of the job mounted into its containers. */
  private readonly cacheMounts: Array<{ source: string; destination: string }> = [];

  constructor(
    private readonly options: RunJobOptions,
    private readonly log: JobLog,
    private readonly dir: JobDirectory,
    private readonly confinement: JobConfinement | null,
    /** The container engine, when the job has container steps. */
    private readonly engine: ContainerEngine | null,
  ) {
    this.killGraceMs = options.killGraceMs ?? 5000;
    this.version = options.variables?.buildVersion ?? undefined;
    this.baseEnv = {
      PATH: confinement ? SANDBOX_PATH : (process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'),
      ...(process.env.LANG ? { LANG: process.env.LANG } : {}),
      ...(process.env.LC_ALL ? { LC_ALL: process.env.LC_ALL } : {}),
      HOME: dir.home,
      GIT_HOME: dir.home,
      ONEDEV_WORKSPACE: dir.workspace,
      GITLOOM_WORKSPACE: dir.workspace,
      ...options.env,
    };
  }

  /** Runs the steps under the job's cancel signal and timeout, cleans up, and reports the outcome. */
  async execute(): Promise<JobResult> {
    const { signal, timeoutSeconds } = this.options;
    const onCancel = (): void => this.stop('CANCELLED');
    if (signal?.aborted) onCancel();
    signal?.addEventListener('abort', onCancel, { once: true });
    const timer = timeoutSeconds !== undefined ? setTimeout(() => this.stop('TIMED_OUT'), timeoutSeconds * 1000) : null;
    let anyFailed = false;
    try {
      if (this.confinement) await this.confine(this.confinement);
      const failure =
        (await this.restoreCaches().then(
          () => null,
          (e: Error) => `Unable to restore the job's caches: ${e.message}`,
        )) ??
        (await this.startServices().then(
          () => null,
          (e: Error) => e.message,
        ));
      if (failure) this.log.line(failure);
      anyFailed = failure !== null || (await this.runSteps());
      if (!anyFailed && !this.stopReason && !this.tainted) await this.saveCaches();
    } finally {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onCancel);
      await this.endProcesses();
    }
    const status: JobStatus = this.stopReason ?? (anyFailed ? 'FAILED' : 'SUCCESSFUL');
    this.log.line(status === 'SUCCESSFUL' ? 'Job finished' : status === 'FAILED' ? 'Job failed' : status === 'TIMED_OUT' ? 'Job timed out' : 'Job cancelled');
    return {
      status,
      ...(this.versionSet && this.version !== undefined ? { version: this.version } : {}),
      ...(this.description !== undefined ? { description: this.description } : {}),
      publishedArtifacts: this.published,
      failedSteps: this.failedSteps,
    };
  }

  private stop(reason: 'CANCELLED' | 'TIMED_OUT'): void {
    if (this.stopReason) return;
    this.stopReason = reason;
    this.controller.abort();
  }

  /**
   * Hands the workspace and HOME to the job's uid and writes the files its steps receive
   * (accounts, hosts, resolver, seccomp filter) into the server's own directory.
   */
  private async confine({ plan, seccomp, uid }: JobConfinement): Promise<void> {
    const { dir } = this;
    // Safe: the workspace and HOME hold only what the server made (rule 3); the other files go
    // into the server's own 0700 directory.
    await chownTree(dir.workspace, uid);
    await chownTree(dir.home, uid);
    const accounts = sandboxAccounts(uid, dir.home);
    const write = async (name: string, content: string | Buffer, inside: string | null): Promise<void> => {
      const host = path.join(dir.server, name);
      await writeFile(host, content, { mode: 0o600, flag: 'wx' });
      if (inside) this.serverFiles.push({ host, path: inside });
    };
    await write('passwd', accounts.passwd, '/etc/passwd');
    await write('group', accounts.group, '/etc/group');
    await write('hosts', accounts.hosts, '/etc/hosts');
    if (plan.network) await write('resolv.conf', SLIRP_RESOLV_CONF, '/etc/resolv.conf');
    await write('seccomp.bpf', seccomp, null);
  }

  /** The job's caches with their key and path interpolated, the key normalized. */
  private cacheUses(): Array<{ key: string; path: string; index: number }> {
    return (this.options.caches?.specs ?? []).map((c, index) => ({ key: normalizeCacheKey(this.expand(c.key)), path: this.expand(c.path), index }));
  }

  /**
   * Restores the job's caches before its first step: each is copied from the store into the
   * server's own directory, handed to the job's uid there and moved into the workspace (rule 3) —
   * or, for an absolute path, kept in the job's directory and mounted at that path into every
   * container step. A cache not stored yet starts empty.
   *
   * @throws Error for a path that leaves the workspace, or one that clashes with its content.
   */
  private async restoreCaches(): Promise<void> {
    const caches = this.options.caches;
    if (!caches) return;
    if (caches.ttlDays !== undefined && caches.store.evictUnused) {
      const removed = await caches.store.evictUnused(caches.ttlDays);
      if (removed > 0) this.log.line(`Removed ${removed} job cache(s) unused for ${caches.ttlDays} days (cache TTL of the job executor)`);
    }
    for (const cache of this.cacheUses()) {
      const absolute = path.isAbsolute(cache.path);
      if (absolute && !this.engine) {
        this.log.line(`Cache '${cache.key}' not restored: '${cache.path}' is a path in containers, and this job runs none`);
        continue;
      }
      const segments = absolute ? [] : relativeSegments(cache.path, 'Cache path');
      // Safe: new directories in the server's own 0700 directory, which the job cannot reach (rule 3).
      const staging = path.join(this.dir.server, `cache-${cache.index + 1}`);
      if (!absolute) await mkdir(path.join(staging, ...segments.slice(0, -1)), { recursive: true });
      const tree = path.join(staging, ...segments);
      const restored = await caches.store.restore(this.options.projectId ?? 0, cache.key, tree);
      if (!restored) await mkdir(tree);
      if (this.confinement) await chownTree(staging, this.confinement.uid);
      if (absolute) {
        // Safe: the job's directory root is root's; the new `caches/` holds only what the server made.
        const mounted = path.join(this.dir.root, 'caches', String(cache.index + 1));
        await mkdir(path.dirname(mounted), { mode: 0o711 }).catch((e: NodeJS.ErrnoException) => {
          if (e.code !== 'EEXIST') throw e;
        });
        await rename(tree, mounted);
        this.cacheMounts.push({ source: mounted, destination: cache.path });
      } else {
        // Safe: no process of the job has run yet (rule 1); moveInto never follows a link (rule 2).
        await moveInto(staging, this.dir.workspace);
      }
      this.log.line(restored ? `Restored cache '${cache.key}' into '${cache.path}'` : `Cache '${cache.key}' is empty; it is saved after a successful run`);
    }
  }

  /**
   * Saves the job's caches after a successful run. Each is read where the job left it — its
   * workspace path, which must be a real directory, or its mounted directory — while no process
   * of the job runs (rule 1), without following links (rule 2). A cache that cannot be saved
   * leaves the run successful and says why in the log.
   */
  private async saveCaches(): Promise<void> {
    const caches = this.options.caches;
    if (!caches) return;
    for (const cache of this.cacheUses()) {
      try {
        let source: string;
        if (path.isAbsolute(cache.path)) {
          const mount = this.cacheMounts.find((m) => m.destination === cache.path);
          if (!mount) continue;
          source = mount.source;
        } else {
          const resolved = await resolveInside(this.dir.workspace, cache.path, 'Cache path');
          if (!resolved.exists) {
            this.log.line(`Cache '${cache.key}' not saved: '${cache.path}' does not exist`);
            continue;
          }
          source = resolved.path;
        }
        const size = await caches.store.save(this.options.projectId ?? 0, cache.key, source);
        this.log.line(
          size === null
            ? `Cache '${cache.key}' not saved: larger than the cache limit of ${describeBytes(caches.store.maxBytes)} (GITLOOM_JOB_CACHE_MB)`
            : `Saved cache '${cache.key}' (${describeBytes(size)})`,
        );
      } catch (e) {
        this.log.line(`Cache '${cache.key}' not saved: ${(e as Error).message}`);
      }
    }
  }

  /** Runs the steps in order by their conditions; resolves whether any failed. */
  private async runSteps(): Promise<boolean> {
    let anyFailed = false;
    for (const [index, step] of this.options.steps.entries()) {
      if (this.stopReason || this.tainted) break;
      const run = step.condition === 'ALWAYS' || (step.condition === 'ALL_PREVIOUS_STEPS_WERE_SUCCESSFUL' && !anyFailed);
      if (!run) {
        this.log.line(`Skipping step "${step.name}" (condition ${step.condition})`);
        continue;
      }
      this.log.line(`Running step "${step.name}"...`);
      let outcome: StepOutcome;
      try {
        outcome = await this.runStep(step, index);
      } catch (e) {
        // Bad variables, unsafe paths, checkout failures, I/O errors: the step fails with the reason.
        outcome = { ok: false, message: e instanceof Error ? e.message : String(e) };
      }
      if (outcome.ok) {
        this.log.line(`Step "${step.name}" is successful`);
      } else if (this.stopReason && outcome.message === null) {
        this.log.line(`Step "${step.name}" was stopped (${this.stopReason === 'TIMED_OUT' ? 'timed out' : 'cancelled'})`);
      } else {
        anyFailed = true;
        this.failedSteps.push(step.name);
        this.log.line(`Step "${step.name}" failed${outcome.message ? `: ${outcome.message}` : ''}`);
      }
    }
    return anyFailed;
  }

  /** Ends what the job left running; a uid whose processes survived is not handed out again. */
  private async endProcesses(): Promise<void> {
    await Promise.all([...this.groups].map((g) => terminateProcessGroup(g, this.killGraceMs)));
    for (const id of this.serviceContainers) this.removeContainer(id, 'a service');
    await Promise.all(this.removals);
    this.containerNetwork?.close();
    const uid = this.confinement?.uid;
    if (uid === undefined) return;
    await waitForJobProcessesToEnd(uid).then(
      () => releaseJobUid(uid),
      (e: Error) => this.log.line(e.message),
    );
  }

  /** Starts removing container `id` (of `what`) at once; a container that cannot be removed taints the job. */
  private removeContainer(id: string, what: string): void {
    const removal = (this.engine as ContainerEngine).removeContainer(id).catch((e: Error) => {
      this.tainted = true;
      this.log.line(`Unable to remove the container of ${what}: ${e.message}`);
    });
    this.removals.push(removal);
  }

  private runStep(step: Step, index: number): Promise<StepOutcome> {
    switch (step.type) {
      case 'CheckoutStep':
        return this.runCheckout(step, index);
      case 'CommandStep':
        return this.runCommand(step, index);
      case 'RunContainerStep':
        return this.runContainer(step);
      case 'BuildImageStep':
        return this.buildImage(step);
      case 'PublishArtifactStep':
        return this.publishArtifacts(step);
      case 'SetBuildVersionStep': {
        const value = this.expand(step.buildVersion).trim();
        if (!value) return Promise.resolve({ ok: false, message: 'Build version is empty' });
        this.setVersion(value);
        return Promise.resolve({ ok: true });
      }
      case 'SetBuildDescriptionStep':
        this.description = this.expand(step.buildDescription);
        return Promise.resolve({ ok: true });
    }
  }

  /** `@...@` variables of a step's text, with the version set so far. */
  private expand(text: string): string {
    const v = this.options.variables;
    const base = createVariableResolver({
      projectName: v?.projectName ?? '',
      projectPath: v?.projectPath ?? '',
      jobName: v?.jobName ?? '',
      ref: v?.ref ?? '',
      commitHash: v?.commitHash ?? '',
      buildNumber: v?.buildNumber ?? 0,
      pullRequestNumber: v?.pullRequestNumber,
      issueNumber: v?.issueNumber,
      params: v?.params,
      secrets: v?.secrets,
      properties: v?.properties,
      buildVersion: this.version,
      workspaceDir: this.dir.workspace,
    });
    return interpolate(text, (ref) => (ref.kind === 'job' && !v && ref.name !== 'build_version' ? undefined : base(ref)));
  }

  private setVersion(value: string): void {
    this.version = value;
    this.versionSet = true;
    this.log.line(`Build version set to '${value}'`);
  }

  /**
   * A `!CommandStep`: its commands as a script, run by its interpreter in a container of its image
   * (`runInContainer: true`) or as a process group (in the sandbox when confined).
   */
  private async runCommand(step: CommandStep, index: number): Promise<StepOutcome> {
    const commands = this.expand(step.interpreter.commands);
    const stepEnv: Record<string, string> = {};
    for (const e of step.envVars) stepEnv[e.name] = this.expand(e.value);
    // Safe: the server's own 0700 directory, which the job cannot reach; a new file (rule 3).
    const script = path.join(this.dir.server, `step-${index + 1}.sh`);
    await writeFile(script, commands.replace(/\r\n/g, '\n') + '\n', { mode: 0o600, flag: 'wx' });
    const command = step.interpreter.type === 'ShellInterpreter' ? step.interpreter.shell : 'sh';
    const { out, err } = this.outputAssemblers();
    // Each runner ends the output (flushing a last unterminated line) before it reports the outcome.
    if (step.runInContainer) return this.runInContainer(step, index, { script, command, env: stepEnv, out, err });
    return this.runInProcessGroup(index, { script, command, env: stepEnv, out, err });
  }

  /**
   * What the job's containers share ({@link JobContainers}), made by the first container of the
   * job: its network namespace — outward with the job firewall, or, for a job with services
   * whose network is `none`, a loopback of its own —, the names of its services and, confined,
   * the seccomp profile of its containers (the sandbox's, without new user namespaces).
   */
  private async jobContainers(): Promise<JobContainers> {
    if (this.containers) return this.containers;
    const plan = this.confinement?.plan;
    const services = this.options.services ?? [];
    let seccompProfile: string | null = null;
    if (plan) {
      seccompProfile = path.join(this.dir.server, 'seccomp.json');
      // Safe: the server's own 0700 directory, which the job cannot reach (rule 3).
      await writeFile(seccompProfile, containerSeccompProfile(await readFile(plan.seccompProfile, 'utf8')), { mode: 0o600 });
    }
    let network: NetworkNamespace | null = null;
    if (plan?.network) network = await openNetworkNamespace(this.dir.root, { kind: 'outward', tools: plan.network, allow: plan.networkAllow });
    else if (plan && services.length > 0) {
      if (!plan.loopback) throw new Error('Services need a network namespace of the job: install util-linux and iproute2');
      network = await openNetworkNamespace(this.dir.root, { kind: 'loopback', tools: plan.loopback });
    }
    this.containerNetwork = network;
    this.containers = {
      engine: this.engine as ContainerEngine,
      jobDir: this.dir.root,
      jobsDir: path.dirname(this.dir.root),
      idMapping: this.confinement ? { hostId: this.confinement.uid, size: JOB_UID_RANGE } : null,
      networkNamespace: network?.path ?? null,
      dns: network && plan?.network ? [SLIRP_DNS] : [],
      hosts: network ? services.map((s) => ({ name: s.name, address: '127.0.0.1' })) : [],
      limits: containerLimits(plan?.limits ?? (this.options.sandbox ?? DEFAULT_JOB_SANDBOX).limits, this.options.containerLimits),
      project: this.options.projectId === undefined ? null : String(this.options.projectId),
      registryLogins: this.options.registryLogins ?? [],
      seccompProfile,
      log: (line) => this.log.line(line),
      signal: this.controller.signal,
      removeLater: (id) => this.removeContainer(id, 'a step'),
    };
    return this.containers;
  }

  /**
   * Starts the job's services before its first step and waits until each is ready
   * ({@link startService}); they run until the job ends.
   *
   * @throws Error naming the service that could not start or become ready.
   */
  private async startServices(): Promise<void> {
    const services = this.options.services ?? [];
    if (services.length === 0) return;
    const job = await this.jobContainers();
    for (const service of services) {
      const env = Object.fromEntries(service.envVars.map((e) => [e.name, this.expand(e.value)]));
      const toStart = {
        name: service.name,
        image: this.expand(service.image).trim(),
        arguments: service.arguments === null ? null : this.expand(service.arguments),
        env,
        readinessCheckCommand: this.expand(service.readinessCheckCommand),
      };
      await startService(job, toStart, (id) => this.serviceContainers.push(id));
    }
  }

  /**
   * A command step in a container of its image ({@link runContainerStep}): the workspace at
   * OneDev's path, the script mounted read-only, container root mapped onto the job's uid and the
   * containers' other ids onto the job's own uid range, the job limits, and the job's outward
   * network namespace (opened by the first container step) or none.
   */
  private async runInContainer(step: CommandStep, index: number, run: CommandRun): Promise<StepOutcome> {
    const image = this.expand(step.image ?? '').trim();
    if (!image) return { ok: false, message: 'Image is empty' };
    // Safe: the script is the server's new file in its own 0700 directory (rule 3); owned by the
    // job's uid, container root can read it through its read-only mount.
    if (this.confinement) await chown(run.script, this.confinement.uid, this.confinement.uid);
    const inside = `${CONTAINER_COMMANDS}/step-${index + 1}.sh`;
    return this.inContainer('Command', run, {
      image,
      registryLogins: this.registryLogins(step.registryLogins),
      command: [run.command, inside],
      script: { host: run.script, path: inside },
      workingDir: CONTAINER_WORKSPACE,
      mounts: this.cacheMounts,
      env: run.env,
    });
  }

  /**
   * A `!RunContainerStep`: its image with its arguments, environment and working directory, the
   * workspace at OneDev's path and each volume mount's workspace path (resolved without following
   * a link, rule 2) at its target.
   */
  private async runContainer(step: RunContainerStep): Promise<StepOutcome> {
    const image = this.expand(step.image).trim();
    if (!image) return { ok: false, message: 'Image is empty' };
    const mounts = [...this.cacheMounts];
    for (const mount of step.volumeMounts) {
      const source = mount.sourcePath === null ? '' : this.expand(mount.sourcePath);
      const destination = this.expand(mount.targetPath);
      if (!path.isAbsolute(destination)) return { ok: false, message: `Volume mount target must be an absolute path: '${destination}'` };
      const resolved = await resolveInside(this.dir.workspace, source, 'Volume mount source', false);
      if (!resolved.exists) return { ok: false, message: `Volume mount source does not exist: '${source}'` };
      mounts.push({ source: resolved.path, destination });
    }
    const args = step.args === null ? [] : containerArguments(this.expand(step.args));
    const workingDir = step.workingDir === null ? null : this.expand(step.workingDir);
    if (workingDir !== null && !path.isAbsolute(workingDir))
      return { ok: false, message: `Working directory must be an absolute path in the container: '${workingDir}'` };
    const env = Object.fromEntries(step.envVars.map((e) => [e.name, this.expand(e.value)]));
    const { out, err } = this.outputAssemblers();
    const registryLogins = this.registryLogins(step.registryLogins);
    return this.inContainer('Container', { out, err }, { image, registryLogins, command: args, script: null, workingDir, mounts, env });
  }

  /**
   * A `!BuildImageStep` ({@link buildImage}): built with `RUN` confined as the job's containers,
   * each tag pushed when `publish`, and, when `removeDanglingImages`, the images its tags named
   * before removed once nothing else uses them.
   */
  private async buildImage(step: BuildImageStep): Promise<StepOutcome> {
    const tags = this.expand(step.tags).split(/\s+/).filter(Boolean);
    if (tags.length === 0) return { ok: false, message: 'No image tag given' };
    const logins = [...this.registryLogins(step.registryLogins), ...(this.options.registryLogins ?? [])];
    const job = await this.jobContainers();
    const previous = new Set<string>();
    for (const tag of tags) previous.add((await job.engine.imageId(tag)) ?? '');
    const { out, err } = this.outputAssemblers();
    let built;
    try {
      built = await buildImage(job, {
        workspace: this.dir.workspace,
        jobDir: this.dir.root,
        buildPath: step.buildPath === null ? null : this.expand(step.buildPath),
        dockerfile: step.dockerfile === null ? null : this.expand(step.dockerfile),
        tags,
        options: parseBuildOptions(step.moreOptions === null ? null : this.expand(step.moreOptions)),
        logins,
        uid: this.confinement?.uid ?? null,
        killGraceMs: this.killGraceMs,
        onStdout: (c) => out.write(c),
        onStderr: (c) => err.write(c),
      });
    } catch (e) {
      return { ok: false, message: (e as Error).message };
    } finally {
      out.end();
      err.end();
    }
    if (!built.ok) return built;
    if (step.removeDanglingImages) {
      for (const id of previous) if (id && (await job.engine.removeUnusedImage(id))) this.log.line(`Removed image ${id.slice(0, 12)}, no longer tagged`);
    }
    if (!step.publish) return { ok: true };
    try {
      for (const tag of tags) await job.engine.pushImage(tag, logins, job.log, job.signal);
    } catch (e) {
      return { ok: false, message: job.signal.aborted ? null : (e as Error).message };
    }
    return { ok: true };
  }

  /** A step's `registryLogins` with their texts expanded and their passwords read from the job's secrets. */
  private registryLogins(specs: readonly RegistryLoginSpec[]): RegistryLogin[] {
    const secrets = this.options.variables?.secrets ?? {};
    return specs.map((l) => ({
      registryUrl: l.registryUrl === null ? null : this.expand(l.registryUrl),
      userName: this.expand(l.userName),
      password: secrets[l.passwordSecret] ?? '',
    }));
  }

  /**
   * Runs a step's container ({@link runContainerStep}) with the job's environment added to
   * `env`, and judges how it ended. A container that cannot be removed taints the job: what runs
   * in it may still change the workspace.
   */
  private async inContainer(
    what: 'Command' | 'Container',
    output: Pick<CommandRun, 'out' | 'err'>,
    o: Pick<ContainerStepOptions, 'image' | 'registryLogins' | 'command' | 'script' | 'workingDir' | 'mounts' | 'env'>,
  ): Promise<StepOutcome> {
    const job = await this.jobContainers();
    let result: ContainerStepResult;
    try {
      result = await runContainerStep(job, {
        ...o,
        workspace: this.dir.workspace,
        env: { ...this.options.env, ...o.env },
        onStdout: (c) => output.out.write(c),
        onStderr: (c) => output.err.write(c),
        killGraceMs: this.killGraceMs,
      });
    } catch (e) {
      this.tainted = true;
      return { ok: false, message: (e as Error).message };
    } finally {
      output.out.end();
      output.err.end();
    }
    if (result.kind === 'aborted' || (result.kind === 'exited' && result.aborted)) return { ok: false, message: null };
    if (result.kind === 'engine-error') return { ok: false, message: result.message };
    if (result.exitCode === 0) return { ok: true };
    const networkFailure = this.containerNetwork?.failure();
    if (networkFailure) return { ok: false, message: `Job network unavailable: ${networkFailure}` };
    if (this.confinement) this.log.line(`The step ran with the job limits: ${describeLimits(this.confinement.plan.limits)}`);
    return { ok: false, message: `${what} exited with code ${result.exitCode}` };
  }

  /** Line assemblers of a step's stdout and stderr: lines masked into the log, `##onedev[SetBuildVersion …]` obeyed. */
  private outputAssemblers(): { out: LineAssembler; err: LineAssembler } {
    const onLine = (masked: string, raw: string): void => {
      const m = SET_VERSION.exec(raw);
      if (m) this.setVersion(m[1].replace(/\\(.)/g, '$1'));
      this.log.masked(masked);
    };
    return { out: new LineAssembler(this.log.masker, onLine), err: new LineAssembler(this.log.masker, onLine) };
  }

  /** A command step as a process group on the server, in the job sandbox when confined. */
  private async runInProcessGroup(index: number, run: CommandRun): Promise<StepOutcome> {
    const { script, command, out, err } = run;
    const env: NodeJS.ProcessEnv = { ...this.baseEnv, ...run.env };
    const fds: number[] = [];
    let network: NetworkAttachment | null = null;
    try {
      let invocation: { file: string; args: string[]; stdio: Array<'pipe' | 'ignore' | number> } = { file: command, args: [script], stdio: [] };
      if (this.confinement) {
        if (!findExecutable(command, SANDBOX_PATH)) return { ok: false, message: `Unable to run '${command}': not found in the job sandbox` };
        invocation = this.sandboxInvocation(this.confinement.plan, command, script, index, fds);
      }
      const confinement = this.confinement;
      const result = await runInProcessGroup({
        command: invocation.file,
        args: invocation.args,
        cwd: confinement ? '/' : this.dir.workspace,
        env,
        onStdout: (c) => out.write(c),
        onStderr: (c) => err.write(c),
        signal: this.controller.signal,
        killGraceMs: this.killGraceMs,
        onStart: (pgid) => this.groups.add(pgid),
        extraStdio: invocation.stdio,
        ...(confinement && {
          uid: confinement.uid,
          gid: confinement.uid,
          onSpawn: (child) => {
            if (confinement.plan.network) network = attachNetwork(child, confinement.plan.network, confinement.plan.networkAllow);
          },
        }),
      });
      (network as NetworkAttachment | null)?.stop();
      out.end();
      err.end();
      if (confinement) {
        // Rule 1 of src/ci/job-directory.ts: the server touches the job's tree again only once
        // no process of the job runs.
        try {
          await waitForJobProcessesToEnd(confinement.uid);
        } catch (e) {
          this.tainted = true;
          return { ok: false, message: (e as Error).message };
        }
      }
      return this.commandOutcome(command, result, network);
    } finally {
      for (const fd of fds) closeSync(fd);
    }
  }

  /**
   * The bwrap command line of a sandboxed step: its script and the job's server files reach bwrap
   * as descriptors of this process (added to `fds`, closed by the caller), so the job's uid never
   * opens them.
   */
  private sandboxInvocation(
    plan: ConfinedPlan,
    command: string,
    script: string,
    index: number,
    fds: number[],
  ): { file: string; args: string[]; stdio: Array<'pipe' | 'ignore' | number> } {
    const openServerFile = (host: string): number => {
      const fd = openSync(host, 'r');
      fds.push(fd);
      return fd;
    };
    const inside = `/gitloom/step-${index + 1}.sh`;
    const files: SandboxFile[] = [...this.serverFiles, { host: script, path: inside }].map((f) => ({ fd: openServerFile(f.host), path: f.path }));
    return sandboxArgv(plan, {
      workspace: this.dir.workspace,
      home: this.dir.home,
      files,
      seccomp: openServerFile(path.join(this.dir.server, 'seccomp.bpf')),
      command,
      args: [inside],
    });
  }

  /** How a finished command step went: its exit, a limit it hit, or the job network's failure. */
  private commandOutcome(command: string, result: ProcessGroupResult, network: NetworkAttachment | null): StepOutcome {
    if (result.kind === 'spawn-error') return { ok: false, message: `Unable to run '${command}': ${result.message}` };
    if (result.aborted) return { ok: false, message: null };
    if (result.exitCode === 0) return { ok: true };
    const networkFailure = network?.failure();
    if (networkFailure) return { ok: false, message: `Job network unavailable: ${networkFailure}` };
    const plan = this.confinement?.plan;
    if (plan) {
      const exceeded = limitExceeded(result.exitCode, plan.limits);
      if (exceeded) return { ok: false, message: `Command exited with code ${result.exitCode}: ${exceeded}` };
      this.log.line(`The step ran with the job limits: ${describeLimits(plan.limits)}`);
    }
    return { ok: false, message: result.exitCode !== null ? `Command exited with code ${result.exitCode}` : `Command was killed by ${result.signal}` };
  }

  /** A `!CheckoutStep`: cloned by the server into its own directory, then moved into the workspace. */
  private async runCheckout(step: CheckoutStep, index: number): Promise<StepOutcome> {
    const { dir } = this;
    const rel = step.checkoutPath ? this.expand(step.checkoutPath) : '';
    const segments = relativeSegments(rel, 'Checkout path');
    // Safe: a new directory in the server's own 0700 directory, which the job cannot reach (rule 3).
    const staging = path.join(dir.server, `checkout-${index + 1}`);
    await mkdir(path.join(staging, ...segments), { recursive: true });
    await this.options.checkout(path.join(staging, ...segments), {
      cloneDepth: step.cloneDepth,
      withLfs: step.withLfs,
      withSubmodules: step.withSubmodules,
      credential: step.cloneCredential,
      signal: this.controller.signal,
      log: (line) => this.log.line(line),
    });
    if (this.controller.signal.aborted) return { ok: false, message: null };
    // Safe: the tree was made by the server's git just now, in the server's own directory (rule 3).
    if (this.confinement) await chownTree(staging, this.confinement.uid);
    // Safe: no process of the job runs (rule 1); moveInto renames into real directories only and
    // never follows a link (rule 2).
    await moveInto(staging, dir.workspace).catch((e: Error) => {
      throw new Error(`Unable to check out into '${rel || '.'}': ${e.message}`);
    });
    return { ok: true };
  }

  /** A `!PublishArtifactStep`: the matching workspace files copied into the build's artifacts. */
  private async publishArtifacts(step: Extract<Step, { type: 'PublishArtifactStep' }>): Promise<StepOutcome> {
    // Safe: no process of the job runs (rule 1); publishArtifacts reads through
    // resolveInside / openInside (rule 2) and writes only into the build's artifacts directory.
    const files = await publishArtifacts(
      this.dir.workspace,
      step.sourcePath === null ? null : this.expand(step.sourcePath),
      this.expand(step.artifacts),
      this.options.artifactsDir,
      (rel, reason) => this.log.line(`Skipped '${rel}': ${reason}`),
      { maxFileBytes: this.options.artifactMaxBytes },
    );
    for (const f of files) if (!this.published.includes(f)) this.published.push(f);
    this.log.line(files.length === 0 ? 'No files matched; nothing published' : `Published ${files.length} artifact file(s)`);
    return { ok: true };
  }
}
