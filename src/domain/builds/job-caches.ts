/**
 * Job caches in object storage (docs/compatibility.md#builds-caches "In object storage"): with
 * `GITLOOM_OBJECT_STORE_URL` set, a cache is a tar archive (src/ci/cache-archives.ts) in the
 * bucket under `caches/<project id>/<key>/<uuid>.tar`, and a row of `job_caches` names the
 * current one, its size and its last use. The server's own jobs save and restore through
 * {@link storedJobCaches}; an agent's jobs through the server, with their job token
 * (src/domain/builds/agent-jobs.ts). All caches together stay within `GITLOOM_JOB_CACHE_MB`
 * (the least recently used go after a save), and those unused for an executor's `cacheTTL` days
 * go before a job of that executor restores its own ({@link evictUnusedJobCaches}).
 *
 * A save uploads a new object, then points the row at it in one transaction and deletes the
 * object it replaced; an upload cut off (a crash, a refusal) never becomes an object, and one
 * whose process died before the row pointed at it is removed by the repair
 * ({@link removeUnrecordedCacheArchives}).
 */
import type { Readable } from 'node:stream';
import { CacheTooLarge, extractTree, packTree } from '../../ci/cache-archives.js';
import { normalizeCacheKey, type JobCacheStore } from '../../ci/job-caches.js';
import type { ErrorCode } from '../../error-codes.js';
import { BadRequest, PayloadTooLarge } from '../../errors.js';
import { JOB_CACHES_PREFIX, jobCacheObjectKey, objectStoreOf, type ObjectStore } from '../../object-store/index.js';
import type { Context } from '../context.js';

/** Stable code of a cache archive over `GITLOOM_JOB_CACHE_MB`. */
export const JOB_CACHE_TOO_LARGE = 'GITLOOM_ERR_JOB_CACHE_TOO_LARGE' satisfies ErrorCode;

const DAY_MS = 24 * 3600 * 1000;

function storeOf(ctx: Context): ObjectStore {
  if (ctx.config.objectStore === null) throw new Error('Job caches are kept in the data dir: no object store is configured');
  return objectStoreOf(ctx.config);
}

/**
 * Checks a cache key sent by an agent: it must be normalized already (what
 * `normalizeCacheKey` makes), at most 255 characters.
 *
 * @throws BadRequest otherwise.
 */
export function checkCacheKey(key: string): string {
  let normalized: string;
  try {
    normalized = normalizeCacheKey(key);
  } catch {
    throw new BadRequest(`Invalid cache key '${key.slice(0, 300)}'`);
  }
  if (normalized !== key || key.length > 255) throw new BadRequest(`Invalid cache key '${key.slice(0, 300)}'`);
  return key;
}

/**
 * Opens the archive of cache `cacheKey` of project `projectId` and marks the cache used.
 *
 * @returns the archive's bytes and size, or null when the project has no such cache (a row
 *   whose object is gone is forgotten).
 */
export async function openStoredCache(ctx: Context, projectId: number, cacheKey: string): Promise<{ stream: Readable; size: number } | null> {
  const row = await ctx.db
    .updateTable('jobCaches')
    .set({ usedDate: ctx.now() })
    .where('projectId', '=', projectId)
    .where('cacheKey', '=', cacheKey)
    .returning(['id', 'objectKey'])
    .executeTakeFirst();
  if (!row) return null;
  const opened = await storeOf(ctx).get(row.objectKey);
  if (opened === null) {
    await ctx.db.deleteFrom('jobCaches').where('id', '=', row.id).where('objectKey', '=', row.objectKey).execute();
    return null;
  }
  return { stream: opened.stream, size: opened.length };
}

/**
 * Stores `archive` (a cache's tar archive) as cache `cacheKey` of project `projectId`, replacing
 * the previous one, then removes the least recently used caches beyond `GITLOOM_JOB_CACHE_MB`.
 *
 * @returns the archive's size in bytes.
 * @throws PayloadTooLarge `GITLOOM_ERR_JOB_CACHE_TOO_LARGE` when the archive alone exceeds the
 *   bound (nothing kept); CacheTooLarge from a packer that stopped for that reason.
 */
