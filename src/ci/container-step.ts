/**
 * One step in a container (docs/compatibility.md#builds-containers): the step's image, the job's
 * workspace mounted where OneDev's docker executors mount it, a command step's commands run by
 * its interpreter (or a `!RunContainerStep`'s image with its arguments), the output streamed as
 * it comes, and the container removed afterwards — when the step ends, is cancelled or times out.
 */
import { createHash } from 'node:crypto';
import { parse } from 'shell-quote';
import { JOB_DIR_LABEL, JOBS_DIR_LABEL, engineReason, unlessEngineSays, type ContainerEngine, type ContainerSpec, type IdMapping } from './container-engine.js';
import type { RegistryLogin } from './image-registries.js';

/** Where a container step sees the job's workspace (OneDev's `/onedev-build/workspace`): its working directory and `ONEDEV_WORKSPACE`. */
export const CONTAINER_WORKSPACE = '/onedev-build/workspace';
/** Where a container step's script is mounted, read-only (`step-<n>.sh`). */
export const CONTAINER_COMMANDS = '/onedev-build/command';

/**
 * The words of a container's `arguments` (a service's, a `!RunContainerStep`'s), quoted as in a shell.
 *
 * @throws Error for shell operators (`|`, `;`, `>`, …) or globs, which no shell will run.
 */
export function containerArguments(text: string | null): string[] {
  if (text === null || text.trim() === '') return [];
  return parse(text).map((word) => {
    if (typeof word !== 'string') throw new Error(`Arguments must be plain words, not shell operators: ${text}`);
    return word;
  });
}

/** What every container of a job shares: its engine, labels, confinement, network and log. */
export interface JobContainers {
  readonly engine: ContainerEngine;
  readonly jobDir: string;
  readonly jobsDir: string;
  /** Host ids of the containers' user namespace; null runs a container's root as the host's (sandbox off). */
  readonly idMapping: IdMapping | null;
  /** The job's network namespace, or null for none (each container's own loopback). */
  readonly networkNamespace: string | null;
  /** DNS servers for `/etc/resolv.conf` (slirp4netns's forwarder on an outward network). */
  readonly dns: readonly string[];
  /** The job's services by name, all at the shared namespace's loopback. */
  readonly hosts: ReadonlyArray<{ readonly name: string; readonly address: string }>;
  /** The job sandbox's limits, and the executor's CPU limit (src/ci/container-engine.ts `ContainerSpec`). */
  readonly limits: ContainerSpec['limits'];
  /** The project of the job (whose built images it may use, src/ci/container-engine.ts ensureImage), or null. */
  readonly project: string | null;
  /** The executor's registry logins (after the step's own, for the step's image). */
  readonly registryLogins: readonly RegistryLogin[];
  /** The containers' seccomp profile: a file the engine reads ({@link ContainerSpec.seccompProfile}), or null for the engine's default. */
  readonly seccompProfile: string | null;
  readonly log: (line: string) => void;
  readonly signal: AbortSignal;
  /**
   * Removes a container whose processes all ended (it exited) while the job goes on; the job
   * waits for these removals before it ends.
   */
  readonly removeLater: (id: string) => void;
}

/**
 * The engine's spec of a container of the job: `image` with `command` (the image's own when
 * empty), `env`, working directory and mounts, confined and labelled as every container of the job.
 */
export function jobContainerSpec(job: JobContainers, container: Pick<ContainerSpec, 'image' | 'command' | 'env' | 'workingDir' | 'mounts'>): ContainerSpec {
  return {
    ...container,
    labels: { [JOB_DIR_LABEL]: job.jobDir, [JOBS_DIR_LABEL]: job.jobsDir },
    idMapping: job.idMapping,
    networkNamespace: job.networkNamespace,
    dns: job.dns,
    hosts: job.hosts,
    limits: job.limits,
    seccompProfile: job.seccompProfile,
  };
}

