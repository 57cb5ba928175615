import type { MergeStrategy, PullRequestRow } from '../../db/schema.js';
import { branchHead, deleteRef, RefUpdateConflict, updateRef, refHead } from '../../git/repository.js';
import type { Context } from '../context.js';
import { gitIdentity, systemIdentity } from '../users/index.js';
import { withLock } from './locks.js';
import { getPullRequestRow, latestUpdate, loadReadablePullRequest, pullRefs } from './pull-requests.js';
import { strategies } from './strategies/index.js';

/** MergePreview (docs/compatibility.md#pull-requests-merge-strategies-and-preview); `mergeCommitHash` null = conflicts. */
export interface MergePreview {
  targetHeadCommitHash: string;
  headCommitHash: string;
  mergeStrategy: MergeStrategy;
  mergeCommitHash: string | null;
}

/** The preview stored on a row, or null when none was computed. */
export function storedPreview(pr: PullRequestRow): MergePreview | null {
  if (!pr.previewHeadCommitHash || !pr.previewTargetHeadCommitHash || !pr.previewMergeStrategy) return null;
  return {
    targetHeadCommitHash: pr.previewTargetHeadCommitHash,
    headCommitHash: pr.previewHeadCommitHash,
    mergeStrategy: pr.previewMergeStrategy,
    mergeCommitHash: pr.previewMergeCommitHash,
  };
}

/** Whether a stored preview matches the request's head, target head and strategy now. */
export function isPreviewCurrent(preview: MergePreview | null, head: string, targetHead: string, strategy: MergeStrategy): boolean {
  return preview !== null && preview.headCommitHash === head && preview.targetHeadCommitHash === targetHead && preview.mergeStrategy === strategy;
}

/**
 * Returns the request's merge preview, computing and storing it first when stale (docs/compatibility.md#gitloom-differs-improved-behaviour: computed on demand, never "not calculated yet"). Preview commits are made by the system
 * identity with message `Merge preview of pull request #N` and kept alive by
 * `refs/pulls/N/merge`. Returns null when the target branch is gone (the request's commits are
 * unreachable as a merge).
 */
export async function ensureMergePreview(ctx: Context, pr: PullRequestRow): Promise<MergePreview | null> {
  const repo = ctx.repoPath(pr.targetProjectId);
  const [update, targetHead] = await Promise.all([latestUpdate(ctx.db, pr.id), branchHead(repo, pr.targetBranch)]);
  if (!targetHead) return null;
  const current = storedPreview(pr);
  if (current && isPreviewCurrent(current, update.headCommitHash, targetHead, pr.mergeStrategy)) return current;

  const now = new Date(ctx.now());
  const system = systemIdentity(now);
  const squashAuthor = pr.mergeStrategy === 'SQUASH_SOURCE_BRANCH_COMMITS' ? await gitIdentity(ctx.db, pr.submitterId, now).catch(() => system) : system;
  const mergeCommit = await strategies[pr.mergeStrategy].preview(repo, targetHead, update.headCommitHash, `Merge preview of pull request #${pr.number}`, {
    author: system,
    committer: system,
    squashAuthor,
  });
  const preview: MergePreview = {
    targetHeadCommitHash: targetHead,
    headCommitHash: update.headCommitHash,
    mergeStrategy: pr.mergeStrategy,
    mergeCommitHash: mergeCommit,
  };
  const sourceChanged = current?.headCommitHash !== update.headCommitHash || current?.mergeStrategy !== pr.mergeStrategy;
  const saved = await ctx.db
    .updateTable('pullRequests')
    .set({
      previewTargetHeadCommitHash: preview.targetHeadCommitHash,
      previewHeadCommitHash: preview.headCommitHash,
      previewMergeStrategy: preview.mergeStrategy,
      previewMergeCommitHash: preview.mergeCommitHash,
      ...(sourceChanged && pr.status === 'OPEN' && { buildCommitHash: mergeCommit }),
    })
    .where('id', '=', pr.id)
    .where('status', '=', 'OPEN')
    .executeTakeFirst();
  if (Number(saved.numUpdatedRows) === 0) return current;
  const mergeRef = pullRefs.merge(pr.number);
  try {
    if (mergeCommit) await updateRef(repo, mergeRef, mergeCommit, await refHead(repo, mergeRef));
    else await deleteRef(repo, mergeRef);
  } catch (error) {
    // Another process wrote a preview of the same request meanwhile: its ref stands.
    if (!(error instanceof RefUpdateConflict)) throw error;
  }
  return preview;
}

/**
 * Get Merge Preview (docs/compatibility.md#pull-requests-endpoints item 3 with docs/compatibility.md#gitloom-differs-improved-behaviour): read code; an open request's
 * preview is brought up to date in the request; a closed request returns its stored preview.
 * Null (→ 204) only when no preview can exist (target branch gone, or closed without one).
 */
export async function getMergePreview(ctx: Context, requestId: number): Promise<MergePreview | null> {
  const pr = await loadReadablePullRequest(ctx, requestId);
  if (pr.status !== 'OPEN') return storedPreview(pr);
  return withLock(`pull-request:${requestId}`, async () => {
    const current = await getPullRequestRow(ctx.db, requestId);
    return current.status === 'OPEN' ? ensureMergePreview(ctx, current) : storedPreview(current);
  });
}
