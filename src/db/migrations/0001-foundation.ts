import { sql, type Kysely } from 'kysely';
import { withId } from './schema-helpers.js';

/** Users, credentials, roles, groups, projects, authorizations and pull requests. */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('users'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('full_name', 'text')
    .addColumn('password_hash', 'text')
    .addColumn('create_date', 'bigint', (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable('email_addresses'))
    .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('value', 'text', (c) => c.notNull().unique())
    .addColumn('primary', 'integer', (c) => c.notNull())
    .addColumn('git', 'integer', (c) => c.notNull())
    .addColumn('verification_code', 'text')
    .execute();
  await db.schema.createIndex('email_addresses_owner').on('email_addresses').column('owner_id').execute();

  await withId(db, db.schema.createTable('access_tokens'))
    .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('create_date', 'bigint', (c) => c.notNull())
    .addColumn('expire_date', 'bigint')
    .execute();
  await db.schema.createIndex('access_tokens_owner').on('access_tokens').column('owner_id').execute();

  await db.schema
    .createTable('settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable('roles'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('manage_project', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('create_children', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('manage_pull_requests', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('manage_code_comments', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('code_privilege', 'text', (c) => c.notNull().defaultTo('NONE'))
    .addColumn('manage_issues', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('access_confidential_issues', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('schedule_issues', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('editable_issue_fields', 'text', (c) => c.notNull())
    .addColumn('manage_builds', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('job_privileges', 'text', (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable('groups'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('description', 'text')
    .addColumn('administrator', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('create_root_projects', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('enforce2fa', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await withId(db, db.schema.createTable('memberships'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.notNull().references('groups.id').onDelete('cascade'))
    .addUniqueConstraint('memberships_user_group', ['user_id', 'group_id'])
    .execute();
  await db.schema.createIndex('memberships_group').on('memberships').column('group_id').execute();

  await withId(db, db.schema.createTable('projects'))
    .addColumn('forked_from_id', 'integer', (c) => c.references('projects.id').onDelete('set null'))
    .addColumn('parent_id', 'integer', (c) => c.references('projects.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('create_date', 'bigint', (c) => c.notNull())
    .addColumn('default_role_id', 'integer', (c) => c.references('roles.id').onDelete('set null'))
    .addColumn('code_management', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('issue_management', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('git_pack_config', 'text', (c) => c.notNull())
    .addColumn('code_analysis_setting', 'text', (c) => c.notNull())
    .addColumn('setting', 'text')
    .addColumn('service_desk_name', 'text', (c) => c.unique())
    .addColumn('last_activity_date', 'bigint', (c) => c.notNull())
    .addColumn('last_commit_date', 'bigint')
    .execute();
  await db.schema
    .createIndex('projects_sibling_name')
    .on('projects')
    .unique()
    .expression(sql`coalesce(parent_id, 0), lower(name)`)
    .execute();
  await db.schema
    .createIndex('projects_path')
    .on('projects')
    .unique()
    .expression(sql`lower(path)`)
    .execute();
  await db.schema.createIndex('projects_path_exact').on('projects').column('path').execute();
  await db.schema.createIndex('projects_forked_from').on('projects').column('forked_from_id').execute();

  await withId(db, db.schema.createTable('user_authorizations'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role_id', 'integer', (c) => c.notNull().references('roles.id').onDelete('cascade'))
    .addUniqueConstraint('user_authorizations_user_project', ['user_id', 'project_id'])
    .execute();
  await db.schema.createIndex('user_authorizations_project').on('user_authorizations').column('project_id').execute();

  await withId(db, db.schema.createTable('group_authorizations'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.notNull().references('groups.id').onDelete('cascade'))
    .addColumn('role_id', 'integer', (c) => c.notNull().references('roles.id').onDelete('cascade'))
    .addUniqueConstraint('group_authorizations_group_project', ['group_id', 'project_id'])
    .execute();
  await db.schema.createIndex('group_authorizations_project').on('group_authorizations').column('project_id').execute();

  await db.schema
    .createTable('number_sequences')
    .addColumn('scope_id', 'integer', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('next_number', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('number_sequences_pk', ['scope_id', 'kind'])
    .execute();

  await withId(db, db.schema.createTable('pull_requests'))
    .addColumn('number_scope_id', 'integer', (c) => c.notNull())
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('submitter_id', 'integer', (c) => c.notNull())
    .addColumn('target_project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('target_branch', 'text', (c) => c.notNull())
    .addColumn('source_project_id', 'integer', (c) => c.references('projects.id').onDelete('set null'))
    .addColumn('source_branch', 'text', (c) => c.notNull())
    .addColumn('base_commit_hash', 'text', (c) => c.notNull())
    .addColumn('build_commit_hash', 'text')
    .addColumn('submit_date', 'bigint', (c) => c.notNull())
    .addColumn('merge_strategy', 'text', (c) => c.notNull())
    .addColumn('uuid', 'text', (c) => c.notNull())
    .addColumn('comment_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_activity_user_id', 'integer')
    .addColumn('last_activity_date', 'bigint', (c) => c.notNull())
    .addColumn('last_activity_description', 'text', (c) => c.notNull())
    .addColumn('code_comments_update_date', 'bigint')
    .addColumn('check_error', 'text')
    .addColumn('close_date', 'bigint')
    .addColumn('preview_target_head_commit_hash', 'text')
    .addColumn('preview_head_commit_hash', 'text')
    .addColumn('preview_merge_strategy', 'text')
    .addColumn('preview_merge_commit_hash', 'text')
    .addUniqueConstraint('pull_requests_scope_number', ['number_scope_id', 'number'])
    .execute();
  await db.schema.createIndex('pull_requests_target').on('pull_requests').columns(['target_project_id', 'target_branch', 'status']).execute();
  await db.schema.createIndex('pull_requests_source').on('pull_requests').columns(['source_project_id', 'source_branch', 'status']).execute();
  await db.schema.createIndex('pull_requests_activity').on('pull_requests').column('last_activity_date').execute();
  await db.schema.createIndex('pull_requests_submitter').on('pull_requests').column('submitter_id').execute();

  await withId(db, db.schema.createTable('pull_request_updates'))
    .addColumn('request_id', 'integer', (c) => c.notNull().references('pull_requests.id').onDelete('cascade'))
    .addColumn('head_commit_hash', 'text', (c) => c.notNull())
    .addColumn('target_head_commit_hash', 'text', (c) => c.notNull())
    .addColumn('date', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('pull_request_updates_request').on('pull_request_updates').column('request_id').execute();

  await withId(db, db.schema.createTable('pull_request_changes'))
    .addColumn('request_id', 'integer', (c) => c.notNull().references('pull_requests.id').onDelete('cascade'))
    .addColumn('user_id', 'integer')
    .addColumn('date', 'bigint', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('pull_request_changes_request').on('pull_request_changes').column('request_id').execute();

  await withId(db, db.schema.createTable('pull_request_comments'))
    .addColumn('request_id', 'integer', (c) => c.notNull().references('pull_requests.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('date', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('pull_request_comments_request').on('pull_request_comments').column('request_id').execute();
  await db.schema.createIndex('pull_request_comments_user').on('pull_request_comments').column('user_id').execute();

  await withId(db, db.schema.createTable('pull_request_reviews'))
    .addColumn('request_id', 'integer', (c) => c.notNull().references('pull_requests.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('status_date', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('pull_request_reviews_request_user', ['request_id', 'user_id'])
    .execute();
  await db.schema.createIndex('pull_request_reviews_user').on('pull_request_reviews').column('user_id').execute();

  await withId(db, db.schema.createTable('pull_request_assignments'))
    .addColumn('request_id', 'integer', (c) => c.notNull().references('pull_requests.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addUniqueConstraint('pull_request_assignments_request_user', ['request_id', 'user_id'])
    .execute();
  await db.schema.createIndex('pull_request_assignments_user').on('pull_request_assignments').column('user_id').execute();

  await withId(db, db.schema.createTable('pull_request_watches'))
    .addColumn('request_id', 'integer', (c) => c.notNull().references('pull_requests.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('watching', 'integer', (c) => c.notNull())
    .addUniqueConstraint('pull_request_watches_request_user', ['request_id', 'user_id'])
    .execute();
  await db.schema.createIndex('pull_request_watches_user').on('pull_request_watches').column('user_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'pull_request_watches',
    'pull_request_assignments',
    'pull_request_reviews',
    'pull_request_comments',
    'pull_request_changes',
    'pull_request_updates',
    'pull_requests',
    'number_sequences',
    'group_authorizations',
    'user_authorizations',
    'projects',
    'memberships',
    'groups',
    'roles',
    'settings',
    'access_tokens',
    'email_addresses',
    'users',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
