import type { MergeStrategy, PullRequestRow } from '../../db/schema.js';
import { BadRequest, Conflict } from '../../errors.js';
import { branchHead, deleteRef, fetchCommits, getDefaultBranch, isAncestor, listRefs, updateRef, updateRefs } from '../../git/repository.js';
import { uniquely } from '../unique.js';
import type { Context } from '../context.js';
import { recordPullRequestMentions } from './pull-request-mentions.js';
import { assertNotPullMirror, branchProtection, loadProjectWith } from '../projects/index.js';
import { requireUser } from '../actor.js';
import { parseReferences, recordReferences } from '../issues/index.js';
import { recordChange, recordNote } from './changes.js';
import { indexTextFixedIssues } from './commits.js';
import { withLock } from './locks.js';
import { storedPreview } from './merge-preview.js';
import {
  assertNoEffectiveRequest,
  getPullRequestRow,
  latestUpdate,
  loadModifiablePullRequest,
  MAX_DESCRIPTION,
  pullRefs,
  truncateTitle,
} from './pull-requests.js';
import { transitionPullRequest } from './transitions.js';
import { journaledRefChange } from '../journal/index.js';

/** Runs `work` under the request's in-process lock (the same one the background check takes). */
function locked<T>(requestId: number, work: () => Promise<T>): Promise<T> {
  return withLock(`pull-request:${requestId}`, work);
}

/**
 * Set Title (docs/compatibility.md#pull-requests-endpoints item 14): canModify; empty → 400 `Title is required`; no-op when
 * equal; stored truncated to 255 (`...`); records PullRequestTitleChangeData (activity `changed
 * title`).
 */
export async function setTitle(ctx: Context, requestId: number, text: string): Promise<void> {
  const userId = requireUser(ctx.actor);
  const pr = await loadModifiablePullRequest(ctx, requestId);
  const title = text.trim();
  if (!title) throw new BadRequest('Title is required');
  const newTitle = truncateTitle(title);
  if (newTitle === pr.title) return;
  const now = ctx.now();
  await ctx.db.transaction().execute(async (tx) => {
    await tx.updateTable('pullRequests').set({ title: newTitle }).where('id', '=', pr.id).execute();
    await recordChange(tx, pr.id, userId, now, { '@type': 'PullRequestTitleChangeData', oldTitle: pr.title, newTitle });
    await indexTextFixedIssues(tx, pr.id, pr.targetProjectId, 'TITLE', newTitle);
    await recordReferences(tx, { kind: 'pullRequest', requestId: pr.id, projectId: pr.targetProjectId }, userId, now, parseReferences(newTitle, 'plain'));
  });
}

/**
 * Set Description (docs/compatibility.md#pull-requests-endpoints item 15): canModify; longer than 100,000 characters → 400
 * `Description too long`; a blank body clears it; no-op when equal; records
 * PullRequestDescriptionChangeData (minor: no last activity) and the @mentions of the text.
 */
export async function setDescription(ctx: Context, requestId: number, text: string): Promise<void> {
  const userId = requireUser(ctx.actor);
  const pr = await loadModifiablePullRequest(ctx, requestId);
  if (text.length > MAX_DESCRIPTION) throw new BadRequest('Description too long');
  const description = text.trim() ? text : null;
  if (description === pr.description) return;
  const now = ctx.now();
  await ctx.db.transaction().execute(async (tx) => {
    await tx.updateTable('pullRequests').set({ description }).where('id', '=', pr.id).execute();
    await recordChange(tx, pr.id, userId, now, {
      '@type': 'PullRequestDescriptionChangeData',
      oldDescription: pr.description,
      newDescription: description,
    });
    await recordPullRequestMentions(tx, pr.id, description);
    await indexTextFixedIssues(tx, pr.id, pr.targetProjectId, 'DESCRIPTION', description);
    await recordReferences(tx, { kind: 'pullRequest', requestId: pr.id, projectId: pr.targetProjectId }, userId, now, parseReferences(description, 'markdown'));
  });
}

/**
 * Set Merge Strategy (docs/compatibility.md#pull-requests-endpoints item 16): canModify; always records
 * PullRequestMergeStrategyChangeData (even unchanged, also on closed requests); an open request's
 * preview is recomputed in the background (and on demand when read).
 */
