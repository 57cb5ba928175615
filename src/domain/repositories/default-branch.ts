/** The default branch of a project's repository (docs/compatibility.md#projects-repository-and-default-branch). */
import { getDefaultBranch, setDefaultBranch } from '../../git/repository.js';
import type { Context } from '../context.js';
import { loadProjectWith } from '../projects/index.js';

/**
 * GET `/repositories/{projectId}/default-branch` (docs/compatibility.md#projects-repository-and-default-branch): read code; the
 * branch HEAD points to when it exists, else null (answered 204).
 */
export async function getRepositoryDefaultBranch(ctx: Context, projectId: number): Promise<string | null> {
  const { project } = await loadProjectWith(ctx, projectId, 'readCode');
  return getDefaultBranch(ctx.repoPath(project.id));
}

/**
 * POST `/repositories/{projectId}/default-branch` (docs/compatibility.md#projects-repository-and-default-branch): write code; the
 * branch must exist (400 `Branch not exist: X`).
 */
export async function setRepositoryDefaultBranch(ctx: Context, projectId: number, branch: string): Promise<void> {
  const { project } = await loadProjectWith(ctx, projectId, 'writeCode');
  await setDefaultBranch(ctx.repoPath(project.id), branch);
}
