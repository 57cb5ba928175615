import { sql, type Kysely } from 'kysely';
import { bytewiseText, withId } from './schema-helpers.js';

/**
 * Symbols of the code index (docs/compatibility.md#code-search): the definitions Universal Ctags
 * finds in each indexed file, `code_search_symbols` — the file (its rows go with it), the
 * project, the name and its lower case (`name_lower`, ordered bytewise so that a prefix is an
 * index range on both engines), the kind (`function`, `class`, …), the 1-based line, the
 * enclosing scope and the language. `code_search_files.symbols_skipped` records why a file's
 * symbols are missing or cut (Universal Ctags failed or timed out on it, too many symbols).
 * Every project's index is made stale from its start, so the index workers find the symbols of
 * the files indexed before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('code_search_files').addColumn('symbols_skipped', 'text').execute();
  await withId(db, db.schema.createTable('code_search_symbols'))
    .addColumn('file_id', 'integer', (c) => c.notNull().references('code_search_files.id').onDelete('cascade'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_lower', bytewiseText(db), (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('line', 'integer', (c) => c.notNull())
    .addColumn('scope', 'text')
    .addColumn('language', 'text')
    .execute();
  await db.schema.createIndex('code_search_symbols_project_name').on('code_search_symbols').columns(['project_id', 'name_lower']).execute();
  await db.schema.createIndex('code_search_symbols_name').on('code_search_symbols').column('name_lower').execute();
  await db.schema.createIndex('code_search_symbols_file').on('code_search_symbols').column('file_id').execute();
  await sql`update code_search_projects set indexed_commit = null, stale_date = 0`.execute(db);
}

/** Drops the symbols. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('code_search_symbols').ifExists().execute();
  await db.schema.alterTable('code_search_files').dropColumn('symbols_skipped').execute();
}
