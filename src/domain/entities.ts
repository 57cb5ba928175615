import type { Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { NotFound } from '../errors.js';

/**
 * Loads one row by id from `table`, or throws NotFound(`<label> not found: <id>`).
 * The common first step of every entity operation.
 */
export async function loadRow<T extends keyof Database & string>(db: Db, table: T, id: number, label: string): Promise<Selectable<Database[T]>> {
  const row = await (db as any).selectFrom(table).selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFound(`${label} not found: ${id}`);
  return row as Selectable<Database[T]>;
}
