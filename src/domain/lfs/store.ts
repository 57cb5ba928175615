/**
 * The Git LFS object store on the data dir (docs/compatibility.md#git-lfs,
 * docs/architecture.md#data-layout): each object once, by its SHA-256, at
 * `<data dir>/lfs/<aa>/<bb>/<oid>` (0600 in 0700 directories). An upload is streamed to a temp
 * file under `<data dir>/lfs/tmp`, hashed and counted as it arrives, and renamed into place only
 * when its size and SHA-256 are the ones announced: an object file is always complete and
 * correct, and never held in memory.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { ReadStream } from 'node:fs';
import { type FileHandle, mkdir, open, rename, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { type ByteRange, parseByteRange, writeBatched } from '../../ci/artifacts.js';
import type { Config } from '../../config.js';
import { PayloadTooLarge, UnprocessableEntity } from '../../errors.js';

/** An LFS object id: SHA-256, 64 lower-case hex digits (the spec's `oid` with `hash_algo` sha256). */
export const OID_PATTERN = /^[0-9a-f]{64}$/;

/** Bytes gathered before one `writev`. */
const WRITE_BATCH = 1024 * 1024;

/** The store's root, `<data dir>/lfs`. */
export function lfsRoot(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'lfs');
}

/** Where uploads in flight are written, `<data dir>/lfs/tmp` (start-up recovery removes what a crash left). */
export function lfsTempDir(config: Pick<Config, 'dataDir'>): string {
  return path.join(lfsRoot(config), 'tmp');
}

/**
 * Where an object lives: `<data dir>/lfs/<oid[0..2]>/<oid[2..4]>/<oid>`.
 *
 * @throws UnprocessableEntity when `oid` is no SHA-256 hex id (so no path is ever made of input).
 */
export function objectPath(config: Pick<Config, 'dataDir'>, oid: string): string {
  if (!OID_PATTERN.test(oid)) throw new UnprocessableEntity(`Invalid object id: ${oid.slice(0, 80)}`);
  return path.join(lfsRoot(config), oid.slice(0, 2), oid.slice(2, 4), oid);
}

/** The size of a stored object in bytes, or null when the store does not hold it. */
export async function storedSize(config: Pick<Config, 'dataDir'>, oid: string): Promise<number | null> {
  try {
    return (await stat(objectPath(config, oid))).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Streams `body` into the store as object `oid` of `size` bytes: written to a temp file while
 * hashed and counted, then renamed into place when both match. A body longer than `size` is
 * cut off as it arrives; a shorter one, or one whose SHA-256 is not `oid`, is refused — and in
 * every refusal nothing is kept.
 *
 * @param size the announced size in bytes (at most `maxBytes`).
 * @throws UnprocessableEntity (bad id, wrong size or hash), PayloadTooLarge (over `maxBytes`).
 */
export async function storeObject(config: Pick<Config, 'dataDir'>, oid: string, size: number, body: Readable, maxBytes: number): Promise<void> {
  const target = objectPath(config, oid);
  if (size > maxBytes) throw new PayloadTooLarge(`Object is larger than the limit of ${maxBytes} bytes`);
  const tmpDir = lfsTempDir(config);
  await mkdir(tmpDir, { recursive: true, mode: 0o700 });
  const tmp = path.join(tmpDir, randomUUID());
  const handle = await open(tmp, 'wx', 0o600);
  let isOpen = true;
  try {
    const digest = await hashInto(handle, body, size);
    isOpen = false;
    await handle.close();
    if (digest !== oid) throw new UnprocessableEntity(`Content does not match the object id ${oid} (its SHA-256 is ${digest})`);
    await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    await rename(tmp, target);
  } catch (error) {
    if (isOpen) await handle.close();
    await rm(tmp, { force: true });
    throw error;
  }
}

/** Writes `body` to `handle` while hashing it; returns the hex SHA-256. Refuses any length but `size`. */
async function hashInto(handle: FileHandle, body: Readable, size: number): Promise<string> {
  const hash = createHash('sha256');
  const length = await writeBatched(handle, body.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>, (chunk, total) => {
    if (total > size) throw new UnprocessableEntity(`Content is longer than the announced size of ${size} bytes`);
    hash.update(chunk);
  });
  if (length !== size) throw new UnprocessableEntity(`Content is ${length} bytes, not the announced ${size}`);
  return hash.digest('hex');
}

/** A stored object opened for reading. */
export interface OpenedObject {
  /** The bytes (of `range`, when one was asked). The caller consumes or destroys it. */
  stream: ReadStream;
  /** The whole object's size in bytes. */
  size: number;
  /** The bytes in `stream`. */
  length: number;
  /** The served range (inclusive offsets), or null for the whole object. */
  range: ByteRange | null;
}

/**
 * Opens a stored object for streaming — whole, or the single byte range of an HTTP `Range`
 * header (RFC 9110 §14: how git-lfs resumes an interrupted download) — or null when the store
 * does not hold it.
 *
 * @throws UnprocessableEntity for a bad id; RangeNotSatisfiable when the range starts past the end.
 */
export async function openObject(config: Pick<Config, 'dataDir'>, oid: string, rangeHeader?: string): Promise<OpenedObject | null> {
  const file = objectPath(config, oid);
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    const range = parseByteRange(rangeHeader, size);
    const stream = handle.createReadStream({ highWaterMark: WRITE_BATCH, ...(range && { start: range.start, end: range.end }) });
    return { stream, size, length: range ? range.end - range.start + 1 : size, range };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Removes a stored object's file (absent already: nothing to do). */
export async function removeObject(config: Pick<Config, 'dataDir'>, oid: string): Promise<void> {
  try {
    await unlink(objectPath(config, oid));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
