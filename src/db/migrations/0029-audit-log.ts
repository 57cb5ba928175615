import type { Kysely } from 'kysely';
import { withId } from './schema-helpers.js';

/**
 * The audit log (docs/audit-log.md), `audit_events`: one row per security-relevant change,
 * written in the transaction of the change itself — when (`time`, epoch ms), who (`actor_id`,
 * null for a caller who is nobody yet, as a failed sign-in; `actor_name` as it was then), from
 * where (`address`, the client's IP address; `user_agent`), what (`action`, a stable dotted name),
 * on what (`target_type`, `target_id`, `target_name` as it was then, `project_id` when the target
 * belongs to a project) and how (`summary`, JSON of the before/after values, never a secret).
 * Indexed for the pages' and the API's filters: by time, by project, by actor, by action.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('audit_events'))
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('actor_id', 'integer')
    .addColumn('actor_name', 'text', (c) => c.notNull())
    .addColumn('address', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text')
    .addColumn('target_name', 'text')
    .addColumn('project_id', 'integer')
    .addColumn('summary', 'text')
    .execute();
  await db.schema.createIndex('audit_events_time').on('audit_events').columns(['time', 'id']).execute();
  await db.schema.createIndex('audit_events_project').on('audit_events').columns(['project_id', 'time']).execute();
  await db.schema.createIndex('audit_events_actor').on('audit_events').columns(['actor_id', 'time']).execute();
  await db.schema.createIndex('audit_events_action').on('audit_events').columns(['action', 'time']).execute();
}

/** Drops the audit log. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('audit_events').ifExists().execute();
}
