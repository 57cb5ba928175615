/**
 * Archives kept on disk by commit (docs/architecture.md#archives-kept-by-commit): the archive of a
 * commit's tree never changes, so the first download writes git's output to
 * `<data dir>/archives/<projectId>/<commit>.<zip|tar.gz>` as it streams to the client, and later
 * downloads read the file — their first byte comes at once, where `git archive` first reads the
 * whole tree into an index for its attributes (0.2–0.3 s for 50,000 files). All the archives
 * together stay within `GITLOOM_ARCHIVE_CACHE_MB`: after a write the least recently used go first.
 *
 * An archive is written to a temp file carrying its owner (`.gitloom-upload-<owner>-<uuid>`,
 * start-up recovery removes those of processes that are gone), flushed to disk, and renamed to its
 * name only once git exited with success and every byte was written: a name always holds a whole
 * archive, whichever process wrote it. A download cut short keeps nothing.
 */
import { constants } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { pipeline, Transform, type Readable } from 'node:stream';
import { UPLOAD_PREFIX } from '../../ci/artifacts.js';
import { ifMissing } from '../../ci/job-directory.js';
import type { Config } from '../../config.js';
import { ARCHIVES_DIR, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../../data-dir.js';
import { assertObjectId } from '../../git/names.js';
import { ownedName } from '../../process-identity.js';

/** Null for a file that is not there (no such file, or a path through something not a directory); any other error is thrown. */
function notKept(error: NodeJS.ErrnoException): null {
  if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
  throw error;
}

/** The directory of a project's kept archives. */
function projectDir(config: Pick<Config, 'dataDir'>, projectId: number): string {
  return path.join(config.dataDir, ARCHIVES_DIR, String(projectId));
}

/**
 * The archive of `commit` in `extension` format: read from its file when kept, else made by
 * `make` (git's output, which fails rather than ends when git does) and kept while it streams.
 * The returned stream is the archive's bytes; destroying it (a client gone) destroys what `make`
 * returned and keeps nothing. Keeping never fails the download: a disk that refuses the copy (full,
 * read-only) costs the copy, reported through `onKeepError`, and the download goes on.
 *
 * @param config `dataDir` and `archiveCacheBytes`.
 * @param projectId the project; the caller checked that the visitor may read its code.
 * @param commit the 40-hex commit archived.
 * @param extension `zip` or `tar.gz`.
 * @param make starts `git archive` of the commit.
 * @param onKeepError told why an archive was not kept.
 */
export async function openArchive(
  config: Pick<Config, 'dataDir' | 'archiveCacheBytes'>,
  projectId: number,
  commit: string,
  extension: 'zip' | 'tar.gz',
  make: () => Readable,
  onKeepError: (error: Error) => void,
): Promise<Readable> {
  const dir = projectDir(config, projectId);
  const kept = path.join(dir, `${assertObjectId(commit)}.${extension}`);
  const found = await open(kept, constants.O_RDONLY | constants.O_NOFOLLOW).catch(notKept);
  if (found) {
    // a use makes it the most recently used; an eviction meanwhile leaves this open file readable
    const now = new Date();
    await found.utimes(now, now).catch(onKeepError);
    return found.createReadStream();
  }
  const temp = path.join(dir, ownedName(UPLOAD_PREFIX));
  let file: FileHandle;
  try {
    await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    file = await open(temp, 'wx', PRIVATE_FILE_MODE);
  } catch (error) {
    onKeepError(error as Error);
    return make();
  }
  return keepWhileStreaming(config, make(), file, temp, kept, onKeepError);
}

/**
 * `source` passed through, each chunk written to `file` (at `temp`) too; once `source` ended and
 * every byte was written, the file is flushed to disk and renamed to `kept`. The copy stops (its
 * temp file removed) when the archive outgrows the bound, a write fails, or the stream fails or is
 * destroyed.
 */
function keepWhileStreaming(
  config: Pick<Config, 'dataDir' | 'archiveCacheBytes'>,
  source: Readable,
  file: FileHandle,
  temp: string,
  kept: string,
  onKeepError: (error: Error) => void,
): Readable {
  let keeping: FileHandle | null = file;
  let size = 0;
  /** Stops the copy: its file closed, its temp file removed; never fails (a failure is reported). */
  const stop = async (error?: Error): Promise<void> => {
    const stopped = keeping;
    keeping = null;
    if (error) onKeepError(error);
    try {
      await stopped?.close();
    } finally {
      await rm(temp, { force: true });
    }
  };
  const stopped = (error?: Error) => stop(error).catch(onKeepError);
  const keeper = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      const writing = keeping;
      const written =
        writing === null
          ? Promise.resolve()
          : size > config.archiveCacheBytes // larger than all archives may be together: streamed, not kept
            ? stopped()
            : writing.write(chunk).then(
                () => undefined,
                // a write cut by a stop meanwhile is no failure of the disk
                (error: Error) => (keeping === writing ? stopped(error) : undefined),
              );
      void written.then(() => done(null, chunk));
    },
    flush(done) {
      const whole = keeping;
      keeping = null;
      if (whole === null) return done();
      const keep = async () => {
        try {
          const { size: written } = await whole.stat();
          if (written !== size) throw new Error(`The copy of the archive holds ${written} of its ${size} bytes`);
          await whole.sync();
        } finally {
          await whole.close();
        }
        await rename(temp, kept);
        await evictArchives(config);
      };
      // the download ends once every byte was passed on, whatever becomes of the copy
      done();
      keep().catch((error: Error) => stopped(error));
    },
  });
  pipeline(source, keeper, (error) => {
    if (error) void stopped();
  });
  return keeper;
}

/**
 * Removes kept archives, least recently used (oldest modification time) first, until all of them
 * together are within `archiveCacheBytes`. Several processes may evict at once: a file another
 * removed first is skipped.
 */
export async function evictArchives(config: Pick<Config, 'dataDir' | 'archiveCacheBytes'>): Promise<void> {
  const root = path.join(config.dataDir, ARCHIVES_DIR);
  const files: { file: string; size: number; used: number }[] = [];
  for (const project of await readdir(root).catch(ifMissing([]))) {
    for (const name of await readdir(path.join(root, project)).catch(ifMissing([]))) {
      if (name.startsWith(UPLOAD_PREFIX)) continue;
      const file = path.join(root, project, name);
      const info = await stat(file).catch(ifMissing(null));
      if (info?.isFile()) files.push({ file, size: info.size, used: info.mtimeMs });
    }
  }
  let total = files.reduce((sum, f) => sum + f.size, 0);
  for (const { file, size } of files.sort((a, b) => a.used - b.used)) {
    if (total <= config.archiveCacheBytes) break;
    await rm(file, { force: true });
    total -= size;
  }
}

/** The `projectsDeleting` reaction: once the deletion committed, the projects' kept archives go. */
export async function onArchivesProjectsDeleting(
  config: Pick<Config, 'dataDir'>,
  event: { projectIds: number[]; afterCommit: (() => Promise<void>)[] },
): Promise<void> {
  event.afterCommit.push(async () => {
    for (const projectId of event.projectIds) await rm(projectDir(config, projectId), { recursive: true, force: true });
  });
}
