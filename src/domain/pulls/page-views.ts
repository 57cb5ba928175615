/**
 * What the web UI's pull request pages read (`/<project>/~pulls/<number>`, its merge
 * box, `/~pulls/new`): a request by its number in a project, its activity in time order, the
 * state of its merge box and the comparison of two branches before a request is opened. Reads
 * only — every change goes through the functions the API routes call (lifecycle.ts, merge.ts,
 * comments.ts, reviews.ts, assignments.ts).
 */
import { randomUUID } from 'node:crypto';
import type { SelectQueryBuilder } from 'kysely';
import type { BuildStatus, PullRequestRow, ReviewStatus } from '../../db/schema.js';
import { NotFound } from '../../errors.js';
import { branchHead, deleteRef, fetchCommits, mergeBase, mergeTree, readCommits, revList } from '../../git/repository.js';
import { currentBuildsOf } from './builds.js';
import { loadProjectWith, projectPathsByIds, requiredJobs } from '../projects/index.js';
import type { Context } from '../context.js';
import { objectRead } from '../object-reads.js';
import type { PullRequestChangeData } from './changes.js';
import { mergeRefusal } from './merge.js';
import { isPreviewCurrent, storedPreview, type MergePreview } from './merge-preview.js';
import { canModifyPullRequest, latestUpdate } from './pull-requests.js';
import { userIdByName as namedUserId, userNamesByIds } from '../users/index.js';

/** Row types the pages name (src/web may not import src/db). */
export type { MergeStrategy, PullRequestRow } from '../../db/schema.js';

/** Most commits listed per update or comparison (the rest are counted, not read). */
export const MAX_LISTED_COMMITS = 250;
/** Most comments and most changes shown in one activity list (the newest). */
export const MAX_ACTIVITY_ROWS = 1000;

/**
 * The request number `number` of project `projectId` (its target project): read code on the
 * project (404 when invisible, 401/403 otherwise), 404 `Pull request not found: #N` when the
 * project has no such request.
 */
export async function pullRequestByNumber(ctx: Context, projectId: number, number: number): Promise<PullRequestRow> {
  await loadProjectWith(ctx, projectId, 'readCode');
  const pr = Number.isSafeInteger(number)
    ? await ctx.db.selectFrom('pullRequests').selectAll().where('targetProjectId', '=', projectId).where('number', '=', number).executeTakeFirst()
    : undefined;
  if (!pr) throw new NotFound(`Pull request not found: #${number}`);
  return pr;
}

/** Names of users by id, in one query (ids ≤ 0 and deleted users are absent). */
export async function userNames(ctx: Context, ids: readonly (number | null)[]): Promise<Map<number, string>> {
  return userNamesByIds(
    ctx.db,
    ids.filter((id): id is number => id !== null && id > 0),
  );
}

/** Paths of projects by id, in one query (for listing requests whose projects the caller can read). */
export async function projectPaths(ctx: Context, ids: readonly number[]): Promise<Map<number, string>> {
  return projectPathsByIds(ctx.db, ids);
}

/** The id of the user with this login name (case-insensitive); 400 `Unable to find user: X`. */
export async function userIdByName(ctx: Context, name: string): Promise<number> {
  return namedUserId(ctx.db, name, 'Unable to find user');
}

/** A commit as listed on the pages: hash, first line of the message, author and date (ms). */
export interface CommitSummary {
  hash: string;
  subject: string;
  authorName: string;
  date: number;
}

/** The commits of `head` not in `exclude` (hashes), newest first, at most {@link MAX_LISTED_COMMITS}; kept by {@link objectRead}. */
function commitSummaries(repo: string, head: string, exclude: readonly string[]): Promise<{ commits: CommitSummary[]; more: boolean }> {
  return objectRead(
    repo,
    'commit-summaries',
    [head, ...exclude],
    () => readCommitSummaries(repo, head, exclude),
    (v) => 256 + v.commits.length * 256,
  );
}

async function readCommitSummaries(repo: string, head: string, exclude: readonly string[]): Promise<{ commits: CommitSummary[]; more: boolean }> {
  const hashes = await revList(repo, [head], exclude, { max: MAX_LISTED_COMMITS + 1 });
  const listed = await readCommits(repo, hashes.slice(0, MAX_LISTED_COMMITS));
  return {
    commits: listed.map((c) => ({ hash: c.hash, subject: c.message.split('\n', 1)[0], authorName: c.author.name, date: c.author.date.getTime() })),
    more: hashes.length > MAX_LISTED_COMMITS,
  };
}

/** One entry of a request's activity. */
export type ActivityEntry =
  | { kind: 'comment'; id: number; date: number; userId: number; content: string }
  | { kind: 'change'; id: number; date: number; userId: number | null; data: PullRequestChangeData }
  | { kind: 'update'; id: number; date: number; headCommitHash: string; commits: CommitSummary[]; more: boolean };

