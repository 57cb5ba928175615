import type { Kysely } from 'kysely';
import { withId } from './schema-helpers.js';

/**
 * Job caches in object storage (docs/compatibility.md#builds-caches "In object storage"),
 * `job_caches`: one row per cache of a project kept in an S3-compatible bucket — its normalized
 * `cache_key`, the `object_key` of its current archive (a fresh key per save, so a save never
 * overwrites an archive being read), the archive's `size` in bytes and `used_date` (epoch ms of
 * the last restore or save: eviction by the executor's `cacheTTL` and by the bound of all caches
 * reads it). Gone with the project.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('job_caches'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('cache_key', 'text', (c) => c.notNull())
    .addColumn('object_key', 'text', (c) => c.notNull().unique())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('used_date', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('job_caches_project_key', ['project_id', 'cache_key'])
    .execute();
  await db.schema.createIndex('job_caches_used').on('job_caches').column('used_date').execute();
}

/** Drops the stored caches' table. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('job_caches').ifExists().execute();
}
