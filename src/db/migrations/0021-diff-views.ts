import type { Kysely } from 'kysely';

/**
 * What each user chose of the diff view (docs/compatibility.md#diff-view): the layout
 * (`unified` or `split`) in `diff_view_preferences`, one row per user; and the files of a pull
 * request marked viewed in `viewed_files`, one row per user, request and path, with the blob the
 * mark was made on (`blob_id`: the file's new blob, or its old blob prefixed `deleted:` for a
 * deleted file), so a later change of the file shows it unviewed again. Deleted with their user
 * or request.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('diff_view_preferences')
    .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('layout', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('viewed_files')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('request_id', 'integer', (c) => c.notNull().references('pull_requests.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('blob_id', 'text', (c) => c.notNull())
    .addColumn('date', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('viewed_files_pk', ['user_id', 'request_id', 'path'])
    .execute();
  await db.schema.createIndex('viewed_files_request').on('viewed_files').column('request_id').execute();
}

/** Drops the diff view choices. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('viewed_files').ifExists().execute();
  await db.schema.dropTable('diff_view_preferences').ifExists().execute();
}
