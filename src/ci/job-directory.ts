/**
 * A job's directory and how the server, as root, may touch it (docs/compatibility.md#gitloom-differs-untrusted-builds "The server never
 * does privileged file work on a path a job can write"; README "Job sandbox").
 *
 * Layout of `<jobs dir>/<build>-<uuid>/` (root, 0711 so that the job's uid can reach its own
 * directories and nothing else):
 *
 * - `workspace/` — the job's uid, 0700: the working directory of every step;
 * - `home/` — the job's uid, 0700: the job's `HOME`;
 * - `server/` — root, 0700: what the server gives the steps (scripts, `passwd`, the seccomp
 *   program), handed to bubblewrap as open file descriptors, and checkout staging directories.
 *   The job can neither see nor reach it.
 *
 * The rules every root-side file operation on `workspace/` and `home/` follows:
 *
 * 1. **Frozen while touched.** The server touches a job's tree only when no process of the job's
 *    uid runs ({@link waitForJobProcessesToEnd} after each step; the sandbox's PID namespace dies
 *    with the step): nothing can swap a directory for a link between a check and a use.
 * 2. **No link is followed out.** Walks use `lstat` / `readdir` entry types and never descend
 *    into a link ({@link chownTree}); a path the spec names is resolved component by component
 *    and refused when it passes through a link or leaves its root ({@link resolveInside});
 *    files read back are opened by their real path with `O_NOFOLLOW` and checked to be regular
 *    files with `fstat` ({@link openInside}).
 * 3. **Root writes only what it made.** What the server adds to a workspace (checkouts,
 *    dependency artifacts) is first made in a fresh root-only directory, handed to the job's uid
 *    there, and moved in with `rename` ({@link moveInto}), which never follows the final
 *    component; nothing in the job's tree is ever opened for writing, chowned or chmod-ed.
 */
import { closeSync, constants, fstatSync, openSync, realpathSync } from 'node:fs';
import { chmod, lchown, lstat, mkdir, readdir, readFile, realpath, rename, rmdir } from 'node:fs/promises';
import path from 'node:path';

/** Names inside a job directory. */
export const JOB_WORKSPACE = 'workspace';
export const JOB_HOME = 'home';
export const JOB_SERVER = 'server';

/** The paths of one job's directory. */
export interface JobDirectory {
  readonly root: string;
  readonly workspace: string;
  readonly home: string;
  /** Root-only: step scripts, account files, the seccomp program, checkout staging. */
  readonly server: string;
}

/** The layout of the job directory `root` (nothing is created). */
export function jobDirectory(root: string): JobDirectory {
  return { root, workspace: path.join(root, JOB_WORKSPACE), home: path.join(root, JOB_HOME), server: path.join(root, JOB_SERVER) };
}

/**
 * A rejection handler that turns a missing path (`ENOENT`) into `fallback` and rethrows every
 * other error: `await readFile(p).catch(ifMissing(null))`.
 */
export function ifMissing<T>(fallback: T): (error: NodeJS.ErrnoException) => T {
  return (error) => {
    if (error.code === 'ENOENT') return fallback;
    throw error;
  };
}

/** A user-supplied relative path (checkout path, artifact source, `@file:…@`) that is refused. */
export class UnsafePathError extends Error {
  /** @param reason why, e.g. `points outside the workspace` (the message names `what` and `rel` too). */
  constructor(
    what: string,
    readonly reason: string,
    rel: string,
  ) {
    super(`${what} ${reason}: '${rel}'`);
  }
}

/**
 * Creates the jobs dir when missing (0711, as its missing parents) and checks the path to it:
 * every ancestor must belong to root or to this process and be writable by nobody else (unless
 * sticky, as `/tmp`), so that no other user can swap a directory of the path; when `jobUids` is
 * set, every ancestor must also let other users search it, or a job's uid could not reach its
 * workspace. Returns the jobs dir's real path.
 *
 * @throws Error naming the directory at fault (and `GITLOOM_JOB_DIR`), or a file-system error.
 */
export function prepareJobsDir(jobsDir: string, jobUids: boolean): Promise<string> {
  // one at a time per jobs dir: a job starting beside the one that creates it would otherwise
  // check it between its mkdir and its chmod, and find it unreachable
  const run = (preparing.get(jobsDir) ?? Promise.resolve()).then(() => prepare(jobsDir, jobUids));
  preparing.set(jobsDir, Promise.allSettled([run]));
  return run;
}

