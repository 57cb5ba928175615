import type { Kysely } from 'kysely';

/**
 * Uploaded avatars (docs/compatibility.md#gitloom-differs-web-ui "Avatars"): `avatar_version`
 * counts the user's avatar changes (it versions the avatar's URL, `/~avatars/<id>?v=<version>`)
 * and `avatar_type` is the MIME type of the uploaded file `avatars/<id>-<version>` of the data
 * dir — null when the user has none and the generated identicon is served.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('avatar_version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('users').addColumn('avatar_type', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('avatar_type').execute();
  await db.schema.alterTable('users').dropColumn('avatar_version').execute();
}
