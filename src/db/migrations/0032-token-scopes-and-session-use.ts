import type { Kysely } from 'kysely';

/**
 * Fine-grained access tokens and the last use of credentials (docs/compatibility.md#gitloom-differs-sessions-and-tokens):
 * - `access_tokens.read_only` (0/1): the token reads and fetches, and changes nothing;
 * - `access_tokens.projects_limited` (0/1) with `access_token_projects` (token, project): the
 *   token reaches those projects only — a limited token whose projects are all gone reaches none;
 * - `access_token_uses`: one row per used token — when (epoch ms), from which address and user
 *   agent it was last used; kept apart from `access_tokens`, whose writes invalidate every
 *   process's cached actors;
 * - `web_sessions`: when and from where the session was last used and made (`last_used_date`
 *   epoch ms, `address`, `user_agent`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('access_tokens')
    .addColumn('read_only', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('access_tokens')
    .addColumn('projects_limited', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('access_token_projects')
    .addColumn('token_id', 'integer', (c) => c.notNull().references('access_tokens.id').onDelete('cascade'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('access_token_projects_pk', ['token_id', 'project_id'])
    .execute();
  await db.schema.createIndex('access_token_projects_project').on('access_token_projects').column('project_id').execute();
  await db.schema
    .createTable('access_token_uses')
    .addColumn('token_id', 'integer', (c) => c.primaryKey().references('access_tokens.id').onDelete('cascade'))
    .addColumn('last_used_date', 'bigint', (c) => c.notNull())
    .addColumn('address', 'text')
    .addColumn('user_agent', 'text')
    .execute();
  await db.schema.alterTable('web_sessions').addColumn('last_used_date', 'bigint').execute();
  await db.schema.alterTable('web_sessions').addColumn('address', 'text').execute();
  await db.schema.alterTable('web_sessions').addColumn('user_agent', 'text').execute();
}

/** Drops what `up` added. */
export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['user_agent', 'address', 'last_used_date']) await db.schema.alterTable('web_sessions').dropColumn(column).execute();
  await db.schema.dropTable('access_token_uses').ifExists().execute();
  await db.schema.dropTable('access_token_projects').ifExists().execute();
  await db.schema.alterTable('access_tokens').dropColumn('projects_limited').execute();
  await db.schema.alterTable('access_tokens').dropColumn('read_only').execute();
}
