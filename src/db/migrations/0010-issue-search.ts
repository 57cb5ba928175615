import type { Kysely } from 'kysely';
import { dialectOf, ISSUE_COMMENT_TEXT, ISSUE_TEXT } from '../dialect.js';

/**
 * Substring search over issue titles, descriptions and comments (docs/compatibility.md#issues: `~fuzzy~`, `"Title" contains`, `"Description" contains`, `"Comment" contains`) without
 * scanning every row, as migration 0007 does for pull requests: trigram indexes filled from the
 * existing rows (src/db/dialect.ts `createTextSearch`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await dialectOf(db).createTextSearch(db, ISSUE_TEXT);
  await dialectOf(db).createTextSearch(db, ISSUE_COMMENT_TEXT);
}

export async function down(db: Kysely<any>): Promise<void> {
  await dialectOf(db).dropTextSearch(db, ISSUE_COMMENT_TEXT);
  await dialectOf(db).dropTextSearch(db, ISSUE_TEXT);
}