/** The last preparation of each jobs dir in this process, settled or not (a process has one or a few jobs dirs). */
const preparing = new Map<string, Promise<unknown>>();

async function prepare(jobsDir: string, jobUids: boolean): Promise<string> {
  const created = await mkdir(jobsDir, { recursive: true, mode: 0o711 });
  // the process umask (0077) strips the search bits of what mkdir created
  if (created) for (let p = jobsDir; p.startsWith(created); p = path.dirname(p)) await chmod(p, 0o711);
  const real = await realpath(jobsDir);
  const self = process.getuid?.() ?? 0;
  for (let p = real; ; p = path.dirname(p)) {
    const stat = await lstat(p);
    const mode = (stat.mode & 0o7777).toString(8).padStart(4, '0');
    if ((stat.uid !== 0 && stat.uid !== self) || ((stat.mode & 0o022) !== 0 && (stat.mode & 0o1000) === 0)) {
      throw new Error(`Job directory ${real} is unsafe: ${p} (owner ${stat.uid}, mode ${mode}) could be changed by another user; set GITLOOM_JOB_DIR`);
    }
    if (jobUids && (stat.mode & 0o001) === 0) {
      throw new Error(`Job directory ${real} is not reachable by job uids: ${p} has mode ${mode}; set GITLOOM_JOB_DIR to a directory other users can search`);
    }
    if (p === path.dirname(p)) break;
  }
  return real;
}

/**
 * Creates the job directory `root` with its `workspace/`, `home/` and `server/` (0700 root;
 * `root` itself 0711), refusing an existing `root`; its parent, the jobs dir, is prepared and
 * checked by {@link prepareJobsDir}.
 *
 * @throws Error naming the directory at fault, or a file-system error.
 */
export async function createJobDirectory(root: string, jobUids: boolean): Promise<JobDirectory> {
  const dir = jobDirectory(path.join(await prepareJobsDir(path.dirname(root), jobUids), path.basename(root)));
  await mkdir(dir.root, { mode: 0o700 });
  await chmod(dir.root, 0o711);
  for (const d of [dir.workspace, dir.home, dir.server]) await mkdir(d, { mode: 0o700 });
  return dir;
}

/**
 * Hands a tree the server made to a job uid: `lchown` of `dir` and of every entry below it. Safe
 * only on trees the job never had access to (rule 3); even so it never follows a link: it
 * recurses into directories by their `readdir` entry type (a link to a directory is a link) and
 * changes links themselves.
 */
export async function chownTree(dir: string, uid: number): Promise<void> {
  await lchown(dir, uid, uid);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await chownTree(full, uid);
    else await lchown(full, uid, uid);
  }
}

/**
 * The segments of a user-supplied relative path (empty for the root itself).
 *
 * @throws UnsafePathError (naming `what`) when it is absolute, has a NUL or a `..` segment.
 */
export function relativeSegments(rel: string, what: string): string[] {
  if (rel.includes('\0') || path.isAbsolute(rel) || rel.split(/[\\/]/).includes('..')) {
    throw new UnsafePathError(what, 'must be a relative path inside the workspace', rel);
  }
  return rel.split(/[\\/]/).filter((s) => s !== '' && s !== '.');
}

/** What {@link resolveInside} found. */
export interface ResolvedPath {
  readonly path: string;
  /** Whether the path exists (as a real directory when `directory` is true). */
  readonly exists: boolean;
}

/**
 * Resolves `rel` inside `root` component by component with `lstat` (rule 2): every existing
 * component must be a real directory (the last one too when `directory` is set), never a link;
 * resolution stops at the first component that does not exist.
 *
 * @throws UnsafePathError (message naming `what`) for an unsafe path, a link or a non-directory on the way.
 */
export async function resolveInside(root: string, rel: string, what: string, directory = true): Promise<ResolvedPath> {
  const segments = relativeSegments(rel, what);
  let current = root;
  for (const [i, segment] of segments.entries()) {
    current = path.join(current, segment);
    const stat = await lstat(current).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return null;
      throw e;
    });
    if (!stat) return { path: path.join(root, ...segments), exists: false };
    if (stat.isSymbolicLink()) throw new UnsafePathError(what, 'must not go through a symbolic link', rel);
    if ((directory || i < segments.length - 1) && !stat.isDirectory()) throw new UnsafePathError(what, 'is not a directory', rel);
  }
  return { path: current, exists: true };
}

