import type { Kysely } from 'kysely';
import { withId } from './schema-helpers.js';

/**
 * Git LFS (docs/compatibility.md#git-lfs): `lfs_objects` says which project references which
 * object of the store (`oid`, the SHA-256 of its content in lower-case hex, and its `size` in
 * bytes), one row per pair — the file lives once under `<data dir>/lfs`, whatever the number of
 * projects; `lfs_locks` holds the file locks of the locking API, one per (project, path).
 * Rows go with their project.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('lfs_objects')
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('oid', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('create_date', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('lfs_objects_pk', ['project_id', 'oid'])
    .execute();
  await db.schema.createIndex('lfs_objects_oid').on('lfs_objects').column('oid').execute();

  await withId(db, db.schema.createTable('lfs_locks'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('ref_name', 'text')
    .addColumn('locked_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('lfs_locks_path', ['project_id', 'path'])
    .execute();
}

/** Drops the LFS tables. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('lfs_locks').ifExists().execute();
  await db.schema.dropTable('lfs_objects').ifExists().execute();
}