export async function setMergeStrategy(ctx: Context, requestId: number, strategy: MergeStrategy): Promise<void> {
  const userId = requireUser(ctx.actor);
  const pr = await loadModifiablePullRequest(ctx, requestId);
  const now = ctx.now();
  await ctx.db.transaction().execute(async (tx) => {
    await tx.updateTable('pullRequests').set({ mergeStrategy: strategy }).where('id', '=', pr.id).execute();
    await recordChange(tx, pr.id, userId, now, { '@type': 'PullRequestMergeStrategyChangeData', oldStrategy: pr.mergeStrategy, newStrategy: strategy });
  });
  if (pr.status === 'OPEN') ctx.events.emit('pullRequestChanged', { requestId: pr.id });
}

/**
 * Discard (docs/compatibility.md#pull-requests-endpoints item 18): canModify; not open → 409 `Pull request already closed`.
 * Sets DISCARDED (only if still open, so concurrent closes are safe), records
 * PullRequestDiscardData and stores the note as a comment. The preview is kept.
 */
export async function discardPullRequest(ctx: Context, requestId: number, note: string): Promise<void> {
  const userId = requireUser(ctx.actor);
  await loadModifiablePullRequest(ctx, requestId);
  await locked(requestId, async () => {
    const pr = await getPullRequestRow(ctx.db, requestId);
    if (pr.status !== 'OPEN') throw new Conflict('Pull request already closed');
    const discarded = await transitionPullRequest(ctx, pr, { to: 'DISCARDED' }, { userId, date: ctx.now(), note });
    if (!discarded) throw new Conflict('Pull request already closed');
  });
}

/** Makes the source head available in the target repository (cross-project requests). */
async function fetchSourceHead(ctx: Context, pr: PullRequestRow, sourceProjectId: number, sourceHead: string): Promise<() => Promise<void>> {
  if (sourceProjectId === pr.targetProjectId) return async () => undefined;
  const staging = `refs/pulls-staging/${pr.uuid}`;
  const targetRepo = ctx.repoPath(pr.targetProjectId);
  await fetchCommits(targetRepo, ctx.repoPath(sourceProjectId), sourceHead, staging);
  return () => deleteRef(targetRepo, staging).catch(() => undefined);
}

/**
 * checkReopen (docs/compatibility.md#pull-requests-reopen-checks), first failing rule wins, each a 409: already opened;
 * target branch, source project, source branch gone; an effective request exists; source head
 * already in the target branch. Returns the current source head.
 */
async function checkReopen(ctx: Context, pr: PullRequestRow): Promise<{ sourceHead: string; cleanup: () => Promise<void> }> {
  if (pr.status === 'OPEN') throw new Conflict('Pull request already opened');
  const targetHead = await branchHead(ctx.repoPath(pr.targetProjectId), pr.targetBranch);
  if (!targetHead) throw new Conflict('Target branch no longer exists');
  if (pr.sourceProjectId === null) throw new Conflict('Source project no longer exists');
  const sourceHead = await branchHead(ctx.repoPath(pr.sourceProjectId), pr.sourceBranch);
  if (!sourceHead) throw new Conflict('Source branch no longer exists');
  await assertNoEffectiveRequest(ctx.db, { ...pr, sourceProjectId: pr.sourceProjectId }, sourceHead);
  const cleanup = await fetchSourceHead(ctx, pr, pr.sourceProjectId, sourceHead);
  try {
    if (await isAncestor(ctx.repoPath(pr.targetProjectId), sourceHead, targetHead)) {
      throw new Conflict('Source branch already merged into target branch');
    }
  } catch (error) {
    await cleanup();
    throw error;
  }
  return { sourceHead, cleanup };
}

/**
 * Reopen (docs/compatibility.md#pull-requests-endpoints item 17, docs/compatibility.md#pull-requests-reopen-checks): canModify; every checkReopen rule (409). Sets OPEN
 * (only if still closed; a concurrent reopen of the same change loses on the one-open-request
 * constraint with 409), records PullRequestReopenData, stores the note, and re-checks the request
 * in the background (new update when the source moved, new preview).
 */
