/**
 * Commit statistics for contributor rankings: one `git log --numstat` pass over a branch.
 */
import { gitDir, spawnGit, value } from './command.js';
import { isObjectId } from './names.js';

/** One commit's author and line counts. */
export interface CommitStat {
  authorName: string;
  authorEmail: string;
  /** Author date, epoch milliseconds. */
  authorTime: number;
  additions: number;
  deletions: number;
}

/**
 * Visits the author, date and added/deleted line counts of every commit reachable from `commit`
 * (merges excluded, binary files count 0), newest first, streaming git's output: nothing of the
 * history is kept here.
 *
 * @param repo absolute path of a bare repository.
 * @param commit 40-hex commit hash.
 * @param visit called once per commit, with its whole statistics.
 * @throws GitError when git fails; Error for a malformed hash (a programming error).
 */
export async function visitCommitStats(repo: string, commit: string, visit: (stat: CommitStat) => void): Promise<void> {
  if (!isObjectId(commit)) throw new Error(`Not a commit hash: ${commit}`);
  const g = spawnGit([gitDir(repo), 'log', '--no-merges', '--no-renames', '--numstat', '--format=%x01%an%x00%ae%x00%at', value(commit), '--']);
  g.stdin.end();
  let current: CommitStat | null = null;
  let rest = '';
  const consume = (line: string) => {
    if (line.startsWith('\x01')) {
      if (current) visit(current);
      const [authorName, authorEmail, time] = line.slice(1).split('\0');
      current = { authorName, authorEmail, authorTime: Number(time) * 1000, additions: 0, deletions: 0 };
      return;
    }
    const m = /^(\d+|-)\t(\d+|-)\t/.exec(line);
    if (m && current) {
      const c: CommitStat = current;
      if (m[1] !== '-') c.additions += Number(m[1]);
      if (m[2] !== '-') c.deletions += Number(m[2]);
    }
  };
  g.stdout.setEncoding('utf8');
  for await (const chunk of g.stdout as AsyncIterable<string>) {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) consume(line);
  }
  if (rest) consume(rest);
  await g.done;
  if (current) visit(current);
}
