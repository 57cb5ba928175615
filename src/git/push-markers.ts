/**
 * Which process's receive-pack may own a push quarantine directory (docs/architecture.md#start-up-recovery).
 * Git names its quarantines itself (`objects/tmp_objdir-incoming-XXXXXX`, `objects/incoming-XXXXXX`
 * before git 2.x) and makes them once receive-pack has started, so the server cannot name them
 * after their owner; instead, before it starts a receive-pack it leaves a marker in the
 * repository — `<repo>/gitloom-pushes/<owner tag>-<uuid>` (src/process-identity.ts) — and
 * removes it once that receive-pack exited. A quarantine directory is born after the marker of
 * the receive-pack that made it, and git removes it itself whenever receive-pack ends but by
 * SIGKILL; so a quarantine is in use only while a marker of a live process, made no later than
 * the directory last changed, lies in its repository. Both times come from the one file system
 * holding the repository, so clocks of different machines never meet.
 */
import { lstat, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ownedName, ownerOf, type OwnerTag } from '../process-identity.js';

/** The directory of the markers in a bare repository. */
export const PUSH_MARKERS_DIR = 'gitloom-pushes';

/** Names of the quarantine directories receive-pack makes in `objects/`. */
export const QUARANTINE = /^(incoming-|tmp_objdir-)/;

/** A marker of one receive-pack in flight; `remove` once it exited. */
export interface PushMarker {
  readonly path: string;
  remove(): Promise<void>;
}

/**
 * Leaves the marker of a receive-pack about to start in bare repository `repo`.
 *
 * @throws Error when the marker cannot be written (the push must not start then).
 */
export async function markPush(repo: string): Promise<PushMarker> {
  const dir = path.join(repo, PUSH_MARKERS_DIR);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, ownedName(''));
  await writeFile(file, '', { flag: 'wx', mode: 0o600 });
  return { path: file, remove: () => rm(file, { force: true }) };
}

/** A file or directory of a repository, and when it last changed (epoch ms, the file system's clock). */
export interface RepositoryEntry {
  readonly path: string;
  readonly mtimeMs: number;
}

/** The markers in bare repository `repo`, with their owners (null for a name that carries none). */
export async function pushMarkers(repo: string): Promise<(RepositoryEntry & { owner: OwnerTag | null })[]> {
  const dir = path.join(repo, PUSH_MARKERS_DIR);
  const found: (RepositoryEntry & { owner: OwnerTag | null })[] = [];
  for (const name of await listNames(dir)) {
    const info = await statIfPresent(path.join(dir, name));
    if (info) found.push({ path: path.join(dir, name), mtimeMs: info.mtimeMs, owner: ownerOf(name, '') });
  }
  return found;
}

/** The push quarantine directories in bare repository `repo`. */
export async function quarantineDirs(repo: string): Promise<RepositoryEntry[]> {
  const objects = path.join(repo, 'objects');
  const found: RepositoryEntry[] = [];
  for (const name of await listNames(objects)) {
    if (!QUARANTINE.test(name)) continue;
    const info = await statIfPresent(path.join(objects, name));
    if (info?.isDirectory()) found.push({ path: path.join(objects, name), mtimeMs: info.mtimeMs });
  }
  return found;
}

/** The names in `dir`; none when it does not exist (any more). */
async function listNames(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (e) {
    if (['ENOENT', 'ENOTDIR'].includes((e as NodeJS.ErrnoException).code ?? '')) return [];
    throw e;
  }
}

/** `lstat` of an entry another process may remove meanwhile: null when it is gone. */
async function statIfPresent(file: string) {
  try {
    return await lstat(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}
