/**
 * The DDL the migrations share, frozen: a migration must create the same schema whenever it
 * runs, so these never change with the live code (src/db/dialect.ts holds what queries need of
 * each engine). A new migration that needs something else adds its own helper here, and an
 * existing helper is never edited once a released migration calls it.
 */
import { PostgresAdapter, sql, type CreateTableBuilder, type Kysely, type RawBuilder } from 'kysely';

const onPostgres = (db: Kysely<any>) => db.getExecutor().adapter instanceof PostgresAdapter;

/** Adds the auto-incrementing integer primary key `id`: `serial` on PostgreSQL, `integer … autoincrement` on SQLite. */
export function withId<T extends string>(db: Kysely<any>, table: CreateTableBuilder<T, any>): CreateTableBuilder<T, any> {
  return onPostgres(db) ? table.addColumn('id', 'serial', (c) => c.primaryKey()) : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

/**
 * Creates an index ordering `column` of `table` bytewise, for range scans of byte-ordered text:
 * PostgreSQL indexes `column collate "C"` whatever the database collation; SQLite compares text
 * bytewise already, so its ordinary index serves and nothing is created.
 */
export async function createBytewiseIndex(db: Kysely<any>, name: string, table: string, column: string): Promise<void> {
  if (onPostgres(db)) await sql`create index ${sql.ref(name)} on ${sql.table(table)} (${sql.ref(column)} collate "C")`.execute(db);
}

/** Texts searched by substring through a trigram index: `columns` of `table` (SQL names), and SQLite's FTS5 table. */
export interface TextSearchTables {
  readonly table: string;
  readonly columns: readonly string[];
  readonly searchTable: string;
}

/**
 * Creates the trigram index of a search, filled from the existing rows. SQLite: the FTS5 table
 * `searchTable` (trigram tokenizer, rowid = the row's id) and the triggers that keep it in step.
 * PostgreSQL: the `pg_trgm` extension when the server has it (a refused CREATE EXTENSION rolls
 * back to a savepoint and searches read the table itself), then a GIN index on `lower(column)`
 * per column.
 */
export async function createTextSearch(db: Kysely<any>, { table, columns, searchTable }: TextSearchTables): Promise<void> {
  if (onPostgres(db)) {
    const available = await sql`select 1 from pg_available_extensions where name = 'pg_trgm'`.execute(db);
    if (available.rows.length === 0) return;
    // Migrations run in a transaction: a refused CREATE EXTENSION rolls back to the savepoint.
    const savepoint = sql.ref(`${searchTable}_setup`);
    await sql`savepoint ${savepoint}`.execute(db);
    try {
      await sql`create extension if not exists pg_trgm`.execute(db);
      await sql`release savepoint ${savepoint}`.execute(db);
    } catch {
      await sql`rollback to savepoint ${savepoint}`.execute(db);
      return;
    }
    for (const column of columns) {
      await sql`create index ${sql.ref(`${table}_${column}_trgm`)} on ${sql.table(table)} using gin (lower(${sql.ref(column)}) gin_trgm_ops)`.execute(db);
    }
    return;
  }
  // Column names are the migrations' constants; `new.` is the trigger's row, not a table to quote.
  const names = sql.raw(columns.join(', '));
  const texts = (row: '' | 'new.') => sql.raw(columns.map((c) => `coalesce(${row}${c}, '')`).join(', '));
  const trigger = (event: string) => sql.ref(`${searchTable}_${event}`);
  const search = sql.table(searchTable);
  const source = sql.table(table);
  await sql`create virtual table ${search} using fts5(${names}, tokenize = 'trigram')`.execute(db);
  await sql`insert into ${search} (rowid, ${names}) select id, ${texts('')} from ${source}`.execute(db);
  await sql`create trigger ${trigger('insert')} after insert on ${source} begin
    insert into ${search} (rowid, ${names}) values (new.id, ${texts('new.')});
  end`.execute(db);
  await sql`create trigger ${trigger('update')} after update of ${names} on ${source} begin
    update ${search} set ${sql.raw(columns.map((c) => `${c} = coalesce(new.${c}, '')`).join(', '))} where rowid = new.id;
  end`.execute(db);
  await sql`create trigger ${trigger('delete')} after delete on ${source} begin
    delete from ${search} where rowid = old.id;
  end`.execute(db);
}

/** Drops what {@link createTextSearch} made (a migration's `down`). */
export async function dropTextSearch(db: Kysely<any>, { table, columns, searchTable }: TextSearchTables): Promise<void> {
  if (onPostgres(db)) {
    for (const column of columns) await sql`drop index if exists ${sql.ref(`${table}_${column}_trgm`)}`.execute(db);
    return;
  }
  for (const event of ['delete', 'update', 'insert']) await sql`drop trigger if exists ${sql.ref(`${searchTable}_${event}`)}`.execute(db);
  await sql`drop table if exists ${sql.table(searchTable)}`.execute(db);
}

/**
 * The type of a text column ordered bytewise, for prefix range scans (`>= 'abc' and < 'abc\u{10FFFF}'`)
 * of an ordinary index: `text collate "C"` on PostgreSQL whatever the database collation; `text`
 * on SQLite, which compares text bytewise already.
 */
export function bytewiseText(db: Kysely<any>): 'text' | RawBuilder<unknown> {
  return onPostgres(db) ? sql`text collate "C"` : 'text';
}
