/**
 * Reading and writing commit objects of bare repositories: the object reader, `rev-list`,
 * `commit-tree` (docs/architecture.md#git-commits).
 */
import { BadRequest, NotFound } from '../errors.js';
import { gitDir, gitText, value } from './command.js';
import { assertObjectId } from './names.js';
import { objectContents } from './object-reader.js';

/** An author or committer line of a commit. */
export interface GitIdentity {
  /** Name as recorded. */
  name: string;
  /** Email as recorded (without `<>`). */
  email: string;
  /** The instant (git stores whole seconds, so milliseconds are 0). */
  date: Date;
  /** The recorded time-zone offset in minutes east of UTC (`+0200` → 120). */
  tzOffset: number;
}

/** A parsed commit object. */
export interface Commit {
  /** 40-hex hash of the commit. */
  hash: string;
  /** 40-hex hash of its tree. */
  tree: string;
  /** Parent hashes, first parent first. */
  parents: string[];
  author: GitIdentity;
  committer: GitIdentity;
  /** The full message exactly as stored (usually ending with a newline). */
  message: string;
}

function parseIdentity(line: string): GitIdentity {
  const lt = line.indexOf('<');
  const gt = line.lastIndexOf('>');
  const name = (lt >= 0 ? line.slice(0, lt) : '').trim();
  const email = lt >= 0 && gt > lt ? line.slice(lt + 1, gt) : '';
  const rest = (gt >= 0 ? line.slice(gt + 1) : line).trim().split(/\s+/);
  const seconds = Number(rest[0]);
  const tz = /^([+-])(\d\d)(\d\d)$/.exec(rest[1] ?? '');
  const tzOffset = tz ? (tz[1] === '-' ? -1 : 1) * (Number(tz[2]) * 60 + Number(tz[3])) : 0;
  return { name, email, date: new Date(Number.isFinite(seconds) ? seconds * 1000 : 0), tzOffset };
}

/**
 * Parses the raw content of a commit object (as printed by `git cat-file commit`).
 *
 * @param hash the commit's hash.
 * @param raw the object's bytes.
 * @returns the parsed commit; unknown headers (`gpgsig`, `encoding`, `mergetag`) are skipped.
 */
export function parseCommit(hash: string, raw: Buffer): Commit {
  const text = raw.toString('utf8');
  const split = text.indexOf('\n\n');
  const head = split >= 0 ? text.slice(0, split) : text;
  const message = split >= 0 ? text.slice(split + 2) : '';
  const commit: Commit = {
    hash,
    tree: '',
    parents: [],
    author: parseIdentity(''),
    committer: parseIdentity(''),
    message,
  };
  for (const line of head.split('\n')) {
    if (line.startsWith(' ')) continue; // continuation of a multi-line header
    const space = line.indexOf(' ');
    const key = space >= 0 ? line.slice(0, space) : line;
    const val = space >= 0 ? line.slice(space + 1) : '';
    if (key === 'tree') commit.tree = val;
    else if (key === 'parent') commit.parents.push(val);
    else if (key === 'author') commit.author = parseIdentity(val);
    else if (key === 'committer') commit.committer = parseIdentity(val);
  }
  return commit;
}

/**
 * Reads one commit.
 *
 * @param repo absolute path of a bare repository.
 * @param hash full 40-hex commit hash.
 * @throws BadRequest `Invalid commit hash: X` for a malformed hash.
 * @throws NotFound `Commit not found: X` when the object is missing or not a commit.
 */
export async function readCommit(repo: string, hash: string): Promise<Commit> {
  const [commit] = await readCommits(repo, [hash]);
  return commit;
}

/**
 * Reads many commits through the repository's object reader (src/git/object-reader.ts).
 *
 * @param repo absolute path of a bare repository.
 * @param hashes full 40-hex commit hashes (duplicates allowed).
 * @returns the commits in the order of `hashes`.
 * @throws BadRequest for a malformed hash.
 * @throws NotFound `Commit not found: X` when one is missing or not a commit.
 */
export async function readCommits(repo: string, hashes: readonly string[]): Promise<Commit[]> {
  for (const h of hashes) assertObjectId(h);
  const objects = await objectContents(repo, hashes);
  return objects.map((object, i) => {
    if (object?.type !== 'commit') throw new NotFound(`Commit not found: ${hashes[i]}`);
    return parseCommit(object.oid, object.content);
  });
}

/** Options of {@link revList}. */
export interface RevListOptions {
  /** Follow only first parents. */
  firstParent?: boolean;
  /** Oldest first instead of newest first. */
  reverse?: boolean;
  /** No parent before all of its children (`--topo-order`; with `reverse`: parents first, as `git rebase` replays). */
  topoOrder?: boolean;
  /** Leave out merge commits. */
  noMerges?: boolean;
  /** At most this many commits (applied before `reverse`, as git does). */
  max?: number;
}

