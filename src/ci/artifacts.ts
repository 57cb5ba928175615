/**
 * Build artifact storage under `<build dir>/artifacts` (docs/compatibility.md#builds-artifacts, docs/compatibility.md#gitloom-differs-improved-behaviour):
 * safe path resolution, `DirectoryInfo`/`FileInfo` JSON shapes, streamed upload (temp file +
 * rename), deletion and ranged download.
 *
 * Paths are user input (`{path}` of `/~api/artifacts/{buildId}/…`). The HTTP layer decodes
 * percent-encoding first (so `%2e%2e` arrives here as `..` and is refused). Rules:
 * - leading `/` are stripped (as OneDev does), so `/a/b` means `a/b`; empty and `.` segments
 *   are ignored; an empty result means the artifacts root;
 * - a `..` segment or a NUL byte → BadRequest `Invalid artifact path` (`a..b.txt` is fine);
 * - a segment longer than 255 bytes (the file name limit of common file systems) → BadRequest;
 * - symbolic links are followed only while they stay inside the root; one pointing outside →
 *   BadRequest.
 *
 * The artifacts directory lies in the private data dir and belongs to the server: no job can
 * reach it (its files arrive through the API or are copied from a workspace by
 * src/ci/publish-artifacts.ts), so the root-side file operations here never touch a path a job
 * can write (docs/compatibility.md#gitloom-differs-untrusted-builds).
 */
