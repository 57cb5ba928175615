/**
 * The file paths of a revision for the "go to file" finder of the code pages: every path of the
 * commit's tree (`git ls-tree -r`), kept by commit in the bounded cache of object reads
 * (src/domain/object-reads.ts), so typing in the finder of an unchanged branch never runs git again.
 */
import type { ProjectRow } from '../../db/schema.js';
import { listPaths } from '../../git/browse.js';
import type { Context } from '../context.js';
import { readableRepository } from './browse.js';
import { objectRead } from '../object-reads.js';
import { resolveRevisionAndPath, type RevisionAndPath } from './revisions.js';

/** The most paths the finder offers (a larger tree is cut, in git's path order). */
export const MAX_FINDER_PATHS = 100_000;

/** The paths of a revision. */
export interface RevisionPaths {
  /** The revision as given, the commit it names (and '' as path). */
  at: RevisionAndPath;
  /** Repository-relative file paths (submodules too), bytewise order. */
  paths: string[];
  /** Whether the tree holds more than {@link MAX_FINDER_PATHS} paths. */
  truncated: boolean;
}

/**
 * Every path of a revision of a project (read code).
 *
 * @param revision a branch, tag or commit (may contain `/`: the longest branch or tag wins).
 * @throws NotFound `Revision not found: X`; Forbidden/Unauthorized without read code.
 */
export async function revisionPaths(ctx: Context, project: ProjectRow, revision: string): Promise<RevisionPaths> {
  const repo = await readableRepository(ctx, project);
  const at = await resolveRevisionAndPath(repo, revision);
  const { paths, truncated } = await objectRead(
    repo,
    `paths:${MAX_FINDER_PATHS}`,
    [at.commitHash],
    () => listPaths(repo, at.commitHash, MAX_FINDER_PATHS),
    (r) => 64 + r.paths.reduce((n, p) => n + 2 * p.length + 16, 0),
  );
  return { at: { ...at, path: '' }, paths, truncated };
}
