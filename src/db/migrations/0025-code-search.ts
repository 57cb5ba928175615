import { sql, type Kysely } from 'kysely';
import { createTextSearch, dropTextSearch, withId, type TextSearchTables } from './schema-helpers.js';

const CODE_TEXT: TextSearchTables = { table: 'code_search_files', columns: ['content'], searchTable: 'code_search_text' };

/**
 * Code search (docs/compatibility.md#code-search): the text of the files of each project's default
 * branch, searched by substring through a trigram index (`createTextSearch` of schema-helpers.ts:
 * SQLite FTS5's trigram tokenizer, PostgreSQL's `pg_trgm`). `code_search_projects` is the index's
 * state per project: the commit indexed, `stale_date` when the branch moved since (null: up to
 * date) and the index worker's lease. `code_search_files` holds a file's path, blob and language,
 * and either its text or why it is not indexed (`skipped`: binary, too large, vendored).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('code_search_projects')
    .addColumn('project_id', 'integer', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
    .addColumn('indexed_commit', 'text')
    .addColumn('index_date', 'bigint')
    .addColumn('stale_date', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires', 'bigint')
    .execute();
  await db.schema.createIndex('code_search_projects_stale').on('code_search_projects').column('stale_date').execute();
  await withId(db, db.schema.createTable('code_search_files'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('blob_id', 'text', (c) => c.notNull())
    .addColumn('language', 'text')
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('skipped', 'text')
    .addColumn('content', 'text')
    .execute();
  await db.schema.createIndex('code_search_files_path').on('code_search_files').columns(['project_id', 'path']).unique().execute();
  await createTextSearch(db, CODE_TEXT);
  await sql`insert into code_search_projects (project_id, stale_date) select id, 0 from projects`.execute(db);
}

/** Drops the code index. */
export async function down(db: Kysely<any>): Promise<void> {
  await dropTextSearch(db, CODE_TEXT);
  await db.schema.dropTable('code_search_files').ifExists().execute();
  await db.schema.dropTable('code_search_projects').ifExists().execute();
}
