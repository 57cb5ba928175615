import type { Kysely } from 'kysely';
import { withId } from './schema-helpers.js';

/**
 * CI builds (docs/compatibility.md#builds-json, docs/compatibility.md#builds-lifecycle): builds with their params, dependences and labels.
 * Besides the wire fields a build row carries the scheduler's bookkeeping: the lease of the
 * process running it (`lease_owner`, `lease_expires`) and the retry count.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('builds'))
    .addColumn('number_scope_id', 'integer', (c) => c.notNull())
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('agent_id', 'integer')
    .addColumn('submitter_id', 'integer', (c) => c.notNull())
    .addColumn('canceller_id', 'integer')
    .addColumn('job_name', 'text', (c) => c.notNull())
    .addColumn('job_workspace', 'text')
    .addColumn('ref_name', 'text', (c) => c.notNull())
    .addColumn('version', 'text')
    .addColumn('description', 'text')
    .addColumn('uuid', 'text', (c) => c.notNull())
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('commit_hash', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('paused', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('submit_date', 'bigint', (c) => c.notNull())
    .addColumn('pending_date', 'bigint')
    .addColumn('running_date', 'bigint')
    .addColumn('finish_date', 'bigint')
    .addColumn('retry_date', 'bigint')
    .addColumn('pipeline', 'text', (c) => c.notNull())
    .addColumn('submit_reason', 'text', (c) => c.notNull())
    .addColumn('request_id', 'integer', (c) => c.references('pull_requests.id').onDelete('set null'))
    .addColumn('issue_id', 'integer')
    .addColumn('retry_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires', 'bigint')
    .addUniqueConstraint('builds_scope_number', ['number_scope_id', 'number'])
    .execute();
  await db.schema.createIndex('builds_project_job').on('builds').columns(['project_id', 'job_name']).execute();
  await db.schema.createIndex('builds_status').on('builds').column('status').execute();
  await db.schema.createIndex('builds_commit').on('builds').column('commit_hash').execute();
  await db.schema.createIndex('builds_request').on('builds').column('request_id').execute();
  await db.schema.createIndex('builds_pipeline').on('builds').column('pipeline').execute();
  await db.schema.createIndex('builds_submitter').on('builds').column('submitter_id').execute();
  await db.schema.createIndex('builds_number').on('builds').column('number').execute();

  await withId(db, db.schema.createTable('build_params'))
    .addColumn('build_id', 'integer', (c) => c.notNull().references('builds.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('value', 'text')
    .execute();
  await db.schema.createIndex('build_params_build').on('build_params').column('build_id').execute();
  await db.schema.createIndex('build_params_name_value').on('build_params').columns(['name', 'value']).execute();

  await withId(db, db.schema.createTable('build_dependences'))
    .addColumn('dependent_id', 'integer', (c) => c.notNull().references('builds.id').onDelete('cascade'))
    .addColumn('dependency_id', 'integer', (c) => c.notNull().references('builds.id').onDelete('cascade'))
    .addColumn('require_successful', 'integer', (c) => c.notNull())
    .addColumn('artifacts', 'text')
    .addColumn('destination_path', 'text')
    .execute();
  await db.schema.createIndex('build_dependences_dependent').on('build_dependences').column('dependent_id').execute();
  await db.schema.createIndex('build_dependences_dependency').on('build_dependences').column('dependency_id').execute();

  await withId(db, db.schema.createTable('build_labels'))
    .addColumn('build_id', 'integer', (c) => c.notNull().references('builds.id').onDelete('cascade'))
    .addColumn('spec_id', 'integer', (c) => c.notNull().references('label_specs.id').onDelete('cascade'))
    .addUniqueConstraint('build_labels_build_spec', ['build_id', 'spec_id'])
    .execute();
  await db.schema.createIndex('build_labels_spec').on('build_labels').column('spec_id').execute();
}

/** Drops the build tables. */
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['build_labels', 'build_dependences', 'build_params', 'builds']) await db.schema.dropTable(table).ifExists().execute();
}