/**
 * Opens a regular file inside `root` for reading (rule 2): `rel` (relative to `root`) may be a
 * link, but its real path must stay inside `root`; the real path is opened with `O_NOFOLLOW`
 * and `O_NONBLOCK` (a FIFO the job left cannot block the server) and must be a regular file.
 * Synchronous (a few system calls) so that variable expansion can use it; the caller closes the
 * returned descriptor.
 *
 * @throws UnsafePathError for an unsafe path, a path leading outside `root` or something other
 *   than a regular file; an `ENOENT` error when it does not exist.
 */
export function openInside(root: string, rel: string, what: string): number {
  const segments = relativeSegments(rel, what);
  const realRoot = realpathSync(root);
  const real = realpathSync(path.join(realRoot, ...segments));
  if (real !== realRoot && !real.startsWith(realRoot + path.sep)) throw new UnsafePathError(what, 'points outside the workspace', rel);
  const fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    if (!fstatSync(fd).isFile()) throw new UnsafePathError(what, 'is not a regular file', rel);
    return fd;
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/**
 * Moves the entries of `from` — a tree the server made and already handed to the job (rule 3) —
 * into the existing directory `into` of the job's tree, as `git checkout` places files into a
 * non-empty directory: an entry whose name is free is renamed in whole; a directory whose name
 * is a real directory in `into` is merged recursively; any other clash (a file, a link, a file
 * against a directory) is refused before anything moves. `from` is removed at the end.
 *
 * @throws UnsafePathError naming the first clash (relative to `into`).
 */
export async function moveInto(from: string, into: string): Promise<void> {
  const plan: Array<[string, string]> = [];
  const clashes: Array<{ rel: string; link: boolean }> = [];
  const walk = async (src: string, dest: string, rel: string): Promise<void> => {
    for (const entry of await readdir(src, { withFileTypes: true })) {
      const target = path.join(dest, entry.name);
      const existing = await lstat(target).catch((e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT') return null;
        throw e;
      });
      if (!existing) plan.push([path.join(src, entry.name), target]);
      else if (entry.isDirectory() && existing.isDirectory()) await walk(path.join(src, entry.name), target, path.posix.join(rel, entry.name));
      else clashes.push({ rel: path.posix.join(rel, entry.name), link: existing.isSymbolicLink() });
    }
  };
  await walk(from, into, '');
  const [clash] = clashes;
  if (clash) throw new UnsafePathError('Path', clash.link ? 'is a symbolic link in the workspace' : 'already exists in the workspace', clash.rel);
  for (const [src, dest] of plan) await rename(src, dest);
  await removeEmptyTree(from);
}

/** Removes a tree of empty directories (what {@link moveInto} leaves of its source). */
async function removeEmptyTree(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) if (entry.isDirectory()) await removeEmptyTree(path.join(dir, entry.name));
  await rmdir(dir);
}

/**
 * Host pids of live (non-zombie) processes whose real uid is `uid` — or, with `count`, any of
 * the uids `[uid, uid + count)` — from `/proc`.
 */
export async function processesOf(uid: number, count = 1): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let status: string;
    try {
      status = await readFile(`/proc/${name}/status`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    const state = /^State:\s+(\S)/m.exec(status)?.[1];
    const realUid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
    if (realUid >= uid && realUid < uid + count && state !== 'Z' && state !== 'X') found.push(Number(name));
  }
  return found;
}

/**
 * Makes sure no process of a job's uid runs (rule 1): waits up to `graceMs` for them to end,
 * then kills what is left with SIGKILL and waits up to 5 s more.
 *
 * @throws Error when processes of the uid survive SIGKILL (the job's tree must then not be touched).
 */
export async function waitForJobProcessesToEnd(uid: number, graceMs = 2000): Promise<void> {
  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
  for (const deadline = Date.now() + graceMs; Date.now() < deadline; await sleep(25)) if ((await processesOf(uid)).length === 0) return;
  for (const pid of await processesOf(uid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // ended meanwhile
    }
  }
  for (const deadline = Date.now() + 5000; Date.now() < deadline; await sleep(25)) if ((await processesOf(uid)).length === 0) return;
  throw new Error(`Processes of the job (uid ${uid}) did not end: ${(await processesOf(uid)).join(', ')}`);
}
