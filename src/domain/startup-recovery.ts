/**
 * Start-up recovery and repair (docs/architecture.md#start-up-recovery): removes what processes
 * that are gone left behind, and reports each removal — before the build scheduler starts
 * ({@link recoverAtStartup}) and, on PostgreSQL, whenever the process registry finds a process
 * gone and every sweep interval ({@link repairLeftovers}, src/domain/processes/):
 *
 * - processes of its builds: any process whose environment names a job directory of this data
 *   dir (`GITLOOM_WORKSPACE=<jobs dir>/…`; bubblewrap and everything in its sandbox carry it) is
 *   killed (SIGKILL), and the job directories are removed only once those processes are gone;
 * - containers of its builds (labelled with the jobs dir and their job directory), when a job
 *   directory or the container engine service of a previous run is left: removed through the
 *   engine, which also ends the service that run left — and through the engines that server
 *   docker executors name by `dockerSockPath`;
 * - job directories (`<jobs dir>/*`: workspaces, `HOME`s, step scripts), and the
 *   `<data dir>/workspaces/` of versions before the jobs dir (at start-up);
 * - artifact upload temp files (`.gitloom-upload-*` below `<data dir>/builds/`) and Git LFS
 *   uploads in flight (`.gitloom-upload-*` beside their objects under `<data dir>/lfs/`, and `<data dir>/lfs/tmp/*` of earlier versions),
 *   and archives being kept (`.gitloom-upload-*` under `<data dir>/archives/`);
 * - unfinished or replaced job cache snapshots (`<data dir>/caches/<project>/.tmp-*`, `.old-*`);
 * - push quarantine directories git's receive-pack left in bare repositories
 *   (`repos/*.git/objects/incoming-*` and `objects/tmp_objdir-*`), and the push markers of
 *   processes that are gone (`repos/*.git/gitloom-pushes/*`, src/git/push-markers.ts);
 * - with a bucket (`GITLOOM_OBJECT_STORE_URL`), the incomplete multipart uploads below its
 *   prefix that an upload cut off by a crash left (its parts stay in the bucket). Their owner
 *   cannot be told (S3 lists an upload's key and start, not the metadata it was begun with), so
 *   their start decides: on SQLite, at start-up, those begun before this process started (less
 *   {@link CLOCK_MARGIN_MS} for the bucket's clock); on PostgreSQL those begun more than
 *   {@link INCOMPLETE_UPLOAD_MS} ago. A bucket whose server does not list multipart uploads
 *   (s3rver) is said so at start-up. And the job cache archives no row names, written more than
 *   {@link INCOMPLETE_UPLOAD_MS} ago: a process died between uploading one and recording it
 *   (src/domain/builds/job-caches.ts).
 *
 * On SQLite one process owns the data dir, so every job directory found is stale, and every temp
 * file, marker and quarantine directory made before this process started (requests are served
 * while recovery runs: a push's quarantine of this process is its own). On PostgreSQL other
 * processes share it, and only what belongs to a process that is gone goes: temp files and cache
 * snapshots name their owner (src/process-identity.ts) and go once it is gone (those of versions
 * that named none once older than {@link STALE_AFTER_MS}); a quarantine directory goes unless a
 * marker of a live process, no younger than the directory, lies in its repository; a job
 * directory goes unless its build is RUNNING under a lease whose owner is registered and live
 * or, for an owner the registry does not know, unexpired. Whose work is alive is read after the
 * leftovers were listed, so that work begun meanwhile, by a process registered meanwhile, is
 * never taken for a leftover.
 */
import { existsSync } from 'node:fs';
import { readdir, realpath, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { UPLOAD_PREFIX } from '../ci/artifacts.js';
import { ARCHIVES_DIR, CACHES_DIR, CONTAINERS_DIR, LEGACY_WORKSPACES_DIR } from '../data-dir.js';
import { CACHE_LEFTOVER } from '../ci/job-caches.js';
import { buildProcesses } from '../ci/job-processes.js';
import { dialectOf } from '../db/dialect.js';
import { pushMarkers, quarantineDirs, type RepositoryEntry } from '../git/push-markers.js';
import { objectStoreOf, S3ObjectStore } from '../object-store/index.js';
import { ownerOf, type OwnerTag } from '../process-identity.js';
import { executorEngineSockets, removeUnrecordedCacheArchives, runningJobLeases } from './builds/index.js';
import { lfsTempDir } from './lfs/index.js';
import { ownersNow, type Owners } from './processes/index.js';
import { createContext, systemActor, type Services } from './context.js';
import { ContainerEngines } from '../ci/container-engine.js';

/** Age after which, on PostgreSQL, an incomplete multipart upload in the bucket counts as abandoned: far longer than any upload takes. */
export const INCOMPLETE_UPLOAD_MS = 24 * 3600 * 1000;
/** How far the bucket's clock may be ahead of this machine's, for the start of an upload it reports. */
export const CLOCK_MARGIN_MS = 60_000;

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
  readonly pushMarkers: readonly string[];
  /** Keys (below the bucket's prefix) of the incomplete multipart uploads aborted. */
  readonly incompleteUploads: readonly string[];
  /** Keys of the unrecorded job cache archives deleted. */
  readonly cacheArchives: readonly string[];
}