/** What {@link runContainerStep} runs, besides what the job's containers share. */
export interface ContainerStepOptions {
  readonly image: string;
  /** The step's registry logins, tried before the job's for its image's registry. */
  readonly registryLogins: readonly RegistryLogin[];
  /** The command (`sh /onedev-build/command/step-1.sh`), or empty for the image's own. */
  readonly command: readonly string[];
  /** A script the server made (`host`), mounted read-only at `path` in the container; or null. */
  readonly script: { readonly host: string; readonly path: string } | null;
  readonly workspace: string;
  /** The working directory in the container, or null for the image's own. */
  readonly workingDir: string | null;
  /** More paths of the job mounted read-write (caches at absolute paths, a step's volume mounts). */
  readonly mounts: ReadonlyArray<{ readonly source: string; readonly destination: string }>;
  readonly env: Readonly<Record<string, string>>;
  readonly onStdout: (chunk: Buffer) => void;
  readonly onStderr: (chunk: Buffer) => void;
  /** Milliseconds between SIGTERM and SIGKILL when stopped. */
  readonly killGraceMs: number;
}

/** How a container step ended. */
export type ContainerStepResult =
  | { readonly kind: 'exited'; readonly exitCode: number; readonly aborted: boolean }
  /** The engine refused: the image could not be pulled, the container not created or started. */
  | { readonly kind: 'engine-error'; readonly message: string }
  | { readonly kind: 'aborted' };

/**
 * Pulls the image when missing, creates and starts the container, streams its output until it
 * exits, and removes it. Aborting `signal` stops the container (SIGTERM, then SIGKILL after
 * `killGraceMs`). The container is removed before this resolves, whatever happened.
 */
export async function runContainerStep(job: JobContainers, o: ContainerStepOptions): Promise<ContainerStepResult> {
  const { engine } = job;
  try {
    await engine.ensureImage(o.image, { project: job.project, logins: [...o.registryLogins, ...job.registryLogins] }, job.log, job.signal);
  } catch (e) {
    if (job.signal.aborted) return { kind: 'aborted' };
    return { kind: 'engine-error', message: (e as Error).message };
  }
  if (job.signal.aborted) return { kind: 'aborted' };
  let id: string;
  try {
    id = await engine.createContainer(
      jobContainerSpec(job, {
        image: o.image,
        command: o.command,
        env: { ...o.env, ONEDEV_WORKSPACE: CONTAINER_WORKSPACE, GITLOOM_WORKSPACE: CONTAINER_WORKSPACE },
        workingDir: o.workingDir,
        mounts: [
          { source: o.workspace, destination: CONTAINER_WORKSPACE, readOnly: false },
          ...(o.script ? [{ source: o.script.host, destination: o.script.path, readOnly: true }] : []),
          ...o.mounts.map((m) => ({ ...m, readOnly: false })),
        ],
      }),
    );
  } catch (e) {
    return { kind: 'engine-error', message: `Unable to create a container of image '${o.image}': ${(e as Error).message}` };
  }
  let result: ContainerStepResult | null = null;
  try {
    result = await runCreated(job, o, id);
    return result;
  } finally {
    // An exited container runs nothing (its PID namespace is gone): it is removed while the job
    // goes on. Any other may still run, and the caller must not touch the workspace before it is
    // removed.
    if (result?.kind === 'exited' && !result.aborted) job.removeLater(id);
    else await engine.removeContainer(id);
  }
}

