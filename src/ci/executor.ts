/**
 * The local shell executor (reference/builds.md §5 "Server Shell Executor"): runs a job's steps
 * serially on this machine — checkout through a callback, command steps as process groups,
 * publish-artifact and set-build-version steps on the server side — and reports the final
 * status. No database: the scheduler owns build rows, logs and retries.
 *
 * Directory ownership: the caller creates the workspace directory (fresh per build) and removes
 * it afterwards (it stays for inspection until then). The executor creates and removes its own
 * scratch directory (`$TMPDIR/gitloom-job-*`) holding step scripts and the job's `HOME`.
 *
 * Command steps run in the job sandbox (src/ci/sandbox.ts) as a uid of their own, which is given
 * the workspace and the scratch directory; the workspace's parent directories must be searchable
 * (`o+x`) so that bubblewrap, running as that uid, can reach it. Checkout, publish and version
 * steps run in the server, outside the sandbox.
 */
import { lchown, lstat, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LineAssembler, SecretMasker } from './log-masker.js';
import { runInProcessGroup, terminateProcessGroup } from './process-group.js';
import { publishArtifacts } from './publish-artifacts.js';
import {
  acquireJobUid, attachNetwork, chownTree, DEFAULT_JOB_SANDBOX, describeLimits, findExecutable, limitExceeded, planSandbox, releaseJobUid,
  SANDBOX_OFF_WARNING, SANDBOX_PATH, sandboxArgv, SLIRP_RESOLV_CONF, type JobSandboxConfig, type NetworkAttachment,
} from './sandbox.js';
import type { CheckoutStep, CloneCredential, CommandStep, Step } from './spec-types.js';
import { createVariableResolver, interpolate, type VariableContext } from './variables.js';

/** Final status of a job run (the build status names of reference/builds.md §2). */
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
  /** The job environment (HOME of the job etc.), for git processes the callback starts. */
  readonly env: Readonly<NodeJS.ProcessEnv>;
}

/**
 * Clones the project and checks out the build commit into `targetDir` (which exists and is
 * the workspace or the step's `checkoutPath` inside it). Rejects to fail the step; the
 * rejection message is logged.
 */
export type CheckoutFn = (targetDir: string, options: CheckoutOptions) => Promise<void>;

/**
 * Log destination. A function receives each log line as plain text (no timestamp, no newline);
 * a writable (e.g. a `build.log` file stream) receives `HH:mm:ss message\n` lines.
 */
export type LogSink = ((line: string) => void) | { write(chunk: string): unknown };

