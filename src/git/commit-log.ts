/**
 * Commit queries over a bare repository with `git log` (the repository API's commit query,
 * docs/compatibility.md#gitloom-differs-additions-to-the-interface): revisions to include and exclude, author, committer, message and path
 * filters and a date window, newest first.
 */
import { BadRequest } from '../errors.js';
import { checkPatternLength } from '../query/index.js';
import { gitDir, gitText } from './command.js';

/** What {@link logCommits} selects. Filters of one kind are alternatives; different kinds all apply. */
export interface CommitLogQuery {
  /** Revisions (hashes or full ref names) whose history is listed; empty = every branch and tag. */
  include: readonly string[];
  /** Revisions whose history is left out. */
  exclude: readonly string[];
  /** `*`-wildcard texts matched (case-insensitively, anywhere) against `Name <email>` of the author. */
  authors: readonly string[];
  /** The same for the committer. */
  committers: readonly string[];
  /** `*`-wildcard texts matched case-insensitively anywhere in the message. */
  messages: readonly string[];
  /** Repository-relative paths (a directory covers what is under it) the commits must touch. */
  paths: readonly string[];
  /** Only commits committed before this instant. */
  before: Date | null;
  /** Only commits committed after this instant. */
  after: Date | null;
  /** The most hashes returned. */
  max: number;
}

/**
 * A `*`-wildcard as a POSIX extended regular expression matching anywhere (`a*b` → `a.*b`),
 * at most 1,000 characters as every user pattern (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input).
 *
 * @throws UserPatternError (400) for a wildcard longer than that.
 */
function wildcardToExtendedRegExp(text: string): string {
  checkPatternLength(text);
  return text
    .split('*')
    .map((part) => part.replace(/[.[\]{}()+?^$|\\]/g, '\\$&'))
    .join('.*');
}

/** An option with a user value after `=`: cannot be read as another option, but must be one line. */
function option(name: string, text: string): string {
  if (/[\0-\x1f]/.test(text)) throw new BadRequest(`Value must not contain control characters: ${JSON.stringify(text)}`);
  return `--${name}=${text}`;
}

function gitDate(date: Date): string {
  return `@${Math.floor(date.getTime() / 1000)} +0000`;
}

/**
 * Hashes of the commits a query selects, newest first (`git log --format=%H`), revisions and
 * paths given on stdin (`--stdin`, then `--` and the paths) so no value reaches the command line
 * as a revision or path; the text filters are `--author`/`--committer`/`--grep` with
 * `--regexp-ignore-case --extended-regexp`.
 *
 * @param repo absolute path of a bare repository.
 * @param query revisions, filters and the most hashes to return.
 * @returns 40-hex hashes, at most `query.max`.
 * @throws BadRequest for a value with control characters or a revision starting with `-`,
 *   UserPatternError (400) for an author, committer or message wildcard longer than 1,000
 *   characters; GitError when a revision does not exist.
 */
export async function logCommits(repo: string, query: CommitLogQuery): Promise<string[]> {
  if (!Number.isInteger(query.max) || query.max < 0) throw new BadRequest(`Invalid count: ${query.max}`);
  const args = [gitDir(repo), '--literal-pathspecs', 'log', '--format=%H', `--max-count=${query.max}`, '--regexp-ignore-case', '--extended-regexp'];
  for (const a of query.authors) args.push(option('author', wildcardToExtendedRegExp(a)));
  for (const c of query.committers) args.push(option('committer', wildcardToExtendedRegExp(c)));
  for (const m of query.messages) args.push(option('grep', wildcardToExtendedRegExp(m)));
  if (query.before) args.push(option('before', gitDate(query.before)));
  if (query.after) args.push(option('after', gitDate(query.after)));
  if (query.include.length === 0) args.push('--branches', '--tags');
  args.push('--stdin');
  const lines: string[] = [];
  for (const rev of query.include) lines.push(plainLine(rev));
  for (const rev of query.exclude) lines.push(`^${plainLine(rev)}`);
  lines.push('--', ...query.paths.map(plainLine));
  const out = await gitText(args, { input: lines.join('\n') + '\n' });
  return out.split('\n').filter((l) => l.length > 0);
}

function plainLine(text: string): string {
  if (text.startsWith('-') || /[\0-\x1f]/.test(text)) throw new BadRequest(`Invalid value: ${JSON.stringify(text)}`);
  return text;
}
