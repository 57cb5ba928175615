/**
 * Job caches (docs/compatibility.md#builds-caches): what a job's `caches` name is restored before
 * its first step and saved after a successful run, per project and key, under
 * `<data dir>/caches/<project id>/<key>/` — its files in `tree/`, their size in bytes in `size`;
 * the directory's modification time is its last use. The caches of all projects together are
 * bounded (`GITLOOM_JOB_CACHE_MB`): after a save, the least recently used go first. A job also
 * removes, before restoring its own, the caches unused for its executor's `cacheTTL` days
 * (docs/compatibility.md#builds-job-executors).
 *
 * Saving reads a tree the job wrote, as root, by the rules of src/ci/job-directory.ts: only when
 * no process of the job runs, walking by directory entry type, links copied as links and never
 * followed, files opened with `O_NOFOLLOW` and checked to be regular. A snapshot is written
 * beside the cache and swapped in with `rename`, so a reader sees the old cache or the new one;
 * what a crash leaves (`.tmp-<owner>-*`, `.old-<owner>-*`, named after the process writing them:
 * src/process-identity.ts) recovery removes once that process is gone.
 */
import { constants, createReadStream, createWriteStream } from 'node:fs';
import { lstat, mkdir, open, readdir, readFile, readlink, rename, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ownedName } from '../process-identity.js';
import { ifMissing } from './job-directory.js';

/** Names in a project's cache directory that a crash may leave: unfinished and replaced snapshots. */
export const CACHE_LEFTOVER = /^\.(tmp|old)-/;

/**
 * A cache key as a directory name: what is not a letter, digit, `-`, `_` or `.` becomes `-` (as
 * OneDev normalizes keys).
 *
 * @throws Error for a key that is empty or only dots.
 */
export function normalizeCacheKey(key: string): string {
  const normalized = key.replace(/[^a-zA-Z0-9\-_.]/g, '-');
  if (/^\.*$/.test(normalized)) throw new Error(`Invalid cache key '${key}'`);
  return normalized;
}

/**
 * Where a job's caches are kept: {@link CacheStore} in a local directory (the default, and an
 * agent's own), or an S3-compatible bucket (src/domain/builds/job-caches.ts on the server,
 * src/agent/caches.ts on an agent through the server).
 */
export interface JobCacheStore {
  /** The bound of all caches together, bytes (for messages). */
  readonly maxBytes: number;
  /**
   * Restores cache `key` of project `projectId` into `into` (which must not exist; made 0700)
   * and marks it used; resolves false, creating nothing, when there is no such cache.
   */
  restore(projectId: number, key: string, into: string): Promise<boolean>;
  /**
   * Saves the tree `from` (a directory no process of the job can change any more) as cache
   * `key` of project `projectId`, replacing the previous one. Resolves the bytes saved, or null
   * when it alone exceeds the bound (nothing is saved then).
   */
  save(projectId: number, key: string, from: string): Promise<number | null>;
  /**
   * Removes the caches of every project not used for `ttlDays` days; resolves how many went.
   * Absent where the server evicts instead (an agent's caches kept by the server: the server
   * evicts when it leases the job).
   */
  evictUnused?(ttlDays: number): Promise<number>;
}

/** The caches of all projects in `root` (`<data dir>/caches`), at most `maxBytes` together. */
export class CacheStore implements JobCacheStore {
  constructor(
    readonly root: string,
    readonly maxBytes: number,
  ) {}

  /** Copies cache `key` of project `projectId` into `into` ({@link JobCacheStore.restore}). */
  async restore(projectId: number, key: string, into: string): Promise<boolean> {
    const dir = this.cacheDir(projectId, key);
    const tree = path.join(dir, 'tree');
    if (!(await isDirectory(tree))) return false;
    // marked used first, so that no eviction of unused caches takes it while it is copied
    await this.markUsed(dir);
    await copyTree(tree, into, { left: Number.POSITIVE_INFINITY });
    await this.markUsed(dir);
    return true;
  }

  private async markUsed(dir: string): Promise<void> {
    const now = new Date();
    await utimes(dir, now, now).catch(ifMissing(undefined)); // replaced meanwhile: its successor is as new
  }

  /**
   * Removes the caches of every project not used (restored or saved) for `ttlDays` days (a job
   * executor's `cacheTTL`, OneDev's "caches inactive for the period"). Resolves how many went.
   */
  async evictUnused(ttlDays: number, now = Date.now()): Promise<number> {
    const before = now - ttlDays * 24 * 3600 * 1000;
    let removed = 0;
    for (const cache of await this.caches()) {
      if (cache.used >= before) continue;
      await rm(cache.dir, { recursive: true, force: true });
      removed++;
    }
    return removed;
  }

