/**
 * `gitloom admin migrate-storage --to s3|local` (docs/architecture.md#object-storage, README
 * "Object storage"): moves the build artifacts and Git LFS objects between the data dir and the
 * bucket of `GITLOOM_OBJECT_STORE_URL` (and, back to the data dir, the archived build logs), one
 * object at a time:
 *
 * 1. the object is copied (streamed, visible at the destination only once whole), hashing the
 *    bytes read from the source;
 * 2. the copy is read back and its size and SHA-256 compared with the source's;
 * 3. only then is the source removed (and, in the data dir, the directories left empty).
 *
 * An interruption at any point leaves every object whole in the source, the destination or
 * both; running the command again skips nothing and copies nothing twice that is already
 * verified there: an object found at the destination is compared by size and SHA-256, the
 * source removed when they agree and copied again when not (a build log found in the data dir
 * is the one served: the bucket's copy is dropped). Run it while no server writes
 * objects (stopped, or before switching the variable), then set or unset the variable.
 */
import { createHash } from 'node:crypto';
import { readdir, rmdir } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.js';
import { isBuildLogKey, isStoredKey, LFS_PREFIX, LocalObjectStore, S3ObjectStore, type ObjectStore } from '../object-store/index.js';

/** What one run did. */
export interface MigrationReport {
  /** Objects copied and verified, their sources removed. */
  moved: number;
  /** Objects found already verified at the destination (an earlier, interrupted run), their sources removed. */
  resumed: number;
  /** Bytes copied. */
  bytes: number;
}

/** The prefixes holding the objects the store keeps (the rest of the data dir is never walked). */
const PREFIXES = [LFS_PREFIX, 'builds/'];

/**
 * Moves every stored object of the other store into the store `to` names; with `local`, the
 * archived build logs come back too (finished builds' logs go to the bucket as their jobs end,
 * never by this command).
 *
 * @param to `s3` (data dir → bucket) or `local` (bucket → data dir).
 * @param log told one line per object moved.
 * @throws Error when `GITLOOM_OBJECT_STORE_URL` is not set (both directions need the bucket), or
 *   when a copy read back differs from its source (the source is kept).
 */
export async function migrateStorage(config: Config, to: 's3' | 'local', log: (line: string) => void): Promise<MigrationReport> {
  if (config.objectStore === null) throw new Error('GITLOOM_OBJECT_STORE_URL must name the bucket to migrate to or from');
  const local = new LocalObjectStore(config.dataDir);
  const bucket = new S3ObjectStore(config.objectStore);
  const [source, target] = to === 's3' ? [local, bucket] : [bucket, local];
  const report: MigrationReport = { moved: 0, resumed: 0, bytes: 0 };
  try {
    for (const prefix of PREFIXES) {
      for await (const object of source.list(prefix)) {
        const isLog = isBuildLogKey(object.key);
        if (!isStoredKey(object.key) && !(isLog && to === 'local')) continue;
        const existing = await digestOf(target, object.key);
        // a log in the data dir is the one served: a copy of it in the bucket is left over
        if (existing !== null && (isLog || existing === (await digestOf(source, object.key)))) {
          await source.delete(object.key);
          report.resumed++;
          log(`Verified ${object.key} (${object.size} bytes), copied by an earlier run`);
        } else {
          const copied = await copy(source, target, object.key);
          if ((await digestOf(target, object.key)) !== copied.digest)
            throw new Error(`The copy of ${object.key} in ${target.location} differs from its source, which is kept`);
          await source.delete(object.key);
          report.moved++;
          report.bytes += copied.size;
          log(`Moved ${object.key} (${copied.size} bytes)`);
        }
      }
    }
    if (source === local) {
      await removeEmptyDirectories(path.join(config.dataDir, LFS_PREFIX));
      for (const project of await subdirectories(path.join(config.dataDir, 'builds'))) {
        for (const build of await subdirectories(project)) await removeEmptyDirectories(path.join(build, 'artifacts'));
      }
    }
  } finally {
    bucket.destroy();
  }
  return report;
}

/** SHA-256 and size of the bytes of `key` streamed from `from` into `to`. */
async function copy(from: ObjectStore, to: ObjectStore, key: string): Promise<{ digest: string; size: number }> {
  const opened = await from.get(key);
  if (!opened) throw new Error(`${key} vanished from ${from.location} while it was migrated`);
  const hash = createHash('sha256');
  const { size } = await to.put(key, opened.stream, { inspect: (chunk) => hash.update(chunk) });
  return { digest: `${size}:${hash.digest('hex')}`, size };
}

/** `<size>:<SHA-256>` of `key` in `store`, or null when absent. */
async function digestOf(store: ObjectStore, key: string): Promise<string | null> {
  const opened = await store.get(key);
  if (!opened) return null;
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of opened.stream) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return `${size}:${hash.digest('hex')}`;
}

/** Removes the empty directories below `dir` (and `dir` itself when it ends up empty). */
async function removeEmptyDirectories(dir: string): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  for (const entry of entries) if (entry.isDirectory()) await removeEmptyDirectories(path.join(dir, entry.name));
  try {
    await rmdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOTEMPTY') throw error;
  }
}

/** The directories directly inside `dir` (none when it does not exist). */
async function subdirectories(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => path.join(dir, e.name));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
