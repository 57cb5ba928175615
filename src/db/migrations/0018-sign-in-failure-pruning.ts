import type { Kysely } from 'kysely';

/**
 * `sign_in_failures` now counts each password attempt under three subjects — `account:…`,
 * `address:…` and `pair:<account>|<address>` (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input; the rows of migration 0014 keep
 * their meaning). Windows that ended are deleted by `window_start`, which this index serves.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('sign_in_failures_window_start').on('sign_in_failures').column('window_start').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('sign_in_failures_window_start').ifExists().execute();
}
