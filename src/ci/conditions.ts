/**
 * Post-build action conditions and job retry conditions (reference/builds.md §5
 * "postBuildActions … Condition grammar" and §3 "Retry").
 *
 * Grammar (keywords case-insensitive, any whitespace separates tokens):
 * ```
 * condition := or
 * or        := and ("or" and)*
 * and       := unary ("and" unary)*
 * unary     := "not" "(" or ")" | "(" or ")" | criterion
 * criterion := "always" | "never" | "successful" | "failed" | "cancelled" | "timed out"
 *            | "previous is" ("successful" | "failed" | "cancelled" | "timed out")
 *            | "on branch" QUOTED
 *            | QUOTED "contains" QUOTED        -- only "Log" contains "text"
 *            | QUOTED "is" QUOTED | QUOTED "is empty"   -- a param name
 * QUOTED    := '"' (char | '\' char)* '"'
 * ```
 * Retry conditions accept only `never`, `always`, `"Log" contains`, `"Param" is` and
 * `"Param" is empty` criteria (the build has not finished, so status tests make no sense).
 */
import { MAX_PATTERN_LENGTH } from '../query/index.js';
import { matchPath } from './patterns.js';

/** Final build statuses a condition can test. */
export type FinalStatus = 'SUCCESSFUL' | 'FAILED' | 'CANCELLED' | 'TIMED_OUT';

/** Parsed condition tree. */
export type Condition =
  | { readonly type: 'always' }
  | { readonly type: 'never' }
  | { readonly type: 'status'; readonly status: FinalStatus }
  | { readonly type: 'previous'; readonly status: FinalStatus }
  | { readonly type: 'onBranch'; readonly branch: string }
  | { readonly type: 'logContains'; readonly text: string }
  | { readonly type: 'paramIs'; readonly param: string; readonly value: string }
  | { readonly type: 'paramIsEmpty'; readonly param: string }
  | { readonly type: 'and' | 'or'; readonly left: Condition; readonly right: Condition }
  | { readonly type: 'not'; readonly operand: Condition };

/** Thrown for a malformed condition; the message says what and where (1-based column). */
export class ConditionSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConditionSyntaxError';
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
      const start = i;
      let text = '';
      i++;
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
      if (!closed) throw new ConditionSyntaxError(`Unterminated quote at column ${start + 1}`);
      tokens.push({ kind: 'quoted', text, column: start + 1 });
    } else {
      const start = i;
      while (i < source.length && !/[\s()"]/.test(source[i])) i++;
      tokens.push({ kind: 'word', text: source.slice(start, i), column: start + 1 });
    }
  }
  return tokens;
}

const STATUS_WORDS: Record<string, FinalStatus> = {
  successful: 'SUCCESSFUL',
  failed: 'FAILED',
  cancelled: 'CANCELLED',
};

/**
 * Parses a condition.
 *
 * @param source condition text, e.g. `successful and on branch "main"`.
 * @param kind `action` (post-build action, all criteria) or `retry` (retry condition subset).
 * @throws ConditionSyntaxError with `Unexpected 'x' at column N` style messages, or for an
 *   `on branch` pattern longer than 1,000 characters (CONTRACT §13).
 */
