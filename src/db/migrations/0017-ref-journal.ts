import type { Kysely } from 'kysely';
import { withId } from './schema-helpers.js';

/**
 * The ref-change journal (docs/architecture.md#a-push, docs/architecture.md#the-ref-journal): one row per ref a push,
 * merge or API edit moved, written before the change is reported done. A row is first an intent
 * (`applied_date` null: the git ref may or may not have moved yet; start-up recovery decides by
 * looking at the ref), then applied, then processed once by the journal worker
 * (`processed_date`), which leases rows like the outbox (`lease_owner`, `lease_expires`); a row
 * whose reactions failed waits for `retry_date` (`attempts` counts the failed passes).
 * `request_id` names the pull request a merge entry closes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('ref_journal'))
    .addColumn('project_id', 'integer', (c) => c.notNull())
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('old_hash', 'text')
    .addColumn('new_hash', 'text')
    .addColumn('user_id', 'integer')
    .addColumn('request_id', 'integer')
    .addColumn('date', 'bigint', (c) => c.notNull())
    .addColumn('applied_date', 'bigint')
    .addColumn('processed_date', 'bigint')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires', 'bigint')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('retry_date', 'bigint')
    .execute();
  await db.schema.createIndex('ref_journal_pending').on('ref_journal').columns(['processed_date', 'id']).execute();
}

/** Drops the journal. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('ref_journal').ifExists().execute();
}
