import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/database.js';
import type { Transaction } from 'kysely';
import type { Database, MergeStrategy, ProjectRow, PullRequestRow, PullRequestUpdateRow } from '../../db/schema.js';
import { BadRequest, Conflict, NotFound } from '../../errors.js';
import { branchHead, deleteRef, fetchCommits, isAncestor, mergeBase, updateRefs } from '../../git/repository.js';
import type { Context } from '../context.js';
import { authorReassignment } from '../entities.js';
import { forkRootId, getProjectRow, loadProjectWith, projectPermissions, takeNextNumber } from '../projects/index.js';
import { deny, requireUser } from '../actor.js';
import { isUniqueViolation } from '../unique.js';
import { recordPullRequestMentions } from './pull-request-mentions.js';
import { autoWatch } from './changes.js';
import { parseReferences, recordReferences } from '../issues/index.js';
import { commitFixReferences, indexCommits, indexFixedIssues, indexTextFixedIssues, updateCommits } from './commits.js';
import { resetRequiredReviews } from './required-reviewers.js';
import { ordinaryUserIds } from '../users/index.js';

/** Longest stored title (docs/compatibility.md#pull-requests-json). */
export const MAX_TITLE = 255;

const STRATEGIES: readonly MergeStrategy[] = [
  'CREATE_MERGE_COMMIT',
  'CREATE_MERGE_COMMIT_IF_NECESSARY',
  'SQUASH_SOURCE_BRANCH_COMMITS',
  'REBASE_SOURCE_BRANCH_COMMITS',
];

/**
 * Reads a merge strategy body (docs/compatibility.md#pull-requests-endpoints item 16: a JSON string; the raw name is accepted
 * too). Throws 400 `Merge strategy is required` or `Invalid merge strategy: X`.
 */
export function parseMergeStrategy(text: string): MergeStrategy {
  const name = text.trim();
  if (!name) throw new BadRequest('Merge strategy is required');
  if (!STRATEGIES.includes(name as MergeStrategy)) throw new BadRequest(`Invalid merge strategy: ${name}`);
  return name as MergeStrategy;
}
/** Longest description or comment (docs/compatibility.md#pull-requests-json, docs/compatibility.md#pull-requests-sub-entities). */
export const MAX_DESCRIPTION = 100_000;

/** Truncates a title to 255 characters with `...` (docs/compatibility.md#pull-requests-endpoints item 14). */
export function truncateTitle(title: string): string {
  return title.length > MAX_TITLE ? `${title.slice(0, MAX_TITLE - 3)}...` : title;
}

/** PullRequestOpenData (docs/compatibility.md#pull-requests-opening). */
export interface PullRequestOpenData {
  targetProjectId: number;
  sourceProjectId: number;
  targetBranch: string;
  sourceBranch: string;
  title: string;
  description?: string | null;
  mergeStrategy?: MergeStrategy;
  reviewerIds?: number[];
  assigneeIds?: number[];
}

/** Refs a pull request keeps in its target repository (docs/compatibility.md#pull-requests-opening step 6). */
export const pullRefs = {
  base: (n: number) => `refs/pulls/${n}/base`,
  head: (n: number) => `refs/pulls/${n}/head`,
  merge: (n: number) => `refs/pulls/${n}/merge`,
  build: (n: number) => `refs/pulls/${n}/build`,
  update: (updateId: number) => `refs/updates/${updateId}`,
};

/** Loads a pull request row; NotFound when missing. */
export async function getPullRequestRow(db: Db, requestId: number): Promise<PullRequestRow> {
  const row = await findPullRequestRow(db, requestId);
  if (!row) throw new NotFound(`Pull request not found: ${requestId}`);
  return row;
}

/**
 * The pull request row with id `requestId`, or null when there is none (deleted meanwhile, for
 * background work); database faults are thrown.
 */
export async function findPullRequestRow(db: Db, requestId: number): Promise<PullRequestRow | null> {
  return (await db.selectFrom('pullRequests').selectAll().where('id', '=', requestId).executeTakeFirst()) ?? null;
}

/**
 * The pull request numbered `number` in target project `projectId`, or null when there is none.
 * For the builds query's `pull request` criterion (docs/compatibility.md#builds-query-language),
 * which words its own error.
 */
