/**
 * The Git LFS objects in the object store (docs/compatibility.md#git-lfs,
 * docs/architecture.md#object-storage): each object once, by its SHA-256, under the key
 * `lfs/<aa>/<bb>/<oid>` — in the data dir (`<data dir>/lfs/<aa>/<bb>/<oid>`, 0600 in 0700
 * directories) or in the bucket. An upload is streamed to the store, hashed and counted as it
 * arrives, and becomes visible only when its size and SHA-256 are the ones announced: an object
 * is always complete and correct, and never held in memory.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { parseByteRange } from '../../ci/artifacts.js';
import type { Config } from '../../config.js';
import { PayloadTooLarge, UnprocessableEntity } from '../../errors.js';
import { lfsObjectKey, objectStoreOf, type OpenedObject } from '../../object-store/index.js';

export type { OpenedObject } from '../../object-store/index.js';

/** An LFS object id: SHA-256, 64 lower-case hex digits (the spec's `oid` with `hash_algo` sha256). */
export const OID_PATTERN = /^[0-9a-f]{64}$/;

/** The configuration the store needs. */
type StoreConfig = Pick<Config, 'dataDir' | 'objectStore'>;

/**
 * Where versions before the object store wrote uploads in flight, `<data dir>/lfs/tmp`
 * (start-up recovery removes what a crash left there).
 */
export function lfsTempDir(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'lfs', 'tmp');
}

/**
 * The key of object `oid`.
 *
 * @throws UnprocessableEntity when `oid` is no SHA-256 hex id (so no key is ever made of input).
 */
function objectKey(oid: string): string {
  if (!OID_PATTERN.test(oid)) throw new UnprocessableEntity(`Invalid object id: ${oid.slice(0, 80)}`);
  return lfsObjectKey(oid);
}

/** The size of a stored object in bytes, or null when the store does not hold it. */
export async function storedSize(config: StoreConfig, oid: string): Promise<number | null> {
  return (await objectStoreOf(config).stat(objectKey(oid)))?.size ?? null;
}

/**
 * Streams `body` into the store as object `oid` of `size` bytes, hashed and counted as it
 * arrives; it becomes visible only when both match. A body longer than `size` is cut off as it
 * arrives; a shorter one, or one whose SHA-256 is not `oid`, is refused — and in every refusal
 * nothing is kept. `body` is not destroyed (an HTTP request can still be answered).
 *
 * @param size the announced size in bytes (at most `maxBytes`).
 * @throws UnprocessableEntity (bad id, wrong size or hash), PayloadTooLarge (over `maxBytes`).
 */
export async function storeObject(config: StoreConfig, oid: string, size: number, body: Readable, maxBytes: number): Promise<void> {
  const key = objectKey(oid);
  if (size > maxBytes) throw new PayloadTooLarge(`Object is larger than the limit of ${maxBytes} bytes`);
  const hash = createHash('sha256');
  await objectStoreOf(config).put(key, body.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>, {
    inspect(chunk, total) {
      if (total > size) throw new UnprocessableEntity(`Content is longer than the announced size of ${size} bytes`);
      hash.update(chunk);
    },
    verify(total) {
      if (total !== size) throw new UnprocessableEntity(`Content is ${total} bytes, not the announced ${size}`);
      const digest = hash.digest('hex');
      if (digest !== oid) throw new UnprocessableEntity(`Content does not match the object id ${oid} (its SHA-256 is ${digest})`);
    },
  });
}

/**
 * Opens a stored object for streaming — whole, or the single byte range of an HTTP `Range`
 * header (RFC 9110 §14: how git-lfs resumes an interrupted download) — or null when the store
 * does not hold it.
 *
 * @throws UnprocessableEntity for a bad id; RangeNotSatisfiable when the range starts past the end.
 */
export async function openObject(config: StoreConfig, oid: string, rangeHeader?: string): Promise<OpenedObject | null> {
  const key = objectKey(oid);
  const store = objectStoreOf(config);
  const info = await store.stat(key);
  if (!info) return null;
  return store.get(key, parseByteRange(rangeHeader, info.size));
}

/** The first `max` bytes of a stored object (fewer when it is shorter), or null when the store does not hold it. */
export async function readObjectHead(config: StoreConfig, oid: string, max: number): Promise<Buffer | null> {
  const key = objectKey(oid);
  const store = objectStoreOf(config);
  const info = await store.stat(key);
  if (!info) return null;
  if (info.size === 0 || max <= 0) return Buffer.alloc(0);
  const opened = await store.get(key, { start: 0, end: Math.min(max, info.size) - 1 });
  if (!opened) return null;
  const chunks: Buffer[] = [];
  for await (const chunk of opened.stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).subarray(0, max);
}

/** Removes a stored object (absent already: nothing to do). */
export async function removeObject(config: StoreConfig, oid: string): Promise<void> {
  await objectStoreOf(config).delete(objectKey(oid));
}
