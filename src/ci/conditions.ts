/**
 * Post-build action conditions and job retry conditions (docs/compatibility.md#builds-build-spec
 * "postBuildActions … Condition grammar" and docs/compatibility.md#builds-lifecycle "Retry"): `successful and on branch "main"`,
 * `previous is timed out`, `"Log" contains "x"`, `"Param" is "v"`, `"Param" is empty`, `always`,
 * `never`, combined with `and` (binding tighter), `or`, `not(…)` and parentheses; keywords
 * case-insensitive, any whitespace between tokens. The language is defined as data
 * (BUILD_CONDITION in src/query/languages.ts) and read by the shared query parser
 * (`parseQuery`); this module turns the parsed criteria into a {@link Condition} and evaluates it.
 *
 * Retry conditions accept only `never`, `always`, `"Log" contains`, `"Param" is` and
 * `"Param" is empty` criteria (the build has not finished, so status tests make no sense).
 */
import { BUILD_CONDITION, chainOperands, MAX_PATTERN_LENGTH, parseQuery, QuerySyntaxError, type Criteria } from '../query/index.js';
import { matchPath } from './patterns.js';

/** Final build statuses a condition can test. */
export type FinalStatus = 'SUCCESSFUL' | 'FAILED' | 'CANCELLED' | 'TIMED_OUT';

/**
 * Parsed condition tree. A chain `a or b or c` is one `or` with three operands, so the depth of
 * the tree is that of the parentheses and `not`s, whatever the length of a chain.
 */
export type Condition =
  | { readonly type: 'always' }
  | { readonly type: 'never' }
  | { readonly type: 'status'; readonly status: FinalStatus }
  | { readonly type: 'previous'; readonly status: FinalStatus }
  | { readonly type: 'onBranch'; readonly branch: string }
  | { readonly type: 'logContains'; readonly text: string }
  | { readonly type: 'paramIs'; readonly param: string; readonly value: string }
  | { readonly type: 'paramIsEmpty'; readonly param: string }
  | { readonly type: 'and' | 'or'; readonly operands: readonly Condition[] }
  | { readonly type: 'not'; readonly operand: Condition };

const STATUSES: Record<string, FinalStatus> = {
  successful: 'SUCCESSFUL',
  failed: 'FAILED',
  cancelled: 'CANCELLED',
  'timed out': 'TIMED_OUT',
};

/** Criteria a retry condition may hold besides `and`, `or` and `not`. */
const RETRY_CRITERIA: readonly Condition['type'][] = ['always', 'never', 'logContains', 'paramIs', 'paramIsEmpty'];

function toCondition(criteria: Criteria, kind: 'action' | 'retry'): Condition {
  switch (criteria.kind) {
    case 'and':
    case 'or':
      return { type: criteria.kind, operands: chainOperands(criteria).map((c) => toCondition(c, kind)) };
    case 'not':
      return { type: 'not', operand: toCondition(criteria.operand, kind) };
    case 'operator': {
      if (criteria.operator === 'on branch' && criteria.value !== null && criteria.value.length > MAX_PATTERN_LENGTH) {
        throw new QuerySyntaxError(`Branch pattern is longer than ${MAX_PATTERN_LENGTH} characters (${criteria.value.length})`, criteria.column);
      }
      const condition = operatorCondition(criteria.operator, criteria.value);
      if (kind === 'retry' && !RETRY_CRITERIA.includes(condition.type)) {
        throw new QuerySyntaxError(`Criterion '${criteria.operator}' at column ${criteria.column} is not applicable to a retry condition`, criteria.column);
      }
      return condition;
    }
    case 'field':
      if (criteria.field === 'Log' && criteria.operator === 'contains' && criteria.value !== null) {
        return { type: 'logContains', text: criteria.value };
      }
      if (criteria.operator === 'is' && criteria.value !== null) return { type: 'paramIs', param: criteria.field, value: criteria.value };
      if (criteria.operator === 'is empty') return { type: 'paramIsEmpty', param: criteria.field };
      break;
  }
  // BUILD_CONDITION admits no other criterion, so parseQuery never returns one
  throw new Error(`Condition criterion out of BUILD_CONDITION: ${JSON.stringify(criteria)}`);
}

function operatorCondition(operator: string, value: string | null): Condition {
  if (operator === 'always' || operator === 'never') return { type: operator };
  if (operator === 'on branch' && value !== null) return { type: 'onBranch', branch: value };
  const previous = operator.startsWith('previous is ');
  const status = STATUSES[previous ? operator.slice('previous is '.length) : operator];
  if (status === undefined) throw new Error(`Condition operator out of BUILD_CONDITION: ${operator}`);
  return { type: previous ? 'previous' : 'status', status };
}

/**
 * Parses a condition with the shared query parser (`parseQuery` with BUILD_CONDITION).
 *
 * @param source condition text, e.g. `successful and on branch "main"`.
 * @param kind `action` (post-build action, all criteria) or `retry` (retry condition subset).
 * @throws QuerySyntaxError saying what and where: `Unexpected 'x' at column N`, `Unexpected end
 *   of condition at column N`, `Unterminated quoted string at column N`, `Field 'X' is not
 *   applicable for operator 'contains'` (only "Log" contains), `Unexpected 'order' at column N`,
 *   `Condition is empty`, `Criterion 'successful' at column N is not applicable to a retry
 *   condition`, and `Branch pattern is longer than 1000 characters (N)` (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input).
 */
export function parseCondition(source: string, kind: 'action' | 'retry'): Condition {
  const { criteria } = parseQuery(BUILD_CONDITION, source);
  if (criteria === null) throw new QuerySyntaxError('Condition is empty', 1);
  return toCondition(criteria, kind);
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
      return condition.operands.every((c) => evaluateCondition(c, ctx));
    case 'or':
      return condition.operands.some((c) => evaluateCondition(c, ctx));
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
      return condition.operands.flatMap(conditionParams);
    case 'not':
      return conditionParams(condition.operand);
    default:
      return [];
  }
}
