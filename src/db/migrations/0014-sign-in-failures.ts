import type { Kysely } from 'kysely';

/**
 * `sign_in_failures`: failed password sign-ins counted per subject — `account:<login>` and
 * `address:<client address>` — in a fixed window starting at the first failure
 * (`window_start`, epoch ms). Shared through the database so every server process applies the
 * same limit (docs/compatibility.md#gitloom-differs-errors: 10 failures in 5 minutes → 429).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sign_in_failures')
    .addColumn('subject', 'text', (c) => c.primaryKey())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sign_in_failures').execute();
}