export { buildProcesses };

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
 * Runs the recovery described above at start-up and logs one line per removal through `log`
 * (`Start-up recovery: removed …`). Call it after migrations and before the build scheduler starts.
 */
export async function recoverAtStartup(services: Services, log: (message: string) => void, containers?: ContainerEngines): Promise<RecoveryReport> {
  return recover(services, (message) => log(`Start-up recovery: ${message}`), containers, true);
}

/**
 * The repair of a running process on PostgreSQL, which the process registry runs when it found a
 * process gone and every sweep interval (src/domain/processes/): removes what
 * {@link recoverAtStartup} removes of processes that are gone, but the job directories of
 * versions before the jobs dir; one line per removal through `log` (`Repair: removed …`).
 */
export async function repairLeftovers(services: Services, log: (message: string) => void, containers?: ContainerEngines): Promise<RecoveryReport> {
  return recover(services, (message) => log(`Repair: ${message}`), containers, false);
}

/** How leftovers are judged: by the start of this process (one process owns the data dir), or by their owners. */
type Rule = { readonly kind: 'one process' } | { readonly kind: 'owners'; readonly owners: Owners; readonly now: number };

/** A leftover found, what it is (for the log) and the owner its name carries (null: none). */
interface Found {
  readonly path: string;
  readonly what: string;
  readonly owner: OwnerTag | null;
}

async function recover(
  services: Services,
  log: (message: string) => void,
  containers: ContainerEngines | undefined,
  atStartUp: boolean,
): Promise<RecoveryReport> {
  const { dataDir } = services.config;
  // everything is listed before whose work is alive is read (see the module's docstring)
  const jobs = await listJobDirs(services);
  const owned = (what: string, prefix: string) => (file: string) => ({ path: file, what, owner: ownerOf(path.basename(file), prefix) });
  const uploads: Found[] = [
    ...(await uploadTempFiles(path.join(dataDir, 'builds'))).map(owned('artifact upload temp file', UPLOAD_PREFIX)),
    ...(await uploadTempFiles(path.join(dataDir, 'lfs'))).map(owned('Git LFS upload temp file', UPLOAD_PREFIX)),
    ...(await uploadTempFiles(path.join(dataDir, ARCHIVES_DIR))).map(owned('archive temp file', UPLOAD_PREFIX)),
    ...(await lfsUploadTempFiles(lfsTempDir(services.config))).map((file) => ({ path: file, what: 'Git LFS upload temp file', owner: null })),
  ];
  const snapshots = (await cacheLeftovers(path.join(dataDir, CACHES_DIR))).map((file) =>
    owned('unfinished job cache snapshot', path.basename(file).slice(0, '.tmp-'.length))(file),
  );
  const pushes = await listPushes(path.join(dataDir, 'repos'));

  const now = Date.now();
  const rule: Rule = dialectOf(services.db).ownedByOneProcess ? { kind: 'one process' } : { kind: 'owners', owners: await ownersNow(services.db, now), now };
  const interrupted = await removeInterruptedJobs(services, log, containers, jobs, rule, atStartUp);
  const pushLeftovers = await removePushLeftovers(pushes, rule, log);
  return {
    ...interrupted,
    uploadTempFiles: await removeAbandoned(uploads, rule, log),
    cacheSnapshots: await removeAbandoned(snapshots, rule, log),
    ...pushLeftovers,
    incompleteUploads: await abortIncompleteUploads(services, log, rule, atStartUp),
    cacheArchives: await removeCacheArchives(services, log),
  };
}

/** Deletes the job cache archives no row names, written more than {@link INCOMPLETE_UPLOAD_MS} ago; a bucket that does not answer is logged. */
async function removeCacheArchives(services: Services, log: (message: string) => void): Promise<string[]> {
  if (services.config.objectStore === null) return [];
  try {
    const removed = await removeUnrecordedCacheArchives(createContext(services, systemActor), Date.now() - INCOMPLETE_UPLOAD_MS);
    for (const key of removed) log(`removed the job cache archive ${key}, which no cache names`);
    return removed;
  } catch (error) {
    log(`unable to list the job cache archives of the bucket: ${error instanceof Error ? error.message : String(error)}`);
    return [];
  }
}

