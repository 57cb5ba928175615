/**
 * Start-up recovery (docs/architecture.md#start-up-recovery): before the build scheduler starts,
 * removes what a previous run that crashed or was killed left behind, and reports each removal:
 *
 * - processes of its builds: any process whose environment names a job directory of this data
 *   dir (`GITLOOM_WORKSPACE=<jobs dir>/…`; bubblewrap and everything in its sandbox carry it) is
 *   killed (SIGKILL), and the job directories are removed only once those processes are gone;
 * - containers of its builds (labelled with the jobs dir and their job directory), when a job
 *   directory or the container engine service of a previous run is left: removed through the
 *   engine, which also ends the service that run left — and through the engines that server
 *   docker executors name by `dockerSockPath`;
 * - job directories (`<jobs dir>/*`: workspaces, `HOME`s, step scripts), and the
 *   `<data dir>/workspaces/` of versions before the jobs dir;
 * - artifact upload temp files (`.gitloom-upload-*` below `<data dir>/builds/`) and Git LFS
 *   uploads in flight (`.gitloom-upload-*` beside their objects under `<data dir>/lfs/`, and `<data dir>/lfs/tmp/*` of earlier versions);
 * - unfinished or replaced job cache snapshots (`<data dir>/caches/<project>/.tmp-*`, `.old-*`);
 * - push quarantine directories git's receive-pack left in bare repositories
 *   (`repos/*.git/objects/incoming-*` and `objects/tmp_objdir-*`).
 *
 * On SQLite one process owns the data dir, so every job directory found is stale, and every temp
 * file and quarantine directory made before this process started (requests are served while
 * recovery runs: a push's quarantine of this process is its own). On PostgreSQL other processes
 * may share it: workspaces of builds RUNNING under an unexpired lease (and their processes) are
 * kept, and temp files and quarantine directories are removed only once they are older than
 * {@link STALE_AFTER_MS}.
 */
import { existsSync } from 'node:fs';
import { readdir, realpath, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { UPLOAD_PREFIX } from '../ci/artifacts.js';
import { CACHES_DIR, CONTAINERS_DIR, LEGACY_WORKSPACES_DIR } from '../data-dir.js';
import { CACHE_LEFTOVER } from '../ci/job-caches.js';
import { buildProcesses } from '../ci/job-processes.js';
import { dialectOf } from '../db/dialect.js';
import { executorEngineSockets, leasedJobWorkspaces } from './builds/index.js';
import { lfsTempDir } from './lfs/index.js';
import type { Services } from './context.js';
import { ContainerEngines } from '../ci/container-engine.js';

/** Age after which, on PostgreSQL, a temp file or quarantine directory counts as abandoned. */
export const STALE_AFTER_MS = 60 * 60 * 1000;

/** What {@link recoverAtStartup} removed. */
export interface RecoveryReport {
  /** Host pids killed. */
  readonly killedProcesses: readonly number[];
  /** Ids of the containers removed. */
  readonly containers: readonly string[];
  /** Absolute paths removed, by kind. */
  readonly workspaces: readonly string[];
  readonly uploadTempFiles: readonly string[];
  readonly cacheSnapshots: readonly string[];
  readonly quarantineDirs: readonly string[];
}

const QUARANTINE = /^(incoming-|tmp_objdir-)/;

export { buildProcesses };

/**
 * Whether a temp file or quarantine directory is abandoned: with one process owning the data dir
 * (`everything`), last changed before this process started; otherwise untouched for
 * {@link STALE_AFTER_MS}. One that is gone is not.
 */
async function isStale(file: string, everything: boolean, now: number): Promise<boolean> {
  const info = await stat(file).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return null;
    throw e;
  });
  if (info === null) return false;
  return everything ? info.mtimeMs < performance.timeOrigin : now - info.mtimeMs > STALE_AFTER_MS;
}

async function listDir(dir: string): Promise<import('node:fs').Dirent[]> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}

async function uploadTempFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await listDir(dir)) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await uploadTempFiles(full)));
    else if (entry.isFile() && entry.name.startsWith(UPLOAD_PREFIX)) found.push(full);
  }
  return found;
}

/** The files of Git LFS uploads that versions before the object store left in flight (`<data dir>/lfs/tmp/*`). */
async function lfsUploadTempFiles(dir: string): Promise<string[]> {
  return (await listDir(dir)).filter((entry) => entry.isFile()).map((entry) => path.join(dir, entry.name));
}

/**
 * Runs the recovery described above and logs one line per removal through `log`.
 * Call it after migrations and before the build scheduler starts.
 */
export async function recoverAtStartup(services: Services, log: (message: string) => void, containers?: ContainerEngines): Promise<RecoveryReport> {
  const { dataDir } = services.config;
  const now = Date.now();
  const everything = dialectOf(services.db).ownedByOneProcess;
  const interrupted = await removeInterruptedJobs(services, log, containers, { now, everything });
  const stale = (paths: string[], what: string): Promise<string[]> => removeStale(paths, what, log, everything, now);
  return {
    ...interrupted,
    uploadTempFiles: [
      ...(await stale(await uploadTempFiles(path.join(dataDir, 'builds')), 'artifact upload temp file')),
      ...(await stale(await uploadTempFiles(path.join(dataDir, 'lfs')), 'Git LFS upload temp file')),
      ...(await stale(await lfsUploadTempFiles(lfsTempDir(services.config)), 'Git LFS upload temp file')),
    ],
    cacheSnapshots: await stale(await cacheLeftovers(path.join(dataDir, CACHES_DIR)), 'unfinished job cache snapshot'),
    quarantineDirs: await stale(await quarantineDirs(path.join(dataDir, 'repos')), 'push quarantine directory'),
  };
}