export async function reopenPullRequest(ctx: Context, requestId: number, note: string): Promise<void> {
  const userId = requireUser(ctx.actor);
  await loadModifiablePullRequest(ctx, requestId);
  await locked(requestId, async () => {
    const pr = await getPullRequestRow(ctx.db, requestId);
    const { cleanup } = await checkReopen(ctx, pr);
    try {
      const reopened = await uniquely('Another pull request already open for this change', () =>
        transitionPullRequest(ctx, pr, { to: 'OPEN' }, { userId, date: ctx.now(), note }),
      );
      if (!reopened) throw new Conflict('Pull request already opened');
    } finally {
      await cleanup();
    }
  });
}

/**
 * checkDeleteSourceBranch (docs/compatibility.md#pull-requests-source-branch), each a 409: not merged; source project or
 * branch gone; default branch; no preview; source moved since the merge; other open requests
 * target the branch. Returns the source head.
 */
async function checkDeleteSourceBranch(ctx: Context, pr: PullRequestRow): Promise<string> {
  if (pr.status !== 'MERGED') throw new Conflict('Pull request not merged');
  if (pr.sourceProjectId === null) throw new Conflict('Source project no longer exists');
  const sourceRepo = ctx.repoPath(pr.sourceProjectId);
  const sourceHead = await branchHead(sourceRepo, pr.sourceBranch);
  if (!sourceHead) throw new Conflict('Source branch no longer exists');
  if ((await getDefaultBranch(sourceRepo)) === pr.sourceBranch) throw new Conflict('Source branch is default branch');
  const preview = storedPreview(pr);
  if (!preview) throw new Conflict('Merge preview not calculated yet');
  if (sourceHead !== preview.headCommitHash && sourceHead !== preview.mergeCommitHash) throw new Conflict('Change not updated yet');
  const others = await ctx.db
    .selectFrom('pullRequests')
    .select('id')
    .where('targetProjectId', '=', pr.sourceProjectId)
    .where('targetBranch', '=', pr.sourceBranch)
    .where('status', '=', 'OPEN')
    .executeTakeFirst();
  if (others) throw new Conflict('Some other pull requests are opening to this branch');
  return sourceHead;
}

/**
 * Delete Source Branch (docs/compatibility.md#pull-requests-endpoints item 20, docs/compatibility.md#pull-requests-source-branch): canModify and write code on the source
 * project, not a pull mirror (409, docs/compatibility.md#repository-mirrors); branch protection must not prevent the deletion (409); every checkDeleteSourceBranch
 * rule (409). Deletes the branch by compare-and-swap
 * (a concurrent push → 409), records PullRequestSourceBranchDeleteData (minor), stores the note,
 * and announces the ref change (other open requests from that branch get discarded).
 */
export async function deleteSourceBranch(ctx: Context, requestId: number, note: string): Promise<void> {
  const userId = requireUser(ctx.actor);
  const initial = await loadModifiablePullRequest(ctx, requestId);
  if (initial.sourceProjectId === null) throw new Conflict('Source project no longer exists');
  await loadProjectWith(ctx, initial.sourceProjectId, 'writeCode');
  await assertNotPullMirror(ctx, initial.sourceProjectId);
  const protection = await branchProtection(ctx, initial.sourceProjectId, initial.sourceBranch, userId);
  if (protection.protected && protection.preventDeletion) throw new Conflict('Branch protection prevents deleting the source branch');
  await locked(requestId, async () => {
    const pr = await getPullRequestRow(ctx.db, requestId);
    const sourceHead = await checkDeleteSourceBranch(ctx, pr);
    const ref = `refs/heads/${pr.sourceBranch}`;
    const now = ctx.now();
    await journaledRefChange(
      ctx,
      pr.sourceProjectId!,
      [{ ref, oldHash: sourceHead, newHash: null }],
      { userId },
      () => deleteRef(ctx.repoPath(pr.sourceProjectId!), ref, sourceHead),
      async (tx) => {
        await recordChange(tx, pr.id, userId, now, { '@type': 'PullRequestSourceBranchDeleteData' });
        await recordNote(tx, pr.id, userId, now, note);
      },
    );
  });
}

