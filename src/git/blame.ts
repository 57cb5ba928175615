/**
 * Line authorship of a file at a commit (`git blame --porcelain`), for the blame view of the
 * file pages: which commit last changed each line, grouped into runs of consecutive lines.
 */
import { gitDir, gitText, value } from './command.js';
import { assertObjectId } from './names.js';
import { assertRepositoryPath } from './trees.js';

/** A commit that last changed some lines of a blamed file. */
export interface BlameCommit {
  /** Full object id. */
  hash: string;
  authorName: string;
  /** Author date, milliseconds since the epoch. */
  authorDate: number;
  /** The first line of the commit message. */
  summary: string;
}

/** Consecutive lines of the file that one commit last changed. */
export interface BlameRange {
  /** Full object id of the commit, a key of {@link Blame.commits}. */
  commitHash: string;
  /** First line of the range, 1-based, in the blamed file. */
  from: number;
  /** Last line of the range, inclusive. */
  to: number;
  /**
   * Where the range's lines were before that commit changed them (`previous` of the porcelain
   * output): the commit's parent and the file's path there (another path across a rename);
   * null for lines the commit added to a file it created (a root or boundary commit).
   */
  previous: { commitHash: string; path: string } | null;
}

/** The blame of a file: its ranges in line order and the commits they name. */
export interface Blame {
  ranges: BlameRange[];
  commits: Map<string, BlameCommit>;
}

const HEADER = /^([0-9a-f]{40}|[0-9a-f]{64}) \d+ (\d+)(?: \d+)?$/;

/**
 * Parses `git blame --porcelain` output: a header line `<hash> <source line> <result line>
 * [<lines in group>]` per line of the file, the commit's `key value` lines the first time a
 * commit appears (`previous <hash> <path>` and `filename` with every group), then the line itself
 * after a tab. Adjacent lines of one commit make one range.
 *
 * @param out the porcelain output as text.
 * @returns ranges in line order and the commits they name.
 */
export function parseBlamePorcelain(out: string): Blame {
  const ranges: BlameRange[] = [];
  const commits = new Map<string, BlameCommit>();
  let current: BlameCommit | null = null;
  let range: BlameRange | null = null;
  for (const line of out.split('\n')) {
    if (line === '' || line.startsWith('\t')) continue;
    const header = HEADER.exec(line);
    if (header) {
      const [, hash, resultLine] = header;
      const at = Number(resultLine);
      current = commits.get(hash) ?? null;
      if (!current) {
        current = { hash, authorName: '', authorDate: 0, summary: '' };
        commits.set(hash, current);
      }
      const last = ranges[ranges.length - 1];
      if (last && last.commitHash === hash && last.to === at - 1) {
        last.to = at;
        range = null;
      } else {
        range = { commitHash: hash, from: at, to: at, previous: null };
        ranges.push(range);
      }
      continue;
    }
    if (!current) continue;
    const space = line.indexOf(' ');
    const key = space < 0 ? line : line.slice(0, space);
    const rest = space < 0 ? '' : line.slice(space + 1);
    if (key === 'author') current.authorName = rest;
    else if (key === 'author-time') current.authorDate = Number(rest) * 1000;
    else if (key === 'summary') current.summary = rest;
    else if (key === 'previous' && range) {
      const gap = rest.indexOf(' ');
      range.previous = { commitHash: rest.slice(0, gap), path: rest.slice(gap + 1) };
    }
  }
  return { ranges, commits };
}

/**
 * Blames the first `lines` lines of a file at a commit (`git blame --porcelain -L 1,<lines>
 * <commit> -- <path>`), following the lines through renames of the file.
 *
 * @param repo absolute path of a bare repository.
 * @param commit 40-hex commit id.
 * @param filePath repository-relative path of a file of that commit.
 * @param lines how many lines from the top to blame (at least 1; no more than the file has).
 * @throws BadRequest for a malformed id or path; GitError when the path is not a file of the commit.
 */
export async function blameFile(repo: string, commit: string, filePath: string, lines: number): Promise<Blame> {
  assertObjectId(commit);
  assertRepositoryPath(filePath);
  const out = await gitText([gitDir(repo), 'blame', '--porcelain', '-L', `1,${Math.max(1, Math.floor(lines))}`, commit, '--', value(filePath)]);
  return parseBlamePorcelain(out);
}