/** The newest {@link MAX_ACTIVITY_ROWS} rows of an activity query, newest first. */
function newest<QB extends SelectQueryBuilder<any, any, any>>(query: QB): QB {
  return query.orderBy('id', 'desc').limit(MAX_ACTIVITY_ROWS) as QB;
}

/**
 * The activity of a readable request (as returned by {@link pullRequestByNumber}) in time order:
 * comments, recorded changes (reviews, status changes, title, strategy, branch deletion …) and
 * updates with the commits each brought (newest first, at most {@link MAX_LISTED_COMMITS}); at
 * most {@link MAX_ACTIVITY_ROWS} comments and changes, the newest. Ties keep updates, then
 * changes, then comments.
 */
export async function pullRequestActivity(ctx: Context, pr: PullRequestRow): Promise<ActivityEntry[]> {
  const [comments, changes, updates] = await Promise.all([
    ctx.db.selectFrom('pullRequestComments').select(['id', 'date', 'userId', 'content']).where('requestId', '=', pr.id).$call(newest).execute(),
    ctx.db.selectFrom('pullRequestChanges').select(['id', 'date', 'userId', 'data']).where('requestId', '=', pr.id).$call(newest).execute(),
    ctx.db.selectFrom('pullRequestUpdates').selectAll().where('requestId', '=', pr.id).orderBy('id').execute(),
  ]);
  const repo = ctx.repoPath(pr.targetProjectId);
  const entries: ActivityEntry[] = [];
  let previous = pr.baseCommitHash;
  for (const update of updates) {
    const { commits, more } = await commitSummaries(repo, update.headCommitHash, [previous, update.targetHeadCommitHash]);
    entries.push({ kind: 'update', id: update.id, date: update.date, headCommitHash: update.headCommitHash, commits, more });
    previous = update.headCommitHash;
  }
  for (const change of changes)
    entries.push({ kind: 'change', id: change.id, date: change.date, userId: change.userId, data: JSON.parse(change.data) as PullRequestChangeData });
  for (const comment of comments) entries.push({ kind: 'comment', ...comment });
  const rank = { update: 0, change: 1, comment: 2 };
  return entries.sort((a, b) => a.date - b.date || rank[a.kind] - rank[b.kind] || a.id - b.id);
}

/** A review as the merge box shows it. */
export interface ReviewView {
  id: number;
  userId: number;
  status: ReviewStatus;
}

/** The review `userId` has on a request (EXCLUDED ones too), or null. */
export async function reviewOfUser(ctx: Context, pr: PullRequestRow, userId: number): Promise<ReviewView | null> {
  const row = await ctx.db
    .selectFrom('pullRequestReviews')
    .select(['id', 'userId', 'status'])
    .where('requestId', '=', pr.id)
    .where('userId', '=', userId)
    .executeTakeFirst();
  return row ?? null;
}

/** A job the target branch's protection requires, with the status of its current build (null: not run). */
export interface RequiredBuildView {
  jobName: string;
  status: BuildStatus | null;
  buildNumber: number | null;
}

/** The merge box of a request. */
export interface MergeBoxView {
  /** The stored preview (for an open request possibly stale: see `updating`). */
  preview: MergePreview | null;
  /** The stored preview of an open request is stale; the ref-change journal's worker recomputes it. */
  updating: boolean;
  /** Conflicting paths when the preview is current and has conflicts. */
  conflicts: string[];
  /** Reviews, EXCLUDED ones left out (as Get Reviews). */
  reviews: ReviewView[];
  requiredBuilds: RequiredBuildView[];
  /**
   * Why merging is refused now — the message the merge operation would answer (checkMerge of
   * docs/compatibility.md#pull-requests-merge-checks, or the missing write permission) — or null when it would go through.
   */
  blocker: string | null;
  /** The caller may merge (write code on the target project). */
  canMerge: boolean;
  /** The caller may discard, reopen and change the strategy (submitter, assignee or manager). */
  canModify: boolean;
  /** The source branch exists now (for delete / restore). */
  sourceBranchExists: boolean;
}

/**
 * The merge box of a readable request, read without a lock and without a write: the stored
 * preview (an open request's stale one is shown as updating — every change that makes it stale
 * has the journal's worker or the change's own event compute a new one), every merge rule of
 * docs/compatibility.md#pull-requests-merge-checks as the merge would evaluate them (the first refusal is `blocker`; the
 * conflict rule waits for a current preview, and the merge computes one itself), the reviews,
 * the required builds of the target branch with their current status, and the conflicting paths
 * of a current preview with conflicts.
 */
