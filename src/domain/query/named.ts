import type { Kysely, Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { Conflict } from '../../errors.js';
import { wildcardToLike } from '../../query/index.js';
import { likeCondition } from './compile.js';

/** The administrator-managed entities whose `name` is unique: roles, groups and label specs. */
export type NamedTable = 'roles' | 'groups' | 'labelSpecs';

/** The columns every named table has, to query them alike. */
type NamedDatabase = Record<NamedTable, { id: number; name: string }>;

/**
 * Throws Conflict `message` when a row of `table` other than `exceptId` already has `name`:
 * compared ignoring case (roles, groups) or exactly (label specs) — docs/compatibility.md#gitloom-differs-errors, docs/compatibility.md#gitloom-differs-improved-behaviour.
 */
export async function assertNameFree(
  db: Db,
  table: NamedTable,
  name: string,
  message: string,
  options: { ignoringCase: boolean; exceptId?: number },
): Promise<void> {
  let query = (db as unknown as Kysely<NamedDatabase>).selectFrom(table).select('id');
  query = options.ignoringCase ? query.where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase())) : query.where('name', '=', name);
  if (options.exceptId !== undefined) query = query.where('id', '<>', options.exceptId);
  if (await query.executeTakeFirst()) throw new Conflict(message);
}

/**
 * A page of `table` ordered by name then id; with `name`, only the rows whose name matches it
 * case-insensitively as a whole, `*` a wildcard (the `name` parameter of the administrators' list
 * endpoints, docs/compatibility.md#roles, docs/compatibility.md#groups-and-memberships, docs/compatibility.md#projects-labels).
 */
export async function queryByName<T extends NamedTable>(
  db: Db,
  table: T,
  name: string | undefined,
  offset: number,
  count: number,
): Promise<Selectable<Database[T]>[]> {
  let query = (db as unknown as Kysely<NamedDatabase>).selectFrom(table as NamedTable).selectAll();
  if (name) query = query.where((eb) => likeCondition(`${table as NamedTable}.name`, wildcardToLike(name))(eb));
  return (await query.orderBy('name').orderBy('id').offset(offset).limit(count).execute()) as unknown as Selectable<Database[T]>[];
}
