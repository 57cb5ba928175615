/**
 * Reading a directory of a commit for the web UI's project page (`git ls-tree`). Runs through
 * the git runner of src/git/command.ts.
 */
import { gitDir, gitText, spawnGit, value, type GitStream } from './command.js';
import { assertObjectId } from './names.js';

/** One entry of a tree. */
export interface TreeEntry {
  /** File name within the directory. */
  name: string;
  /** `blob` (file, symlink), `tree` (directory) or `commit` (submodule). */
  type: 'blob' | 'tree' | 'commit';
  /** git file mode, e.g. `100644`, `100755`, `120000`, `040000`, `160000`. */
  mode: string;
  /** 40-hex object hash. */
  hash: string;
}

/**
 * The entries of a directory of a commit (`git ls-tree -z <commit>:<dir>`), directories first,
 * then by name.
 *
 * @param repo absolute path of a bare repository.
 * @param commit 40-hex commit hash (or any revision, or a tree id).
 * @param dir directory relative to the repository root, '' for the root.
 * @returns the entries; empty for an empty tree.
 * @throws GitError when the commit or directory does not exist.
 */
export async function listTree(repo: string, commit: string, dir = ''): Promise<TreeEntry[]> {
  const out = await gitText([gitDir(repo), 'ls-tree', '-z', '--end-of-options', value(`${commit}:${dir}`)]);
  const entries: TreeEntry[] = [];
  for (const line of out.split('\0')) {
    if (line === '') continue;
    const tab = line.indexOf('\t');
    const [mode, type, hash] = line.slice(0, tab).split(' ');
    entries.push({ name: line.slice(tab + 1), type: type as TreeEntry['type'], mode, hash });
  }
  const rank = (e: TreeEntry) => (e.type === 'tree' ? 0 : 1);
  return entries.sort((a, b) => rank(a) - rank(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Streams a blob's bytes (`git cat-file blob <oid>`) for raw downloads of any size: the caller
 * pipes `stdout` to the response; `done` rejects with GitError when git fails.
 *
 * @param repo absolute path of a bare repository.
 * @param oid 40-hex blob id.
 * @throws BadRequest for a malformed id.
 */
export function streamBlob(repo: string, oid: string): GitStream {
  const git = spawnGit([gitDir(repo), 'cat-file', 'blob', assertObjectId(oid)]);
  git.stdin.end();
  return git;
}

/**
 * Every file path of a commit's tree (`git ls-tree -r -z --name-only <commit>`), in git's order
 * (bytewise by path), submodules included; at most `max`.
 *
 * @param repo absolute path of a bare repository.
 * @param commit 40-hex commit or tree id.
 * @param max the most paths returned.
 * @returns the paths and whether more exist.
 * @throws BadRequest for a malformed id; GitError when the object does not exist.
 */
export async function listPaths(repo: string, commit: string, max: number): Promise<{ paths: string[]; truncated: boolean }> {
  const out = await gitText([gitDir(repo), 'ls-tree', '-r', '-z', '--name-only', assertObjectId(commit)]);
  const paths = out.split('\0');
  paths.pop();
  return paths.length > max ? { paths: paths.slice(0, max), truncated: true } : { paths, truncated: false };
}
