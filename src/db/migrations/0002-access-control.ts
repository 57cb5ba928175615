import type { Kysely } from 'kysely';
import { withId } from './schema-helpers.js';

/** SSH keys, label specs, project labels and milestones; indexes for the access-control lookups. */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('ssh_keys'))
    .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ssh_keys_owner').on('ssh_keys').column('owner_id').execute();

  await withId(db, db.schema.createTable('label_specs'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('color', 'text', (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable('project_labels'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('spec_id', 'integer', (c) => c.notNull().references('label_specs.id').onDelete('cascade'))
    .addUniqueConstraint('project_labels_project_spec', ['project_id', 'spec_id'])
    .execute();
  await db.schema.createIndex('project_labels_spec').on('project_labels').column('spec_id').execute();

  await withId(db, db.schema.createTable('milestones'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('start_date', 'bigint')
    .addColumn('due_date', 'bigint')
    .addColumn('closed', 'integer', (c) => c.notNull().defaultTo(0))
    .addUniqueConstraint('milestones_project_name', ['project_id', 'name'])
    .execute();

  await db.schema.createIndex('user_authorizations_role').on('user_authorizations').column('role_id').execute();
  await db.schema.createIndex('group_authorizations_role').on('group_authorizations').column('role_id').execute();
  await db.schema.createIndex('projects_default_role').on('projects').column('default_role_id').execute();
  await db.schema.createIndex('projects_parent').on('projects').column('parent_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const index of ['projects_parent', 'projects_default_role', 'group_authorizations_role', 'user_authorizations_role']) {
    await db.schema.dropIndex(index).execute();
  }
  for (const table of ['milestones', 'project_labels', 'label_specs', 'ssh_keys']) await db.schema.dropTable(table).execute();
}