export async function findPullRequestAt(db: Db, projectId: number, number: number): Promise<PullRequestRow | null> {
  return (await db.selectFrom('pullRequests').selectAll().where('targetProjectId', '=', projectId).where('number', '=', number).executeTakeFirst()) ?? null;
}

/** The pull requests with ids `ids` that exist: their target project and number, in one query (none for no ids). */
export async function pullRequestNumbers(db: Db, ids: readonly number[]): Promise<{ id: number; targetProjectId: number; number: number }[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('pullRequests').select(['id', 'targetProjectId', 'number']).where('id', 'in', ids).execute();
}

/**
 * A build of the request was submitted on `commitHash`: that commit's builds become the request's
 * current builds (`buildCommitHash`, docs/compatibility.md#builds-pull-request-current-builds). Runs in the
 * caller's transaction `db`.
 */
export async function setBuildCommit(db: Db, requestId: number, commitHash: string): Promise<void> {
  await db.updateTable('pullRequests').set({ buildCommitHash: commitHash }).where('id', '=', requestId).execute();
}

/**
 * A code comment of the request changed at `date`: its `codeCommentsUpdateDate` moves
 * (docs/compatibility.md#pull-requests-json). Runs in the caller's transaction `db`.
 */
export async function touchCodeComments(db: Db, requestId: number, date: number): Promise<void> {
  await db.updateTable('pullRequests').set({ codeCommentsUpdateDate: date }).where('id', '=', requestId).execute();
}

/**
 * Loads a pull request the caller may read: read code on its target project (404 when the
 * project is invisible, 401/403 when visible but code is not readable).
 */
export async function loadReadablePullRequest(ctx: Context, requestId: number): Promise<PullRequestRow> {
  const pr = await getPullRequestRow(ctx.db, requestId);
  await loadProjectWith(ctx, pr.targetProjectId, 'readCode');
  return pr;
}

/**
 * `row` (a review, assignment, comment or watch, naming its request) when the caller may read
 * its request: read code on the target project (404/401/403).
 */
export async function withReadablePullRequest<R extends { requestId: number }>(ctx: Context, row: R): Promise<R> {
  await loadReadablePullRequest(ctx, row.requestId);
  return row;
}

/** Get Updates (docs/compatibility.md#pull-requests-endpoints item 8): read code; the updates of a request, oldest first. */
export async function getUpdates(ctx: Context, requestId: number): Promise<PullRequestUpdateRow[]> {
  const pr = await loadReadablePullRequest(ctx, requestId);
  return listUpdates(ctx.db, pr.id);
}

/** The updates of a request, oldest first (docs/compatibility.md#pull-requests-endpoints item 8), read without a privilege check. */
export async function listUpdates(db: Db, requestId: number): Promise<PullRequestUpdateRow[]> {
  return db.selectFrom('pullRequestUpdates').selectAll().where('requestId', '=', requestId).orderBy('id').execute();
}

/** The latest update of a request (every request has at least one). */
export async function latestUpdate(db: Db, requestId: number): Promise<PullRequestUpdateRow> {
  return db.selectFrom('pullRequestUpdates').selectAll().where('requestId', '=', requestId).orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow();
}

/**
 * The "effective" request for a change (docs/compatibility.md#pull-requests-opening step 3, docs/compatibility.md#pull-requests-reopen-checks step 5): an open
 * request with the same target and source, or a merged one whose preview head is the current
 * source head. Throws Conflict with OneDev's message when one exists.
 */
export async function assertNoEffectiveRequest(
  db: Db,
  change: { targetProjectId: number; targetBranch: string; sourceProjectId: number; sourceBranch: string },
  sourceHead: string,
  exceptId?: number,
): Promise<void> {
  let query = db
    .selectFrom('pullRequests')
    .select(['id', 'status', 'previewHeadCommitHash'])
    .where('targetProjectId', '=', change.targetProjectId)
    .where('targetBranch', '=', change.targetBranch)
    .where('sourceProjectId', '=', change.sourceProjectId)
    .where('sourceBranch', '=', change.sourceBranch)
    .where('status', 'in', ['OPEN', 'MERGED']);
  if (exceptId !== undefined) query = query.where('id', '<>', exceptId);
  for (const other of await query.execute()) {
    if (other.status === 'OPEN') throw new Conflict('Another pull request already open for this change');
    if (other.previewHeadCommitHash === sourceHead) throw new Conflict('Change already merged');
  }
}

