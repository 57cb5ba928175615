import { sql, type Kysely } from 'kysely';
import { withId } from './schema-helpers.js';

/**
 * Pull requests, second part (docs/compatibility.md#pull-requests-sub-entities, docs/compatibility.md#pull-requests-query-language): labels on requests, the commits each
 * request brought in (for `includes commit` and fixed issues), one open request per change
 * (multi-process safety), and the indexes of the query language's criteria and orders.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('pull_request_labels'))
    .addColumn('request_id', 'integer', (c) => c.notNull().references('pull_requests.id').onDelete('cascade'))
    .addColumn('spec_id', 'integer', (c) => c.notNull().references('label_specs.id').onDelete('cascade'))
    .addUniqueConstraint('pull_request_labels_request_spec', ['request_id', 'spec_id'])
    .execute();
  await db.schema.createIndex('pull_request_labels_spec').on('pull_request_labels').column('spec_id').execute();

  await db.schema
    .createTable('pull_request_commits')
    .addColumn('request_id', 'integer', (c) => c.notNull().references('pull_requests.id').onDelete('cascade'))
    .addColumn('commit_hash', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('pull_request_commits_pk', ['request_id', 'commit_hash'])
    .execute();
  await db.schema.createIndex('pull_request_commits_commit').on('pull_request_commits').column('commit_hash').execute();

  await db.schema
    .createIndex('pull_requests_one_open_per_change')
    .on('pull_requests')
    .unique()
    .columns(['target_project_id', 'target_branch', 'source_project_id', 'source_branch'])
    .where(sql.ref('status'), '=', 'OPEN')
    .execute();
  await db.schema.createIndex('pull_requests_status_number').on('pull_requests').columns(['status', 'number']).execute();
  await db.schema.createIndex('pull_requests_number').on('pull_requests').columns(['number', 'target_project_id']).execute();
  await db.schema.createIndex('pull_requests_submit_date').on('pull_requests').column('submit_date').execute();
  await db.schema.createIndex('pull_requests_close_date').on('pull_requests').column('close_date').execute();
  await db.schema
    .createIndex('pull_requests_target_branch')
    .on('pull_requests')
    .expression(sql`lower(target_branch)`)
    .execute();
  await db.schema.createIndex('pull_request_reviews_request_status').on('pull_request_reviews').columns(['request_id', 'status']).execute();
  await db.schema.createIndex('pull_request_assignments_request').on('pull_request_assignments').column('request_id').execute();
  await db.schema.createIndex('pull_request_watches_request').on('pull_request_watches').column('request_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const index of [
    'pull_request_watches_request',
    'pull_request_assignments_request',
    'pull_request_reviews_request_status',
    'pull_requests_target_branch',
    'pull_requests_close_date',
    'pull_requests_submit_date',
    'pull_requests_number',
    'pull_requests_status_number',
    'pull_requests_one_open_per_change',
  ]) {
    await db.schema.dropIndex(index).execute();
  }
  for (const table of ['pull_request_commits', 'pull_request_labels']) await db.schema.dropTable(table).execute();
}
