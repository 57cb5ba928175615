/**
 * One step in a container (docs/compatibility.md#builds-containers): the step's image, the job's
 * workspace mounted where OneDev's docker executors mount it, a command step's commands run by
 * its interpreter (or a `!RunContainerStep`'s image with its arguments), the output streamed as
 * it comes, and the container removed afterwards — when the step ends, is cancelled or times out.
 */
import { PassThrough } from 'node:stream';
import { parse } from 'shell-quote';
import { JOB_DIR_LABEL, JOBS_DIR_LABEL, engineReason, unlessEngineSays, type ContainerEngine, type ContainerSpec, type IdMapping } from './container-engine.js';

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
  readonly log: (line: string) => void;
  readonly signal: AbortSignal;
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
  };
}

/** What {@link runContainerStep} runs, besides what the job's containers share. */
export interface ContainerStepOptions {
  readonly image: string;
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
    await engine.ensureImage(o.image, job.log, job.signal);
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
  try {
    return await runCreated(job, o, id);
  } finally {
    // a container that cannot be removed may still run: the caller must not touch the workspace
    await engine.removeContainer(id);
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
    const stdout = new PassThrough().on('data', o.onStdout);
    const stderr = new PassThrough().on('data', o.onStderr);
    const output = (await container.logs({ follow: true, stdout: true, stderr: true })) as NodeJS.ReadableStream;
    const drained = new Promise<void>((resolve) => {
      output.once('end', resolve);
      output.once('close', resolve);
      output.once('error', () => resolve());
    });
    job.engine.docker.modem.demuxStream(output, stdout, stderr);
    const exit = (await container.wait()) as { StatusCode: number };
    await Promise.race([drained, new Promise((r) => setTimeout(r, 1000))]);
    return { kind: 'exited', exitCode: exit.StatusCode, aborted };
  } catch (e) {
    if (aborted) return { kind: 'aborted' };
    return { kind: 'engine-error', message: `Container of image '${o.image}' failed: ${engineReason(e)}` };
  } finally {
    job.signal.removeEventListener('abort', onAbort);
  }
}