/** Throws 400 `Unable to find <what> user with id: …` unless every id names a real user (ids ≤ 0 never do). */
export async function assertUsersExist(db: Db, ids: number[], what: string): Promise<void> {
  if (ids.length === 0) return;
  const found = await ordinaryUserIds(db, ids);
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length > 0) throw new BadRequest(`Unable to find ${what} user with id: ${missing.join(', ')}`);
}

/**
 * Create (docs/compatibility.md#pull-requests-opening) with the statuses of docs/compatibility.md#gitloom-differs-errors: read code on both projects;
 * `Source and target are the same` (400); an open or merged request for the change (409);
 * missing branches (404); `No common base for target and source` (400); `Change already merged`
 * (409). Records the request, its first update, reviews, assignments and watches, and writes
 * `refs/pulls/N/{base,head}` and `refs/updates/<id>` in the target repository, all or nothing.
 * Returns the new id.
 */
export async function openPullRequest(ctx: Context, data: PullRequestOpenData): Promise<number> {
  const opening = await checkOpening(ctx, data);
  const { target, source, targetRepo } = opening;
  const stagingRef = `refs/pulls-staging/${opening.uuid}`;
  if (source.id !== target.id) await fetchCommits(targetRepo, opening.sourceRepo, opening.sourceHead, stagingRef);
  try {
    return await recordOpening(ctx, opening, await readOpenedChange(ctx, opening));
  } finally {
    if (source.id !== target.id) await deleteRef(targetRepo, stagingRef).catch(() => undefined);
  }
}

/** An opening whose caller, projects, title, users and branches passed the checks of {@link openPullRequest}. */
interface Opening {
  data: PullRequestOpenData;
  submitterId: number;
  target: ProjectRow;
  source: ProjectRow;
  title: string;
  reviewerIds: number[];
  assigneeIds: number[];
  targetRepo: string;
  sourceRepo: string;
  sourceHead: string;
  targetHead: string;
  uuid: string;
}

/** The checks of {@link openPullRequest} before any writing, in OneDev's order; the errors it documents. */
async function checkOpening(ctx: Context, data: PullRequestOpenData): Promise<Opening> {
  const submitterId = requireUser(ctx.actor);
  const { project: target } = await loadProjectWith(ctx, data.targetProjectId, 'readCode');
  const source = data.sourceProjectId === target.id ? target : (await loadProjectWith(ctx, data.sourceProjectId, 'readCode')).project;
  const title = data.title?.trim();
  if (!title) throw new BadRequest('Title is required');
  if (source.id === target.id && data.sourceBranch === data.targetBranch) throw new BadRequest('Source and target are the same');
  const reviewerIds = [...new Set(data.reviewerIds ?? [])];
  const assigneeIds = [...new Set(data.assigneeIds ?? [])];
  if (reviewerIds.includes(submitterId)) throw new BadRequest('Pull request submitter can not be reviewer');
  await assertUsersExist(ctx.db, reviewerIds, 'reviewer');
  await assertUsersExist(ctx.db, assigneeIds, 'assignee');

  const targetRepo = ctx.repoPath(target.id);
  const sourceRepo = ctx.repoPath(source.id);
  const sourceHead = await branchHead(sourceRepo, data.sourceBranch);
  if (!sourceHead) throw new NotFound(`Branch not found: ${data.sourceBranch}`);
  await assertNoEffectiveRequest(ctx.db, { ...data, sourceProjectId: source.id }, sourceHead);
  const targetHead = await branchHead(targetRepo, data.targetBranch);
  if (!targetHead) throw new NotFound(`Branch not found: ${data.targetBranch}`);
  return { data, submitterId, target, source, title, reviewerIds, assigneeIds, targetRepo, sourceRepo, sourceHead, targetHead, uuid: randomUUID() };
}

/** What an opening records, read from the target repository (the source head fetched into it) before the transaction. */
interface OpenedChange {
  base: string;
  commits: string[];
  fixReferences: Awaited<ReturnType<typeof commitFixReferences>>;
  storedTitle: string;
  description: string | null;
  numberScopeId: number;
  submitDate: number;
}