/** Starts container `id`, follows its output and waits for its exit (or the abort). */
async function runCreated(job: JobContainers, o: ContainerStepOptions, id: string): Promise<ContainerStepResult> {
  const container = job.engine.docker.getContainer(id);
  let aborted = false;
  const onAbort = (): void => {
    aborted = true;
    // SIGTERM, then SIGKILL after the grace period; a container that ended meanwhile answers 304
    container
      .stop({ t: Math.ceil(o.killGraceMs / 1000) })
      .catch(unlessEngineSays(304, 404))
      .catch((e: Error) => job.log(`Unable to stop the container: ${engineReason(e)}`));
  };
  try {
    await container.start();
  } catch (e) {
    return { kind: 'engine-error', message: `Unable to start a container of image '${o.image}': ${engineReason(e)}` };
  }
  job.signal.addEventListener('abort', onAbort, { once: true });
  if (job.signal.aborted) onAbort();
  try {
    const stdout = new LiveStream('stdout', o.onStdout);
    const stderr = new LiveStream('stderr', o.onStderr);
    const frames = new FrameSplitter((stream, payload) => (stream === 1 ? stdout : stream === 2 ? stderr : null)?.push(payload));
    const output = (await container.logs({ follow: true, stdout: true, stderr: true })) as NodeJS.ReadableStream & { destroy(): void };
    output.on('data', (chunk: Buffer) => frames.push(chunk));
    // a follow that fails only ends early: the whole log read at the exit has the rest
    output.on('error', () => output.destroy());
    let exitCode: number;
    try {
      exitCode = await job.engine.waitForExit(id);
    } finally {
      // Podman ends a follow only when it next looks (about every quarter second), and may end it
      // at the exit before it read the last lines written, or skip lines of a busy log: the
      // follow is cut at the exit (or at a failure of the wait), and the whole log, which Podman
      // reads reliably, completes what it delivered
      output.destroy();
    }
    const whole = demuxed((await container.logs({ follow: false, stdout: true, stderr: true })) as Buffer);
    stdout.complete(whole.stdout, job.log);
    stderr.complete(whole.stderr, job.log);
    return { kind: 'exited', exitCode, aborted };
  } catch (e) {
    if (aborted) return { kind: 'aborted' };
    return { kind: 'engine-error', message: `Container of image '${o.image}' failed: ${engineReason(e)}` };
  } finally {
    job.signal.removeEventListener('abort', onAbort);
  }
}

/**
 * One stream of a container's output as the live follow delivers it to the step's log, counted
 * and digested so that the whole stream, read once the container exited, can complete it.
 */
export class LiveStream {
  private length = 0;
  private lastByte = -1;
  private readonly digest = createHash('sha256');

  constructor(
    private readonly name: 'stdout' | 'stderr',
    private readonly emit: (chunk: Buffer) => void,
  ) {}

  /** Delivers a payload of the live follow. */
  push(payload: Buffer): void {
    if (payload.length === 0) return;
    this.length += payload.length;
    this.lastByte = payload[payload.length - 1];
    this.digest.update(payload);
    this.emit(payload);
  }

  /**
   * Delivers what the follow did not, from `whole` (the stream as the whole log holds it): the
   * rest when what was delivered is its beginning; otherwise — the follow skipped output — a
   * line said through `log` and then the whole stream again, so that the step's log always ends
   * with its complete output in order.
   */
  complete(whole: Buffer, log: (message: string) => void): void {
    const prefix = whole.subarray(0, this.length);
    if (prefix.length === this.length && createHash('sha256').update(prefix).digest().equals(this.digest.digest())) {
      if (whole.length > this.length) this.emit(whole.subarray(this.length));
      return;
    }
    // an unterminated line of the follow ends before the notice
    if (this.lastByte !== -1 && this.lastByte !== 0x0a) this.emit(Buffer.from('\n'));
    log(`The live log of this step missed some of its ${this.name}; all of its ${this.name} follows`);
    this.emit(whole);
  }
}

/**
 * Splits a multiplexed log, chunk by chunk, into its streams: frames of an 8-byte header (stream
 * 1 for stdout or 2 for stderr, three zero bytes, the payload's length, big-endian) and the
 * payload (Docker Engine API, "Attach to a container", stream format).
 */
export class FrameSplitter {
  private pending = Buffer.alloc(0);

  /** @param onFrame receives each frame's stream (1 stdout, 2 stderr) and payload, in order. */
  constructor(private readonly onFrame: (stream: number, payload: Buffer) => void) {}

  /** Takes the next bytes of the log; a frame split across chunks is delivered once whole. */
  push(chunk: Buffer): void {
    let data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    while (data.length >= 8) {
      const size = data.readUInt32BE(4);
      if (data.length < 8 + size) break;
      this.onFrame(data[0], data.subarray(8, 8 + size));
      data = data.subarray(8 + size);
    }
    this.pending = Buffer.from(data);
  }
}

/** The stdout and stderr of a whole multiplexed log ({@link FrameSplitter}). */
function demuxed(log: Buffer): { stdout: Buffer; stderr: Buffer } {
  const parts: Record<number, Buffer[]> = { 1: [], 2: [] };
  new FrameSplitter((stream, payload) => parts[stream]?.push(payload)).push(log); // other streams dropped
  return { stdout: Buffer.concat(parts[1]), stderr: Buffer.concat(parts[2]) };
}
