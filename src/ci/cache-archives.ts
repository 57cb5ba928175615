/**
 * Job caches as tar archives (docs/compatibility.md#builds-caches "In object storage"): how a
 * cache's tree travels to and from an S3-compatible bucket, through `tar-stream`, streamed both
 * ways.
 *
 * Packing reads a tree the job wrote, as root, by the rules of src/ci/job-directory.ts: only when
 * no process of the job runs, walking by directory entry type, never following a link (files are
 * opened with `O_NOFOLLOW` and checked with `fstat`). Directories, regular files and relative
 * links that stay inside the tree are packed; links whose target is absolute or leaves the tree,
 * hard links (packed as the files they are), FIFOs, sockets and devices are left out.
 *
 * Extraction refuses, before writing anything outside `into`, an archive that a Gitloom packer
 * would not have made: an absolute name, a `.`, `..` or empty segment, an entry whose parent is
 * not a directory the extraction made itself (so no write ever goes through a link), a duplicate,
 * a link whose target is absolute or leaves the tree, a hard link, a device or a FIFO. What it
 * extracted is removed then.
 */
import { constants } from 'node:fs';
import { mkdir, open, readdir, readlink, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar-stream';

/** A cache's archive grew past its bound while it was packed. */
export class CacheTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`Cache archive is larger than ${maxBytes} bytes`);
  }
}

/** An archive {@link extractTree} refuses. */
export class CacheArchiveRefused extends Error {}

/**
 * Packs the tree `from` (a directory no process of the job can change any more) as a tar stream
 * of directories, regular files and inside links (see the module's docs), names relative to
 * `from`.
 *
 * @returns the archive's bytes, produced as they are consumed.
 * @throws (while iterated) CacheTooLarge once the archive passes `maxBytes` bytes; Error for a
 *   file that cannot be read.
 */
export async function* packTree(from: string, maxBytes: number): AsyncGenerator<Uint8Array> {
  const pack = tar.pack();
  const fill = async (): Promise<void> => {
    await packDirectory(pack, from, '');
    pack.finalize();
  };
  fill().catch((error: unknown) => pack.destroy(error as Error));
  let total = 0;
  try {
    for await (const chunk of pack as AsyncIterable<Uint8Array>) {
      total += chunk.length;
      if (total > maxBytes) throw new CacheTooLarge(maxBytes);
      yield chunk;
    }
  } finally {
    pack.destroy();
  }
}

/** Adds the entries below `dir` (named `prefix…` in the archive) to `pack`, depth first. */
async function packDirectory(pack: tar.Pack, dir: string, prefix: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const source = path.join(dir, entry.name);
    const name = `${prefix}${entry.name}`;
    if (entry.isDirectory()) {
      await addEntry(pack, { name: `${name}/`, type: 'directory', mode: 0o755 });
      await packDirectory(pack, source, `${name}/`);
    } else if (entry.isSymbolicLink()) {
      const target = await readlink(source);
      if (staysInside(name, target)) await addEntry(pack, { name, type: 'symlink', linkname: target, mode: 0o777 });
    } else if (entry.isFile()) {
      await packFile(pack, source, name);
    }
  }
}

/** Adds one regular file, opened without following a link; a file that is not regular once opened is left out. */
async function packFile(pack: tar.Pack, source: string, name: string): Promise<void> {
  const handle = await open(source, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (!info.isFile()) return;
    let sink: NodeJS.WritableStream | null = null;
    const written = new Promise<void>((resolve, reject) => {
      const header = { name, type: 'file', size: info.size, mode: info.mode & 0o755, mtime: info.mtime } as const;
      // a tar-stream entry is a streamx Writable, which Node's pipeline drives as its own
      sink = pack.entry(header, (error) => (error ? reject(error) : resolve())) as unknown as NodeJS.WritableStream;
    });
    await Promise.all([pipeline(handle.createReadStream({ autoClose: false, start: 0, end: Math.max(0, info.size - 1) }), sink!), written]);
  } finally {
    await handle.close();
  }
}

/** Adds an entry without content. */
function addEntry(pack: tar.Pack, header: Partial<tar.Header> & { name: string }): Promise<void> {
  return new Promise((resolve, reject) => pack.entry(header, (error) => (error ? reject(error) : resolve())));
}

/** Whether link `name` (a relative path in the tree) pointing at `target` resolves inside the tree. */
function staysInside(name: string, target: string): boolean {
  if (target === '' || target.includes('\0') || path.posix.isAbsolute(target)) return false;
  const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(name), target));
  return resolved !== '..' && !resolved.startsWith('../');
}

/**
 * Extracts the tar archive `source` into `into` (which must not exist; made 0700, as its
 * directories; files keep their mode's `0755` bits), by the rules of the module's docs.
 *
 * @throws CacheArchiveRefused for an entry it refuses (`into` removed); what reading `source` or
 *   writing throws (`into` removed).
 */
export async function extractTree(source: Readable, into: string): Promise<void> {
  await mkdir(into, { mode: 0o700 });
  const extract = tar.extract();
  const feeding = pipeline(source, extract as unknown as NodeJS.WritableStream);
  feeding.catch(() => {}); // its failure is the loop's, below
  const made = new Set<string>(['']);
  try {
    for await (const entry of extract) {
      await extractEntry(entry as unknown as Entry, into, made);
    }
    await feeding;
  } catch (error) {
    source.destroy();
    extract.destroy();
    await rm(into, { recursive: true, force: true });
    throw error;
  }
}

/** An entry of an archive being extracted: its header and content. */
type Entry = Readable & { header: tar.Header };

/** Writes one entry of {@link extractTree}; `made` holds the directories made so far (relative names). */
async function extractEntry(entry: Entry, into: string, made: Set<string>): Promise<void> {
  const { header } = entry;
  const name = header.name.replace(/\/$/, '');
  const refuse = (why: string) => new CacheArchiveRefused(`Cache archive refused: entry ${JSON.stringify(header.name.slice(0, 200))} ${why}`);
  if (name === '' || name.includes('\0') || name.startsWith('/')) throw refuse('has an absolute or empty name');
  const segments = name.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) throw refuse("has an empty, '.' or '..' segment");
  if (!made.has(segments.slice(0, -1).join('/'))) throw refuse('is not inside a directory of the archive');
  const target = path.join(into, ...segments);
  switch (header.type) {
    case 'directory':
      await mkdir(target, { mode: 0o700 });
      made.add(name);
      entry.resume();
      return;
    case 'file':
    case 'contiguous-file': {
      const handle = await open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, (header.mode ?? 0o644) & 0o755);
      await pipeline(entry, handle.createWriteStream());
      return;
    }
    case 'symlink':
      if (!staysInside(name, header.linkname ?? '')) throw refuse('is a link leaving the cache');
      await symlink(header.linkname!, target);
      entry.resume();
      return;
    default:
      throw refuse(`is of a type a cache never holds (${header.type ?? 'unknown'})`);
  }
}
