import type { Kysely } from 'kysely';
import { withId } from './schema-helpers.js';

/**
 * Two-factor authentication (docs/security.md#two-factor-authentication):
 *
 * - `totp_secrets`: a user's RFC 6238 secret (base32, encrypted with the server's secret key as job
 *   secrets are), `confirmed` 0 while enrolment waits for a
 *   first code, and `last_step`, the 30-second time step of the last code accepted (a code of that
 *   step or an earlier one is never accepted again).
 * - `recovery_codes`: single-use codes, stored as SHA-256 (hex) only; `used_date` once spent.
 * - `webauthn_credentials`: a user's security keys and passkeys (WebAuthn Level 2): the
 *   credential id and COSE public key (base64url), the signature counter and transports.
 * - `two_factor_challenges`: short-lived server-side records of a ceremony in progress: a sign-in
 *   waiting for its second step (`kind` `sign-in`, `token_hash` the SHA-256 of the browser's
 *   cookie, `failures` its wrong answers) or a security key's registration (`kind` `register`);
 *   `challenge` is the WebAuthn challenge given out, when one was.
 *
 * Times are epoch ms.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('totp_secrets')
    .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('confirmed', 'integer', (c) => c.notNull())
    .addColumn('last_step', 'bigint')
    .addColumn('create_date', 'bigint', (c) => c.notNull())
    .execute();
  await withId(db, db.schema.createTable('recovery_codes'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('used_date', 'bigint')
    .execute();
  await db.schema.createIndex('recovery_codes_user').on('recovery_codes').columns(['user_id', 'code_hash']).execute();
  await withId(db, db.schema.createTable('webauthn_credentials'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('credential_id', 'text', (c) => c.notNull().unique())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('counter', 'bigint', (c) => c.notNull())
    .addColumn('transports', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('create_date', 'bigint', (c) => c.notNull())
    .addColumn('last_used_date', 'bigint')
    .execute();
  await db.schema.createIndex('webauthn_credentials_user').on('webauthn_credentials').column('user_id').execute();
  await withId(db, db.schema.createTable('two_factor_challenges'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('challenge', 'text')
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('expire_date', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('two_factor_challenges_expire').on('two_factor_challenges').column('expire_date').execute();
}

/** Drops the tables. */
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['two_factor_challenges', 'webauthn_credentials', 'recovery_codes', 'totp_secrets']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
