import type { Kysely } from 'kysely';
import { createTextSearch, dropTextSearch, type TextSearchTables } from './schema-helpers.js';

const PULL_REQUEST_TEXT: TextSearchTables = { table: 'pull_requests', columns: ['title', 'description'], searchTable: 'pull_request_search' };
const PULL_REQUEST_COMMENT_TEXT: TextSearchTables = { table: 'pull_request_comments', columns: ['content'], searchTable: 'pull_request_comment_search' };

/**
 * Substring search over pull request titles, descriptions and comments (docs/compatibility.md#pull-requests-query-language:
 * `~fuzzy~`, `contains`) without scanning every row: trigram indexes (`createTextSearch` of
 * schema-helpers.ts: FTS5 tables kept in step by triggers on SQLite, `pg_trgm` GIN indexes on the
 * lower-cased texts on PostgreSQL).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await createTextSearch(db, PULL_REQUEST_TEXT);
  await createTextSearch(db, PULL_REQUEST_COMMENT_TEXT);
}

export async function down(db: Kysely<any>): Promise<void> {
  await dropTextSearch(db, PULL_REQUEST_COMMENT_TEXT);
  await dropTextSearch(db, PULL_REQUEST_TEXT);
}