/**
 * Ends what interrupted builds left: their processes (killed), their containers (removed through
 * the engine), then — once nothing of them runs — their job directories. On PostgreSQL the jobs of
 * builds RUNNING under an unexpired lease are kept.
 */
async function removeInterruptedJobs(
  services: Services,
  log: (message: string) => void,
  containers: ContainerEngines | undefined,
  { now, everything }: { now: number; everything: boolean },
): Promise<Pick<RecoveryReport, 'killedProcesses' | 'containers' | 'workspaces'>> {
  const jobsDir = await realpath(services.config.jobsDir).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return services.config.jobsDir;
    throw e;
  });
  const legacy = path.join(services.config.dataDir, LEGACY_WORKSPACES_DIR);
  const keep = new Set<string>();
  if (!everything) {
    for (const workspace of await leasedJobWorkspaces(services.db, now)) keep.add(path.basename(workspace));
  }

  const killed = [...buildProcesses(jobsDir, keep), ...buildProcesses(legacy, new Set())];
  for (const pid of killed) {
    try {
      process.kill(pid, 'SIGKILL');
      log(`Start-up recovery: killed process ${pid} of an interrupted build`);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
    }
  }
  const jobDirs = await listDir(jobsDir);
  const interrupted = jobDirs.some((entry) => !keep.has(entry.name));
  const removedContainers = containers && (interrupted || containers.leftBehind()) ? await removeInterruptedContainers(containers, jobsDir, keep, log) : [];
  if (containers && interrupted) removedContainers.push(...(await removeExecutorContainers(services, jobsDir, keep, log)));
  // A job's tree is removed only once nothing of the job runs (src/ci/job-directory.ts rule 1).
  for (const deadline = Date.now() + 10_000; killed.some((pid) => existsSync(`/proc/${pid}`)) && Date.now() < deadline;) {
    await new Promise((r) => setTimeout(r, 20));
  }

  const workspaces: string[] = [];
  for (const [root, entries] of [
    [jobsDir, jobDirs],
    [legacy, await listDir(legacy)],
  ] as const) {
    for (const entry of entries) {
      if (root === jobsDir && keep.has(entry.name)) continue;
      const full = path.join(root, entry.name);
      // Safe: the job's processes are gone, and fs.rm removes links themselves, never their targets.
      await rm(full, { recursive: true, force: true });
      workspaces.push(full);
      log(`Start-up recovery: removed job directory ${full}`);
    }
  }
  if (everything) await rm(legacy, { recursive: true, force: true });
  return { killedProcesses: killed, containers: removedContainers, workspaces };
}

/**
 * Removes the containers of the jobs dir whose job directory `keep` does not name. Without an
 * engine (none installed) no container can be left; an engine that fails to answer is reported.
 */
async function removeInterruptedContainers(
  containers: ContainerEngines,
  jobsDir: string,
  keep: ReadonlySet<string>,
  log: (message: string) => void,
): Promise<string[]> {
  const engine = await containers.get().catch((e: Error) => {
    log(`Start-up recovery: containers of interrupted builds not removed: ${e.message}`);
    return { unavailable: e.message };
  });
  if ('unavailable' in engine) return [];
  const removed = await engine.removeJobContainers(jobsDir, (jobDir) => keep.has(path.basename(jobDir)));
  for (const id of removed) log(`Start-up recovery: removed container ${id.slice(0, 12)} of an interrupted build`);
  return removed;
}

/**
 * Removes the containers of interrupted builds from the engines that server docker executors name
 * by socket (docs/compatibility.md#builds-job-executors `dockerSockPath`), each connected for this.
 */
async function removeExecutorContainers(services: Services, jobsDir: string, keep: ReadonlySet<string>, log: (message: string) => void): Promise<string[]> {
  const removed: string[] = [];
  for (const host of await executorEngineSockets({ db: services.db })) {
    const engines = new ContainerEngines({ host, stateDir: path.join(services.config.dataDir, CONTAINERS_DIR), log });
    try {
      removed.push(...(await removeInterruptedContainers(engines, jobsDir, keep, log)));
    } finally {
      await engines.close();
    }
  }
  return removed;
}

/** Removes each of `paths` that is stale (see {@link isStale}), logging it as a `what`; resolves those removed. */
async function removeStale(paths: string[], what: string, log: (message: string) => void, everything: boolean, now: number): Promise<string[]> {
  const removed: string[] = [];
  for (const full of paths) {
    if (!(await isStale(full, everything, now))) continue;
    await rm(full, { recursive: true, force: true });
    removed.push(full);
    log(`Start-up recovery: removed ${what} ${full}`);
  }
  return removed;
}

/** Unfinished and replaced cache snapshots (`<caches>/<project>/.tmp-*`, `.old-*`). */
async function cacheLeftovers(cachesDir: string): Promise<string[]> {
  const found: string[] = [];
  for (const project of await listDir(cachesDir)) {
    for (const entry of await listDir(path.join(cachesDir, project.name))) {
      if (CACHE_LEFTOVER.test(entry.name)) found.push(path.join(cachesDir, project.name, entry.name));
    }
  }
  return found;
}

/** Push quarantine directories git's receive-pack left in the bare repositories of `reposDir`. */
async function quarantineDirs(reposDir: string): Promise<string[]> {
  const found: string[] = [];
  for (const repo of await listDir(reposDir)) {
    if (!repo.isDirectory()) continue;
    const objects = path.join(reposDir, repo.name, 'objects');
    for (const entry of await listDir(objects)) {
      if (entry.isDirectory() && QUARANTINE.test(entry.name)) found.push(path.join(objects, entry.name));
    }
  }
  return found;
}
