/**
 * The commit that last changed each entry of a directory, as the tree view shows beside the
 * entry names: ONE history walk of the directory (`git log -z --name-only -- <dir>/`) read as a
 * stream, each changed path credited to the directory entry it lies under, stopped (the process
 * killed) as soon as every entry has its commit.
 *
 * The walk uses git's default history simplification for the directory: the first commit the
 * walk reaches that changed a path under an entry is its last commit — `git log -1 -- <entry>`
 * for every entry, except that merges list no paths (`-m` would diff each merge against each
 * parent, four times the walk's time): a subdirectory both sides of a merge changed is credited
 * to the newest commit under it rather than to the merge, and a merge's own conflict
 * resolution to the merged commits.
 */
import { gitDir, spawnGit, value } from './command.js';
import { assertObjectId } from './names.js';
import { assertRepositoryPath } from './trees.js';

/** The commit that last changed an entry. */
export interface LastCommit {
  /** Full object id. */
  hash: string;
  /** The first line of its message. */
  subject: string;
  authorName: string;
  /** Author date, milliseconds since the epoch. */
  authorDate: number;
}

/** Marks a commit header in the walk's output: `\x01<hash>\x1f<author>\x1f<author time>\x1f<subject>`. */
const FORMAT = '--format=%x01%H%x1f%an%x1f%at%x1f%s';

/**
 * The last commit of each of `names` (entries of `dir` at `commit`), walking the history of `dir`
 * from `commit` until all are found or the history ends.
 *
 * @param repo absolute path of a bare repository.
 * @param commit 40-hex commit id.
 * @param dir repository-relative directory, '' for the root.
 * @param names entry names within `dir`.
 * @param limitMs the longest the walk may run (ms): past it git is stopped and the entries found
 *   so far are the answer.
 * @returns entry name → its last commit; an entry absent from the history walked (a submodule
 *   never changed, or a walk stopped by `limitMs`) is missing.
 * @throws BadRequest for a malformed id or path; GitError when git fails.
 */
export async function lastCommitsOf(repo: string, commit: string, dir: string, names: readonly string[], limitMs = 60_000): Promise<Map<string, LastCommit>> {
  assertObjectId(commit);
  assertRepositoryPath(dir);
  const found = new Map<string, LastCommit>();
  const wanted = new Set(names);
  if (wanted.size === 0) return found;
  const prefix = dir ? `${dir}/` : '';
  const git = spawnGit([
    gitDir(repo),
    '--literal-pathspecs',
    'log',
    '-z',
    '--name-only',
    '--no-renames',
    FORMAT,
    value(commit),
    '--',
    ...(prefix ? [value(prefix)] : []),
  ]);
  git.stdin.end();
  let stopped = false;
  const limit = setTimeout(() => {
    stopped = true;
    git.kill();
  }, limitMs);
  let current: LastCommit | null = null;
  let rest = '';
  const take = (raw: string): void => {
    // the first path after a header comes after a newline
    const token = raw.charCodeAt(0) === 10 ? raw.slice(1) : raw;
    if (token === '') return;
    if (token.charCodeAt(0) === 1) {
      const [hash, authorName, time, subject] = token.slice(1).split('\x1f');
      current = { hash, authorName, authorDate: Number(time) * 1000, subject: subject ?? '' };
      return;
    }
    if (!current || !token.startsWith(prefix)) return;
    const slash = token.indexOf('/', prefix.length);
    const name = slash < 0 ? token.slice(prefix.length) : token.slice(prefix.length, slash);
    if (wanted.has(name) && !found.has(name)) found.set(name, current);
  };
  try {
    git.stdout.setEncoding('utf8');
    for await (const chunk of git.stdout as AsyncIterable<string>) {
      const tokens = (rest + chunk).split('\0');
      rest = tokens.pop()!;
      for (const token of tokens) take(token);
      if (found.size === wanted.size) break;
    }
    take(rest);
  } catch (error) {
    git.kill();
    if (!stopped) throw error;
  } finally {
    clearTimeout(limit);
  }
  // an early stop kills git: only a walk that ran to its end reports git's failures
  if (found.size === wanted.size) git.kill();
  else if (!stopped) await git.done;
  return found;
}
