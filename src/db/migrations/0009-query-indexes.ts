import type { Kysely } from 'kysely';
import { createBytewiseIndex } from './schema-helpers.js';

/**
 * Indexes for the permission filter and the conversation queries (bench/access.ts,
 * bench/conversations.ts): `projects.path` in byte order serves the range scans of descendant
 * paths in `accessibleProjectsCondition` whatever the database collation (PostgreSQL
 * `projects_path_bytes`; on SQLite the existing `projects_path_exact` index serves them).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await createBytewiseIndex(db, 'projects_path_bytes', 'projects', 'path');
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('projects_path_bytes').ifExists().execute();
}
