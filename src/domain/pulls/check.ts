import type { PullRequestRow } from '../../db/schema.js';
import { branchHead, fetchCommits, isAncestor, mergeBase, updateRefs } from '../../git/repository.js';
import type { Context } from '../context.js';
import type { RefChange } from '../events.js';
import { recordChange } from './changes.js';
import { withLock } from './locks.js';
import { ensureMergePreview } from './merge-preview.js';
import { getPullRequestRow, latestUpdate, pullRefs } from './pull-requests.js';

async function discard(ctx: Context, pr: PullRequestRow, reason: string): Promise<void> {
  const now = ctx.now();
  await ctx.db.transaction().execute(async (tx) => {
    const done = await tx.updateTable('pullRequests').set({ status: 'DISCARDED', closeDate: now })
      .where('id', '=', pr.id).where('status', '=', 'OPEN').executeTakeFirst();
    if (Number(done.numUpdatedRows) !== 1) return;
    await recordChange(tx, pr.id, null, now, { '@type': 'PullRequestDiscardData' });
  });
}

/**
 * The background check of one open request (reference/pulls.md §3.5): discards it when its
 * source project, source branch or target branch is gone; records a new update when the source
 * branch moved (fetching cross-project commits into `refs/pulls/N/head`); marks it MERGED when
 * the target already contains its head; otherwise refreshes the merge preview. Serialized per
 * request; safe to run any number of times.
 */
export async function checkPullRequest(ctx: Context, requestId: number): Promise<void> {
  await withLock(`pull-request:${requestId}`, async () => {
    const pr = await getPullRequestRow(ctx.db, requestId).catch(() => null);
    if (!pr || pr.status !== 'OPEN') return;
    const targetRepo = ctx.repoPath(pr.targetProjectId);
    if (pr.sourceProjectId === null) return discard(ctx, pr, 'Source project no longer exists');
    const sourceHead = await branchHead(ctx.repoPath(pr.sourceProjectId), pr.sourceBranch);
    if (!sourceHead) return discard(ctx, pr, 'Source branch no longer exists');
    const targetHead = await branchHead(targetRepo, pr.targetBranch);
    if (!targetHead) return discard(ctx, pr, 'Target branch no longer exists');

    let update = await latestUpdate(ctx.db, pr.id);
    if (update.headCommitHash !== sourceHead) {
      if (pr.sourceProjectId !== pr.targetProjectId) {
        await fetchCommits(targetRepo, ctx.repoPath(pr.sourceProjectId), sourceHead, `refs/pulls-staging/${pr.uuid}`);
      }
      if (await mergeBase(targetRepo, targetHead, sourceHead)) {
        const now = ctx.now();
        update = await ctx.db.transaction().execute(async (tx) => {
          const row = await tx.insertInto('pullRequestUpdates')
            .values({ requestId: pr.id, headCommitHash: sourceHead, targetHeadCommitHash: targetHead, date: now })
            .returningAll().executeTakeFirstOrThrow();
          await tx.updateTable('pullRequests')
            .set({ lastActivityDate: now, lastActivityUserId: null, lastActivityDescription: 'Commits added' })
            .where('id', '=', pr.id).execute();
          await updateRefs(targetRepo, [
            { ref: pullRefs.update(row.id), newHash: sourceHead, expectedOld: null },
            { ref: pullRefs.head(pr.number), newHash: sourceHead },
          ]);
          return row;
        });
        // Required reviewers reset to PENDING on a source update (reference/pulls.md §3.5 step 4)
        // once branch protection defines them; manually added reviewers keep their status.
      }
    }

    if (await isAncestor(targetRepo, update.headCommitHash, targetHead)) {
      const now = ctx.now();
      await ctx.db.transaction().execute(async (tx) => {
        const done = await tx.updateTable('pullRequests')
          .set({ status: 'MERGED', closeDate: now, previewTargetHeadCommitHash: null, previewHeadCommitHash: null, previewMergeStrategy: null, previewMergeCommitHash: null })
          .where('id', '=', pr.id).where('status', '=', 'OPEN').executeTakeFirst();
        if (Number(done.numUpdatedRows) === 1) {
          await recordChange(tx, pr.id, null, now, { '@type': 'PullRequestMergeData', reason: 'merged pull request' });
        }
      });
      return;
    }
    await ensureMergePreview(ctx, await getPullRequestRow(ctx.db, pr.id));
  });
}

/**
 * After refs of a project moved: re-checks every open request whose source or target branch is
 * among the changed branches (reference/pulls.md §3.5 "Triggered after"). Branch creations are
 * ignored, as in the reference.
 */
export async function onRefsUpdated(ctx: Context, projectId: number, changes: RefChange[]): Promise<void> {
  const branches = changes
    .filter((c) => c.ref.startsWith('refs/heads/') && c.oldHash !== null)
    .map((c) => c.ref.slice('refs/heads/'.length));
  if (branches.length === 0) return;
  const affected = await ctx.db
    .selectFrom('pullRequests')
    .select('id')
    .where('status', '=', 'OPEN')
    .where((eb) => eb.or([
      eb.and([eb('sourceProjectId', '=', projectId), eb('sourceBranch', 'in', branches)]),
      eb.and([eb('targetProjectId', '=', projectId), eb('targetBranch', 'in', branches)]),
    ]))
    .execute();
  for (const { id } of affected) await checkPullRequest(ctx, id);
}
