import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { Conflict } from '../../errors.js';
import { wildcardToLike } from '../../query/index.js';
import { requireAdmin } from '../actor.js';
import type { Context } from '../context.js';
import { auditChanges, recordAudit } from '../audit/index.js';
import { loadRow } from '../entities.js';
import { uniquely } from '../unique.js';
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

/**
 * The administrators' operations every named entity shares, over the calling area's own `table`
 * (docs/compatibility.md#roles, docs/compatibility.md#groups-and-memberships,
 * docs/compatibility.md#projects-labels).
 *
 * - `get`: the row with that id, for administrators; NotFound `<label> not found: <id>`.
 * - `query`: a page by name ({@link queryByName}), for administrators.
 * - `create`: for administrators, inserts the row `values()` gives (it validates the input,
 *   throwing BadRequest) in a transaction, returning its id; Conflict `<taken> name already
 *   used: <name>` when the name is not free ({@link assertNameFree}, compared `ignoringCase` or
 *   exactly), also when a concurrent writer took it first.
 * - `update`: `write`s the changes of `row` (read through `get`) in a transaction, once its new
 *   `name`, when changed, is found free; the same Conflict.
 *
 * Creates and updates are audited in their transaction as `<auditType>.create` (the row) and
 * `<auditType>.update` (the fields changed), docs/audit-log.md#actions.
 */
export function namedEntity<T extends NamedTable>(label: string, table: T, options: { taken: string; ignoringCase: boolean; auditType: string }) {
  const { taken, ignoringCase, auditType } = options;
  const audit = (ctx: Context, tx: Db, verb: string, id: number, name: string, changes: { before?: unknown; after?: unknown }) =>
    recordAudit(ctx, tx, { action: `${auditType}.${verb}`, targetType: auditType, targetId: id, targetName: name, ...changes });
  const nameFree = (db: Db, name: string, exceptId?: number) =>
    assertNameFree(db, table, name, `${taken} name already used: ${name}`, { ignoringCase, exceptId });
  const same = (a: string, b: string) => (ignoringCase ? a.toLowerCase() === b.toLowerCase() : a === b);
  return {
    async get(ctx: Context, id: number): Promise<Selectable<Database[T]>> {
      requireAdmin(ctx.actor);
      return loadRow(ctx.db, table, id, label);
    },
    async query(ctx: Context, name: string | undefined, offset: number, count: number): Promise<Selectable<Database[T]>[]> {
      requireAdmin(ctx.actor);
      return queryByName(ctx.db, table, name, offset, count);
    },
    async create(ctx: Context, values: () => Insertable<Database[T]> & { name: string }): Promise<number> {
      requireAdmin(ctx.actor);
      const row = values();
      return uniquely(`${taken} name already used: ${row.name}`, () =>
        ctx.db.transaction().execute(async (tx) => {
          await nameFree(tx, row.name);
          const inserted: { id: number } = await (tx as any).insertInto(table).values(row).returning('id').executeTakeFirstOrThrow();
          await audit(ctx, tx, 'create', inserted.id, row.name, { after: row });
          return inserted.id;
        }),
      );
    },
    async update(ctx: Context, row: { id: number; name: string }, name: string, write: (tx: Db) => Promise<unknown>): Promise<void> {
      await uniquely(`${taken} name already used: ${name}`, () =>
        ctx.db.transaction().execute(async (tx) => {
          if (!same(name, row.name)) await nameFree(tx, name, row.id);
          await write(tx);
          const { id: _id, ...after } = (await loadRow(tx, table, row.id, label)) as Record<string, unknown>;
          const { id: _before, ...before } = row as Record<string, unknown>;
          await audit(ctx, tx, 'update', row.id, name, auditChanges(before, after));
        }),
      );
    },
  };
}
