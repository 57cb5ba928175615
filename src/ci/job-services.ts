/**
 * A job's services (docs/compatibility.md#builds-services): the containers of the top-level
 * `services` its `requiredServices` name, started before its first step in the job's network
 * namespace — so that a step reaches each at its name, an alias of the namespace's loopback — and
 * waited for until their `readinessCheckCommand` succeeds. They are confined and labelled as
 * every container of the job, and removed with it.
 */
import { engineReason } from './container-engine.js';
import { containerArguments, FrameSplitter, jobContainerSpec, type JobContainers } from './container-step.js';

/** A service with its texts interpolated. */
export interface ServiceToStart {
  readonly name: string;
  readonly image: string;
  readonly arguments: string | null;
  readonly env: Readonly<Record<string, string>>;
  readonly readinessCheckCommand: string;
}

/** Milliseconds between two readiness checks of a service. */
const READINESS_INTERVAL_MS = 1000;
/** Lines of a service's log shown when it fails. */
const LOG_TAIL_LINES = 30;

/**
 * Starts `service` and waits until it is ready: pulls its image when missing, creates and starts
 * its container, then runs `sh -c <readinessCheckCommand>` beside it ({@link readinessExit}) every
 * second until one exits 0. Resolves the container's id; the caller removes it when the job ends (also when this
 * throws after creating it: `created` receives the id first).
 *
 * @throws Error naming the service when the image cannot be had, the container cannot be made or
 *   started, or it exits before it is ready — with the tail of its log.
 */
export async function startService(job: JobContainers, service: ServiceToStart, created: (id: string) => void): Promise<string> {
  const { engine } = job;
  job.log(`Starting service '${service.name}' (${service.image})...`);
  await engine.ensureImage(service.image, { project: job.project, logins: job.registryLogins }, job.log, job.signal);
  let id: string;
  try {
    id = await engine.createContainer(
      jobContainerSpec(job, { image: service.image, command: containerArguments(service.arguments), env: service.env, workingDir: null, mounts: [] }),
    );
  } catch (e) {
    throw new Error(`Unable to create the container of service '${service.name}': ${(e as Error).message}`);
  }
  created(id);
  const container = engine.docker.getContainer(id);
  try {
    await container.start();
  } catch (e) {
    throw new Error(`Unable to start service '${service.name}': ${engineReason(e)}`);
  }
  while (!job.signal.aborted) {
    const state = (await container.inspect()).State;
    if (!state.Running) {
      throw new Error(`Service '${service.name}' exited with code ${state.ExitCode} before it was ready; its log ends:\n${await logTail(job, id)}`);
    }
    if ((await readinessExit(job, service)) === 0) {
      job.log(`Service '${service.name}' is ready`);
      return id;
    }
    await new Promise((r) => setTimeout(r, READINESS_INTERVAL_MS));
  }
  return id;
}

/**
 * Runs the readiness check: `sh -c <command>` in a container of the service's image and
 * environment that shares the job's network namespace (an exec into the service's own container
 * cannot join a namespace that its user namespace does not own). Resolves its exit code.
 */
async function readinessExit(job: JobContainers, service: ServiceToStart): Promise<number> {
  const id = await job.engine.createContainer(
    jobContainerSpec(job, { image: service.image, command: ['sh', '-c', service.readinessCheckCommand], env: service.env, workingDir: null, mounts: [] }),
  );
  let exited = false;
  try {
    await job.engine.docker.getContainer(id).start();
    const code = await job.engine.waitForExit(id);
    exited = true;
    return code;
  } finally {
    if (exited) job.removeLater(id);
    else await job.engine.removeContainer(id);
  }
}

/** The last lines of a container's output (stdout and stderr). */
async function logTail(job: JobContainers, id: string): Promise<string> {
  const raw = (await job.engine.docker.getContainer(id).logs({ stdout: true, stderr: true, follow: false, tail: LOG_TAIL_LINES })) as Buffer;
  const chunks: Buffer[] = [];
  new FrameSplitter((_, payload) => chunks.push(payload)).push(raw);
  return Buffer.concat(chunks).toString('utf8').trimEnd();
}
