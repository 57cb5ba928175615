/**
 * The last commit of each entry of a directory for the tree views (files pages, project home):
 * one history walk per directory and commit (src/git/last-commits.ts), kept in the bounded cache
 * of object reads (object-reads.ts) by commit and directory — a branch that has not moved is
 * answered from memory.
 */
import type { ProjectRow } from '../../db/schema.js';
import { lastCommitsOf, type LastCommit } from '../../git/last-commits.js';
import type { Context } from '../context.js';
import { readableRepository } from './browse.js';
import { objectRead } from './object-reads.js';

export type { LastCommit };

/**
 * The last commit of each entry of directory `dir` at commit `commitHash` (read code).
 *
 * @param names the directory's entry names (as listed at that commit).
 * @returns entry name → last commit; entries the history does not name (a submodule never
 *   changed) are missing.
 * @throws Forbidden/Unauthorized without read code; BadRequest for a malformed commit or path.
 */
export async function lastCommitsAt(
  ctx: Context,
  project: ProjectRow,
  commitHash: string,
  dir: string,
  names: readonly string[],
): Promise<Map<string, LastCommit>> {
  const repo = await readableRepository(ctx, project);
  return objectRead(
    repo,
    `last-commits:${dir}`,
    [commitHash],
    () => lastCommitsOf(repo, commitHash, dir, names),
    (found) => 64 + 192 * found.size,
  );
}
