/** Repository copies for forks (docs/compatibility.md#projects-endpoints item 12: create with `forkedFromId`). */
import { gitDir, spawnGit, value } from './command.js';

/**
 * Copies every branch and tag of `sourceRepo` into `targetRepo` (a fork): `git fetch` of
 * `refs/heads/*` and `refs/tags/*` run in the target.
 *
 * @param targetRepo absolute path of the (new, empty) bare repository.
 * @param sourceRepo absolute path of the repository forked from.
 * @throws GitError when git fails.
 */
export async function copyBranchesAndTags(targetRepo: string, sourceRepo: string): Promise<void> {
  gitDir(sourceRepo);
  const g = spawnGit([
    gitDir(targetRepo),
    'fetch',
    '--quiet',
    '--no-write-fetch-head',
    '--end-of-options',
    value(sourceRepo),
    '+refs/heads/*:refs/heads/*',
    '+refs/tags/*:refs/tags/*',
  ]);
  g.stdin.end();
  g.stdout.resume();
  await g.done;
}
