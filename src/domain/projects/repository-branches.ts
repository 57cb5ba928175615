import { getDefaultBranch, listBranches, setDefaultBranch, type Branch } from '../../git/repository.js';
import type { Context } from '../context.js';
import { loadProjectWith } from '../permissions.js';

/**
 * GET `/repositories/{projectId}/default-branch` (reference/projects.md §7): read code; the
 * branch HEAD points to when it exists, else null (answered 204).
 */
export async function getRepositoryDefaultBranch(ctx: Context, projectId: number): Promise<string | null> {
  const { project } = await loadProjectWith(ctx, projectId, 'readCode');
  return getDefaultBranch(ctx.repoPath(project.id));
}

/**
 * POST `/repositories/{projectId}/default-branch` (reference/projects.md §7): write code; the
 * branch must exist (400 `Branch not exist: X`).
 */
export async function setRepositoryDefaultBranch(ctx: Context, projectId: number, branch: string): Promise<void> {
  const { project } = await loadProjectWith(ctx, projectId, 'writeCode');
  await setDefaultBranch(ctx.repoPath(project.id), branch);
}

/** GET `/repositories/{projectId}/branches` (CONTRACT.md §9): read code; branches by name with their head commits. */
export async function getRepositoryBranches(ctx: Context, projectId: number): Promise<Branch[]> {
  const { project } = await loadProjectWith(ctx, projectId, 'readCode');
  return listBranches(ctx.repoPath(project.id));
}
