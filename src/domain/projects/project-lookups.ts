/**
 * Project facts other areas need without a caller's permissions: every project's id, a project's path.
 */
import type { Db } from '../../db/database.js';

/** The ids of all projects, ascending. */
export async function allProjectIds(db: Db): Promise<number[]> {
  return (await db.selectFrom('projects').select('id').orderBy('id').execute()).map((p) => p.id);
}

/** The path of project `projectId` (`parent/child`), or null when there is no such project. */
export async function projectPathOf(db: Db, projectId: number): Promise<string | null> {
  return (await db.selectFrom('projects').select('path').where('id', '=', projectId).executeTakeFirst())?.path ?? null;
}