export async function saveStoredCache(ctx: Context, projectId: number, cacheKey: string, archive: AsyncIterable<Uint8Array>): Promise<number> {
  const store = storeOf(ctx);
  const maxBytes = ctx.config.jobCacheBytes;
  const objectKey = jobCacheObjectKey(projectId, cacheKey);
  const { size } = await store.put(objectKey, archive, {
    inspect(_chunk, total) {
      if (total > maxBytes) throw cacheTooLarge(maxBytes);
    },
  });
  const previous = await ctx.db.transaction().execute(async (tx) => {
    const old = await tx.selectFrom('jobCaches').select('objectKey').where('projectId', '=', projectId).where('cacheKey', '=', cacheKey).executeTakeFirst();
    await tx
      .insertInto('jobCaches')
      .values({ projectId, cacheKey, objectKey, size, usedDate: ctx.now() })
      .onConflict((oc) => oc.columns(['projectId', 'cacheKey']).doUpdateSet({ objectKey, size, usedDate: ctx.now() }))
      .execute();
    return old?.objectKey ?? null;
  });
  if (previous !== null) await store.delete(previous);
  await evictBeyondBound(ctx, store, maxBytes);
  return size;
}

/** The refusal of a cache archive over the bound. */
export function cacheTooLarge(maxBytes: number): PayloadTooLarge {
  return new PayloadTooLarge(`Cache archive is larger than the cache limit of ${maxBytes} bytes (GITLOOM_JOB_CACHE_MB)`, { code: JOB_CACHE_TOO_LARGE });
}

/** Removes the least recently used stored caches until all together fit in `maxBytes`. */
async function evictBeyondBound(ctx: Context, store: ObjectStore, maxBytes: number): Promise<void> {
  const rows = await ctx.db.selectFrom('jobCaches').select(['id', 'objectKey', 'size']).orderBy('usedDate', 'desc').orderBy('id', 'desc').execute();
  let total = 0;
  for (const row of rows) {
    total += Number(row.size);
    if (total > maxBytes) await removeStoredCache(ctx, store, row);
  }
}

/** Forgets a stored cache (unless saved again meanwhile) and deletes its archive. */
async function removeStoredCache(ctx: Context, store: ObjectStore, row: { id: number; objectKey: string }): Promise<boolean> {
  const gone = await ctx.db.deleteFrom('jobCaches').where('id', '=', row.id).where('objectKey', '=', row.objectKey).executeTakeFirst();
  if (Number(gone.numDeletedRows) === 0) return false;
  await store.delete(row.objectKey);
  return true;
}

/**
 * Removes the stored caches of every project not used (restored or saved) for `ttlDays` days (an
 * executor's `cacheTTL`, docs/compatibility.md#builds-job-executors). Resolves how many went.
 */
export async function evictUnusedJobCaches(ctx: Context, ttlDays: number): Promise<number> {
  const store = storeOf(ctx);
  const rows = await ctx.db
    .selectFrom('jobCaches')
    .select(['id', 'objectKey'])
    .where('usedDate', '<', ctx.now() - ttlDays * DAY_MS)
    .execute();
  let removed = 0;
  for (const row of rows) {
    // a cache used since it was selected has a newer `usedDate`: keep it
    const gone = await ctx.db
      .deleteFrom('jobCaches')
      .where('id', '=', row.id)
      .where('usedDate', '<', ctx.now() - ttlDays * DAY_MS)
      .executeTakeFirst();
    if (Number(gone.numDeletedRows) === 0) continue;
    await store.delete(row.objectKey);
    removed++;
  }
  return removed;
}

/**
 * Deletes the cache archives in the bucket that no `job_caches` row names and that were written
 * before `before` (epoch ms; a save in flight has uploaded its archive but not recorded it yet,
 * so only archives older than any save takes go): what a process that died between the upload
 * and the row left. Resolves their keys.
 */
export async function removeUnrecordedCacheArchives(ctx: Context, before: number): Promise<string[]> {
  const store = storeOf(ctx);
  const removed: string[] = [];
  for await (const object of store.list(JOB_CACHES_PREFIX)) {
    if (object.lastModified >= before) continue;
    const row = await ctx.db.selectFrom('jobCaches').select('id').where('objectKey', '=', object.key).executeTakeFirst();
    if (row) continue;
    await store.delete(object.key);
    removed.push(object.key);
  }
  return removed;
}

/** The caches of the server's own jobs when they are kept in the bucket. */
export function storedJobCaches(ctx: Context): JobCacheStore {
  const maxBytes = ctx.config.jobCacheBytes;
  return {
    maxBytes,
    async restore(projectId, key, into) {
      const opened = await openStoredCache(ctx, projectId, key);
      if (opened === null) return false;
      await extractTree(opened.stream, into);
      return true;
    },
    async save(projectId, key, from) {
      try {
        return await saveStoredCache(ctx, projectId, key, packTree(from, maxBytes));
      } catch (error) {
        if (error instanceof CacheTooLarge || (error instanceof PayloadTooLarge && error.code === JOB_CACHE_TOO_LARGE)) return null;
        throw error;
      }
    },
    evictUnused: (ttlDays) => evictUnusedJobCaches(ctx, ttlDays),
  };
}
