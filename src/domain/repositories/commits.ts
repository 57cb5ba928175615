/**
 * One commit of a project's repository (OneDev 8.6 RepositoryResource `GET
 * /repositories/{projectId}/commits/{hash}`, docs/compatibility.md#gitloom-differs-additions-to-the-interface).
 */
import { NotFound } from '../../errors.js';
import { readCommit, resolveCommit, type Commit } from '../../git/repository.js';
import type { Context } from '../context.js';
import { objectRead } from '../object-reads.js';
import { loadProjectWith } from '../projects/index.js';

/**
 * A commit by hash (or any revision naming a commit): read code. A commit named by its full hash
 * is kept by object id ({@link objectRead}); one not found is looked for again next time (it may
 * be pushed since).
 *
 * @returns hash, tree, parents, author, committer (name, email, instant, zone) and message.
 * @throws NotFound `Commit not found: X`.
 */
export async function getCommit(ctx: Context, projectId: number, revision: string): Promise<Commit> {
  const { project } = await loadProjectWith(ctx, projectId, 'readCode');
  const repo = ctx.repoPath(project.id);
  const read = async (): Promise<Commit> => {
    const hash = revision.startsWith('-') ? null : await resolveCommit(repo, revision);
    if (!hash) throw new NotFound(`Commit not found: ${revision}`);
    return readCommit(repo, hash);
  };
  return objectRead(repo, 'commit', [revision], read, (commit) => 512 + commit.message.length * 2);
}
