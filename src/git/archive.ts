/**
 * Archives of a commit's tree (`git archive`), streamed as git writes them, for the archive
 * download (docs/compatibility.md#gitloom-differs-code-browsing). Runs through the git runner of
 * src/git/command.ts.
 */
import { PassThrough, type Readable } from 'node:stream';
import { gitDir, spawnGit } from './command.js';
import { assertObjectId } from './names.js';

/** The formats `git archive` writes here: `zip`, or `tar.gz` (git's built-in gzip since 2.38, `gzip -cn` before). */
export type ArchiveFormat = 'zip' | 'tar.gz';

/**
 * Streams the archive of a commit's whole tree, paths at the root (no prefix directory), files
 * as stored in git (a Git LFS pointer stays a pointer; `export-ignore`/`export-subst`
 * attributes of the commit apply, as `git archive` does).
 *
 * The returned stream carries git's stdout as it comes; it ends only after git exited with 0,
 * and is destroyed with the GitError when git fails, so a reader never takes a cut archive for a
 * whole one. Destroying the stream (a client gone) or aborting `signal` kills git.
 *
 * @param repo absolute path of a bare repository.
 * @param commit 40-hex commit hash (resolved by the caller: never a user's revision text).
 * @param format `zip` or `tar.gz`.
 * @param signal aborts git (e.g. when the client disconnects).
 * @returns the archive's bytes.
 * @throws BadRequest for a malformed hash.
 */
export function streamArchive(repo: string, commit: string, format: ArchiveFormat, signal?: AbortSignal): Readable {
  const git = spawnGit([gitDir(repo), 'archive', format === 'zip' ? '--format=zip' : '--format=tar.gz', '--end-of-options', assertObjectId(commit)], {
    signal,
  });
  git.stdin.end();
  const out = new PassThrough();
  let ended = false;
  let exited = false;
  const finish = () => {
    if (ended && exited) out.end();
  };
  git.stdout.on('end', () => {
    ended = true;
    finish();
  });
  git.stdout.pipe(out, { end: false });
  git.done.then(
    () => {
      exited = true;
      finish();
    },
    (error: Error) => out.destroy(error),
  );
  out.on('close', () => git.kill());
  return out;
}
