/**
 * Trees and blobs of bare repositories without a work tree: directory listings, one path's
 * entry, blob contents, and a new tree with one file written or removed, made with plumbing
 * (`hash-object`, a temporary index, `update-index`, `write-tree`) as docs/architecture.md#git-commits
 * describes (the repository API's file edits, OneDev 8.6 RepositoryResource).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BadRequest } from '../errors.js';
import { gitDir, gitText, runGit, spawnGit, value } from './command.js';
import { assertObjectId, ZERO_HASH } from './names.js';
import { objectContents } from './object-reader.js';

/** The kind of a tree entry: a file (or symbolic link), a directory, or a submodule commit. */
export type TreeEntryType = 'blob' | 'tree' | 'commit';

/** One entry of a tree. */
export interface TreeEntry {
  /** Repository-relative path (`src/a.ts`), never starting with `/`. */
  path: string;
  /** `blob`, `tree` or `commit` (a submodule). */
  type: TreeEntryType;
  /** Octal mode as git prints it: `100644`, `100755`, `120000`, `040000`, `160000`. */
  mode: string;
  /** 40-hex object id. */
  oid: string;
  /** Size in bytes of a blob; null for trees and submodules. */
  size: number | null;
}

/**
 * Checks a repository-relative path from outside: no leading or trailing `/`, no empty, `.`
 * or `..` segment, no `.git` segment, no control characters. The empty path means the root.
 *
 * @returns the path.
 * @throws BadRequest `Invalid path: X`.
 */
export function assertRepositoryPath(filePath: string): string {
  if (filePath === '') return filePath;
  const bad = /[\0-\x1f]/.test(filePath) || filePath.split('/').some((s) => s === '' || s === '.' || s === '..' || s.toLowerCase() === '.git');
  if (bad) throw new BadRequest(`Invalid path: ${filePath}`);
  return filePath;
}

function parseLsTree(out: string, prefix: string): TreeEntry[] {
  // `<mode> SP <type> SP <oid> SP* <size> TAB <name>` with -l, NUL-terminated with -z
  return out
    .split('\0')
    .filter((l) => l.length > 0)
    .map((line) => {
      const tab = line.indexOf('\t');
      const [mode, type, oid, size] = line.slice(0, tab).split(/ +/);
      const name = line.slice(tab + 1);
      return { path: prefix ? `${prefix}/${name}` : name, type: type as TreeEntryType, mode, oid, size: type === 'blob' ? Number(size) : null };
    });
}

/**
 * The entry of one path at a commit (`git ls-tree -l -z <commit> -- <path>`).
 *
 * @param repo absolute path of a bare repository.
 * @param commit 40-hex commit hash.
 * @param filePath repository-relative path; the empty path is the root tree.
 * @returns the entry, or null when the path does not exist at that commit.
 * @throws BadRequest for a malformed hash or path; GitError when the commit is missing.
 */
export async function pathEntry(repo: string, commit: string, filePath: string): Promise<TreeEntry | null> {
  assertObjectId(commit);
  assertRepositoryPath(filePath);
  if (filePath === '') {
    const oid = (await gitText([gitDir(repo), 'rev-parse', '--verify', `${commit}^{tree}`])).trim();
    return { path: '', type: 'tree', mode: '040000', oid, size: null };
  }
  const out = await gitText([gitDir(repo), '--literal-pathspecs', 'ls-tree', '-l', '-z', '--full-tree', commit, '--', value(filePath)]);
  const entry = parseLsTree(out, '').find((e) => e.path === filePath);
  return entry ?? null;
}

/**
 * The entries of a directory at a commit, in git's order (by name), with full paths.
 *
 * @param repo absolute path of a bare repository.
 * @param commit 40-hex commit hash.
 * @param dirPath repository-relative directory path; the empty path is the root.
 * @returns the entries, or null when the path does not exist or is not a directory.
 * @throws BadRequest for a malformed hash or path; GitError when the commit is missing.
 */