/** The merge base and the commits of an opening: `No common base for target and source` (400), `Change already merged` (409). */
async function readOpenedChange(ctx: Context, opening: Opening): Promise<OpenedChange> {
  const { targetRepo, sourceHead, targetHead } = opening;
  const base = await mergeBase(targetRepo, targetHead, sourceHead);
  if (!base) throw new BadRequest('No common base for target and source');
  if (base === sourceHead || (await isAncestor(targetRepo, sourceHead, targetHead))) throw new Conflict('Change already merged');
  const commits = await updateCommits(targetRepo, sourceHead, [targetHead]);
  const fixReferences = await commitFixReferences(targetRepo, commits);
  const storedTitle = truncateTitle(opening.title);
  const description = opening.data.description ? opening.data.description.slice(0, MAX_DESCRIPTION) : null;
  const numberScopeId = await forkRootId(ctx.db, opening.target.id);
  return { base, commits, fixReferences, storedTitle, description, numberScopeId, submitDate: ctx.now() };
}

/**
 * Records an opening in one transaction with its refs, all or nothing: the refs written are
 * deleted again when the transaction fails. A unique violation is a lost race, answered 409.
 */
async function recordOpening(ctx: Context, opening: Opening, change: OpenedChange): Promise<number> {
  const { data, source, targetRepo, sourceHead } = opening;
  const writtenRefs: string[] = [];
  try {
    const id = await ctx.db.transaction().execute(async (tx) => {
      const { id, number, updateId } = await insertOpenedRequest(tx, opening, change);
      await recordOpenedRelations(ctx, tx, id, opening, change);
      // No compare-and-swap: the number and update id are this transaction's (a row lock holds
      // the number), so a ref already there is a leftover of a transaction a crash rolled back,
      // whose number and id are handed out again.
      const refs = [
        { ref: pullRefs.base(number), newHash: change.base },
        { ref: pullRefs.head(number), newHash: sourceHead },
        { ref: pullRefs.update(updateId), newHash: sourceHead },
      ];
      await updateRefs(targetRepo, refs);
      writtenRefs.push(...refs.map((r) => r.ref));
      return id;
    });
    ctx.events.emit('pullRequestChanged', { requestId: id });
    return id;
  } catch (error) {
    for (const ref of writtenRefs) await deleteRef(targetRepo, ref).catch(() => undefined);
    if (!isUniqueViolation(error)) throw error;
    // Lost a race: another process opened the same change (the one-open-request index) or took
    // the scope's next number first.
    await assertNoEffectiveRequest(ctx.db, { ...data, sourceProjectId: source.id }, sourceHead);
    throw new Conflict('Another pull request was opened at the same time, please retry', { cause: error });
  }
}

