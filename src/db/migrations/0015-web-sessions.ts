import type { Kysely } from 'kysely';

/**
 * Sessions of the web UI (docs/compatibility.md#gitloom-differs-web-ui): one row per signed-in browser, shared by every
 * server process on the database. `token_hash` is the SHA-256 (hex) of the cookie's random
 * token, so the table alone cannot be used to sign in; `csrf_token` is the synchronizer token of
 * the session's forms. Times are epoch milliseconds.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('web_sessions')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('create_date', 'bigint', (c) => c.notNull())
    .addColumn('expire_date', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('web_sessions_user').on('web_sessions').column('user_id').execute();
  await db.schema.createIndex('web_sessions_expire').on('web_sessions').column('expire_date').execute();
}

/** Drops the table. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('web_sessions').ifExists().execute();
}
