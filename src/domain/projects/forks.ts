import type { ProjectRow } from '../../db/schema.js';
import { copyBranchesAndTags } from '../../git/forks.js';
import { getDefaultBranch, setDefaultBranch } from '../../git/repository.js';
import type { Context } from '../context.js';
import { accessibleProjectsCondition, loadProjectWith, projectPermissions } from './permissions.js';

/**
 * Fills a new fork's repository from the project it forks (docs/compatibility.md#projects-endpoints item 12: create with `forkedFromId`):
 * the caller needs read code on the source (404/401/403 otherwise); every branch and tag is
 * copied and HEAD follows the source's default branch. Pull request, issue and build numbers
 * share the fork root's scope (src/domain/projects/numbers.ts). Runs inside the creating
 * transaction: pass a context whose `db` is that transaction.
 */
export async function populateFork(ctx: Context, sourceProjectId: number, targetRepo: string): Promise<void> {
  await loadProjectWith(ctx, sourceProjectId, 'readCode');
  const sourceRepo = ctx.repoPath(sourceProjectId);
  await copyBranchesAndTags(targetRepo, sourceRepo);
  const branch = await getDefaultBranch(sourceRepo);
  if (branch !== null) await setDefaultBranch(targetRepo, branch);
}

/**
 * Get Forks (docs/compatibility.md#projects-endpoints item 5): the direct forks of a project the caller can access,
 * themselves filtered to those the caller can access (in SQL), by path.
 */
export async function projectForks(ctx: Context, projectId: number): Promise<ProjectRow[]> {
  await loadProjectWith(ctx, projectId, 'access');
  const accessible = await accessibleProjectsCondition(ctx);
  let query = ctx.db.selectFrom('projects').selectAll('projects').where('forkedFromId', '=', projectId);
  if (accessible) query = query.where((eb) => accessible(eb, 'projects.id'));
  return query.orderBy('path').execute();
}

/**
 * The project a fork was made from, as the caller may see it: its path, or null when the
 * project is no fork, or its origin was deleted or is invisible to the caller (its existence is
 * not leaked). Shown on a fork's home page.
 */
export async function forkOrigin(ctx: Context, project: Pick<ProjectRow, 'forkedFromId'>): Promise<{ id: number; path: string } | null> {
  if (project.forkedFromId === null) return null;
  const origin = await ctx.db.selectFrom('projects').selectAll().where('id', '=', project.forkedFromId).executeTakeFirst();
  if (!origin || !(await projectPermissions(ctx, origin)).access) return null;
  return { id: origin.id, path: origin.path };
}
