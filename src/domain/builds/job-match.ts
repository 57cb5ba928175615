/**
 * OneDev 8.6's job match language, as used by a job secret's `authorization` (reference/projects.md
 * §3 `buildSetting.jobSecrets`; OneDev `io.onedev.server.job.match.JobMatch`, grammar JobMatch.g4):
 *
 * ```
 * match     := or
 * or        := and ("or" and)*
 * and       := unary ("and" unary)*
 * unary     := "not" "(" or ")" | "(" or ")" | criterion
 * criterion := "on" "branch" QUOTED               -- a path wildcard over branch names
 *            | "submitted" "by" "user" QUOTED     -- a login name
 *            | "submitted" "by" "group" QUOTED    -- a group name
 *            | QUOTED "is" QUOTED                 -- only "Project" is <path wildcard>
 * QUOTED    := '"' (char | '\' char)+ '"'
 * ```
 * Keywords are case-insensitive (CONTRACT §6 leniency); `and` binds tighter than `or`. OneDev's
 * `"Job" is` criterion is refused here as OneDev refuses it for secrets.
 */
import { matchPath } from '../../ci/patterns.js';

/** A parsed job match. */
export type JobMatch =
  | { readonly type: 'onBranch'; readonly branch: string }
  | { readonly type: 'user' | 'group'; readonly name: string }
  | { readonly type: 'project'; readonly path: string }
  | { readonly type: 'and' | 'or'; readonly left: JobMatch; readonly right: JobMatch }
  | { readonly type: 'not'; readonly operand: JobMatch };

/** Thrown for a malformed job match; the message says what and where (1-based column). */
export class JobMatchSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JobMatchSyntaxError';
  }
}

type Token = { kind: 'word' | 'quoted' | 'lparen' | 'rparen'; text: string; column: number };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    if (/\s/.test(c)) {
      i++;
    } else if (c === '(' || c === ')') {
      tokens.push({ kind: c === '(' ? 'lparen' : 'rparen', text: c, column: i + 1 });
      i++;
    } else if (c === '"') {
      const start = i++;
      let text = '';
      let closed = false;
      while (i < source.length) {
        if (source[i] === '\\' && i + 1 < source.length) {
          text += source[i + 1];
          i += 2;
        } else if (source[i] === '"') {
          closed = true;
          i++;
          break;
        } else {
          text += source[i++];
        }
      }
      if (!closed) throw new JobMatchSyntaxError(`Unterminated quote at column ${start + 1}`);
      if (text === '') throw new JobMatchSyntaxError(`Empty quoted value at column ${start + 1}`);
      tokens.push({ kind: 'quoted', text, column: start + 1 });
    } else {
      const start = i;
      while (i < source.length && !/[\s()"]/.test(source[i])) i++;
      tokens.push({ kind: 'word', text: source.slice(start, i), column: start + 1 });
    }
  }
  return tokens;
}

/**
 * Parses a job match such as `on branch "main" or submitted by group "release"`.
 *
 * @throws JobMatchSyntaxError with `Unexpected 'x' at column N` style messages, `Invalid field: X`
 *   for a field other than "Project", `Job criteria is not supported here` for "Job".
 */
