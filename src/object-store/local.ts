/**
 * The object store on the data dir (docs/architecture.md#object-storage, the default): object
 * `key` is the file `<data dir>/<key>` (0600 in 0700 directories, src/data-dir.ts). An upload
 * is streamed into a temp file beside its target (`.gitloom-upload-<owner>-<uuid>`, named
 * after the process writing it (src/process-identity.ts), hidden from listings, removed by
 * recovery once that process is gone) and renamed into place once its
 * checks passed, so a file under its key is always whole.
 */
import type { Dirent } from 'node:fs';
import { lstat, mkdir, open, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { UPLOAD_PREFIX, writeBatched } from '../ci/artifacts.js';
import { ownedName } from '../process-identity.js';
import { Conflict } from '../errors.js';
import { checkKey } from './keys.js';
import type { ByteRange, ListedObject, ObjectInfo, ObjectStore, OpenedObject, PutChecks } from './types.js';

/** Chunk size of object read streams: large chunks keep transfers near disk speed. */
const STREAM_CHUNK = 1024 * 1024;

const isMissing = (error: unknown): boolean => ['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '');

/** The data-dir object store rooted at `root` (the data dir). */
export class LocalObjectStore implements ObjectStore {
  readonly kind = 'local' as const;
  readonly location: string;

  constructor(private readonly root: string) {
    this.location = root;
  }

  /** The file of `key`. @throws Error for a malformed key. */
  pathOf(key: string): string {
    return path.join(this.root, ...checkKey(key).split('/'));
  }

  async put(key: string, body: AsyncIterable<Uint8Array>, checks: PutChecks = {}): Promise<{ size: number }> {
    const target = this.pathOf(key);
    const dir = path.dirname(target);
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' || code === 'ENOTDIR') throw new Conflict(`A parent of '${key}' is a file`);
      throw error;
    }
    const existing = await lstat(target).catch((error: unknown) => {
      if (isMissing(error)) return null;
      throw error;
    });
    if (existing?.isDirectory()) throw new Conflict(`'${key}' is a directory`);
    const tmp = path.join(dir, ownedName(UPLOAD_PREFIX));
    const handle = await open(tmp, 'wx', 0o600);
    let isOpen = true;
    try {
      const size = await writeBatched(handle, body, checks.inspect);
      checks.verify?.(size);
      isOpen = false;
      await handle.close();
      await rename(tmp, target);
      return { size };
    } catch (error) {
      if (isOpen) await handle.close();
      await rm(tmp, { force: true });
      throw error;
    }
  }

  async get(key: string, range?: ByteRange | null): Promise<OpenedObject | null> {
    let handle;
    try {
      handle = await open(this.pathOf(key), 'r');
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
    try {
      const st = await handle.stat();
      if (!st.isFile()) {
        await handle.close();
        return null;
      }
      const stream = handle.createReadStream({ highWaterMark: STREAM_CHUNK, ...(range && { start: range.start, end: range.end }) });
      const length = range ? range.end - range.start + 1 : st.size;
      return { stream, size: st.size, lastModified: Math.trunc(st.mtimeMs), length, range: range ?? null };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async stat(key: string): Promise<ObjectInfo | null> {
    try {
      const st = await stat(this.pathOf(key));
      return st.isFile() ? { size: st.size, lastModified: Math.trunc(st.mtimeMs) } : null;
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await unlink(this.pathOf(key));
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
  }

  async deletePrefix(prefix: string): Promise<void> {
    await rm(this.pathOf(checkPrefix(prefix)), { recursive: true, force: true });
  }

  async *list(prefix: string): AsyncIterable<ListedObject> {
    const start = prefix === '' ? this.root : this.pathOf(checkPrefix(prefix));
    yield* this.walk(start, prefix);
  }

  /** Regular files below `dir` (links not followed, upload temp files left out). */
  private async *walk(dir: string, keyPrefix: string): AsyncIterable<ListedObject> {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      if (isMissing(error)) return;
      throw error;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      const key = `${keyPrefix}${entry.name}`;
      if (entry.isDirectory()) {
        yield* this.walk(full, `${key}/`);
      } else if (entry.isFile() && !entry.name.startsWith(UPLOAD_PREFIX)) {
        const st = await stat(full).catch((error: unknown) => {
          if (isMissing(error)) return null;
          throw error;
        });
        if (st) yield { key, size: st.size, lastModified: Math.trunc(st.mtimeMs) };
      }
    }
  }
}

/** `prefix` without its final `/`, checked as a key. */
function checkPrefix(prefix: string): string {
  if (!prefix.endsWith('/')) throw new Error(`Object key prefix must end with '/': ${prefix}`);
  return checkKey(prefix.slice(0, -1));
}
