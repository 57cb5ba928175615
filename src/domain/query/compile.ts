import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Criteria, ParsedQuery } from '../../query/index.js';
import { QuerySyntaxError } from '../../query/index.js';
import { ANONYMOUS_ID, type Context } from '../context.js';

/**
 * Shared machinery of the query-language compilers (projects, pull requests, builds, issues,
 * code comments): the parser gives an AST; a compiler turns each leaf criterion into a SQL
 * condition, resolving names (users, projects, labels) first, so the whole query runs as one
 * SQL statement with the database's indexes.
 */
export type Condition = (eb: ExpressionBuilder<any, any>) => Expression<SqlBool>;

/** Compiles one leaf criterion (anything but and/or/not). */
export type LeafCompiler = (criteria: Exclude<Criteria, { kind: 'and' | 'or' | 'not' }>) => Promise<Condition>;

/** Compiles a criteria tree with `leaf` for its leaves; and/or/not map to SQL's. */
export async function compileCriteria(criteria: Criteria, leaf: LeafCompiler): Promise<Condition> {
  switch (criteria.kind) {
    case 'and':
    case 'or': {
      const [left, right] = await Promise.all([compileCriteria(criteria.left, leaf), compileCriteria(criteria.right, leaf)]);
      return criteria.kind === 'and' ? (eb) => eb.and([left(eb), right(eb)]) : (eb) => eb.or([left(eb), right(eb)]);
    }
    case 'not': {
      const operand = await compileCriteria(criteria.operand, leaf);
      return (eb) => eb.not(operand(eb));
    }
    default:
      return leaf(criteria);
  }
}

/** `lower(column) LIKE pattern ESCAPE '\'` — patterns from src/query/wildcards.ts are lowercase. */
export function likeCondition(column: string, pattern: string): Condition {
  return () => sql<SqlBool>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`;
}

/** A condition that is always true / always false. */
export const always: Condition = () => sql<SqlBool>`1 = 1`;
export const never: Condition = () => sql<SqlBool>`1 = 0`;

/** `column = value`, e.g. the author column of a `created by` criterion. */
export function equals(column: string, value: number | string): Condition {
  return (eb) => eb(column, '=', value);
}

/**
 * The `mentioned` criterion: a row of the mention table `table` whose `ownerColumn` is the
 * queried entity (`ownerRef`, e.g. `issues.id`) names `userId`.
 */
export function mentioned(table: string, ownerColumn: string, ownerRef: string, userId: number): Condition {
  return (eb) => eb.exists(eb.selectFrom(table).select('id').whereRef(ownerColumn, '=', ownerRef).where('userId', '=', userId));
}

/** `column IN (ids)`, or false for no ids. */
export function inIds(column: string, ids: readonly number[]): Condition {
  return ids.length === 0 ? never : (eb) => eb(column, 'in', ids);
}

/** The caller's user id for `… me` criteria; anonymous callers get `Please login to perform this query` (400). */
export function currentUserOrFail(ctx: Context): number {
  if (ctx.actor.userId === ANONYMOUS_ID) throw new QuerySyntaxError('Please login to perform this query');
  return ctx.actor.userId;
}

/**
 * A fuzzy criterion `~text~`: every whitespace-separated word must satisfy `word(w)`; no words
 * match everything.
 */
export function allWords(text: string, word: (w: string) => Condition): Condition {
  const words = text.split(/\s+/).filter(Boolean);
  return words.length === 0 ? always : (eb) => eb.and(words.map((w) => word(w)(eb)));
}

/** A sort item compiled to SQL: a column reference (or expression) and a direction. */
export interface SqlOrder {
  expression: string;
  direction: 'asc' | 'desc';
}

/** Maps `order by` items through a field → column table (fields were validated by the parser). */
export function compileOrders(query: ParsedQuery, columns: Record<string, string>): SqlOrder[] {
  return query.orders.map((order) => {
    const expression = columns[order.field];
    if (!expression) throw new QuerySyntaxError(`Can not order by field: ${order.field}`);
    return { expression, direction: order.direction };
  });
}
