import { Type } from '@sinclair/typebox';
import { BadRequest } from '../../errors.js';
import { fromWireDate } from '../../wire/dates.js';

export { Nullable, WireDate } from '../../wire/schema.js';

/** A date accepted as input: ISO-8601 text or epoch milliseconds (a `bigint` column: int64). */
export const InputDate = Type.Union([Type.String(), Type.Integer({ format: 'int64' })]);

/**
 * Epoch milliseconds of an {@link InputDate} (or of a query parameter, where epoch milliseconds
 * arrive as digits), for the domain, which takes dates as numbers; an absent (undefined) or
 * cleared (null) date stays so. Throws BadRequest naming `field` (src/wire/dates.ts `fromWireDate`).
 */
export function inputDate<T extends null | undefined>(value: string | number | T, field: string): number | T {
  if (value === undefined || value === null) return value as T;
  return fromWireDate(typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value, field);
}

/** A numeric path id (digits only, int32: see schemas/validation.ts). */
export const IdParams = <K extends string>(name: K) => Type.Object({ [name]: Type.Integer() } as { [P in K]: ReturnType<typeof Type.Integer> });

/**
 * `offset` and `count` (docs/compatibility.md#gitloom-differs-pagination-and-query-parameters): defaults 0 and 100, count at most 100; offset bounded
 * to int32 like every integer (schemas/validation.ts).
 */
export const PageQuery = {
  offset: Type.Integer({ minimum: 0, default: 0 }),
  count: Type.Integer({ minimum: 0, default: 100 }),
};

/** Checks the page size bound and returns `{offset, count}`. Throws BadRequest. */
export function page(query: { offset?: number; count?: number }): { offset: number; count: number } {
  const count = query.count ?? 100;
  if (count > 100) throw new BadRequest('Count should not be greater than 100');
  return { offset: query.offset ?? 0, count };
}

/** An id returned by a create: a bare JSON number. */
export const CreatedId = Type.Integer({ description: 'id of the created entity' });

/**
 * Body of a text operation (docs/compatibility.md#gitloom-differs-mount-and-media-types): raw text of any content type; a request without a
 * body at all (no content type, nothing sent) arrives as null and reads as the empty string.
 */
export const TextBody = Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'raw text' }));
