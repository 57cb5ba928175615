import type { Kysely } from 'kysely';
import { createTextSearch, dropTextSearch, type TextSearchTables } from './schema-helpers.js';

const ISSUE_TEXT: TextSearchTables = { table: 'issues', columns: ['title', 'description'], searchTable: 'issue_search' };
const ISSUE_COMMENT_TEXT: TextSearchTables = { table: 'issue_comments', columns: ['content'], searchTable: 'issue_comment_search' };

/**
 * Substring search over issue titles, descriptions and comments (docs/compatibility.md#issues: `~fuzzy~`, `"Title" contains`, `"Description" contains`, `"Comment" contains`) without
 * scanning every row, as migration 0007 does for pull requests: trigram indexes filled from the
 * existing rows (`createTextSearch` of schema-helpers.ts).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await createTextSearch(db, ISSUE_TEXT);
  await createTextSearch(db, ISSUE_COMMENT_TEXT);
}

export async function down(db: Kysely<any>): Promise<void> {
  await dropTextSearch(db, ISSUE_COMMENT_TEXT);
  await dropTextSearch(db, ISSUE_TEXT);
}
