import type { Kysely } from 'kysely';

/**
 * The repository maintenance queue (docs/architecture.md#repository-maintenance),
 * `repository_maintenance`: one row per project whose repository was maintained or is due —
 * when it is due (`due_date`, epoch ms; null: not due), the last run's end and error, and the
 * lease of the process running it (`lease_owner`, `lease_expires`), as the code index leases
 * projects.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('repository_maintenance')
    .addColumn('project_id', 'integer', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
    .addColumn('due_date', 'bigint')
    .addColumn('last_run_date', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires', 'bigint')
    .execute();
  await db.schema.createIndex('repository_maintenance_due').on('repository_maintenance').column('due_date').execute();
}

/** Drops the queue. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('repository_maintenance').ifExists().execute();
}