export function parseCondition(source: string, kind: 'action' | 'retry'): Condition {
  const tokens = tokenize(source);
  let pos = 0;
  const peek = (): Token | undefined => tokens[pos];
  const isWord = (t: Token | undefined, w: string): boolean => t?.kind === 'word' && t.text.toLowerCase() === w;
  const unexpected = (t: Token | undefined): never => {
    if (!t) throw new ConditionSyntaxError(`Unexpected end of condition '${source}'`);
    throw new ConditionSyntaxError(`Unexpected '${t.text}' at column ${t.column}`);
  };
  const expectWord = (w: string): void => {
    if (!isWord(peek(), w)) unexpected(peek());
    pos++;
  };
  const expectQuoted = (): string => {
    const t = peek();
    if (t?.kind !== 'quoted') return unexpected(t);
    pos++;
    return t.text;
  };
  const statusWord = (): FinalStatus => {
    const t = peek();
    if (isWord(t, 'timed')) {
      pos++;
      expectWord('out');
      return 'TIMED_OUT';
    }
    const status = t?.kind === 'word' ? STATUS_WORDS[t.text.toLowerCase()] : undefined;
    if (!status) return unexpected(t);
    pos++;
    return status;
  };
  const restrict = (t: Token, type: Condition['type']): void => {
    if (kind === 'retry' && !['always', 'never', 'logContains', 'paramIs', 'paramIsEmpty'].includes(type)) {
      throw new ConditionSyntaxError(`Criterion '${t.text}' at column ${t.column} is not applicable to a retry condition`);
    }
  };

  const criterion = (): Condition => {
    const t = peek();
    if (!t) return unexpected(t);
    if (t.kind === 'quoted') {
      pos++;
      const next = peek();
      if (isWord(next, 'contains')) {
        pos++;
        if (t.text !== 'Log') throw new ConditionSyntaxError(`Field '${t.text}' is not applicable for operator 'contains' (only "Log")`);
        const c: Condition = { type: 'logContains', text: expectQuoted() };
        restrict(t, c.type);
        return c;
      }
      if (isWord(next, 'is')) {
        pos++;
        if (isWord(peek(), 'empty')) {
          pos++;
          return { type: 'paramIsEmpty', param: t.text };
        }
        return { type: 'paramIs', param: t.text, value: expectQuoted() };
      }
      return unexpected(next);
    }
    if (t.kind !== 'word') return unexpected(t);
    const w = t.text.toLowerCase();
    let c: Condition;
    if (w === 'always' || w === 'never') {
      pos++;
      c = { type: w };
    } else if (w === 'previous') {
      pos++;
      expectWord('is');
      c = { type: 'previous', status: statusWord() };
    } else if (w === 'on') {
      pos++;
      expectWord('branch');
      const branch = expectQuoted();
      if (branch.length > MAX_PATTERN_LENGTH) throw new ConditionSyntaxError(`Branch pattern is longer than ${MAX_PATTERN_LENGTH} characters (${branch.length})`);
      c = { type: 'onBranch', branch };
    } else {
      c = { type: 'status', status: statusWord() };
    }
    restrict(t, c.type);
    return c;
  };

  const unary = (): Condition => {
    const t = peek();
    if (isWord(t, 'not') && tokens[pos + 1]?.kind === 'lparen') {
      pos += 2;
      const operand = or();
      if (peek()?.kind !== 'rparen') unexpected(peek());
      pos++;
      return { type: 'not', operand };
    }
    if (t?.kind === 'lparen') {
      pos++;
      const inner = or();
      if (peek()?.kind !== 'rparen') unexpected(peek());
      pos++;
      return inner;
    }
    return criterion();
  };
  const and = (): Condition => {
    let left = unary();
    while (isWord(peek(), 'and')) {
      pos++;
      left = { type: 'and', left, right: unary() };
    }
    return left;
  };
  const or = (): Condition => {
    let left = and();
    while (isWord(peek(), 'or')) {
      pos++;
      left = { type: 'or', left, right: and() };
    }
    return left;
  };

  if (tokens.length === 0) throw new ConditionSyntaxError('Condition is empty');
  const result = or();
  if (pos < tokens.length) unexpected(peek());
  return result;
}

/** What a condition is evaluated against. Missing facts make their criteria false. */
export interface ConditionContext {
  /** Status of the finished build (post-build actions only). */
  readonly status?: FinalStatus;
  /** Status of the previous finished build of the same job/ref (`previous is …`). */
  readonly previousStatus?: FinalStatus | null;
  /** Branch of the build (`on branch`), without `refs/heads/`; null for tag/PR builds. */
  readonly branch?: string | null;
  /** Whether the build log contains the text (`"Log" contains`). */
  readonly logContains?: (text: string) => boolean;
  /** Param values of the build. */
  readonly params?: Readonly<Record<string, readonly string[]>>;
}

/**
 * Evaluates a parsed condition. `on branch` uses path wildcards (`*`, `**`, `?`); param
 * comparison is exact; `"P" is empty` holds when the param has no non-empty value.
 */
export function evaluateCondition(condition: Condition, ctx: ConditionContext): boolean {
  switch (condition.type) {
    case 'always':
      return true;
    case 'never':
      return false;
    case 'status':
      return ctx.status === condition.status;
    case 'previous':
      return ctx.previousStatus === condition.status;
    case 'onBranch':
      return ctx.branch != null && matchPath(condition.branch, ctx.branch);
    case 'logContains':
      return ctx.logContains?.(condition.text) ?? false;
    case 'paramIs':
      return (ctx.params?.[condition.param] ?? []).includes(condition.value);
    case 'paramIsEmpty':
      return !(ctx.params?.[condition.param] ?? []).some((v) => v !== '');
    case 'and':
      return evaluateCondition(condition.left, ctx) && evaluateCondition(condition.right, ctx);
    case 'or':
      return evaluateCondition(condition.left, ctx) || evaluateCondition(condition.right, ctx);
    case 'not':
      return !evaluateCondition(condition.operand, ctx);
  }
}

/** Param names a condition refers to (`"X" is …`), for validation against the job's params. */
export function conditionParams(condition: Condition): string[] {
  switch (condition.type) {
    case 'paramIs':
    case 'paramIsEmpty':
      return [condition.param];
    case 'and':
    case 'or':
      return [...conditionParams(condition.left), ...conditionParams(condition.right)];
    case 'not':
      return conditionParams(condition.operand);
    default:
      return [];
  }
}
