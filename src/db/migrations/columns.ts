import { PostgresAdapter, sql, type CreateTableBuilder, type Kysely } from 'kysely';

/** True when the migration runs on PostgreSQL (dialects are told apart by their adapter). */
export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** Adds the auto-incrementing integer primary key `id` in the engine's own form. */
export function withId<T extends string>(db: Kysely<any>, table: CreateTableBuilder<T, any>): CreateTableBuilder<T, any> {
  return isPostgres(db)
    ? table.addColumn('id', 'serial', (c) => c.primaryKey())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

/** After rows with fixed ids were inserted, moves a PostgreSQL sequence past them (no-op on SQLite). */
export async function resetSequence(db: Kysely<any>, table: string): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`select setval(pg_get_serial_sequence(${table}, 'id'), greatest((select max(id) from ${sql.table(table)}), 1))`.execute(db);
}
