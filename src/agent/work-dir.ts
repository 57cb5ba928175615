/**
 * A build agent's work dir (`--work-dir`, default {@link DEFAULT_WORK_DIR}): its attributes
 * (`attributes.json`), the session of its last connection (`session`), the directories of its running jobs (`jobs/`, src/ci/job-directory.ts),
 * its job caches (`caches/`, src/ci/job-caches.ts) and its container engine service
 * (`containers/`, src/ci/container-engine.ts). Private to the agent's user: 0700, or 0711 when
 * jobs run as uids of their own, which must be able to search the way to their workspace (as
 * the server's jobs dir, `GITLOOM_JOB_DIR`); what is in it is private either way.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ContainerEngine } from '../ci/container-engine.js';
import { buildProcesses } from '../ci/job-processes.js';
import { CACHES_DIR, CONTAINERS_DIR, JOBS_DIR, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../data-dir.js';

/** The work dir when `--work-dir` is not given. */
export const DEFAULT_WORK_DIR = '/var/lib/gitloom-agent';

/** The paths inside a work dir. */
export interface WorkDir {
  readonly root: string;
  readonly jobs: string;
  readonly caches: string;
  readonly containers: string;
  readonly attributes: string;
  /** The session of the agent's last connection. */
  readonly session: string;
}

/** The layout of work dir `root` (nothing is created). */
export function workDirAt(root: string): WorkDir {
  const abs = path.resolve(root);
  return {
    root: abs,
    jobs: path.join(abs, JOBS_DIR),
    caches: path.join(abs, CACHES_DIR),
    containers: path.join(abs, CONTAINERS_DIR),
    attributes: path.join(abs, 'attributes.json'),
    session: path.join(abs, 'session'),
  };
}

/**
 * Creates the work dir (and its caches directory, 0700) when missing and sets its mode: 0700, or
 * 0711 when `jobUids` (jobs run as uids of their own and must reach `jobs/`). Sets the process
 * umask to 0077, so that everything the agent creates is private.
 */
export async function prepareWorkDir(dir: WorkDir, jobUids: boolean): Promise<void> {
  process.umask(0o077);
  await mkdir(dir.root, { recursive: true, mode: PRIVATE_DIR_MODE });
  await chmod(dir.root, jobUids ? 0o711 : PRIVATE_DIR_MODE);
  await mkdir(dir.caches, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * Reads the attributes stored in the work dir: `{}` when there are none yet.
 *
 * @throws Error naming the file when it is not a JSON object of strings.
 */
export async function readAttributes(dir: WorkDir): Promise<Record<string, string>> {
  let text: string;
  try {
    text = await readFile(dir.attributes, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.values(value).some((v) => typeof v !== 'string')) {
    throw new Error(`${dir.attributes} must be a JSON object of string values`);
  }
  return value as Record<string, string>;
}

/** Stores the attributes (a temp file renamed over `attributes.json`, 0600). */
export async function writeAttributes(dir: WorkDir, attributes: Readonly<Record<string, string>>): Promise<void> {
  const tmp = `${dir.attributes}.tmp`;
  await writeFile(tmp, `${JSON.stringify(attributes, null, 2)}\n`, { mode: PRIVATE_FILE_MODE });
  await rename(tmp, dir.attributes);
}

/**
 * The session of the agent's last connection, kept so that the agent started again after a kill
 * can name it when it connects (src/agent/agent.ts); null when there is none.
 */
export async function readSession(dir: WorkDir): Promise<string | null> {
  try {
    return (await readFile(dir.session, 'utf8')).trim() || null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Keeps `session` as the agent's last connection's (a temp file renamed over `session`, 0600). */
export async function writeSession(dir: WorkDir, session: string): Promise<void> {
  const tmp = `${dir.session}.tmp`;
  await writeFile(tmp, `${session}\n`, { mode: PRIVATE_FILE_MODE });
  await rename(tmp, dir.session);
}

/**
 * Parses `--attribute name=value` options (later ones win).
 *
 * @throws Error for one without `=` or with an empty name.
 */
export function parseAttributeOptions(options: readonly string[]): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const option of options) {
    const eq = option.indexOf('=');
    if (eq <= 0) throw new Error(`--attribute must be name=value, got '${option}'`);
    attributes[option.slice(0, eq).trim()] = option.slice(eq + 1);
  }
  return attributes;
}

/**
 * Removes what a previous run of the agent left in `jobs/`: the processes of its jobs are killed
 * (SIGKILL; src/ci/job-processes.ts), the containers of its jobs removed through `engine` (those
 * labelled with this work dir's `jobs/`, src/ci/container-engine.ts `JOBS_DIR_LABEL`: the
 * containers and services of jobs that an agent killed with its container reaper left — a
 * SIGKILL of its whole control group, a reboot of its machine), and the job directories removed
 * once those are gone (src/ci/job-directory.ts rule 1). Each removal is told to `log`.
 *
 * @param engine the agent's container engine, or null when it has none.
 * @returns the pids killed, the ids of the containers and the directories removed.
 */
export async function removeLeftJobs(
  dir: WorkDir,
  log: (message: string) => void,
  engine: Pick<ContainerEngine, 'removeJobContainers'> | null,
): Promise<{ killed: number[]; containers: string[]; removed: string[] }> {
  if (!existsSync(dir.jobs)) return { killed: [], containers: [], removed: [] };
  const jobs = await realpath(dir.jobs);
  const killed = buildProcesses(jobs, new Set());
  for (const pid of killed) {
    try {
      process.kill(pid, 'SIGKILL');
      log(`Killed process ${pid} of a job of a previous run`);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
    }
  }
  for (const deadline = Date.now() + 10_000; killed.some((pid) => existsSync(`/proc/${pid}`)) && Date.now() < deadline;) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const containers: string[] = [];
  // the containers name the jobs dir as the agent's jobs did: its path as given and its real path
  if (engine !== null) {
    for (const jobsDir of new Set([dir.jobs, jobs])) {
      for (const id of await engine.removeJobContainers(jobsDir, () => false)) {
        containers.push(id);
        log(`Removed container ${id.slice(0, 12)} of a job of a previous run`);
      }
    }
  }
  const removed: string[] = [];
  for (const name of await readdir(jobs)) {
    const full = path.join(jobs, name);
    // Safe: the job's processes are gone, and fs.rm removes links themselves, never their targets.
    await rm(full, { recursive: true, force: true });
    removed.push(full);
    log(`Removed job directory ${full} of a previous run`);
  }
  return { killed, containers, removed };
}