export function parseJobMatch(source: string): JobMatch {
  const tokens = tokenize(source);
  let pos = 0;
  const peek = (): Token | undefined => tokens[pos];
  const isWord = (t: Token | undefined, w: string): boolean => t?.kind === 'word' && t.text.toLowerCase() === w;
  const unexpected = (t: Token | undefined): never => {
    if (!t) throw new JobMatchSyntaxError(`Unexpected end of job match '${source}'`);
    throw new JobMatchSyntaxError(`Unexpected '${t.text}' at column ${t.column}`);
  };
  const expectWord = (w: string): void => {
    if (!isWord(peek(), w)) unexpected(peek());
    pos++;
  };
  const expectKind = (kind: Token['kind']): Token => {
    const t = peek();
    if (t?.kind !== kind) return unexpected(t);
    pos++;
    return t;
  };

  const criterion = (): JobMatch => {
    const t = peek();
    if (isWord(t, 'on')) {
      pos++;
      expectWord('branch');
      return { type: 'onBranch', branch: expectKind('quoted').text };
    }
    if (isWord(t, 'submitted')) {
      pos++;
      expectWord('by');
      const kind = peek();
      if (!isWord(kind, 'user') && !isWord(kind, 'group')) return unexpected(kind);
      pos++;
      return { type: kind!.text.toLowerCase() as 'user' | 'group', name: expectKind('quoted').text };
    }
    if (t?.kind === 'quoted') {
      pos++;
      expectWord('is');
      const value = expectKind('quoted').text;
      if (t.text === 'Project') return { type: 'project', path: value };
      if (t.text === 'Job') throw new JobMatchSyntaxError('Job criteria is not supported here');
      throw new JobMatchSyntaxError(`Invalid field: ${t.text}`);
    }
    return unexpected(t);
  };
  const unary = (): JobMatch => {
    if (isWord(peek(), 'not')) {
      pos++;
      expectKind('lparen');
      const operand = or();
      expectKind('rparen');
      return { type: 'not', operand };
    }
    if (peek()?.kind === 'lparen') {
      pos++;
      const inner = or();
      expectKind('rparen');
      return inner;
    }
    return criterion();
  };
  const and = (): JobMatch => {
    let left = unary();
    while (isWord(peek(), 'and')) {
      pos++;
      left = { type: 'and', left, right: unary() };
    }
    return left;
  };
  const or = (): JobMatch => {
    let left = and();
    while (isWord(peek(), 'or')) {
      pos++;
      left = { type: 'or', left, right: and() };
    }
    return left;
  };

  const match = or();
  if (pos < tokens.length) unexpected(peek());
  return match;
}

/** The users and groups a job match names, for checking that they exist. */
export function namesIn(match: JobMatch): { users: string[]; groups: string[] } {
  const users: string[] = [];
  const groups: string[] = [];
  const walk = (m: JobMatch): void => {
    if (m.type === 'user') users.push(m.name);
    else if (m.type === 'group') groups.push(m.name);
    else if (m.type === 'and' || m.type === 'or') {
      walk(m.left);
      walk(m.right);
    } else if (m.type === 'not') walk(m.operand);
  };
  walk(match);
  return { users, groups };
}

/** What a job match is evaluated against (OneDev's JobMatchContext). */
export interface JobMatchSubject {
  /** Path of the project whose build asks. */
  readonly projectPath: string;
  /** `on branch "p"` holds when one of these branches matches `p` (one branch, or the branches holding a commit). */
  readonly branches: readonly string[];
  /** Login name of the user the build acts for (lower case); null when none. */
  readonly userName: string | null;
  /** Names of that user's groups (lower case). */
  readonly groupNames: ReadonlySet<string>;
}

/**
 * Evaluates a parsed job match. `on branch` and `"Project" is` use path wildcards (`*`, `**`,
 * `?`; OneDev `WildcardUtils.matchPath`); user and group names compare case-insensitively.
 */
export function jobMatches(match: JobMatch, subject: JobMatchSubject): boolean {
  switch (match.type) {
    case 'onBranch':
      return subject.branches.some((b) => matchPath(match.branch, b));
    case 'user':
      return subject.userName !== null && subject.userName === match.name.toLowerCase();
    case 'group':
      return subject.groupNames.has(match.name.toLowerCase());
    case 'project':
      return matchPath(match.path, subject.projectPath);
    case 'and':
      return jobMatches(match.left, subject) && jobMatches(match.right, subject);
    case 'or':
      return jobMatches(match.left, subject) || jobMatches(match.right, subject);
    case 'not':
      return !jobMatches(match.operand, subject);
  }
}
