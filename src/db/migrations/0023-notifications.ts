import type { Kysely } from 'kysely';
import { withId } from './schema-helpers.js';

/**
 * The notification inbox (docs/compatibility.md#notification-inbox): one row per user and thread
 * (`subject_type` `PullRequest`, `Issue`, `Build` or `CodeComment`, `subject_id` its id), updated
 * by each later event of the thread — its latest `reason`, `title`, `url` (the page's path) and
 * `updated_date`, unread again and out of done. `last_read_date` is when the user last read it.
 * The indexes serve the inbox by update (`user_id, done, updated_date`); the header's unread
 * count and the unread-first inbox (`user_id, done, unread, updated_date`); the thread's upsert
 * and its mark-read on opening (`user_id, subject_type, subject_id`, unique); a deleted thread's
 * rows (`subject_type, subject_id`); a deleted project's (`project_id`).
 * `notification_settings`: per user and reason group (`participating`, `mentions`,
 * `review_requests`, `watching`, `builds`) whether it goes to the inbox and is mailed; no row:
 * both. Both are deleted with their user; notifications with their project.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('notifications'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('subject_type', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'integer', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('unread', 'integer', (c) => c.notNull())
    .addColumn('done', 'integer', (c) => c.notNull())
    .addColumn('updated_date', 'bigint', (c) => c.notNull())
    .addColumn('last_read_date', 'bigint')
    .execute();
  await db.schema.createIndex('notifications_thread').on('notifications').columns(['user_id', 'subject_type', 'subject_id']).unique().execute();
  await db.schema.createIndex('notifications_inbox').on('notifications').columns(['user_id', 'done', 'updated_date']).execute();
  await db.schema.createIndex('notifications_unread').on('notifications').columns(['user_id', 'done', 'unread', 'updated_date']).execute();
  await db.schema.createIndex('notifications_project').on('notifications').column('project_id').execute();
  await db.schema.createIndex('notifications_subject').on('notifications').columns(['subject_type', 'subject_id']).execute();

  await db.schema
    .createTable('notification_settings')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('reason_group', 'text', (c) => c.notNull())
    .addColumn('inbox', 'integer', (c) => c.notNull())
    .addColumn('mail', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('notification_settings_pk', ['user_id', 'reason_group'])
    .execute();
}

/** Drops the inbox and its settings. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('notification_settings').ifExists().execute();
  await db.schema.dropTable('notifications').ifExists().execute();
}
