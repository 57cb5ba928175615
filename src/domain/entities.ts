import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { NotFound } from '../errors.js';
import { UNKNOWN_ID } from './context.js';

/**
 * Loads one row by id from `table`, or throws NotFound(`<label> not found: <id>`).
 * The common first step of every entity operation.
 */
export async function loadRow<T extends keyof Database & string>(db: Db, table: T, id: number, label: string): Promise<Selectable<Database[T]>> {
  const row = await (db as any).selectFrom(table).selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFound(`${label} not found: ${id}`);
  return row as Selectable<Database[T]>;
}

/**
 * Moves the records `userId` authored to `to` (the unknown user when a user is deleted,
 * docs/compatibility.md#users-deletion): each column names an author in its table. Runs in the
 * caller's transaction; each area passes its own tables.
 */
export async function reassignAuthor(db: Db, columns: readonly { table: keyof Database; column: string }[], userId: number, to: number): Promise<void> {
  for (const { table, column } of columns) {
    await (db as any)
      .updateTable(table)
      .set({ [column]: to })
      .where(column, '=', userId)
      .execute();
  }
}

/**
 * An area's `userDeleting` reaction (docs/compatibility.md#users-deletion): the records a deleted
 * user authored go to the unknown user through {@link reassignAuthor}. `columns` names the author
 * columns of each of the area's tables, updated in the order given.
 */
export function authorReassignment(columns: { [T in keyof Database]?: readonly (keyof Database[T] & string)[] }): (db: Db, userId: number) => Promise<void> {
  const list = Object.entries(columns).flatMap(([table, names]) => (names ?? []).map((column) => ({ table: table as keyof Database, column })));
  return (db, userId) => reassignAuthor(db, list, userId, UNKNOWN_ID);
}

/**
 * Inserts `rows` into `table`, leaving out those whose `key` columns match a row already there
 * (`on conflict (key) do nothing`): relation rows written again and again, such as mentions and
 * watches. Runs in the caller's transaction `db`; each area passes its own table.
 */
export async function insertMissing<T extends keyof Database & string>(
  db: Db,
  table: T,
  rows: Insertable<Database[T]>[],
  key: readonly string[],
): Promise<void> {
  if (rows.length === 0) return;
  await (db as any)
    .insertInto(table)
    .values(rows)
    .onConflict((oc: any) => oc.columns(key).doNothing())
    .execute();
}