/**
 * Aborts the bucket's incomplete multipart uploads left by processes that are gone, by the rule
 * of the module's docs (none without a bucket). A failure to reach the bucket is logged, not
 * thrown: recovery goes on, and the next repair tries again.
 */
async function abortIncompleteUploads(services: Services, log: (message: string) => void, rule: Rule, atStartUp: boolean): Promise<string[]> {
  if (services.config.objectStore === null) return [];
  const store = objectStoreOf(services.config);
  if (!(store instanceof S3ObjectStore)) return [];
  const started = Date.now() - process.uptime() * 1000;
  const before = rule.kind === 'one process' && atStartUp ? started - CLOCK_MARGIN_MS : Date.now() - INCOMPLETE_UPLOAD_MS;
  let aborted: string[] | null;
  try {
    aborted = await store.abortIncompleteUploads(before);
  } catch (error) {
    log(`unable to list the incomplete multipart uploads of ${store.location}: ${error instanceof Error ? error.message : String(error)}`);
    return [];
  }
  if (aborted === null) {
    if (atStartUp) {
      log(
        `the server of ${store.location} does not list multipart uploads: give the bucket an AbortIncompleteMultipartUpload lifecycle rule to remove what interrupted uploads leave`,
      );
    }
    return [];
  }
  for (const key of aborted) log(`aborted the incomplete multipart upload of ${key} in ${store.location}`);
  return aborted;
}

/** The jobs dir (its real path) and the job directories in it. */
async function listJobDirs(services: Services): Promise<{ jobsDir: string; names: string[] }> {
  const jobsDir = await realpath(services.config.jobsDir).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return services.config.jobsDir;
    throw e;
  });
  return { jobsDir, names: (await listDir(jobsDir)).map((entry) => entry.name) };
}

/**
 * The set holding every name but `names` (only `has` answers so): what {@link buildProcesses}
 * and the container engines are told to keep, so that jobs begun after the listing are kept.
 */
function everyNameBut(names: ReadonlySet<string>): ReadonlySet<string> {
  return new (class extends Set<string> {
    override has(name: string): boolean {
      return !names.has(name);
    }
  })();
}

/**
 * The job directories of `names` whose builds run on: none with one process (SQLite); else those
 * of RUNNING builds whose lease owner is registered and live or, for an owner the registry does
 * not know (an id of another kind, a row already removed), whose lease is unexpired.
 */
async function runningJobs(services: Services, rule: Rule): Promise<Set<string>> {
  const keep = new Set<string>();
  if (rule.kind === 'one process') return keep;
  for (const lease of await runningJobLeases(services.db)) {
    const registered = lease.owner === null ? null : rule.owners.registered(lease.owner);
    if (registered ?? (lease.expires !== null && lease.expires > rule.now)) keep.add(path.basename(lease.workspace));
  }
  return keep;
}

/**
 * Ends what interrupted builds left: their processes (killed), their containers (removed through
 * the engine), then — once nothing of them runs — their job directories (`jobs.names`, listed
 * before the builds were read). At start-up, also what versions before the jobs dir left.
 */
async function removeInterruptedJobs(
  services: Services,
  log: (message: string) => void,
  containers: ContainerEngines | undefined,
  jobs: { jobsDir: string; names: string[] },
  rule: Rule,
  atStartUp: boolean,
): Promise<Pick<RecoveryReport, 'killedProcesses' | 'containers' | 'workspaces'>> {
  const { jobsDir } = jobs;
  const legacy = path.join(services.config.dataDir, LEGACY_WORKSPACES_DIR);
  const running = await runningJobs(services, rule);
  const removable = new Set(jobs.names.filter((name) => !running.has(name)));
  // one process: every job process of the data dir is left by an earlier run
  const keep = rule.kind === 'one process' ? new Set<string>() : everyNameBut(removable);

  const killed = [...buildProcesses(jobsDir, keep), ...(atStartUp ? buildProcesses(legacy, new Set()) : [])];
  for (const pid of killed) {
    try {
      process.kill(pid, 'SIGKILL');
      log(`killed process ${pid} of an interrupted build`);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
    }
  }
  const interrupted = removable.size > 0;
  const removedContainers =
    containers && (interrupted || (atStartUp && containers.leftBehind())) ? await removeInterruptedContainers(containers, jobsDir, keep, log) : [];
  if (containers && interrupted) removedContainers.push(...(await removeExecutorContainers(services, jobsDir, keep, log)));
  // A job's tree is removed only once nothing of the job runs (src/ci/job-directory.ts rule 1).
  for (const deadline = Date.now() + 10_000; killed.some((pid) => existsSync(`/proc/${pid}`)) && Date.now() < deadline;) {
    await new Promise((r) => setTimeout(r, 20));
  }

  const workspaces: string[] = [];
  const legacyNames = atStartUp ? (await listDir(legacy)).map((entry) => entry.name) : [];
  for (const full of [...[...removable].map((name) => path.join(jobsDir, name)), ...legacyNames.map((name) => path.join(legacy, name))]) {
    // Safe: the job's processes are gone, and fs.rm removes links themselves, never their targets.
    await rm(full, { recursive: true, force: true });
    workspaces.push(full);
    log(`removed job directory ${full}`);
  }
  if (atStartUp && rule.kind === 'one process') await rm(legacy, { recursive: true, force: true });
  return { killedProcesses: killed, containers: removedContainers, workspaces };
}

