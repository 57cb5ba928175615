import type { Db } from '../../db/database.js';
import type { PullRequestFixedIssueTable } from '../../db/schema.js';
import { readCommits, revList } from '../../git/repository.js';
import { type FixReference, parseFixReferences, resolveFixPlaces } from '../issues/index.js';

/** Most commits indexed for one update (the newest ones). */
const MAX_INDEXED = 10_000;

/**
 * The commits an update brings in: reachable from `head`, not from the previous update head (the
 * base for the first update) nor from the target head at that time (docs/compatibility.md#pull-requests-fixed-issues), read
 * from the target repository. Newest first, at most 10,000.
 */
export async function updateCommits(repo: string, head: string, exclude: readonly string[]): Promise<string[]> {
  return revList(repo, [head], exclude, { max: MAX_INDEXED });
}

/**
 * Indexes commits of a request for `includes commit` (docs/compatibility.md#pull-requests-query-language): one row per
 * request and commit, existing rows kept. Runs inside the caller's transaction.
 */
export async function indexCommits(db: Db, requestId: number, hashes: readonly string[]): Promise<void> {
  for (let i = 0; i < hashes.length; i += 500) {
    const chunk = hashes.slice(i, i + 500);
    await db
      .insertInto('pullRequestCommits')
      .values(chunk.map((commitHash) => ({ requestId, commitHash })))
      .onConflict((oc) => oc.columns(['requestId', 'commitHash']).doNothing())
      .execute();
  }
}

/**
 * The fix references (docs/compatibility.md#pull-requests-fixed-issues) in the full messages of commits of a repository,
 * read in batches; call it before the transaction that indexes them ({@link indexFixedIssues}).
 */
export async function commitFixReferences(repo: string, hashes: readonly string[]): Promise<FixReference[]> {
  const references: FixReference[] = [];
  for (let i = 0; i < hashes.length; i += 1000) {
    for (const commit of await readCommits(repo, hashes.slice(i, i + 1000))) references.push(...parseFixReferences(commit.message));
  }
  return references;
}

/** Where a request's fix references come from. */
export type FixOrigin = PullRequestFixedIssueTable['origin'];

/**
 * Indexes fix references of a request (the table behind `fixed-issue-ids`, `includes issue`,
 * `fixed in pull request` and `/issues/{id}/pulls`, docs/compatibility.md#pull-requests-fixed-issues): references are
 * resolved against the target project (a path counts only for it, an ancestor or a descendant)
 * and stored as the (project, number) they name, so issues created later are found too. `COMMIT`
 * rows accumulate with updates; `TITLE` and `DESCRIPTION` rows are replaced by the current
 * text's. Runs inside the caller's transaction.
 */
export async function indexFixedIssues(
  db: Db,
  requestId: number,
  targetProjectId: number,
  origin: FixOrigin,
  references: readonly FixReference[],
): Promise<void> {
  if (origin !== 'COMMIT') await db.deleteFrom('pullRequestFixedIssues').where('requestId', '=', requestId).where('origin', '=', origin).execute();
  const places = await resolveFixPlaces(db, targetProjectId, references);
  for (let i = 0; i < places.length; i += 500) {
    await db
      .insertInto('pullRequestFixedIssues')
      .values(places.slice(i, i + 500).map((p) => ({ requestId, origin, ...p })))
      .onConflict((oc) => oc.columns(['requestId', 'origin', 'projectId', 'number']).doNothing())
      .execute();
  }
}

/**
 * Indexes the fix references of a request's title or description text (replacing the previous
 * text's). Runs inside the caller's transaction.
 */
export async function indexTextFixedIssues(
  db: Db,
  requestId: number,
  targetProjectId: number,
  origin: 'TITLE' | 'DESCRIPTION',
  text: string | null,
): Promise<void> {
  await indexFixedIssues(db, requestId, targetProjectId, origin, parseFixReferences(text));
}
