import type { Db } from '../../db/database.js';
import { ancestorPaths } from './permissions.js';

/**
 * The stored settings of a project and its ancestors (JSON text, null where a project has none,
 * with the service desk name the full setting carries, see `settingOf`), root first: what a
 * project inherits from its parents (docs/compatibility.md#projects-settings), the nearest project
 * winning where one setting overrides another.
 */
export async function ancestorSettings(db: Db, projectPath: string): Promise<{ path: string; setting: string | null; serviceDeskName: string | null }[]> {
  const rows = await db.selectFrom('projects').select(['path', 'setting', 'serviceDeskName']).where('path', 'in', ancestorPaths(projectPath)).execute();
  return rows.sort((a, b) => a.path.length - b.path.length);
}
