import { sql, type Kysely } from 'kysely';
import { withId } from './schema-helpers.js';

/**
 * Repository mirrors (docs/compatibility.md#repository-mirrors): a project's pull mirror (at most
 * one: its branches and tags follow a remote) and push mirrors (remotes its branches and tags are
 * pushed to after each ref change). `password` is encrypted at rest (`v1:…`, the job secrets'
 * key). The mirror worker leases a row while it syncs it (`lease_owner`, `lease_expires`);
 * `next_attempt_date` is when it is due (null: nothing to do — a push mirror with nothing
 * unpushed), `pending_date` the latest ref change a push mirror has not pushed yet,
 * `failure_count` the failed attempts since the last success (their backoff), `attempt_count`
 * every attempt. Deleted with their project.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('repository_mirrors'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('direction', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('user_name', 'text')
    .addColumn('password', 'text')
    .addColumn('interval_minutes', 'integer')
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('create_date', 'bigint', (c) => c.notNull())
    .addColumn('next_attempt_date', 'bigint')
    .addColumn('pending_date', 'bigint')
    .addColumn('last_attempt_date', 'bigint')
    .addColumn('last_success_date', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('failure_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires', 'bigint')
    .execute();
  await db.schema.createIndex('repository_mirrors_project').on('repository_mirrors').column('project_id').execute();
  await db.schema
    .createIndex('repository_mirrors_one_pull')
    .on('repository_mirrors')
    .column('project_id')
    .unique()
    .where(sql.ref('direction'), '=', sql.lit('PULL'))
    .execute();
  await db.schema.createIndex('repository_mirrors_due').on('repository_mirrors').column('next_attempt_date').execute();
}

/** Drops the mirrors. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('repository_mirrors').ifExists().execute();
}
