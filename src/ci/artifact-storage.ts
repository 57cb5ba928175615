/**
 * Where a build's artifacts live (docs/compatibility.md#builds-artifacts,
 * docs/architecture.md#object-storage): a directory of the data dir (`<build dir>/artifacts`,
 * the rules of src/ci/artifacts.ts), or the object store's keys below the build's artifacts
 * prefix — the same paths, the same `ArtifactInfo` shapes, the same errors, whichever holds
 * them. In the object store, directories are the `/`-separated prefixes of the paths: one
 * exists while a file below it does, and its date is its newest file's.
 */
import { Readable } from 'node:stream';
import { BadRequest, Conflict, NotFound } from '../errors.js';
import type { ObjectStore } from '../object-store/index.js';
import {
  artifactInfo,
  artifactTooLarge,
  deleteArtifact,
  normalizeArtifactPath,
  openArtifact,
  parseByteRange,
  writeArtifact,
  type ArtifactInfo,
  type DirectoryInfo,
  type FileInfo,
  type OpenedArtifact,
} from './artifacts.js';
import { mediaTypeOf } from './media-types.js';
import { parsePatternSet, patternSetMatches } from './patterns.js';

/** A build's artifacts: the operations of the Artifact API on whichever store holds them. */
export interface ArtifactStorage {
  /**
   * Info about a path: a file's `FileInfo`, or a directory's `DirectoryInfo` listing one level
   * (directories first, then files, each by path).
   *
   * @returns null when nothing is at the path (the API answers 204).
   * @throws BadRequest for an invalid path.
   */
  info(userPath: string): Promise<ArtifactInfo | null>;
  /**
   * Stores a file from `source`, streamed, replacing one of the same path; visible only once
   * whole. `source` (a Readable) is not destroyed when refused.
   *
   * @throws BadRequest (invalid or empty path), Conflict (the path is a directory or a parent a
   *   file), PayloadTooLarge (over `maxBytes`; nothing kept).
   */
  write(userPath: string, source: Readable | AsyncIterable<Uint8Array>, options?: { maxBytes?: number }): Promise<{ length: number }>;
  /**
   * Deletes a file, a directory (that directory only), or everything for the root (`''`).
   *
   * @throws BadRequest (invalid path), NotFound (nothing at a non-root path).
   */
  remove(userPath: string): Promise<void>;
  /**
   * Opens a file for a download: whole, or the single range of an HTTP `Range` header.
   *
   * @throws BadRequest (empty path, a directory), NotFound, RangeNotSatisfiable.
   */
  open(userPath: string, rangeHeader?: string): Promise<OpenedArtifact>;
}

/** The artifacts of the data-dir directory `root` (`<build dir>/artifacts`). */
export function directoryArtifacts(root: string): ArtifactStorage {
  return {
    info: (userPath) => artifactInfo(root, userPath),
    write: (userPath, source, options) => writeArtifact(root, userPath, source, options),
    remove: (userPath) => deleteArtifact(root, userPath),
    async open(userPath, rangeHeader) {
      const first = await openArtifact(root, userPath);
      let range;
      try {
        range = parseByteRange(rangeHeader, first.size);
      } catch (error) {
        first.stream.destroy();
        throw error;
      }
      if (!range) return first;
      first.stream.destroy();
      return openArtifact(root, userPath, range);
    },
  };
}

