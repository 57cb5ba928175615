/**
 * Where a build's files live (docs/architecture.md#data-layout): `<data dir>/builds/<projectId>/<number>/`
 * holds `build.log` and `artifacts/` — unless the object store is a bucket
 * (docs/architecture.md#object-storage), which holds the artifacts, and the log once the build's
 * job ended, under the same keys; a running job's
 * directory is `<jobs dir>/<buildId>-<uuid>/`
 * (src/ci/job-directory.ts). Everything here lies in the private data dir, which no job can
 * reach: its file operations never touch a path a job can write (docs/compatibility.md#gitloom-differs-untrusted-builds).
 */
import { appendFile, mkdir, open, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../config.js';
import { directoryArtifacts, storedArtifacts, type ArtifactStorage } from '../../ci/artifact-storage.js';
import { formatLogLine } from '../../ci/executor.js';
import { artifactsPrefix, buildPrefix, objectStoreOf, projectBuildsPrefix, projectCachesPrefix } from '../../object-store/index.js';

/** The storage directory of a build (`<data dir>/builds/<projectId>/<number>`). */
export function buildDir(config: Config, build: { projectId: number; number: number }): string {
  return path.join(config.dataDir, 'builds', String(build.projectId), String(build.number));
}

/** The build's log file. */
export function logPath(config: Config, build: { projectId: number; number: number }): string {
  return path.join(buildDir(config, build), 'build.log');
}

/** The build's artifacts directory. */
export function artifactsDir(config: Config, build: { projectId: number; number: number }): string {
  return path.join(buildDir(config, build), 'artifacts');
}

/** The build's artifacts, wherever the object store keeps them (src/ci/artifact-storage.ts). */
export function artifactStorage(config: Config, build: { projectId: number; number: number }): ArtifactStorage {
  if (config.objectStore === null) return directoryArtifacts(artifactsDir(config, build));
  return storedArtifacts(objectStoreOf(config), artifactsPrefix(build));
}

/** Empties (and recreates) a build's storage directory, and its objects in a bucket: on submit and rebuild (docs/compatibility.md#builds-lifecycle "Storage"). */
export async function resetBuildStorage(config: Config, build: { projectId: number; number: number }): Promise<void> {
  const dir = buildDir(config, build);
  await rm(dir, { recursive: true, force: true });
  if (config.objectStore !== null) await objectStoreOf(config).deletePrefix(buildPrefix(build));
  await mkdir(dir, { recursive: true });
}

/** Removes a build's storage directory and its objects in a bucket (delete build). */
export async function removeBuildStorage(config: Config, build: { projectId: number; number: number }): Promise<void> {
  await rm(buildDir(config, build), { recursive: true, force: true });
  if (config.objectStore !== null) await objectStoreOf(config).deletePrefix(buildPrefix(build));
}

/**
 * The `projectsDeleting` reaction: once the deletion committed, the storage of the projects'
 * builds goes — their directories of the data dir and their objects in a bucket, with the
 * project's job caches in a bucket (their rows went with the project).
 */
export async function onProjectsDeleting(config: Config, event: { projectIds: number[]; afterCommit: (() => Promise<void>)[] }): Promise<void> {
  event.afterCommit.push(async () => {
    for (const projectId of event.projectIds) {
      await rm(path.join(config.dataDir, 'builds', String(projectId)), { recursive: true, force: true });
      if (config.objectStore !== null) {
        await objectStoreOf(config).deletePrefix(projectBuildsPrefix(projectId));
        await objectStoreOf(config).deletePrefix(projectCachesPrefix(projectId));
      }
    }
  });
}

/** Appends lines to a build log as `HH:mm:ss message`. */
export async function appendLog(config: Config, build: { projectId: number; number: number }, ...lines: string[]): Promise<void> {
  await mkdir(buildDir(config, build), { recursive: true });
  await appendFile(logPath(config, build), lines.map((l) => formatLogLine(new Date(), l) + '\n').join(''));
}

/**
 * Appends log text as its runner formatted it (an agent's `HH:mm:ss message` lines) to a build's
 * log.
 */
export async function appendLogText(config: Config, build: { projectId: number; number: number }, text: string): Promise<void> {
  await mkdir(buildDir(config, build), { recursive: true });
  await appendFile(logPath(config, build), text);
}

/** The key of a build's archived log (docs/architecture.md#object-storage). */
function logKey(build: { projectId: number; number: number }): string {
  return `${buildPrefix(build)}build.log`;
}

const isMissing = (error: unknown): boolean => (error as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * Archives a finished build's log into the bucket (docs/architecture.md#object-storage): the
 * file is streamed to the store, then removed. Call it once nothing writes the log any more (the
 * build's job ended and its status is final). Without a bucket, or without a local log (archived
 * already), it does nothing. A crash between the copy and the removal leaves the same log in
 * both, and readers take the file.
 */
export async function archiveLog(config: Config, build: { projectId: number; number: number }): Promise<void> {
  if (config.objectStore === null) return;
  const file = logPath(config, build);
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if (isMissing(error)) return;
    throw error;
  }
  try {
    await objectStoreOf(config).put(logKey(build), handle.createReadStream({ highWaterMark: 1024 * 1024, autoClose: false }));
  } finally {
    await handle.close();
  }
  await rm(file, { force: true });
}

/** The whole log text ('' when none yet). */
export async function readLog(config: Config, build: { projectId: number; number: number }): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of readLogFrom(config, build, 0)) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** Size of the log in bytes: the file's, else the archived log's (0 when neither exists). */
export async function logSize(config: Config, build: { projectId: number; number: number }): Promise<number> {
  try {
    return (await stat(logPath(config, build))).size;
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  if (config.objectStore === null) return 0;
  return (await objectStoreOf(config).stat(logKey(build)))?.size ?? 0;
}

/**
 * Streams log bytes from `offset` to the current end: from the file while the build's data dir
 * holds it, else from the archived log (a log archived meanwhile is read from the file already
 * opened). Yields nothing when neither exists.
 */
export async function* readLogFrom(config: Config, build: { projectId: number; number: number }, offset: number): AsyncGenerator<Buffer> {
  let handle;
  try {
    handle = await open(logPath(config, build), 'r');
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  if (handle) {
    try {
      const { size } = await handle.stat();
      if (size <= offset) return;
      for await (const chunk of handle.createReadStream({ start: offset, end: size - 1, autoClose: false })) yield chunk as Buffer;
    } finally {
      await handle.close();
    }
    return;
  }
  if (config.objectStore === null) return;
  const store = objectStoreOf(config);
  const info = await store.stat(logKey(build));
  if (!info || info.size <= offset) return;
  const opened = await store.get(logKey(build), { start: offset, end: info.size - 1 });
  if (!opened) return;
  try {
    for await (const chunk of opened.stream) yield chunk as Buffer;
  } finally {
    opened.stream.destroy();
  }
}
