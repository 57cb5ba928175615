/**
 * One command step in a container (docs/compatibility.md#builds-containers): the step's image,
 * the job's workspace mounted where OneDev's docker executors mount it, its commands run by the
 * step's interpreter, the output streamed as it comes, and the container removed afterwards —
 * when the step ends, is cancelled or times out.
 */
import { PassThrough } from 'node:stream';
import { JOB_DIR_LABEL, JOBS_DIR_LABEL, engineReason, type ContainerEngine, type IdMapping } from './container-engine.js';
import type { JobLimits } from './sandbox.js';

/** Where a container step sees the job's workspace (OneDev's `/onedev-build/workspace`): its working directory and `ONEDEV_WORKSPACE`. */
export const CONTAINER_WORKSPACE = '/onedev-build/workspace';
/** Where a container step's script is mounted, read-only (`step-<n>.sh`). */
export const CONTAINER_COMMANDS = '/onedev-build/command';

/** What {@link runContainerStep} runs. */
export interface ContainerStepOptions {
  readonly engine: ContainerEngine;
  readonly image: string;
  /** Interpreter and its arguments, the script's container path last (`sh /onedev-build/command/step-1.sh`). */
  readonly command: readonly string[];
  /** Host path of the script, mounted at the command's last argument. */
  readonly script: string;
  readonly workspace: string;
  /** More directories of the job mounted read-write (caches at absolute paths). */
  readonly mounts: ReadonlyArray<{ readonly source: string; readonly destination: string }>;
  readonly jobDir: string;
  readonly jobsDir: string;
  readonly env: Readonly<Record<string, string>>;
  /** Host ids of the container's user namespace; null runs the container's root as the host's (sandbox off). */
  readonly idMapping: IdMapping | null;
  readonly networkNamespace: string | null;
  /** DNS servers for `/etc/resolv.conf` (slirp4netns's forwarder on an outward network). */
  readonly dns: readonly string[];
  readonly limits: JobLimits;
  readonly onStdout: (chunk: Buffer) => void;
  readonly onStderr: (chunk: Buffer) => void;
  readonly log: (line: string) => void;
  readonly signal: AbortSignal;
  /** Milliseconds between SIGTERM and removal when stopped. */
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
export async function runContainerStep(o: ContainerStepOptions): Promise<ContainerStepResult> {
  const { engine } = o;
  try {
    await engine.ensureImage(o.image, o.log, o.signal);
  } catch (e) {
    if (o.signal.aborted) return { kind: 'aborted' };
    return { kind: 'engine-error', message: (e as Error).message };
  }
  if (o.signal.aborted) return { kind: 'aborted' };
  let id: string;
  try {
    id = await engine.createContainer({
      image: o.image,
      command: o.command,
      env: { ...o.env, ONEDEV_WORKSPACE: CONTAINER_WORKSPACE, GITLOOM_WORKSPACE: CONTAINER_WORKSPACE },
      workingDir: CONTAINER_WORKSPACE,
      mounts: [
        { source: o.workspace, destination: CONTAINER_WORKSPACE, readOnly: false },
        { source: o.script, destination: o.command[o.command.length - 1], readOnly: true },
        ...o.mounts.map((m) => ({ ...m, readOnly: false })),
      ],
      labels: { [JOB_DIR_LABEL]: o.jobDir, [JOBS_DIR_LABEL]: o.jobsDir },
      idMapping: o.idMapping,
      networkNamespace: o.networkNamespace,
      dns: o.dns,
      hosts: [],
      limits: o.limits,
    });
  } catch (e) {
    return { kind: 'engine-error', message: `Unable to create a container of image '${o.image}': ${(e as Error).message}` };
  }
  try {
    return await runCreated(o, id);
  } finally {
    await engine.removeContainer(id).catch((e: Error) => o.log(`Unable to remove container ${id.slice(0, 12)}: ${e.message}`));
  }
}

/** Starts container `id`, follows its output and waits for its exit (or the abort). */
async function runCreated(o: ContainerStepOptions, id: string): Promise<ContainerStepResult> {
  const container = o.engine.docker.getContainer(id);
  let aborted = false;
  const onAbort = (): void => {
    aborted = true;
    // either may find the container ended already
    void container.kill({ signal: 'SIGTERM' }).catch(() => undefined);
    setTimeout(() => void container.kill({ signal: 'SIGKILL' }).catch(() => undefined), o.killGraceMs).unref();
  };
  try {
    await container.start();
  } catch (e) {
    return { kind: 'engine-error', message: `Unable to start a container of image '${o.image}': ${engineReason(e)}` };
  }
  o.signal.addEventListener('abort', onAbort, { once: true });
  if (o.signal.aborted) onAbort();
  try {
    const stdout = new PassThrough().on('data', o.onStdout);
    const stderr = new PassThrough().on('data', o.onStderr);
    const output = (await container.logs({ follow: true, stdout: true, stderr: true })) as NodeJS.ReadableStream;
    const drained = new Promise<void>((resolve) => {
      output.once('end', resolve);
      output.once('close', resolve);
      output.once('error', () => resolve());
    });
    o.engine.docker.modem.demuxStream(output, stdout, stderr);
    const exit = (await container.wait()) as { StatusCode: number };
    await Promise.race([drained, new Promise((r) => setTimeout(r, 1000))]);
    return { kind: 'exited', exitCode: exit.StatusCode, aborted };
  } catch (e) {
    if (aborted) return { kind: 'aborted' };
    return { kind: 'engine-error', message: `Container of image '${o.image}' failed: ${engineReason(e)}` };
  } finally {
    o.signal.removeEventListener('abort', onAbort);
  }
}
