/**
 * Where a build's files live (docs/architecture.md#data-layout): `<data dir>/builds/<projectId>/<number>/`
 * holds `build.log` and `artifacts/` — the artifacts unless the object store is a bucket
 * (docs/architecture.md#object-storage), which holds them under the same keys; a running job's
 * directory is `<jobs dir>/<buildId>-<uuid>/`
 * (src/ci/job-directory.ts). Everything here lies in the private data dir, which no job can
 * reach: its file operations never touch a path a job can write (docs/compatibility.md#gitloom-differs-untrusted-builds).
 */
import { createReadStream } from 'node:fs';
import { appendFile, mkdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../config.js';
import { directoryArtifacts, storedArtifacts, type ArtifactStorage } from '../../ci/artifact-storage.js';
import { formatLogLine } from '../../ci/executor.js';
import { artifactsPrefix, buildPrefix, objectStoreOf, projectBuildsPrefix } from '../../object-store/index.js';

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
 * builds goes — their directories of the data dir and their objects in a bucket.
 */
export async function onProjectsDeleting(config: Config, event: { projectIds: number[]; afterCommit: (() => Promise<void>)[] }): Promise<void> {
  event.afterCommit.push(async () => {
    for (const projectId of event.projectIds) {
      await rm(path.join(config.dataDir, 'builds', String(projectId)), { recursive: true, force: true });
      if (config.objectStore !== null) await objectStoreOf(config).deletePrefix(projectBuildsPrefix(projectId));
    }
  });
}

/** Appends lines to a build log as `HH:mm:ss message`. */
export async function appendLog(config: Config, build: { projectId: number; number: number }, ...lines: string[]): Promise<void> {
  await mkdir(buildDir(config, build), { recursive: true });
  await appendFile(logPath(config, build), lines.map((l) => formatLogLine(new Date(), l) + '\n').join(''));
}

/** The whole log text ('' when none yet). */
export async function readLog(config: Config, build: { projectId: number; number: number }): Promise<string> {
  return readFile(logPath(config, build), 'utf8').catch(() => '');
}

/** Size of the log in bytes (0 when absent). */
export async function logSize(config: Config, build: { projectId: number; number: number }): Promise<number> {
  return stat(logPath(config, build)).then(
    (s) => s.size,
    () => 0,
  );
}

/**
 * Streams log bytes from `offset` to the current end of the file.
 * Yields nothing when the file does not exist.
 */
export async function* readLogFrom(config: Config, build: { projectId: number; number: number }, offset: number): AsyncGenerator<Buffer> {
  const size = await logSize(config, build);
  if (size <= offset) return;
  for await (const chunk of createReadStream(logPath(config, build), { start: offset, end: size - 1 })) yield chunk as Buffer;
}