import { lstat, mkdir, open, readdir, readlink, realpath, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { ownedName } from '../process-identity.js';
import { BadRequest, Conflict, NotFound, PayloadTooLarge, RangeNotSatisfiable } from '../errors.js';
import type { ErrorCode } from '../error-codes.js';
import { mediaTypeOf } from './media-types.js';

/** `{"@type":"DirectoryInfo",…}`; the root has `path: null`; listed child directories have `children: null`. */
export interface DirectoryInfo {
  readonly '@type': 'DirectoryInfo';
  readonly path: string | null;
  /** Epoch milliseconds. */
  readonly lastModified: number;
  readonly children: ArtifactInfo[] | null;
}

/** `{"@type":"FileInfo",…}`; `mediaType` is null for files listed as children. */
export interface FileInfo {
  readonly '@type': 'FileInfo';
  readonly path: string;
  /** Epoch milliseconds. */
  readonly lastModified: number;
  /** Bytes. */
  readonly length: number;
  readonly mediaType: string | null;
}

/** Either artifact info shape. */
export type ArtifactInfo = DirectoryInfo | FileInfo;

/** Names never listed: OneDev's internal files and Gitloom's in-progress uploads. */
const HIDDEN = new Set(['.onedev-directory-version', '.onedev-share-test']);
/** Chunk size of artifact file streams: large chunks keep transfers near disk speed. */
const STREAM_CHUNK = 1024 * 1024;
/** Name prefix of an artifact upload's temp file (removed by start-up recovery when left behind). */
export const UPLOAD_PREFIX = '.gitloom-upload-';
const isHidden = (name: string): boolean => HIDDEN.has(name) || name.startsWith(UPLOAD_PREFIX);

/** Longest file name of common file systems (ext4, xfs, btrfs), in bytes. */
const MAX_SEGMENT_BYTES = 255;

const invalid = (): BadRequest => new BadRequest('Invalid artifact path');

/**
 * Normalizes a user artifact path (see the module rules).
 *
 * @returns segments joined by `/`; `''` for the root.
 * @throws BadRequest for a `..` segment, a NUL byte or a segment over 255 bytes.
 * @example normalizeArtifactPath('/dist//a..b.txt') === 'dist/a..b.txt'
 */
export function normalizeArtifactPath(userPath: string): string {
  if (userPath.includes('\0')) throw invalid();
  const segments = userPath.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw invalid();
  if (segments.some((s) => Buffer.byteLength(s) > MAX_SEGMENT_BYTES)) {
    throw new BadRequest(`Invalid artifact path: a segment is longer than ${MAX_SEGMENT_BYTES} bytes`);
  }
  return segments.join('/');
}

const isInside = (root: string, p: string): boolean => p === root || p.startsWith(root + path.sep);

async function realRoot(root: string): Promise<string | null> {
  try {
    return await realpath(root);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/**
 * Resolves a user path to an absolute path inside `root`, following symbolic links only while
 * they stay inside. The path need not exist.
 *
 * @param root the artifacts directory (`<build dir>/artifacts`); may not exist yet.
 * @param userPath the path from the request (already percent-decoded).
 * @returns an absolute path (based on the real path of `root` when it exists).
 * @throws BadRequest `Invalid artifact path` for `..` segments, NUL bytes or a symlink leading outside.
 */
export async function resolveArtifactPath(root: string, userPath: string): Promise<string> {
  const rel = normalizeArtifactPath(userPath);
  const base = await realRoot(root);
  if (base === null) return path.join(path.resolve(root), ...rel.split('/').filter(Boolean));
  let current = base;
  const segments = rel === '' ? [] : rel.split('/');
  for (let i = 0; i < segments.length; i++) {
    const next = path.join(current, segments[i]);
    let st;
    try {
      st = await lstat(next);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return path.join(next, ...segments.slice(i + 1));
      throw e;
    }
    if (st.isSymbolicLink()) {
      let target: string;
      try {
        target = await realpath(next);
      } catch {
        // Dangling link: judge it by where it points.
        target = path.resolve(path.dirname(next), await readlink(next));
      }
      if (!isInside(base, target)) throw new BadRequest('Invalid artifact path: symbolic link points outside the artifacts directory');
      current = target;
    } else {
      current = next;
    }
  }
  return current;
}

/**
 * Info about an artifact path (docs/compatibility.md#builds-artifacts ArtifactInfo): a file gives `FileInfo`
 * with its media type; a directory gives `DirectoryInfo` listing one level of children
 * (directories first, then files, each by path; child paths relative to the root; internal
 * files hidden; symlinks leading outside the root omitted). The root has `path: null`.
 *
 * @returns null when the path (or the artifacts dir itself) does not exist — the API answers 204.
 * @throws BadRequest for an invalid path.
 */
export async function artifactInfo(root: string, userPath: string): Promise<ArtifactInfo | null> {
  const rel = normalizeArtifactPath(userPath);
  const target = await resolveArtifactPath(root, rel);
  const st = await stat(target).catch(() => null);
  if (!st) return null;
  if (st.isFile()) {
    if (rel === '') return null;
    return { '@type': 'FileInfo', path: rel, lastModified: Math.trunc(st.mtimeMs), length: st.size, mediaType: mediaTypeOf(rel) };
  }
  if (!st.isDirectory()) return null;
  const base = await realpath(root);
  const dirs: DirectoryInfo[] = [];
  const files: FileInfo[] = [];
  for (const name of await readdir(target)) {
    if (isHidden(name)) continue;
    const childAbs = path.join(target, name);
    const childReal = await realpath(childAbs).catch(() => null);
    if (!childReal || !isInside(base, childReal)) continue;
    const cst = await stat(childReal).catch(() => null);
    if (!cst) continue;
    const childPath = rel === '' ? name : `${rel}/${name}`;
    if (cst.isDirectory()) dirs.push({ '@type': 'DirectoryInfo', path: childPath, lastModified: Math.trunc(cst.mtimeMs), children: null });
    else if (cst.isFile()) files.push({ '@type': 'FileInfo', path: childPath, lastModified: Math.trunc(cst.mtimeMs), length: cst.size, mediaType: null });
  }
  const byPath = (a: { path: string | null }, b: { path: string | null }): number =>
    (a.path ?? '') < (b.path ?? '') ? -1 : (a.path ?? '') > (b.path ?? '') ? 1 : 0;
  dirs.sort(byPath);
  files.sort(byPath);
  return { '@type': 'DirectoryInfo', path: rel === '' ? null : rel, lastModified: Math.trunc(st.mtimeMs), children: [...dirs, ...files] };
}

/** Stable code of an artifact over the per-file limit (413). */
export const ARTIFACT_TOO_LARGE = 'GITLOOM_ERR_ARTIFACT_TOO_LARGE' satisfies ErrorCode;

/** A size for messages: `1048576` → `1 MiB`, `1500` → `1500 bytes`. */
export function describeBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / 1024 / 1024} MiB` : `${bytes} bytes`;
}

/**
 * The refusal of an artifact file over `maxBytes`: 413 with code {@link ARTIFACT_TOO_LARGE}.
 *
 * @example artifactTooLarge(1048576).message === 'Artifact file is larger than the limit of 1 MiB'
 */
export function artifactTooLarge(maxBytes: number): PayloadTooLarge {
  return new PayloadTooLarge(`Artifact file is larger than the limit of ${describeBytes(maxBytes)}`, { code: ARTIFACT_TOO_LARGE });
}

/**
 * Stores an uploaded artifact: streams `source` into a temp file next to the target, then
 * renames it over the target (readers never see a partial file). Parent directories are
 * created; an existing file is replaced. Never buffers the whole body. Bytes are counted as
 * they arrive: past `maxBytes` reading stops (a Readable `source` is left undestroyed, so an
 * HTTP request can still be answered) and the temp file is removed.
 *
 * @param source the request body stream.
 * @param options.maxBytes optional size limit in bytes.
 * @returns the number of bytes written.
 * @throws BadRequest for an empty or invalid path; Conflict when the path is a directory or a
 *   parent is a file; PayloadTooLarge ({@link artifactTooLarge}) when `maxBytes` is exceeded
 *   (nothing is kept).
 */
export async function writeArtifact(
  root: string,
  userPath: string,
  source: Readable | AsyncIterable<Uint8Array>,
  options: { maxBytes?: number } = {},
): Promise<{ length: number }> {
  const rel = normalizeArtifactPath(userPath);
  if (rel === '') throw new BadRequest('Artifact path is required');
  await mkdir(root, { recursive: true });
  const target = await resolveArtifactPath(root, rel);
  const dir = path.dirname(target);
  try {
    await mkdir(dir, { recursive: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ENOTDIR') throw new Conflict(`A parent of artifact '${rel}' is a file`);
    throw e;
  }
  // The parent now exists: re-check it after symlink resolution.
  const base = await realpath(root);
  if (!isInside(base, await realpath(dir))) throw invalid();
  const existing = await lstat(target).catch(() => null);
  if (existing?.isDirectory()) throw new Conflict(`Artifact '${rel}' is a directory`);
  const tmp = path.join(dir, ownedName(UPLOAD_PREFIX));
  let length = 0;
  const handle = await open(tmp, 'wx');
  try {
    const chunks = source instanceof Readable ? source.iterator({ destroyOnReturn: false }) : source;
    length = await writeBatched(handle, chunks as AsyncIterable<Uint8Array>, (_chunk, total) => {
      if (options.maxBytes !== undefined && total > options.maxBytes) throw artifactTooLarge(options.maxBytes);
    });
    await handle.close();
    await rename(tmp, target);
  } catch (e) {
    await handle.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw e;
  }
  return { length };
}

/**
 * Writes every chunk of `source` to `handle` at its position, for streamed uploads: chunks are
 * gathered to {@link STREAM_CHUNK} and written with one `writev` while the next ones are read —
 * one system call per MiB instead of one per socket read, at most about two batches held.
 *
 * @param inspect sees each chunk, and the byte count including it, before the chunk is written
 *   (to count, hash or refuse: what it throws stops the write and is thrown).
 * @returns the number of bytes written.
 */
export async function writeBatched(
  handle: FileHandle,
  source: AsyncIterable<Uint8Array>,
  inspect?: (chunk: Uint8Array, total: number) => void,
): Promise<number> {
  let total = 0;
  let batch: Uint8Array[] = [];
  let batchBytes = 0;
  let writing: Promise<void> = Promise.resolve();
  const flush = async () => {
    const buffers = batch;
    batch = [];
    batchBytes = 0;
    await writing;
    writing = writeFully(handle, buffers);
    // a failed write is thrown by the next flush's await; until then it must not count as unhandled
    writing.catch(() => undefined);
  };
  for await (const chunk of source) {
    total += chunk.length;
    inspect?.(chunk, total);
    batch.push(chunk);
    batchBytes += chunk.length;
    if (batchBytes >= STREAM_CHUNK) await flush();
  }
  await flush();
  await writing;
  return total;
}

/** Writes every byte of `buffers` at the file position (writev may write less than asked). */
async function writeFully(handle: FileHandle, buffers: Uint8Array[]): Promise<void> {
  let pending = buffers;
  while (pending.length > 0) {
    let { bytesWritten } = await handle.writev(pending);
    let i = 0;
    while (i < pending.length && bytesWritten >= pending[i].length) bytesWritten -= pending[i++].length;
    pending = pending.slice(i);
    if (bytesWritten > 0) pending[0] = pending[0].subarray(bytesWritten);
  }
}

/**
 * Deletes an artifact. The root (`''`) empties the artifacts directory (no-op when it does not
 * exist); a directory deletes that directory only (docs/compatibility.md#gitloom-differs-improved-behaviour); a file or symbolic link
 * deletes that entry (never a link's target).
 *
 * @throws BadRequest for an invalid path; NotFound `Unable to find specified artifact (artifact path: p)`.
 */
export async function deleteArtifact(root: string, userPath: string): Promise<void> {
  const rel = normalizeArtifactPath(userPath);
  if (rel === '') {
    const base = await realRoot(root);
    if (base === null) return;
    for (const name of await readdir(base)) await rm(path.join(base, name), { recursive: true, force: true });
    return;
  }
  const slash = rel.lastIndexOf('/');
  const parent = await resolveArtifactPath(root, slash < 0 ? '' : rel.slice(0, slash));
  const target = path.join(parent, rel.slice(slash + 1));
  const st = await lstat(target).catch(() => null);
  if (!st) throw new NotFound(`Unable to find specified artifact (artifact path: ${rel})`);
  if (st.isDirectory()) await rm(target, { recursive: true, force: true });
  else await unlink(target);
}

/** An inclusive byte range `[start, end]`. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/**
 * Parses a `Range` header for a file of `size` bytes (single ranges only, RFC 9110 §14).
 *
 * @returns the range; null when absent, malformed or multi-range (serve the whole file).
 * @throws RangeNotSatisfiable when the range lies beyond the end of the file.
 * @example parseByteRange('bytes=0-99', 1000) → {start: 0, end: 99}; 'bytes=-10' → the last 10 bytes.
 */
export function parseByteRange(header: string | undefined, size: number): ByteRange | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) throw new RangeNotSatisfiable(size);
    return { start: Math.max(size - suffix, 0), end: size - 1 };
  }
  const start = Number(m[1]);
  let end = m[2] === '' ? size - 1 : Number(m[2]);
  if (m[2] !== '' && end < start) return null;
  if (start >= size) throw new RangeNotSatisfiable(size);
  if (end >= size) end = size - 1;
  return { start, end };
}

/** An opened artifact ready to stream. */
export interface OpenedArtifact {
  /** The bytes (of the range, if one was given). Destroy it if not consumed. */
  readonly stream: Readable;
  /** Whole file size in bytes. */
  readonly size: number;
  /** Bytes in `stream`. */
  readonly length: number;
  /** The served range; null for the whole file. */
  readonly range: ByteRange | null;
  readonly mediaType: string;
  /** Epoch milliseconds. */
  readonly lastModified: number;
}

/**
 * Opens an artifact file for a streamed download.
 *
 * @param range an inclusive byte range (e.g. from {@link parseByteRange}); omitted = whole file.
 * @throws BadRequest for an empty/invalid path or a directory; NotFound when missing;
 *   RangeNotSatisfiable when the range is outside the file.
 */
export async function openArtifact(root: string, userPath: string, range?: ByteRange | null): Promise<OpenedArtifact> {
  const rel = normalizeArtifactPath(userPath);
  if (rel === '') throw new BadRequest('Artifact path is required');
  const target = await resolveArtifactPath(root, rel);
  let handle;
  try {
    handle = await open(target, 'r');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new NotFound(`Artifact not found: ${rel}`);
    throw e;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new BadRequest(`Artifact is not a file: ${rel}`);
    const size = st.size;
    if (range && (range.start < 0 || range.start > range.end || range.start >= size)) throw new RangeNotSatisfiable(size);
    const r = range ? { start: range.start, end: Math.min(range.end, size - 1) } : null;
    const stream = handle.createReadStream({ highWaterMark: STREAM_CHUNK, ...(r && { start: r.start, end: r.end }) });
    return { stream, size, length: r ? r.end - r.start + 1 : size, range: r, mediaType: mediaTypeOf(rel), lastModified: Math.trunc(st.mtimeMs) };
  } catch (e) {
    await handle.close();
    throw e;
  }
}
