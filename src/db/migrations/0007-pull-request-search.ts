import type { Kysely } from 'kysely';
import { dialectOf, PULL_REQUEST_COMMENT_TEXT, PULL_REQUEST_TEXT } from '../dialect.js';

/**
 * Substring search over pull request titles, descriptions and comments (docs/compatibility.md#pull-requests-query-language:
 * `~fuzzy~`, `contains`) without scanning every row: trigram indexes (src/db/dialect.ts
 * `createTextSearch`: FTS5 tables kept in step by triggers on SQLite, `pg_trgm` GIN indexes on the
 * lower-cased texts on PostgreSQL).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await dialectOf(db).createTextSearch(db, PULL_REQUEST_TEXT);
  await dialectOf(db).createTextSearch(db, PULL_REQUEST_COMMENT_TEXT);
}

export async function down(db: Kysely<any>): Promise<void> {
  await dialectOf(db).dropTextSearch(db, PULL_REQUEST_COMMENT_TEXT);
  await dialectOf(db).dropTextSearch(db, PULL_REQUEST_TEXT);
}