/**
 * Whether a leftover is abandoned: with one process owning the data dir, last changed before
 * this process started; else when its owner is gone, or, for a name carrying none (versions
 * before owners were named), once untouched for {@link STALE_AFTER_MS}. One that is gone is not.
 */
async function isAbandoned(found: Found, rule: Rule): Promise<boolean> {
  if (rule.kind === 'owners' && found.owner !== null) return !rule.owners.lives(found.owner);
  const info = await stat(found.path).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return null;
    throw e;
  });
  if (info === null) return false;
  return rule.kind === 'one process' ? info.mtimeMs < performance.timeOrigin : rule.now - info.mtimeMs > STALE_AFTER_MS;
}

/** Removes each of `found` that is abandoned (see {@link isAbandoned}), logging it; resolves those removed. */
async function removeAbandoned(found: readonly Found[], rule: Rule, log: (message: string) => void): Promise<string[]> {
  const removed: string[] = [];
  for (const leftover of found) {
    if (!(await isAbandoned(leftover, rule))) continue;
    await rm(leftover.path, { recursive: true, force: true });
    removed.push(leftover.path);
    log(`removed ${leftover.what} ${leftover.path}`);
  }
  return removed;
}

/** A repository's push quarantine directories, then its push markers (listed in that order: src/git/push-markers.ts). */
interface Pushes {
  readonly quarantines: RepositoryEntry[];
  readonly markers: Awaited<ReturnType<typeof pushMarkers>>;
}

/** The quarantine directories and push markers of the bare repositories of `reposDir`: every quarantine is listed before any marker. */
async function listPushes(reposDir: string): Promise<Pushes[]> {
  const repos = (await listDir(reposDir)).filter((entry) => entry.isDirectory()).map((entry) => path.join(reposDir, entry.name));
  const quarantines = await Promise.all(repos.map((repo) => quarantineDirs(repo)));
  const markers = await Promise.all(repos.map((repo) => pushMarkers(repo)));
  return repos.map((_, i) => ({ quarantines: quarantines[i], markers: markers[i] }));
}

/**
 * Removes the abandoned push quarantine directories and markers. With one process, those last
 * changed before it started; else the markers of processes that are gone (or naming none), and
 * the quarantines of a repository without a marker of a live process no younger than them.
 */
async function removePushLeftovers(
  pushes: readonly Pushes[],
  rule: Rule,
  log: (message: string) => void,
): Promise<Pick<RecoveryReport, 'quarantineDirs' | 'pushMarkers'>> {
  const removed = { quarantineDirs: [] as string[], pushMarkers: [] as string[] };
  const remove = async (file: string, into: string[], what: string) => {
    await rm(file, { recursive: true, force: true });
    into.push(file);
    log(`removed ${what} ${file}`);
  };
  for (const { quarantines, markers } of pushes) {
    const live = rule.kind === 'owners' ? markers.filter((m) => m.owner !== null && rule.owners.lives(m.owner)) : [];
    for (const marker of markers) {
      const abandoned = rule.kind === 'one process' ? marker.mtimeMs < performance.timeOrigin : !live.includes(marker);
      if (abandoned) await remove(marker.path, removed.pushMarkers, 'push marker');
    }
    for (const quarantine of quarantines) {
      const abandoned =
        rule.kind === 'one process' ? quarantine.mtimeMs < performance.timeOrigin : !live.some((marker) => marker.mtimeMs <= quarantine.mtimeMs);
      if (abandoned) await remove(quarantine.path, removed.quarantineDirs, 'push quarantine directory');
    }
  }
  return removed;
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
    log(`containers of interrupted builds not removed: ${e.message}`);
    return { unavailable: e.message };
  });
  if ('unavailable' in engine) return [];
  const removed = await engine.removeJobContainers(jobsDir, (jobDir) => keep.has(path.basename(jobDir)));
  for (const id of removed) log(`removed container ${id.slice(0, 12)} of an interrupted build`);
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
