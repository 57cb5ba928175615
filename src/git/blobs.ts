/**
 * Reading the text of a file at a commit with one `git cat-file --batch` process: what code
 * comments need to check that their mark lies inside the file (reference/comments-issues.md §1).
 */
import { gitDir, runGit } from './command.js';
import { assertObjectId } from './names.js';

/** What {@link readFileAtCommit} found. */
export type FileAtCommit =
  | { kind: 'file'; text: string }
  | { kind: 'missing' }
  | { kind: 'not-a-file' };

/**
 * The content of `path` at `commit` as UTF-8 text.
 *
 * @param repo absolute path of a bare repository.
 * @param commit 40-hex commit hash (checked: BadRequest otherwise).
 * @param path repository-relative path without a leading `/`.
 * @returns `file` with its text; `missing` when the commit or the path does not exist; `not-a-file`
 *   for a directory or submodule. A path with a newline, a NUL or `..`/`.` segments is `missing`.
 * @throws GitError when git itself fails.
 * @example await readFileAtCommit(repo, head, 'src/a.ts') → { kind: 'file', text: '…' }
 */
export async function readFileAtCommit(repo: string, commit: string, path: string): Promise<FileAtCommit> {
  assertObjectId(commit);
  if (!path || /[\0\n\r]/.test(path) || path.startsWith('/') || path.split('/').some((s) => s === '' || s === '.' || s === '..')) {
    return { kind: 'missing' };
  }
  const { stdout } = await runGit([gitDir(repo), 'cat-file', '--batch'], { input: `${commit}:${path}\n` });
  const eol = stdout.indexOf(0x0a);
  const header = stdout.subarray(0, eol < 0 ? stdout.length : eol).toString('utf8').split(' ');
  if (header.length !== 3) return { kind: 'missing' };
  if (header[1] !== 'blob') return { kind: 'not-a-file' };
  const size = Number(header[2]);
  return { kind: 'file', text: stdout.subarray(eol + 1, eol + 1 + size).toString('utf8') };
}
