/**
 * Results of git reads that depend only on object ids, kept in memory by repository, kind and
 * ids: the diff of two commits, a merge base, the commits an update brought, a path's entry in a
 * commit, a blob's bytes. Git objects never change, so such a result never goes stale, and the
 * pages that show them (file view, commit, pull request and its changes) skip spawning git when
 * they are shown again. A read under way is shared: two requests for one big diff start one
 * `git diff`. Reads by branch or tag name are never kept: the caller resolves names to
 * hashes (live) first. The caller checks permissions before asking: the cache is keyed by the
 * repository, so one project's objects are never answered for another.
 */
import { LRUCache } from 'lru-cache';

/** At most this many bytes (estimated) of results are kept; the least recently used go first. */
const MAX_CACHED_BYTES = 48 * 1024 * 1024;
/** A full object id (SHA-1 or SHA-256). */
const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

const cache = new LRUCache<string, { value: unknown; size: number }>({
  maxSize: MAX_CACHED_BYTES,
  sizeCalculation: (entry) => Math.max(1, entry.size),
});
/** Reads under way by key: a request asking for one of them waits for it instead of starting another. */
const reading = new Map<string, Promise<unknown>>();

/**
 * The result of `read`, from the cache when the same read of the same objects ran before, or
 * from the same read under way when another request started it. Only successful results are
 * kept (a failure reaches every request that waited for it); a read whose `objectIds` are not
 * all full hex object ids (branch names, abbreviations) always runs.
 *
 * @param repo absolute path of the bare repository the objects are read from.
 * @param kind what is read, with every option that changes the result (`diff:65536:3`).
 * @param objectIds the ids the result depends on (null stands for "none", e.g. the empty side of a diff).
 * @param read performs the read; must not depend on anything but `repo`, `kind` and `objectIds`.
 * @param sizeOf the result's size in bytes, estimated (default 1 KiB).
 * @returns the result; callers must not change it (it is shared).
 */
export async function objectRead<T>(
  repo: string,
  kind: string,
  objectIds: readonly (string | null)[],
  read: () => Promise<T>,
  sizeOf: (value: T) => number = () => 1024,
): Promise<T> {
  if (!objectIds.every((id) => id === null || OBJECT_ID.test(id))) return read();
  const key = `${repo}\0${kind}\0${objectIds.join('\0')}`;
  const hit = cache.get(key);
  if (hit) return hit.value as T;
  let pending = reading.get(key) as Promise<T> | undefined;
  if (!pending) {
    pending = read()
      .then((value) => {
        cache.set(key, { value, size: sizeOf(value) });
        return value;
      })
      .finally(() => reading.delete(key));
    reading.set(key, pending);
  }
  return pending;
}