  /**
   * Saves the tree `from` (a directory no process of the job can change any more) as cache `key`
   * of project `projectId`, replacing the previous one, then evicts the least recently used
   * caches beyond the bound. Resolves the bytes saved, or null when the tree alone exceeds the
   * bound (nothing is saved then).
   */
  async save(projectId: number, key: string, from: string): Promise<number | null> {
    const project = path.join(this.root, String(projectId));
    await mkdir(project, { recursive: true, mode: 0o700 });
    const temp = path.join(project, ownedName('.tmp-'));
    try {
      await mkdir(temp, { mode: 0o700 });
      const budget = { left: this.maxBytes };
      if (!(await copyTree(from, path.join(temp, 'tree'), budget))) return null;
      const size = this.maxBytes - budget.left;
      await writeFile(path.join(temp, 'size'), String(size), { mode: 0o600 });
      await this.swapIn(temp, this.cacheDir(projectId, key));
      await this.evict();
      return size;
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  }

  private cacheDir(projectId: number, key: string): string {
    return path.join(this.root, String(projectId), normalizeCacheKey(key));
  }

  /** Puts the snapshot `temp` in place of `dir`: the old one is renamed aside, then removed. */
  private async swapIn(temp: string, dir: string): Promise<void> {
    const old = path.join(path.dirname(dir), ownedName('.old-'));
    await rename(dir, old).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw e;
    });
    try {
      await rename(temp, dir);
    } catch (e) {
      // another save of the same key came first: its snapshot stays
      if ((e as NodeJS.ErrnoException).code !== 'ENOTEMPTY' && (e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    await rm(old, { recursive: true, force: true });
  }

  /** Every cache of every project: its directory, size in bytes and last use (epoch ms). */
  private async caches(): Promise<Array<{ dir: string; size: number; used: number }>> {
    const caches: Array<{ dir: string; size: number; used: number }> = [];
    for (const project of await readdir(this.root).catch(ifMissing([]))) {
      const projectDir = path.join(this.root, project);
      for (const key of await readdir(projectDir).catch(ifMissing([]))) {
        if (CACHE_LEFTOVER.test(key)) continue;
        const dir = path.join(projectDir, key);
        const size = Number(await readFile(path.join(dir, 'size'), 'utf8').catch(ifMissing('0'))) || 0;
        const used = (await stat(dir).catch(ifMissing(null)))?.mtimeMs ?? 0;
        caches.push({ dir, size, used });
      }
    }
    return caches;
  }

  /** Removes the least recently used caches until all together fit in the bound. */
  private async evict(): Promise<void> {
    const caches = await this.caches();
    let total = caches.reduce((sum, c) => sum + c.size, 0);
    for (const cache of caches.sort((a, b) => a.used - b.used)) {
      if (total <= this.maxBytes) break;
      await rm(cache.dir, { recursive: true, force: true });
      total -= cache.size;
    }
  }
}

async function isDirectory(p: string): Promise<boolean> {
  return (await lstat(p).catch(ifMissing(null)))?.isDirectory() ?? false;
}

/**
 * Copies the tree `from` to `to` (which must not exist), never following a link: directories by
 * their entry type, links recreated as links, regular files opened with `O_NOFOLLOW |
 * O_NONBLOCK` and checked with `fstat`; anything else (FIFOs, sockets, devices) is left out.
 * Files count against `budget.left` (bytes); resolves false as soon as it would go below zero.
 */
export async function copyTree(from: string, to: string, budget: { left: number }): Promise<boolean> {
  await mkdir(to, { mode: 0o700 });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) {
      if (!(await copyTree(source, target, budget))) return false;
    } else if (entry.isSymbolicLink()) {
      await symlink(await readlink(source), target);
    } else if (entry.isFile()) {
      if (!(await copyFile(source, target, budget))) return false;
    }
  }
  return true;
}

/** Copies one regular file for {@link copyTree}; false when it exceeds the budget. */
async function copyFile(source: string, target: string, budget: { left: number }): Promise<boolean> {
  const handle = await open(source, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (!info.isFile()) return true;
    budget.left -= info.size;
    if (budget.left < 0) return false;
    await pipeline(
      createReadStream('', { fd: handle.fd, autoClose: false, start: 0, end: Math.max(0, info.size - 1) }),
      createWriteStream(target, { mode: info.mode & 0o755, flags: 'wx' }),
    );
    return true;
  } finally {
    await handle.close();
  }
}
