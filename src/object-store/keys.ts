/**
 * Object keys and the keys of each kind of stored object (docs/architecture.md#object-storage):
 * one layout for both stores, the data dir's own.
 */
import { randomUUID } from 'node:crypto';

/**
 * Checks an object key: `/`-separated, no empty, `.` or `..` segment, no NUL byte. Keys are
 * made by the server from checked parts; a bad one is a fault.
 *
 * @returns `key`.
 * @throws Error naming the key.
 */
export function checkKey(key: string): string {
  const segments = key.split('/');
  if (key.includes('\0') || segments.some((s) => s === '' || s === '.' || s === '..')) {
    throw new Error(`Malformed object key: ${JSON.stringify(key.slice(0, 200))}`);
  }
  return key;
}

/** The key prefix of everything a build stores: `builds/<projectId>/<number>/`. */
export function buildPrefix(build: { projectId: number; number: number }): string {
  return `builds/${build.projectId}/${build.number}/`;
}

/** The key prefix of a build's artifacts: `builds/<projectId>/<number>/artifacts/`. */
export function artifactsPrefix(build: { projectId: number; number: number }): string {
  return `${buildPrefix(build)}artifacts/`;
}

/** The key prefix of everything a project's builds store: `builds/<projectId>/`. */
export function projectBuildsPrefix(projectId: number): string {
  return `builds/${projectId}/`;
}

/** The key prefix of the job caches kept in a bucket. */
export const JOB_CACHES_PREFIX = 'caches/';

/** The key prefix of a project's job caches: `caches/<projectId>/`. */
export function projectCachesPrefix(projectId: number): string {
  return `${JOB_CACHES_PREFIX}${projectId}/`;
}

/**
 * A fresh key for an archive of job cache `cacheKey` (normalized by the caller) of a project:
 * `caches/<projectId>/<cacheKey>/<uuid>.tar` — each save writes a new object, so none being
 * read is ever overwritten.
 */
export function jobCacheObjectKey(projectId: number, cacheKey: string): string {
  return checkKey(`${projectCachesPrefix(projectId)}${cacheKey}/${randomUUID()}.tar`);
}

/** The key prefix of the Git LFS objects. */
export const LFS_PREFIX = 'lfs/';

/** The key of a Git LFS object: `lfs/<oid[0..2]>/<oid[2..4]>/<oid>` (the oid checked by the caller). */
export function lfsObjectKey(oid: string): string {
  return `${LFS_PREFIX}${oid.slice(0, 2)}/${oid.slice(2, 4)}/${oid}`;
}

/**
 * Whether `key` is one the object store holds from the start: a Git LFS object or a build
 * artifact (what `gitloom admin migrate-storage` moves either way). Build logs reach a bucket
 * when their job ended ({@link isBuildLogKey}); job caches stay where they are (a bucket's are
 * not moved: they are rebuilt by the next jobs), and the rest of the data dir stays local.
 */
export function isStoredKey(key: string): boolean {
  return /^lfs\/[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}$/.test(key) || /^builds\/\d+\/\d+\/artifacts\/./.test(key);
}

/** Whether `key` is a build's log, `builds/<projectId>/<number>/build.log` (archived to a bucket once the build's job ended). */
export function isBuildLogKey(key: string): boolean {
  return /^builds\/\d+\/\d+\/build\.log$/.test(key);
}
