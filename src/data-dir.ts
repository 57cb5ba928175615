/**
 * The data dir is private (docs/compatibility.md#gitloom-differs-untrusted-builds, docs/architecture.md#data-layout): directories 0700, files
 * 0600 (executables such as hooks 0700), whatever the umask. Nothing below it can be reached by
 * another uid; running jobs live in the jobs dir instead (src/ci/job-directory.ts).
 */
import { chmod, lstat, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';

/** Mode of private directories and of private files. */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/** Name of the directory inside the data dir that is git's `HOME` (its global config: `.gitconfig`). */
export const GIT_HOME_DIR = 'git';

/**
 * Runs a step on an entry that another server process sharing the data dir may remove meanwhile
 * (a push's quarantine directory, an upload's temp file): an entry gone is nothing to fix.
 */
async function unlessGone<T>(step: () => Promise<T>): Promise<T | undefined> {
  try {
    return await step();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function fixTree(dir: string): Promise<void> {
  for (const entry of (await unlessGone(() => readdir(dir, { withFileTypes: true }))) ?? []) {
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    const stat = await unlessGone(() => lstat(full));
    if (!stat) continue;
    const mode = stat.mode & 0o777;
    if (stat.isDirectory()) {
      if (mode !== PRIVATE_DIR_MODE) await unlessGone(() => chmod(full, PRIVATE_DIR_MODE));
      await fixTree(full);
    } else if (mode & 0o077) {
      await unlessGone(() => chmod(full, mode & 0o100 ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE));
    }
  }
}

/**
 * Name of the directory of running jobs' directories that versions before the jobs dir kept in
 * the data dir (job uids own its entries; start-up recovery removes it).
 */
export const LEGACY_WORKSPACES_DIR = 'workspaces';

/**
 * Name of the directory of the server's own container engine service (its socket, pid file and
 * `containers.conf`; src/ci/container-engine.ts). Nothing in it is data: backups skip it.
 */
export const CONTAINERS_DIR = 'containers';

/** Name of the directory of archives kept by commit (src/domain/repositories/archive-cache.ts): `<project id>/<commit>.<zip|tar.gz>`. Backups skip it. */
export const ARCHIVES_DIR = 'archives';

/** Name of the directory of job caches (src/ci/job-caches.ts): `<project id>/<key>/`. Backups skip it. */
export const CACHES_DIR = 'caches';

/** Name of the jobs dir inside the data dir, used when the server does not run as root (config.ts). */
export const JOBS_DIR = 'jobs';

/**
 * Sets the process umask to 0o077 (everything created from now on — database, repositories,
 * logs, artifacts, keys — is private to the server's user, git included), creates the data dir
 * (0700), and fixes the modes of what an earlier run left: every directory 0700, every file
 * without group/other bits (executables 0700, others 0600). Job directories are skipped: they
 * belong to jobs, and start-up recovery removes them. Entries that vanish during the walk — the
 * in-flight work of another process sharing the data dir on PostgreSQL — are skipped.
 */
export async function makeDataDirPrivate(dataDir: string): Promise<void> {
  process.umask(0o077);
  await mkdir(dataDir, { recursive: true });
  await chmod(dataDir, PRIVATE_DIR_MODE);
  for (const entry of await readdir(dataDir, { withFileTypes: true })) {
    if (entry.name === LEGACY_WORKSPACES_DIR || entry.name === JOBS_DIR || entry.isSymbolicLink()) continue;
    const full = path.join(dataDir, entry.name);
    if (entry.isDirectory()) {
      if (((await lstat(full)).mode & 0o777) !== PRIVATE_DIR_MODE) await chmod(full, PRIVATE_DIR_MODE);
      await fixTree(full);
    } else {
      const mode = (await lstat(full)).mode & 0o777;
      if (mode & 0o077) await chmod(full, mode & 0o100 ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE);
    }
  }
}