export async function mergeBox(ctx: Context, pr: PullRequestRow): Promise<MergeBoxView> {
  const { permissions } = await loadProjectWith(ctx, pr.targetProjectId, 'readCode');
  const repo = ctx.repoPath(pr.targetProjectId);
  const open = pr.status === 'OPEN';
  const [update, targetHead] = await Promise.all([latestUpdate(ctx.db, pr.id), open ? branchHead(repo, pr.targetBranch) : Promise.resolve(null)]);
  const stored = storedPreview(pr);
  const updating = open && targetHead !== null && !isPreviewCurrent(stored, update.headCommitHash, targetHead, pr.mergeStrategy);
  const refusal = await mergeRefusal(ctx, pr, { preview: open && targetHead === null ? null : stored, updating, head: update.headCommitHash });
  let blocker = refusal?.message ?? null;
  if (blocker === null && !permissions.writeCode) blocker = 'Permission denied: merging needs write permission on the code';
  const [reviews, jobs, builds, canModify, sourceHead] = await Promise.all([
    ctx.db
      .selectFrom('pullRequestReviews')
      .select(['id', 'userId', 'status'])
      .where('requestId', '=', pr.id)
      .where('status', '<>', 'EXCLUDED')
      .orderBy('id')
      .execute(),
    requiredJobs(ctx, pr.targetProjectId, pr.targetBranch),
    currentBuildsOf.ask(ctx, pr),
    ctx.actor.userId > 0 ? canModifyPullRequest(ctx, pr) : Promise.resolve(false),
    pr.sourceProjectId === null ? Promise.resolve(null) : branchHead(ctx.repoPath(pr.sourceProjectId), pr.sourceBranch),
  ]);
  let conflicts: string[] = [];
  if (open && !updating && stored && stored.mergeCommitHash === null) {
    conflicts = (await mergeTree(repo, stored.targetHeadCommitHash, stored.headCommitHash)).conflicts;
  }
  const requiredBuilds = jobs.map((jobName) => {
    const build = builds.find((b) => b.jobName === jobName);
    return { jobName, status: build?.status ?? null, buildNumber: build?.number ?? null };
  });
  return {
    preview: open && targetHead === null ? null : stored,
    updating,
    conflicts,
    reviews,
    requiredBuilds,
    blocker,
    canMerge: permissions.writeCode,
    canModify,
    sourceBranchExists: sourceHead !== null,
  };
}

/** The latest update's head and the request's base: the range the changes tab shows by default. */
export async function latestRange(ctx: Context, pr: PullRequestRow): Promise<{ base: string; head: string }> {
  return { base: pr.baseCommitHash, head: (await latestUpdate(ctx.db, pr.id)).headCommitHash };
}

/** Two branches to compare before opening a request (`/~pulls/new`). */
export interface BranchPair {
  targetProjectId: number;
  targetBranch: string;
  sourceProjectId: number;
  sourceBranch: string;
}

/** What `/~pulls/new` shows about a branch pair. */
export interface BranchComparison {
  targetHead: string;
  sourceHead: string;
  /** The merge base, null for unrelated histories. */
  base: string | null;
  /** Commits of the source not in the target, newest first (at most {@link MAX_LISTED_COMMITS}). */
  commits: CommitSummary[];
  more: boolean;
  /** The open request for the same change, if any. */
  openRequest: { number: number; title: string } | null;
}

/**
 * Compares a source branch with a target branch (read code on both projects, 404/401/403; a
 * missing branch is 404 `Branch not found: X`). A source in another project (a fork) has its head
 * fetched into the target repository under a temporary ref first, as opening does; the objects
 * stay there (unreferenced), so the base..source diff can be read from the target repository.
 */
export async function compareBranches(ctx: Context, pair: BranchPair): Promise<BranchComparison> {
  await loadProjectWith(ctx, pair.targetProjectId, 'readCode');
  if (pair.sourceProjectId !== pair.targetProjectId) await loadProjectWith(ctx, pair.sourceProjectId, 'readCode');
  const targetRepo = ctx.repoPath(pair.targetProjectId);
  const [targetHead, sourceHead] = await Promise.all([
    branchHead(targetRepo, pair.targetBranch),
    branchHead(ctx.repoPath(pair.sourceProjectId), pair.sourceBranch),
  ]);
  if (!targetHead) throw new NotFound(`Branch not found: ${pair.targetBranch}`);
  if (!sourceHead) throw new NotFound(`Branch not found: ${pair.sourceBranch}`);
  const staging = `refs/pulls-staging/compare-${randomUUID()}`;
  const cross = pair.sourceProjectId !== pair.targetProjectId;
  if (cross) await fetchCommits(targetRepo, ctx.repoPath(pair.sourceProjectId), sourceHead, staging);
  try {
    const base = await mergeBase(targetRepo, targetHead, sourceHead);
    const { commits, more } = base ? await commitSummaries(targetRepo, sourceHead, [targetHead]) : { commits: [], more: false };
    const open = await ctx.db
      .selectFrom('pullRequests')
      .select(['number', 'title'])
      .where('targetProjectId', '=', pair.targetProjectId)
      .where('targetBranch', '=', pair.targetBranch)
      .where('sourceProjectId', '=', pair.sourceProjectId)
      .where('sourceBranch', '=', pair.sourceBranch)
      .where('status', '=', 'OPEN')
      .executeTakeFirst();
    return { targetHead, sourceHead, base, commits, more, openRequest: open ?? null };
  } finally {
    if (cross) await deleteRef(targetRepo, staging);
  }
}
