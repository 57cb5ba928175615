/**
 * Repository maintenance (docs/architecture.md#repository-maintenance): what keeps a busy
 * repository's reads near git's best — its objects in few packs with a reachability bitmap, and a
 * commit-graph with changed-path Bloom filters — written incrementally, so a run after a push
 * costs about what the push added:
 *
 * - `git repack -d --geometric=2 --write-midx --write-bitmap-index`: loose objects and the small
 *   packs are rolled into packs of geometrically growing sizes (every object of a rolled-up pack is
 *   kept, reachable or not: a push whose refs are not updated yet loses nothing), under a
 *   multi-pack index with its bitmap (clones and fetches count objects from it);
 * - `git commit-graph write --reachable --changed-paths --split`: a new layer for the commits
 *   since the last one, with the Bloom filters `git log -- <path>` and blame consult.
 *
 * One maintenance of a repository runs at a time (the caller leases it); what a killed run left —
 * `.tmp-*` packs and the lock files of the multi-pack index and commit-graph — is removed before
 * the next one starts. receive-pack's own `gc --auto` is off (src/git/smart-http.ts), so nothing
 * else writes these files.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { gitDir, runGit } from './command.js';

/** Files only a maintenance run writes, which a killed one leaves behind. */
async function leftovers(repoPath: string): Promise<string[]> {
  const pack = path.join(repoPath, 'objects', 'pack');
  const found = [
    path.join(pack, 'multi-pack-index.lock'),
    path.join(repoPath, 'objects', 'info', 'commit-graph.lock'),
    path.join(repoPath, 'objects', 'info', 'commit-graphs', 'commit-graph-chain.lock'),
  ];
  try {
    for (const name of await fs.readdir(pack)) if (name.startsWith('.tmp-')) found.push(path.join(pack, name));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  return found;
}

/**
 * Runs one maintenance of the bare repository at `repoPath` (see the module comment): removes what
 * a killed run left, repacks geometrically with a multi-pack bitmap, then writes a commit-graph
 * layer with changed-path filters. The caller must hold the repository's maintenance lease.
 *
 * @param signal stops the git commands in progress (the run then fails; the next one cleans up).
 * @throws GitError when git fails; a file system error when a leftover cannot be removed.
 */
export async function maintainRepository(repoPath: string, signal?: AbortSignal): Promise<void> {
  for (const file of await leftovers(repoPath)) await fs.rm(file, { force: true });
  await runGit([gitDir(repoPath), 'repack', '-d', '-q', '--geometric=2', '--write-midx', '--write-bitmap-index'], { signal });
  await runGit([gitDir(repoPath), 'commit-graph', 'write', '--reachable', '--changed-paths', '--split', '--no-progress'], { signal });
}
