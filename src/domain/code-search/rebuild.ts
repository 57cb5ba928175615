/** Rebuilding the code index (docs/compatibility.md#code-search), the administrator's `gitloom code-index rebuild`. */
import type { Db } from '../../db/database.js';
import { NotFound } from '../../errors.js';
import { allProjectIds, findProjectByPath } from '../projects/index.js';

/**
 * Drops the indexed files of one project (by path) or of every project and marks them stale: the
 * index workers of the running servers rebuild them from their default branches.
 *
 * @returns the number of projects marked.
 * @throws NotFound when `projectPath` names no project.
 */
export async function rebuildCodeIndex(db: Db, now: number, projectPath?: string): Promise<number> {
  let projectIds: number[];
  if (projectPath !== undefined) {
    const project = await findProjectByPath(db, projectPath);
    if (!project) throw new NotFound(`Project not found: ${projectPath}`);
    projectIds = [project.id];
  } else projectIds = await allProjectIds(db);
  await db.transaction().execute(async (tx) => {
    for (let i = 0; i < projectIds.length; i += 500) {
      const some = projectIds.slice(i, i + 500);
      await tx.deleteFrom('codeSearchFiles').where('projectId', 'in', some).execute();
      await tx
        .insertInto('codeSearchProjects')
        .values(some.map((projectId) => ({ projectId, staleDate: now })))
        .onConflict((oc) => oc.column('projectId').doUpdateSet({ staleDate: now, indexedCommit: null }))
        .execute();
    }
  });
  return projectIds.length;
}
