import type { Db } from '../../db/database.js';
import { revList } from '../../git/repository.js';

/** Most commits indexed for one update (the newest ones). */
const MAX_INDEXED = 10_000;

/**
 * The commits an update brings in: reachable from `head`, not from the previous update head (the
 * base for the first update) nor from the target head at that time (reference/pulls.md §7), read
 * from the target repository. Newest first, at most 10,000.
 */
export async function updateCommits(repo: string, head: string, exclude: readonly string[]): Promise<string[]> {
  return revList(repo, [head], exclude, { max: MAX_INDEXED });
}

/**
 * Indexes commits of a request for `includes commit` (reference/pulls.md §6): one row per
 * request and commit, existing rows kept. Runs inside the caller's transaction.
 */
export async function indexCommits(db: Db, requestId: number, hashes: readonly string[]): Promise<void> {
  for (let i = 0; i < hashes.length; i += 500) {
    const chunk = hashes.slice(i, i + 500);
    await db.insertInto('pullRequestCommits').values(chunk.map((commitHash) => ({ requestId, commitHash })))
      .onConflict((oc) => oc.columns(['requestId', 'commitHash']).doNothing()).execute();
  }
}
