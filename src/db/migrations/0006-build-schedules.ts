import type { Kysely } from 'kysely';
import { withId } from './schema-helpers.js';

/**
 * Claimed firings of `!ScheduleTrigger` jobs (docs/compatibility.md#builds-triggers): the unique key lets
 * exactly one server process submit a scheduled build when several share the database.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('build_schedule_fires'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('job_name', 'text', (c) => c.notNull())
    .addColumn('fire_time', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('build_schedule_fires_key', ['project_id', 'job_name', 'fire_time'])
    .execute();
  await db.schema.createIndex('build_schedule_fires_time').on('build_schedule_fires').column('fire_time').execute();
}

/** Drops the table. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('build_schedule_fires').ifExists().execute();
}
