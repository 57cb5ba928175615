import { sql, type Kysely } from 'kysely';
import { isPostgres } from './columns.js';

/**
 * Indexes for the permission filter and the conversation queries (bench/access.ts,
 * bench/conversations.ts). PostgreSQL: `projects (path collate "C")` serves the byte-order range
 * scans of descendant paths in `accessibleProjectsCondition` whatever the database collation
 * (SQLite compares text bytewise: the existing `projects_path_exact` index serves them).
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`create index projects_path_bytes on projects (path collate "C")`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists projects_path_bytes`.execute(db);
}