/** Inserts the opened request, numbered in its scope, and its first update. */
async function insertOpenedRequest(
  tx: Transaction<Database>,
  opening: Opening,
  change: OpenedChange,
): Promise<{ id: number; number: number; updateId: number }> {
  const { data, submitterId } = opening;
  const { submitDate } = change;
  const number = await takeNextNumber(tx, change.numberScopeId, 'pull-request');
  const { id } = await tx
    .insertInto('pullRequests')
    .values({
      numberScopeId: change.numberScopeId,
      number,
      status: 'OPEN',
      title: change.storedTitle,
      description: change.description,
      submitterId,
      targetProjectId: opening.target.id,
      targetBranch: data.targetBranch,
      sourceProjectId: opening.source.id,
      sourceBranch: data.sourceBranch,
      baseCommitHash: change.base,
      buildCommitHash: null,
      submitDate,
      mergeStrategy: data.mergeStrategy ?? 'CREATE_MERGE_COMMIT',
      uuid: opening.uuid,
      commentCount: 0,
      lastActivityUserId: submitterId,
      lastActivityDate: submitDate,
      lastActivityDescription: 'opened',
      codeCommentsUpdateDate: null,
      checkError: null,
      closeDate: null,
      previewTargetHeadCommitHash: null,
      previewHeadCommitHash: null,
      previewMergeStrategy: null,
      previewMergeCommitHash: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const update = await tx
    .insertInto('pullRequestUpdates')
    .values({
      requestId: id,
      headCommitHash: opening.sourceHead,
      targetHeadCommitHash: opening.targetHead,
      date: submitDate + 1,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id, number, updateId: update.id };
}

/**
 * The rows an opened request `id` brings along: reviews, assignments, watches, mentions,
 * commits, fixed issues, references, required reviews, and the `OPENED` activity.
 */
async function recordOpenedRelations(ctx: Context, tx: Db, id: number, opening: Opening, change: OpenedChange): Promise<void> {
  const { submitterId, reviewerIds, assigneeIds, target } = opening;
  const { storedTitle, description, submitDate } = change;
  for (const userId of reviewerIds) {
    await tx.insertInto('pullRequestReviews').values({ requestId: id, userId, status: 'PENDING', statusDate: submitDate }).execute();
  }
  for (const userId of assigneeIds) await tx.insertInto('pullRequestAssignments').values({ requestId: id, userId }).execute();
  await autoWatch(tx, id, [submitterId, ...reviewerIds, ...assigneeIds]);
  await recordPullRequestMentions(tx, id, opening.data.description);
  await indexCommits(tx, id, change.commits);
  await indexFixedIssues(tx, id, target.id, 'COMMIT', change.fixReferences);
  await indexTextFixedIssues(tx, id, target.id, 'TITLE', storedTitle);
  await indexTextFixedIssues(tx, id, target.id, 'DESCRIPTION', description);
  await recordReferences(tx, { kind: 'pullRequest', requestId: id, projectId: target.id }, submitterId, submitDate, [
    ...parseReferences(storedTitle, 'plain'),
    ...parseReferences(description, 'markdown'),
  ]);
  await resetRequiredReviews(tx, await getPullRequestRow(tx, id), submitDate);
  await ctx.events.dispatchInTransaction('activity', {
    db: tx,
    activity: { type: 'PULL_REQUEST', action: 'OPENED', requestId: id, actorId: submitterId, date: submitDate, text: description },
  });
}

/** Get Basic Info (docs/compatibility.md#pull-requests-endpoints item 1): read code on the target project. */
export async function getPullRequest(ctx: Context, requestId: number): Promise<PullRequestRow> {
  return loadReadablePullRequest(ctx, requestId);
}

/** Whether the caller may modify the request: submitter, assignee or pull request manager. */
export async function canModifyPullRequest(ctx: Context, pr: PullRequestRow): Promise<boolean> {
  if (ctx.actor.userId === pr.submitterId) return true;
  const assigned = await ctx.db
    .selectFrom('pullRequestAssignments')
    .select('id')
    .where('requestId', '=', pr.id)
    .where('userId', '=', ctx.actor.userId)
    .executeTakeFirst();
  if (assigned) return true;
  const project = await getProjectRow(ctx.db, pr.targetProjectId);
  return (await projectPermissions(ctx, project)).managePullRequests;
}

/**
 * Loads a request the caller may modify (docs/compatibility.md#pull-requests-endpoints canModify): read code on the
 * target project (404/401/403), then submitter, assignee or pull request manager (else 401/403).
 */
export async function loadModifiablePullRequest(ctx: Context, requestId: number): Promise<PullRequestRow> {
  const pr = await loadReadablePullRequest(ctx, requestId);
  if (!(await canModifyPullRequest(ctx, pr))) deny(ctx.actor);
  return pr;
}

/**
 * The request a sub-resource body refers to (`requestId` of a review, assignment, comment, watch
 * or label): 400 `Pull request not found: X` when it does not exist (docs/compatibility.md#gitloom-differs-improved-behaviour), then read
 * code on its target project (404/401/403).
 */
export async function referencedPullRequest(ctx: Context, requestId: number): Promise<PullRequestRow> {
  const pr = await ctx.db.selectFrom('pullRequests').selectAll().where('id', '=', requestId).executeTakeFirst();
  if (!pr) throw new BadRequest(`Pull request not found: ${requestId}`);
  await loadProjectWith(ctx, pr.targetProjectId, 'readCode');
  return pr;
}

/** A deleted user's pull requests, their changes and comments go to the unknown user (the `userDeleting` reaction, docs/compatibility.md#users-deletion). */
export const reassignPullRequestAuthors = authorReassignment({
  pullRequests: ['submitterId', 'lastActivityUserId'],
  pullRequestChanges: ['userId'],
  pullRequestComments: ['userId'],
});