/**
 * Lists commits reachable from `include` but not from `exclude` (`git rev-list`), newest first
 * unless `reverse`.
 *
 * @param repo absolute path of a bare repository.
 * @param include revisions to start from (hashes or ref names).
 * @param exclude revisions whose ancestry is left out.
 * @returns 40-hex hashes.
 * @throws BadRequest for a revision starting with `-` or a negative `max`.
 * @throws GitError when a revision does not exist.
 */
export async function revList(repo: string, include: readonly string[], exclude: readonly string[] = [], opts: RevListOptions = {}): Promise<string[]> {
  if (include.length === 0) return [];
  const args = [gitDir(repo), 'rev-list'];
  if (opts.firstParent) args.push('--first-parent');
  if (opts.topoOrder) args.push('--topo-order');
  if (opts.reverse) args.push('--reverse');
  if (opts.noMerges) args.push('--no-merges');
  if (opts.max !== undefined) {
    if (!Number.isInteger(opts.max) || opts.max < 0) throw new BadRequest(`Invalid count: ${opts.max}`);
    args.push(`--max-count=${opts.max}`);
  }
  args.push('--stdin');
  const lines = [...include.map((r) => value(r).text), ...exclude.map((r) => `^${value(r).text}`)];
  const out = await gitText(args, { input: lines.join('\n') + '\n' });
  return out.split('\n').filter((l) => l.length > 0);
}

/** Identity for {@link commitTree}. */
export interface CommitIdentityInput {
  name: string;
  email: string;
  /** When; default now. */
  date?: Date;
  /** Time-zone offset in minutes east of UTC; default 0 (UTC). */
  tzOffset?: number;
}

/** Input of {@link commitTree}. */
export interface CommitTreeInput {
  /** 40-hex tree hash, or `<40-hex commit hash>^{tree}` for the tree of a commit (no extra git call). */
  tree: string;
  /** 40-hex parent hashes, first parent first. */
  parents: readonly string[];
  /** Message, stored verbatim (a final newline is added when missing). */
  message: string;
  author: CommitIdentityInput;
  committer: CommitIdentityInput;
}

/**
 * A name or email as git stores it in an identity line: `<`, `>` and control characters removed,
 * trimmed.
 */
export function cleanIdent(part: string): string {
  // git itself drops these characters from identities; do it here so the stored value is known.
  return part.replace(/[<>\x00-\x1f]/g, '').trim();
}

/**
 * A time-zone offset as git writes it (`120` → `+0200`).
 *
 * @param tzOffset minutes east of UTC.
 * @throws BadRequest `Invalid time zone offset: N` beyond ±24 hours.
 */
export function gitTimeZone(tzOffset: number): string {
  const tz = Math.round(tzOffset);
  if (Math.abs(tz) >= 24 * 60) throw new BadRequest(`Invalid time zone offset: ${tz}`);
  const abs = Math.abs(tz);
  return `${tz < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
}

function identityEnv(prefix: 'AUTHOR' | 'COMMITTER', id: CommitIdentityInput): Record<string, string> {
  const name = cleanIdent(id.name);
  if (!name) throw new BadRequest(`Empty ${prefix.toLowerCase()} name`);
  const date = id.date ?? new Date();
  const ms = date.getTime();
  if (!Number.isFinite(ms)) throw new BadRequest(`Invalid ${prefix.toLowerCase()} date`);
  const zone = gitTimeZone(id.tzOffset ?? 0);
  return {
    [`GIT_${prefix}_NAME`]: name,
    [`GIT_${prefix}_EMAIL`]: cleanIdent(id.email),
    [`GIT_${prefix}_DATE`]: `@${Math.floor(ms / 1000)} ${zone}`,
  };
}

/** The revision suffix naming a commit's tree. */
const TREE_OF = '^{tree}';

/**
 * Creates a commit object (`git commit-tree <tree> -p <parent>… -F -`) without touching any ref.
 *
 * @param repo absolute path of a bare repository.
 * @param input tree, parents, message, author and committer (name/email have `<`, `>` and control
 *   characters removed; dates are stored in whole seconds).
 * @returns the new commit's 40-hex hash.
 * @throws BadRequest for a malformed hash, an empty name, an invalid date or zone.
 * @throws GitError when the tree or a parent does not exist.
 * @see docs/architecture.md#git-commits
 */
export async function commitTree(repo: string, input: CommitTreeInput): Promise<string> {
  const tree = input.tree.endsWith(TREE_OF) ? `${assertObjectId(input.tree.slice(0, -TREE_OF.length))}${TREE_OF}` : assertObjectId(input.tree);
  const args = [gitDir(repo), 'commit-tree', tree];
  for (const p of input.parents) args.push('-p', assertObjectId(p));
  args.push('-F', '-');
  const message = input.message.endsWith('\n') || input.message === '' ? input.message : `${input.message}\n`;
  const out = await gitText(args, {
    input: message,
    env: { ...identityEnv('AUTHOR', input.author), ...identityEnv('COMMITTER', input.committer) },
  });
  return out.trim();
}