/** The artifacts stored in `store` below `prefix` (a build's artifacts prefix, ending with `/`). */
export function storedArtifacts(store: ObjectStore, prefix: string): ArtifactStorage {
  const keyOf = (rel: string) => `${prefix}${rel}`;
  /** The files below directory `rel` (`''` for the root), with paths relative to the root. */
  const filesBelow = async function* (rel: string): AsyncIterable<FileInfo> {
    for await (const object of store.list(rel === '' ? prefix : `${keyOf(rel)}/`)) {
      yield { '@type': 'FileInfo', path: object.key.slice(prefix.length), lastModified: object.lastModified, length: object.size, mediaType: null };
    }
  };
  const isDirectory = async (rel: string): Promise<boolean> => {
    for await (const _ of filesBelow(rel)) return true;
    return false;
  };
  return {
    async info(userPath) {
      const rel = normalizeArtifactPath(userPath);
      if (rel !== '') {
        const file = await store.stat(keyOf(rel));
        if (file) return { '@type': 'FileInfo', path: rel, lastModified: file.lastModified, length: file.size, mediaType: mediaTypeOf(rel) };
      }
      const dirs = new Map<string, number>();
      const files: FileInfo[] = [];
      let newest: number | null = null;
      for await (const file of filesBelow(rel)) {
        newest = Math.max(newest ?? 0, file.lastModified);
        const rest = rel === '' ? file.path : file.path.slice(rel.length + 1);
        const slash = rest.indexOf('/');
        if (slash < 0) files.push(file);
        else {
          const dir = rel === '' ? rest.slice(0, slash) : `${rel}/${rest.slice(0, slash)}`;
          dirs.set(dir, Math.max(dirs.get(dir) ?? 0, file.lastModified));
        }
      }
      if (newest === null) return null;
      const byPath = (a: { path: string | null }, b: { path: string | null }): number =>
        (a.path ?? '') < (b.path ?? '') ? -1 : (a.path ?? '') > (b.path ?? '') ? 1 : 0;
      const children: DirectoryInfo[] = [...dirs].map(([path, lastModified]) => ({ '@type': 'DirectoryInfo', path, lastModified, children: null }));
      return {
        '@type': 'DirectoryInfo',
        path: rel === '' ? null : rel,
        lastModified: newest,
        children: [...children.sort(byPath), ...files.sort(byPath)],
      };
    },

    async write(userPath, source, options = {}) {
      const rel = normalizeArtifactPath(userPath);
      if (rel === '') throw new BadRequest('Artifact path is required');
      if (await isDirectory(rel)) throw new Conflict(`Artifact '${rel}' is a directory`);
      const segments = rel.split('/');
      for (let i = 1; i < segments.length; i++) {
        if (await store.stat(keyOf(segments.slice(0, i).join('/')))) throw new Conflict(`A parent of artifact '${rel}' is a file`);
      }
      const chunks = source instanceof Readable ? (source.iterator({ destroyOnReturn: false }) as AsyncIterable<Uint8Array>) : source;
      const { size } = await store.put(keyOf(rel), chunks, {
        inspect(_chunk, total) {
          if (options.maxBytes !== undefined && total > options.maxBytes) throw artifactTooLarge(options.maxBytes);
        },
      });
      return { length: size };
    },

    async remove(userPath) {
      const rel = normalizeArtifactPath(userPath);
      if (rel === '') return store.deletePrefix(prefix);
      if (await store.stat(keyOf(rel))) return store.delete(keyOf(rel));
      if (await isDirectory(rel)) return store.deletePrefix(`${keyOf(rel)}/`);
      throw new NotFound(`Unable to find specified artifact (artifact path: ${rel})`);
    },

    async open(userPath, rangeHeader) {
      const rel = normalizeArtifactPath(userPath);
      if (rel === '') throw new BadRequest('Artifact path is required');
      const info = await store.stat(keyOf(rel));
      if (!info) {
        if (await isDirectory(rel)) throw new BadRequest(`Artifact is not a file: ${rel}`);
        throw new NotFound(`Artifact not found: ${rel}`);
      }
      const range = parseByteRange(rangeHeader, info.size);
      const opened = await store.get(keyOf(rel), range);
      if (!opened) throw new NotFound(`Artifact not found: ${rel}`);
      return { stream: opened.stream, size: opened.size, length: opened.length, range, mediaType: mediaTypeOf(rel), lastModified: opened.lastModified };
    },
  };
}

/**
 * Every file of `storage`, depth-first in the API's order (directories first, then files, by
 * path).
 */
export async function* artifactFiles(storage: ArtifactStorage, dir = ''): AsyncGenerator<FileInfo> {
  const info = await storage.info(dir);
  if (!info || info['@type'] !== 'DirectoryInfo') return;
  for (const child of info.children ?? []) {
    if (child['@type'] === 'DirectoryInfo') yield* artifactFiles(storage, child.path ?? '');
    else yield child;
  }
}

/**
 * The paths of the files of `storage` that match the pattern set `patterns`
 * (docs/compatibility.md#builds-build-spec `JobDependency.artifacts`), in the storage's order.
 */
export async function matchingArtifacts(storage: ArtifactStorage, patterns: string): Promise<string[]> {
  const set = parsePatternSet(patterns);
  const paths: string[] = [];
  for await (const file of artifactFiles(storage)) if (patternSetMatches(set, file.path)) paths.push(file.path);
  return paths;
}

/**
 * Copies the files of `storage` whose paths match the pattern set `patterns` into the directory
 * `dest`, keeping their paths (a dependency's artifacts into a job's workspace,
 * docs/compatibility.md#builds-build-spec `JobDependency.artifacts`), each streamed into a temp
 * file renamed into place (src/ci/artifacts.ts writeArtifact).
 *
 * @returns the number of files copied.
 */
export async function retrieveArtifacts(storage: ArtifactStorage, patterns: string, dest: string): Promise<number> {
  const paths = await matchingArtifacts(storage, patterns);
  for (const file of paths) {
    const opened = await storage.open(file);
    try {
      await writeArtifact(dest, file, opened.stream);
    } finally {
      opened.stream.destroy();
    }
  }
  return paths.length;
}
