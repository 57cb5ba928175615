import type { Kysely } from 'kysely';
import { withId } from './schema-helpers.js';

/**
 * Single sign-on (docs/security.md#single-sign-on), `external_identities`: the link of a user to
 * an identity of an external system — `provider` is `ldap` for the directory of the
 * authenticator or `oidc:<connector name>` for an OpenID Connect connector, `subject` the
 * identity there (the entry's DN, the ID token's `sub`); one user per (provider, subject), and
 * the link goes with its user. `create_date` is epoch ms.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('external_identities'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('create_date', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('external_identities_provider_subject', ['provider', 'subject'])
    .execute();
  await db.schema.createIndex('external_identities_user').on('external_identities').column('user_id').execute();
}

/** Drops the links. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('external_identities').ifExists().execute();
}