/**
 * Restore Source Branch (docs/compatibility.md#pull-requests-endpoints item 21, docs/compatibility.md#pull-requests-source-branch): canModify and write code on the source
 * project; 409 when the request is open, the source project is gone or a pull mirror, or the branch exists.
 * Recreates the branch at the latest update head (fetched from the target repository for
 * cross-project requests), records PullRequestSourceBranchRestoreData (minor), stores the note.
 */
export async function restoreSourceBranch(ctx: Context, requestId: number, note: string): Promise<void> {
  const userId = requireUser(ctx.actor);
  const initial = await loadModifiablePullRequest(ctx, requestId);
  if (initial.sourceProjectId === null) throw new Conflict('Source project no longer exists');
  await loadProjectWith(ctx, initial.sourceProjectId, 'writeCode');
  await assertNotPullMirror(ctx, initial.sourceProjectId);
  await locked(requestId, async () => {
    const pr = await getPullRequestRow(ctx.db, requestId);
    if (pr.sourceProjectId === null) throw new Conflict('Source project no longer exists');
    if (pr.status === 'OPEN') throw new Conflict('Pull request is open');
    const sourceRepo = ctx.repoPath(pr.sourceProjectId);
    if (await branchHead(sourceRepo, pr.sourceBranch)) throw new Conflict('Source branch already exists');
    const head = (await latestUpdate(ctx.db, pr.id)).headCommitHash;
    const staging = `refs/pulls-staging/${pr.uuid}`;
    if (pr.sourceProjectId !== pr.targetProjectId) {
      await fetchCommits(sourceRepo, ctx.repoPath(pr.targetProjectId), pullRefs.head(pr.number), staging);
    }
    const ref = `refs/heads/${pr.sourceBranch}`;
    const now = ctx.now();
    try {
      await journaledRefChange(
        ctx,
        pr.sourceProjectId,
        [{ ref, oldHash: null, newHash: head }],
        { userId },
        () =>
          updateRef(sourceRepo, ref, head, null).catch((error: unknown) => {
            if (error instanceof Conflict) throw new Conflict('Source branch already exists');
            throw error;
          }),
        async (tx) => {
          await recordChange(tx, pr.id, userId, now, { '@type': 'PullRequestSourceBranchRestoreData' });
          await recordNote(tx, pr.id, userId, now, note);
        },
      );
    } finally {
      if (pr.sourceProjectId !== pr.targetProjectId) await deleteRef(sourceRepo, staging).catch(() => undefined);
    }
  });
}

/**
 * Delete (docs/compatibility.md#pull-requests-endpoints item 22, docs/compatibility.md#pull-requests-lifecycle "Delete"): manage pull requests on the target project.
 * Removes the request with everything hanging off it (labels, updates, reviews, assignments,
 * comments, changes, watches, mentions, commit and fixed-issue index, and its builds — their
 * params, labels and dependences cascade; running ones notice the missing row and stop) in one
 * transaction, then the builds' storage directories and its refs
 * `refs/pulls/N/*` and `refs/updates/<id>` in the target repository.
 */
export async function deletePullRequest(ctx: Context, requestId: number): Promise<void> {
  const pr = await getPullRequestRow(ctx.db, requestId);
  await loadProjectWith(ctx, pr.targetProjectId, 'managePullRequests');
  await locked(requestId, async () => {
    const updates = await ctx.db.selectFrom('pullRequestUpdates').select('id').where('requestId', '=', pr.id).execute();
    const afterCommit: (() => Promise<void>)[] = [];
    await ctx.db.transaction().execute(async (tx) => {
      await ctx.events.dispatchInTransaction('pullRequestDeleting', { db: tx, requestId: pr.id, afterCommit });
      await tx.deleteFrom('pullRequests').where('id', '=', pr.id).execute();
    });
    for (const step of afterCommit) await step();
    const repo = ctx.repoPath(pr.targetProjectId);
    const refs = await listRefs(repo, `refs/pulls/${pr.number}/`).catch(() => new Map<string, string>());
    const doomed = [...refs.keys(), ...updates.map((u) => pullRefs.update(u.id))];
    await updateRefs(
      repo,
      doomed.map((ref) => ({ ref, newHash: null })),
    ).catch(async () => {
      for (const ref of doomed) await deleteRef(repo, ref).catch(() => undefined);
    });
  });
}