/** Options of {@link runJob}. */
export interface RunJobOptions {
  /** Existing (or creatable) empty directory; the commands' working directory. Caller removes it. */
  readonly workspaceDir: string;
  /** Steps in order (from `parseBuildSpec`). */
  readonly steps: readonly Step[];
  readonly checkout: CheckoutFn;
  /** Destination of `!PublishArtifactStep` (`<build dir>/artifacts`); created when needed. */
  readonly artifactsDir: string;
  readonly log: LogSink;
  /**
   * Values for `@...@` variables (without `workspaceDir`, which the executor supplies for
   * `@file:...@`). `@build_version@` reflects a version set earlier in the job. Without it only
   * `@file:...@` and `@build_version@` resolve.
   */
  readonly variables?: Omit<VariableContext, 'workspaceDir'>;
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
 * Without bubblewrap the job fails at once with {@link SANDBOX_UNAVAILABLE}'s message, unless the
 * sandbox is off, which is logged as a warning in the build log.
 *
 * @throws only for programming errors (e.g. the scratch directory cannot be created).
 */
export async function runJob(options: RunJobOptions): Promise<JobResult> {
  const secrets = [...(options.secrets ?? []), ...Object.values(options.variables?.secrets ?? {})];
  const masker = new SecretMasker(secrets);
  const sink = options.log;
  const log = (line: string): void => {
    const masked = masker.mask(line);
    if (typeof sink === 'function') sink(masked);
    else sink.write(formatLogLine(new Date(), masked) + '\n');
  };
  const killGraceMs = options.killGraceMs ?? 5000;
  const plan = planSandbox(options.sandbox ?? DEFAULT_JOB_SANDBOX);
  if (plan.kind === 'unavailable') {
    log(plan.message);
    log('Job failed');
    return { status: 'FAILED', publishedArtifacts: [], failedSteps: [] };
  }
  log(plan.kind === 'off' ? SANDBOX_OFF_WARNING : plan.description);

  const controller = new AbortController();
  let stopReason: 'CANCELLED' | 'TIMED_OUT' | null = null;
  const stop = (reason: 'CANCELLED' | 'TIMED_OUT'): void => {
    if (stopReason) return;
    stopReason = reason;
    controller.abort();
  };
  const onCancel = (): void => stop('CANCELLED');
  if (options.signal?.aborted) onCancel();
  options.signal?.addEventListener('abort', onCancel, { once: true });
  const timer = options.timeoutSeconds !== undefined ? setTimeout(() => stop('TIMED_OUT'), options.timeoutSeconds * 1000) : null;

  const workspace = path.resolve(options.workspaceDir);
  await mkdir(workspace, { recursive: true });
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'gitloom-job-'));
  const home = path.join(scratch, 'user');
  await mkdir(home);
  const resolvConf = plan.kind === 'sandbox' && plan.network === 'outward' ? path.join(scratch, 'resolv.conf') : null;
  if (resolvConf) await writeFile(resolvConf, SLIRP_RESOLV_CONF, { mode: 0o644 });
  const uid = plan.kind === 'sandbox' ? acquireJobUid(plan.uidBase) : null;
  /** Whether the server wrote into the workspace since it was last handed to the job uid. */
  let workspaceDirty = true;
  /** Whether the scratch directory was handed to the job uid (later only new step scripts are). */
  let scratchOwned = false;
  const baseEnv: NodeJS.ProcessEnv = {
    PATH: plan.kind === 'sandbox' ? SANDBOX_PATH : (process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'),
    ...(process.env.LANG ? { LANG: process.env.LANG } : {}),
    ...(process.env.LC_ALL ? { LC_ALL: process.env.LC_ALL } : {}),
    HOME: home,
    GIT_HOME: home,
    ONEDEV_WORKSPACE: workspace,
    ...options.env,
  };

  let version: string | undefined = options.variables?.buildVersion ?? undefined;
  let versionSet = false;
  let description: string | undefined;
  const published: string[] = [];
  const failedSteps: string[] = [];
  const groups = new Set<number>();
  const resolver = (): ReturnType<typeof createVariableResolver> => {
    const v = options.variables;
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
      buildVersion: version,
      workspaceDir: workspace,
    });
    return (ref) => (ref.kind === 'job' && !v && ref.name !== 'build_version' ? undefined : base(ref));
  };
  const expand = (text: string): string => interpolate(text, resolver());
  const setVersion = (value: string): void => {
    version = value;
    versionSet = true;
    log(`Build version set to '${value}'`);
  };

  const runCommand = async (step: CommandStep, index: number): Promise<StepOutcome> => {
    const commands = expand(step.interpreter.commands);
    const env: NodeJS.ProcessEnv = { ...baseEnv };
    for (const e of step.envVars) env[e.name] = expand(e.value);
    const script = path.join(scratch, `step-${index + 1}.sh`);
    await writeFile(script, commands.replace(/\r\n/g, '\n') + '\n', { mode: 0o600 });
    const command = step.interpreter.type === 'ShellInterpreter' ? step.interpreter.shell : 'sh';
    const onLine = (masked: string, raw: string): void => {
      const m = SET_VERSION.exec(raw);
      if (m) setVersion(m[1].replace(/\\(.)/g, '$1'));
      if (typeof sink === 'function') sink(masked);
      else sink.write(formatLogLine(new Date(), masked) + '\n');
    };
    const out = new LineAssembler(masker, onLine);
    const err = new LineAssembler(masker, onLine);
    let file = command;
    let args = [script];
    let network: NetworkAttachment | null = null;
    if (plan.kind === 'sandbox' && uid !== null) {
      if (!findExecutable(command, SANDBOX_PATH)) return { ok: false, message: `Unable to run '${command}': not found in the job sandbox` };
      if (workspaceDirty) {
        await chownTree(workspace, uid);
        workspaceDirty = false;
      }
      if (scratchOwned) await lchown(script, uid, uid);
      else await chownTree(scratch, uid);
      scratchOwned = true;
      ({ file, args } = sandboxArgv(plan, { workspace, scratch, resolvConf, command, args }));
    }
    const result = await runInProcessGroup({
      command: file,
      args,
      cwd: plan.kind === 'sandbox' ? '/' : workspace,
      env,
      onStdout: (c) => out.write(c),
      onStderr: (c) => err.write(c),
      signal: controller.signal,
      killGraceMs,
      onStart: (pgid) => groups.add(pgid),
      ...(plan.kind === 'sandbox' && uid !== null && {
        uid,
        gid: uid,
        extraPipes: plan.slirp4netns ? 2 : 0,
        onSpawn: (child) => {
          if (plan.slirp4netns) network = attachNetwork(child, plan.slirp4netns);
        },
      }),
    });
    (network as NetworkAttachment | null)?.stop();
    out.end();
    err.end();
    if (result.kind === 'spawn-error') return { ok: false, message: `Unable to run '${command}': ${result.message}` };
    if (result.aborted) return { ok: false, message: null };
    if (result.exitCode === 0) return { ok: true };
    const networkFailure = (network as NetworkAttachment | null)?.failure();
    if (networkFailure) return { ok: false, message: `Job network unavailable: ${networkFailure}` };
    if (plan.kind === 'sandbox') {
      const exceeded = limitExceeded(result.exitCode, plan.limits);
      if (exceeded) return { ok: false, message: `Command exited with code ${result.exitCode}: ${exceeded}` };
      log(`The step ran with the job limits: ${describeLimits(plan.limits)}`);
    }
    return { ok: false, message: result.exitCode !== null ? `Command exited with code ${result.exitCode}` : `Command was killed by ${result.signal}` };
  };

  const runCheckout = async (step: CheckoutStep): Promise<StepOutcome> => {
    let target = workspace;
    if (step.checkoutPath) {
      const rel = expand(step.checkoutPath);
      if (rel.includes('\0') || path.isAbsolute(rel) || rel.split(/[\\/]/).includes('..')) {
        return { ok: false, message: `Checkout path must be a relative path inside the workspace: '${rel}'` };
      }
      target = path.join(workspace, rel);
      // Earlier steps own the workspace: a symbolic link they left must not lead the server's
      // checkout (which runs outside the sandbox) to a directory elsewhere.
      let walked = workspace;
      for (const segment of path.relative(workspace, target).split(path.sep).filter(Boolean)) {
        walked = path.join(walked, segment);
        const stat = await lstat(walked).catch((e: NodeJS.ErrnoException) => {
          if (e.code === 'ENOENT') return null;
          throw e;
        });
        if (stat?.isSymbolicLink()) return { ok: false, message: `Checkout path must not go through a symbolic link: '${rel}'` };
        if (!stat) break;
      }
      await mkdir(target, { recursive: true });
    }
    await options.checkout(target, {
      cloneDepth: step.cloneDepth,
      withLfs: step.withLfs,
      withSubmodules: step.withSubmodules,
      credential: step.cloneCredential,
      signal: controller.signal,
      log,
      env: baseEnv,
    });
    workspaceDirty = true;
    return controller.signal.aborted ? { ok: false, message: null } : { ok: true };
  };

  const runStep = async (step: Step, index: number): Promise<StepOutcome> => {
    switch (step.type) {
      case 'CheckoutStep':
        return runCheckout(step);
      case 'CommandStep':
        return runCommand(step, index);
      case 'PublishArtifactStep': {
        const files = await publishArtifacts(
          workspace,
          step.sourcePath === null ? null : expand(step.sourcePath),
          expand(step.artifacts),
          options.artifactsDir,
          (rel) => log(`Skipped '${rel}': symbolic link to a directory or to a file outside the workspace`),
        );
        for (const f of files) if (!published.includes(f)) published.push(f);
        log(files.length === 0 ? 'No files matched; nothing published' : `Published ${files.length} artifact file(s)`);
        return { ok: true };
      }
      case 'SetBuildVersionStep': {
        const value = expand(step.buildVersion).trim();
        if (!value) return { ok: false, message: 'Build version is empty' };
        setVersion(value);
        return { ok: true };
      }
      case 'SetBuildDescriptionStep':
        description = expand(step.buildDescription);
        return { ok: true };
    }
  };

  let failed = false;
  try {
    for (const [index, step] of options.steps.entries()) {
      if (stopReason) break;
      const run = step.condition === 'ALWAYS' || (step.condition === 'ALL_PREVIOUS_STEPS_WERE_SUCCESSFUL' && !failed);
      if (!run) {
        log(`Skipping step "${step.name}" (condition ${step.condition})`);
        continue;
      }
      log(`Running step "${step.name}"...`);
      let outcome: StepOutcome;
      try {
        outcome = await runStep(step, index);
      } catch (e) {
        // Bad variables, unsafe paths, checkout failures, I/O errors: the step fails with the reason.
        outcome = { ok: false, message: e instanceof Error ? e.message : String(e) };
      }
      if (outcome.ok) {
        log(`Step "${step.name}" is successful`);
      } else if (stopReason && outcome.message === null) {
        log(`Step "${step.name}" was stopped (${stopReason === 'TIMED_OUT' ? 'timed out' : 'cancelled'})`);
      } else {
        failed = true;
        failedSteps.push(step.name);
        log(`Step "${step.name}" failed${outcome.message ? `: ${outcome.message}` : ''}`);
      }
    }
  } finally {
    if (timer) clearTimeout(timer);
    options.signal?.removeEventListener('abort', onCancel);
    await Promise.all([...groups].map((g) => terminateProcessGroup(g, killGraceMs)));
    await rm(scratch, { recursive: true, force: true });
    if (uid !== null) releaseJobUid(uid);
  }

  const status: JobStatus = stopReason ?? (failed ? 'FAILED' : 'SUCCESSFUL');
  log(status === 'SUCCESSFUL' ? 'Job finished' : status === 'FAILED' ? 'Job failed' : status === 'TIMED_OUT' ? 'Job timed out' : 'Job cancelled');
  return {
    status,
    ...(versionSet && version !== undefined ? { version } : {}),
    ...(description !== undefined ? { description } : {}),
    publishedArtifacts: published,
    failedSteps,
  };
}
