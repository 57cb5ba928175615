import type { Kysely } from 'kysely';
import { withId } from './schema-helpers.js';

/**
 * The durable outbox (docs/compatibility.md#gitloom-differs-webhooks-and-notifications): events written in the transaction that commits them
 * (`outbox_events`), expanded by a worker into webhook deliveries and mails
 * (`outbox_messages`), each send attempt recorded (`outbox_attempts`). Rows are leased by the
 * process working on them (`lease_owner`, `lease_expires`), so several processes share the work
 * and a crashed one's rows are taken over. No foreign key to projects: a delivery outlives the
 * project it announces.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('outbox_events'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('project_id', 'integer', (c) => c.notNull())
    .addColumn('actor_id', 'integer')
    .addColumn('date', 'bigint', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('expanded_date', 'bigint')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires', 'bigint')
    .execute();
  await db.schema.createIndex('outbox_events_pending').on('outbox_events').columns(['expanded_date', 'id']).execute();

  await withId(db, db.schema.createTable('outbox_messages'))
    .addColumn('event_id', 'integer', (c) => c.references('outbox_events.id').onDelete('set null'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('uuid', 'text', (c) => c.notNull().unique())
    .addColumn('project_id', 'integer', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('secret', 'text')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempt_count', 'integer', (c) => c.notNull())
    .addColumn('create_date', 'bigint', (c) => c.notNull())
    .addColumn('next_attempt_date', 'bigint')
    .addColumn('finish_date', 'bigint')
    .addColumn('redelivery_of_id', 'integer')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires', 'bigint')
    .execute();
  await db.schema.createIndex('outbox_messages_due').on('outbox_messages').columns(['status', 'next_attempt_date']).execute();
  await db.schema.createIndex('outbox_messages_project').on('outbox_messages').columns(['project_id', 'kind', 'id']).execute();

  await withId(db, db.schema.createTable('outbox_attempts'))
    .addColumn('message_id', 'integer', (c) => c.notNull().references('outbox_messages.id').onDelete('cascade'))
    .addColumn('date', 'bigint', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('succeeded', 'integer', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_excerpt', 'text')
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('outbox_attempts_message').on('outbox_attempts').columns(['message_id', 'id']).execute();
}

/** Drops the outbox tables. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('outbox_attempts').ifExists().execute();
  await db.schema.dropTable('outbox_messages').ifExists().execute();
  await db.schema.dropTable('outbox_events').ifExists().execute();
}
