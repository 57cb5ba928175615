/**
 * Refs read straight from a bare repository's files backend, without starting git
 * (docs/architecture.md#git-refs-without-git): a loose ref is the file `<repo>/<refname>` holding the
 * object's hex id, the others are lines `<id> <refname>` of `<repo>/packed-refs`, and a loose
 * ref wins over a packed one (gitrepository-layout(5), git-pack-refs(1)). Loose refs are read
 * before `packed-refs`, the order git's own reader keeps: `pack-refs` writes `packed-refs`
 * before it removes the loose files, and a deletion rewrites `packed-refs` before it removes
 * the loose file, so a read never misses a ref that exists throughout it.
 *
 * Starting git costs a fork of the server and a wait for its exec on the main thread, more than
 * the whole read of a few refs. Whatever this reader is not sure to read as git does — a
 * symbolic or malformed loose ref, a name git would refuse, a symbolic link, a line of
 * `packed-refs` it does not know, more than {@link MAX_LOOSE_REFS} loose refs (git walks many
 * faster) — answers `undefined`, and the caller asks git. One difference is deliberate: a ref
 * whose object is missing (a corrupt repository) is listed, where `for-each-ref` leaves it out.
 */
import { constants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { LRUCache } from 'lru-cache';

/** Past this many loose refs under the prefixes read, git lists them faster than this reader. */
export const MAX_LOOSE_REFS = 256;

/** A loose ref's whole content: a full hex object id (SHA-1 or SHA-256) and a newline. */
const LOOSE_REF = /^([0-9a-f]{40}|[0-9a-f]{64})\n$/;
/** Characters git never allows in a ref name (git-check-ref-format(1)). */
const FORBIDDEN = /[\x00-\x20\x7f~^:?*[\\]/;

/** Whether git refuses `name` as a ref name (git-check-ref-format(1)): no ref can have it. */
function refused(name: string): boolean {
  if (name.endsWith('/') || name.endsWith('.') || name.includes('..') || name.includes('@{') || FORBIDDEN.test(name)) return true;
  return name.split('/').some((part) => part.length === 0 || part.startsWith('.') || part.endsWith('.lock'));
}

/**
 * Whether `name` is a full ref name under `refs/` that git accepts and this reader reads as
 * git does: U+FFFD (a file name that is not UTF-8) is left to git.
 */
function wellFormed(name: string): boolean {
  return name.startsWith('refs/') && !refused(name) && !name.includes('\ufffd');
}

/** Parsed `packed-refs` files by path, kept while their stat says they are the same file. */
const packedCache = new LRUCache<string, { stamp: string; refs: Map<string, string> }>({
  maxSize: 16 * 1024 * 1024,
  sizeCalculation: (entry) => 64 + entry.refs.size * 160,
});
/**
 * A `packed-refs` file changed less than this long ago is read again: its stat alone cannot
 * tell two writes within one tick of the file system's clock apart.
 */
const RACY_MS = 2000;

/**
 * The refs of `<repo>/packed-refs`: full name → object id; empty when there is none.
 * @returns undefined for a line this reader does not know.
 */
async function packedRefs(repo: string): Promise<Map<string, string> | undefined> {
  const file = path.join(repo, 'packed-refs');
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') return undefined;
    throw error;
  }
  try {
    const stat = await handle.stat({ bigint: true });
    const stamp = `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
    const cached = packedCache.get(file);
    if (cached?.stamp === stamp) return cached.refs;
    const refs = new Map<string, string>();
    for (const line of (await handle.readFile('utf8')).split('\n')) {
      if (line === '' || line.startsWith('#') || /^\^[0-9a-f]+$/.test(line)) continue;
      const space = line.indexOf(' ');
      const id = line.slice(0, space);
      const name = line.slice(space + 1);
      if (space < 0 || !/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(id) || !wellFormed(name)) return undefined;
      refs.set(name, id);
    }
    if (Date.now() - Number(stat.mtimeNs / 1_000_000n) > RACY_MS) packedCache.set(file, { stamp, refs });
    return refs;
  } finally {
    await handle.close();
  }
}

/**
 * The text of the file `<repo>/<name>`, not followed if it is a symbolic link.
 * @returns null when there is no such file (or a directory of that name, or the name is too long
 *   for the file system), undefined for a symbolic link.
 */
async function refFile(repo: string, name: string): Promise<string | null | undefined> {
  try {
    const handle = await fs.open(path.join(repo, name), constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      return await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // a name too long for the file system cannot be a loose ref: git could not have written it
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR' || code === 'ENAMETOOLONG') return null;
    if (code === 'ELOOP') return undefined;
    throw error;
  }
}

/**
 * A loose ref's object id.
 * @returns null when there is no such file, undefined when the file is not a plain ref
 *   (symbolic, malformed, a symbolic link).
 */
async function looseRef(repo: string, name: string): Promise<string | null | undefined> {
  const text = await refFile(repo, name);
  return text === null ? null : text === undefined ? undefined : LOOSE_REF.exec(text)?.[1];
}

/**
 * The names of the loose refs under directory `dir` (a ref name prefix ending in `/`), at most
 * `limit`: lock files are skipped, as git skips them.
 * @returns undefined past `limit` or on a symbolic link or other special file.
 */
async function looseNames(repo: string, dir: string, limit: number): Promise<string[] | undefined> {
  let entries: import('node:fs').Dirent[];
  try {
    entries = await fs.readdir(path.join(repo, dir), { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ENAMETOOLONG') return [];
    throw error;
  }
  const names: string[] = [];
  for (const entry of entries) {
    if (entry.name.startsWith('.') || entry.name.endsWith('.lock')) continue;
    if (entry.isDirectory()) {
      const below = await looseNames(repo, `${dir}${entry.name}/`, limit - names.length);
      if (below === undefined) return undefined;
      names.push(...below);
    } else if (entry.isFile()) names.push(`${dir}${entry.name}`);
    else return undefined;
    if (names.length > limit) return undefined;
  }
  return names;
}

/**
 * Whether `<repo>/HEAD` is a file: a missing or half-removed repository is left to git, whose
 * error says so, instead of answering that it has no refs.
 */
async function hasHead(repo: string): Promise<boolean> {
  try {
    return (await fs.lstat(path.join(repo, 'HEAD'))).isFile();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return false;
    throw error;
  }
}

/** Orders ref names as git does: by their bytes (UTF-8), which is code point order. */
function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * The refs under `prefixes` (each a prefix ending in `/`, like `refs/heads/`), as `git
 * for-each-ref <prefixes>` lists them: full name → object id, in git's name order.
 *
 * @param repo absolute path of a bare repository.
 * @returns undefined when git must be asked (see the module comment).
 * @throws a file system error other than a missing file.
 */
export async function readRefs(repo: string, prefixes: readonly string[]): Promise<Map<string, string> | undefined> {
  if (!prefixes.every((prefix) => prefix.endsWith('/') && (prefix === 'refs/' || wellFormed(prefix.slice(0, -1))))) return undefined;
  if (!(await hasHead(repo))) return undefined;
  const loose: string[] = [];
  for (const prefix of prefixes) {
    const names = await looseNames(repo, prefix, MAX_LOOSE_REFS - loose.length);
    if (names === undefined) return undefined;
    loose.push(...names);
  }
  const ids = await Promise.all(loose.map((name) => (wellFormed(name) ? looseRef(repo, name) : undefined)));
  if (ids.includes(undefined)) return undefined;
  const packed = await packedRefs(repo);
  if (packed === undefined) return undefined;
  const found = new Map<string, string>();
  for (const [name, id] of packed) if (prefixes.some((prefix) => name.startsWith(prefix))) found.set(name, id);
  loose.forEach((name, i) => {
    // a loose file gone since the directory was read was removed or packed: packed-refs, read after, knows
    if (ids[i] !== null) found.set(name, ids[i]!);
  });
  return new Map([...found].sort(([a], [b]) => byBytes(a, b)));
}

/**
 * The object id a full ref name points to (`refs/heads/main`).
 *
 * @param repo absolute path of a bare repository.
 * @returns null when the ref does not exist (a name git refuses names none), undefined when
 *   git must be asked.
 * @throws a file system error other than a missing file.
 */
export async function readRef(repo: string, name: string): Promise<string | null | undefined> {
  if (name.startsWith('refs/') && refused(name)) return (await hasHead(repo)) ? null : undefined;
  if (!wellFormed(name)) return undefined;
  const loose = await looseRef(repo, name);
  if (loose !== null) return loose;
  const packed = await packedRefs(repo);
  if (packed === undefined) return undefined;
  return packed.get(name) ?? ((await hasHead(repo)) ? null : undefined);
}

/**
 * The ref HEAD names, when HEAD is symbolic (`ref: refs/heads/main`).
 *
 * @param repo absolute path of a bare repository.
 * @returns the full ref name (which may not exist: an unborn branch), null when HEAD is
 *   detached, undefined when git must be asked.
 * @throws a file system error other than a missing file.
 */
export async function readHead(repo: string): Promise<string | null | undefined> {
  const text = await refFile(repo, 'HEAD');
  if (text === null || text === undefined) return undefined;
  if (LOOSE_REF.test(text)) return null;
  const target = /^ref: (refs\/[^\n]+)\n$/.exec(text)?.[1];
  return target !== undefined && wellFormed(target) ? target : undefined;
}