export async function listDirectory(repo: string, commit: string, dirPath: string): Promise<TreeEntry[] | null> {
  const entry = await pathEntry(repo, commit, dirPath);
  if (entry === null || entry.type !== 'tree') return null;
  const out = await gitText([gitDir(repo), 'ls-tree', '-l', '-z', entry.oid]);
  return parseLsTree(out, dirPath);
}

/**
 * The bytes of a blob, at most `max` of them: a blob of at most `max` bytes through the object
 * reader (src/git/object-reader.ts), the head of a larger one from `git cat-file blob`, which is
 * stopped once `max` bytes arrived (never the whole of a large blob in memory), which also gives
 * git's error for a missing blob.
 *
 * @param repo absolute path of a bare repository.
 * @param oid 40-hex blob id.
 * @param size the blob's size in bytes, as its tree entry gives it ({@link TreeEntry.size}).
 * @param max the most bytes returned.
 * @returns the first `max` bytes (all of a smaller blob).
 * @throws BadRequest for a malformed id; GitError when the blob is missing.
 */
export async function readBlobHead(repo: string, oid: string, size: number, max: number): Promise<Buffer> {
  assertObjectId(oid);
  if (size <= max) {
    const [blob] = await objectContents(repo, [oid]);
    if (blob?.type === 'blob') return blob.content;
  }
  const git = spawnGit([gitDir(repo), 'cat-file', 'blob', oid]);
  git.stdin.end();
  const chunks: Buffer[] = [];
  let have = 0;
  for await (const chunk of git.stdout as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    have += chunk.length;
    if (have >= max) break;
  }
  if (have < max) await git.done;
  git.kill();
  return Buffer.concat(chunks).subarray(0, max);
}

/** One file change for {@link writeTreeWithChanges}: new content, or null to delete the path. */
export interface FileChange {
  /** Repository-relative file path. */
  path: string;
  /** The new content; null deletes the file. */
  content: Buffer | null;
}

/**
 * Writes the tree of `base` with files written or removed, without a work tree: each blob with
 * `hash-object -w --stdin`, then a temporary index (`GIT_INDEX_FILE`) filled by
 * `read-tree <base>` (or `--empty`), changed by one `update-index -z --index-info` (keeping an
 * existing file's mode, else `100644`; mode 0 removes), and written with `write-tree`. The
 * changes apply in order, so a rename is a removal and a write.
 *
 * @param repo absolute path of a bare repository.
 * @param base 40-hex commit whose tree is changed, or null for an empty tree (an empty repository).
 * @param changes the paths and their new content (null = delete).
 * @returns the new tree's id.
 * @throws BadRequest for a malformed hash or path; GitError when git fails.
 */
export async function writeTreeWithChanges(repo: string, base: string | null, changes: readonly FileChange[]): Promise<string> {
  for (const change of changes) {
    assertRepositoryPath(change.path);
    if (change.path === '') throw new BadRequest('Invalid path: a file path is required');
  }
  const dir = gitDir(repo);
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'gitloom-index-'));
  try {
    const env = { GIT_INDEX_FILE: path.join(scratch, 'index') };
    await runGit([dir, 'read-tree', ...(base === null ? ['--empty'] : [assertObjectId(base)])], { env });
    // `update-index -z --index-info` lines `<mode> SP <oid> TAB <path>`; mode 0 removes the path
    const lines: string[] = [];
    for (const change of changes) {
      if (change.content === null) {
        lines.push(`0 ${ZERO_HASH}\t${change.path}\0`);
        continue;
      }
      const blob = (await gitText([dir, 'hash-object', '-w', '--stdin'], { input: change.content })).trim();
      const existing = base === null ? null : await pathEntry(repo, base, change.path);
      const mode = existing?.type === 'blob' ? existing.mode : '100644';
      lines.push(`${mode} ${blob}\t${change.path}\0`);
    }
    await runGit([dir, 'update-index', '-z', '--index-info'], { env, input: lines.join('') });
    return (await gitText([dir, 'write-tree'], { env })).trim();
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
