import type { Kysely } from 'kysely';
import { withId } from './schema-helpers.js';

/**
 * Issues and the conversations around them (docs/compatibility.md#comments-and-issues): issues with their
 * fields, comments, watches, votes, changes, per-issue authorizations and fixing commits;
 * mentions; code comments and replies; the five query personalizations and the user-level
 * saved queries and watches (docs/compatibility.md#users-endpoints, docs/compatibility.md#query-personalizations).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('issues'))
    .addColumn('number_scope_id', 'integer', (c) => c.notNull())
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('submitter_id', 'integer', (c) => c.notNull())
    .addColumn('submit_date', 'bigint', (c) => c.notNull())
    .addColumn('vote_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('comment_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('uuid', 'text', (c) => c.notNull())
    .addColumn('threading_reference', 'text')
    .addColumn('last_activity_user_id', 'integer')
    .addColumn('last_activity_date', 'bigint', (c) => c.notNull())
    .addColumn('last_activity_description', 'text', (c) => c.notNull())
    .addColumn('confidential', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('pin_date', 'bigint')
    .addUniqueConstraint('issues_scope_number', ['number_scope_id', 'number'])
    .execute();
  await db.schema.createIndex('issues_project_number').on('issues').columns(['project_id', 'number']).execute();
  await db.schema.createIndex('issues_activity').on('issues').column('last_activity_date').execute();
  await db.schema.createIndex('issues_submitter').on('issues').column('submitter_id').execute();

  await withId(db, db.schema.createTable('issue_fields'))
    .addColumn('issue_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('value', 'text')
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('ordinal', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('issue_fields_issue_name').on('issue_fields').columns(['issue_id', 'name']).execute();
  await db.schema.createIndex('issue_fields_name_value').on('issue_fields').columns(['name', 'value']).execute();

  await withId(db, db.schema.createTable('issue_comments'))
    .addColumn('issue_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('date', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('issue_comments_issue').on('issue_comments').column('issue_id').execute();
  await db.schema.createIndex('issue_comments_user').on('issue_comments').column('user_id').execute();

  await withId(db, db.schema.createTable('issue_watches'))
    .addColumn('issue_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('watching', 'integer', (c) => c.notNull())
    .addUniqueConstraint('issue_watches_issue_user', ['issue_id', 'user_id'])
    .execute();
  await db.schema.createIndex('issue_watches_user').on('issue_watches').column('user_id').execute();

  await withId(db, db.schema.createTable('issue_votes'))
    .addColumn('issue_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('date', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('issue_votes_issue_user', ['issue_id', 'user_id'])
    .execute();
  await db.schema.createIndex('issue_votes_user').on('issue_votes').column('user_id').execute();

  await withId(db, db.schema.createTable('issue_changes'))
    .addColumn('issue_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    .addColumn('user_id', 'integer')
    .addColumn('date', 'bigint', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('issue_changes_issue').on('issue_changes').column('issue_id').execute();

  await withId(db, db.schema.createTable('issue_authorizations'))
    .addColumn('issue_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addUniqueConstraint('issue_authorizations_issue_user', ['issue_id', 'user_id'])
    .execute();
  await db.schema.createIndex('issue_authorizations_user').on('issue_authorizations').column('user_id').execute();

  await withId(db, db.schema.createTable('issue_commits'))
    .addColumn('issue_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('commit_hash', 'text', (c) => c.notNull())
    .addUniqueConstraint('issue_commits_issue_project_commit', ['issue_id', 'project_id', 'commit_hash'])
    .execute();
  await db.schema.createIndex('issue_commits_commit').on('issue_commits').column('commit_hash').execute();

  await withId(db, db.schema.createTable('issue_schedules'))
    .addColumn('issue_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    .addColumn('milestone_id', 'integer', (c) => c.notNull().references('milestones.id').onDelete('cascade'))
    .addColumn('date', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('issue_schedules_issue_milestone', ['issue_id', 'milestone_id'])
    .execute();
  await db.schema.createIndex('issue_schedules_milestone').on('issue_schedules').column('milestone_id').execute();

  await createCodeComments(db);
  for (const [table, owner, ownerTable] of [
    ['issue_mentions', 'issue_id', 'issues'],
    ['pull_request_mentions', 'request_id', 'pull_requests'],
    ['code_comment_mentions', 'comment_id', 'code_comments'],
  ] as const) {
    await withId(db, db.schema.createTable(table))
      .addColumn(owner, 'integer', (c) => c.notNull().references(`${ownerTable}.id`).onDelete('cascade'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addUniqueConstraint(`${table}_owner_user`, [owner, 'user_id'])
      .execute();
    await db.schema.createIndex(`${table}_user`).on(table).column('user_id').execute();
  }

  for (const [table, extra] of [
    ['issue_query_personalizations', 'query_watches'],
    ['pull_request_query_personalizations', 'query_watches'],
    ['build_query_personalizations', 'query_subscriptions'],
    ['commit_query_personalizations', 'query_subscriptions'],
    ['code_comment_query_personalizations', null],
  ] as const) {
    let builder = withId(db, db.schema.createTable(table))
      .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('queries', 'text', (c) => c.notNull());
    if (extra) builder = builder.addColumn(extra, 'text', (c) => c.notNull());
    await builder.addUniqueConstraint(`${table}_project_user`, ['project_id', 'user_id']).execute();
    await db.schema.createIndex(`${table}_user`).on(table).column('user_id').execute();
  }

  await db.schema
    .createTable('user_queries_and_watches')
    .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('data', 'text', (c) => c.notNull())
    .execute();
}

async function createCodeComments(db: Kysely<any>): Promise<void> {
  const compareContext = <T extends { addColumn: (...args: any[]) => T }>(table: T): T =>
    table
      .addColumn('compare_pull_request_id', 'integer', (c: any) => c.references('pull_requests.id').onDelete('cascade'))
      .addColumn('compare_old_commit_hash', 'text', (c: any) => c.notNull())
      .addColumn('compare_new_commit_hash', 'text', (c: any) => c.notNull())
      .addColumn('compare_path_filter', 'text')
      .addColumn('compare_current_file', 'text')
      .addColumn('compare_whitespace_option', 'text', (c: any) => c.notNull());

  await compareContext(
    withId(db, db.schema.createTable('code_comments'))
      .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('content', 'text', (c) => c.notNull())
      .addColumn('create_date', 'bigint', (c) => c.notNull())
      .addColumn('last_activity_user_id', 'integer')
      .addColumn('last_activity_date', 'bigint', (c) => c.notNull())
      .addColumn('last_activity_description', 'text', (c) => c.notNull())
      .addColumn('reply_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('mark_commit_hash', 'text', (c) => c.notNull())
      .addColumn('mark_path', 'text', (c) => c.notNull())
      .addColumn('mark_from_row', 'integer', (c) => c.notNull())
      .addColumn('mark_from_column', 'integer', (c) => c.notNull())
      .addColumn('mark_to_row', 'integer', (c) => c.notNull())
      .addColumn('mark_to_column', 'integer', (c) => c.notNull())
      .addColumn('mark_tab_width', 'integer', (c) => c.notNull())
      .addColumn('resolved', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('uuid', 'text', (c) => c.notNull()),
  ).execute();
  await db.schema.createIndex('code_comments_project_activity').on('code_comments').columns(['project_id', 'last_activity_date']).execute();
  await db.schema.createIndex('code_comments_request').on('code_comments').column('compare_pull_request_id').execute();
  await db.schema.createIndex('code_comments_user').on('code_comments').column('user_id').execute();

  await compareContext(
    withId(db, db.schema.createTable('code_comment_replies'))
      .addColumn('comment_id', 'integer', (c) => c.notNull().references('code_comments.id').onDelete('cascade'))
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('content', 'text', (c) => c.notNull())
      .addColumn('date', 'bigint', (c) => c.notNull()),
  ).execute();
  await db.schema.createIndex('code_comment_replies_comment').on('code_comment_replies').column('comment_id').execute();
  await db.schema.createIndex('code_comment_replies_user').on('code_comment_replies').column('user_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'user_queries_and_watches',
    'code_comment_query_personalizations',
    'commit_query_personalizations',
    'build_query_personalizations',
    'pull_request_query_personalizations',
    'issue_query_personalizations',
    'code_comment_mentions',
    'pull_request_mentions',
    'issue_mentions',
    'code_comment_replies',
    'code_comments',
    'issue_schedules',
    'issue_commits',
    'issue_authorizations',
    'issue_changes',
    'issue_votes',
    'issue_watches',
    'issue_comments',
    'issue_fields',
    'issues',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
