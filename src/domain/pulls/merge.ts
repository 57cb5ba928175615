import { updateRefs } from '../../git/repository.js';
import { Conflict } from '../../errors.js';
import type { Context } from '../context.js';
import { loadProjectWith, requireUser } from '../permissions.js';
import { gitIdentity } from '../users/identities.js';
import { faultPoint } from '../fault-points.js';
import { journaledRefChange } from '../journal/ref-journal.js';
import { announceTransition, applyTransition } from './transitions.js';
import { withLock } from './locks.js';
import { ensureMergePreview } from './merge-preview.js';
import { strategies, type CleanPreview } from './strategies/index.js';
import { getPullRequestRow, pullRefs } from './pull-requests.js';
import type { PullRequestRow } from '../../db/schema.js';
import { requiredBuildsPassed } from '../builds/required-builds.js';
import { branchProtection } from '../projects/branch-protection.js';
import { checkCommitMessages } from '../projects/commit-messages.js';

/** The default merge message when the request body is empty. */
export function defaultMergeMessage(pr: Pick<PullRequestRow, 'number' | 'title'>): string {
  return `Merges pull request #${pr.number}\n\n${pr.title}`;
}

/**
 * checkMerge (docs/compatibility.md#pull-requests-merge-checks), first failing rule wins, each a 409: closed, in error,
 * conflicts, reviews not all approved, required builds not passed, then the target branch's
 * protection (as it applies to the submitter): a required signature — Gitloom stores no GPG
 * keys, so it can verify no signature and never signs its own commits, hence such a merge is
 * always refused with `No valid signature for head commit` — and, for strategies other than
 * squash, the commit message rules over the request's commits base..head
 * (`Error validating commit message of <abbreviated hash>: <violation>`, commit-messages.ts).
 * The preview is brought up to date first (docs/compatibility.md#gitloom-differs-improved-behaviour).
 */
export async function checkMerge(ctx: Context, pr: PullRequestRow): Promise<CleanPreview> {
  if (pr.status !== 'OPEN') throw new Conflict('Pull request already closed');
  if (pr.checkError) throw new Conflict(`Pull request is in error: ${pr.checkError}`);
  const preview = await ensureMergePreview(ctx, pr);
  if (!preview) throw new Conflict('Target branch no longer exists');
  if (!preview.mergeCommitHash) throw new Conflict('There are merge conflicts');
  const waiting = await ctx.db.selectFrom('pullRequestReviews').select('id')
    .where('requestId', '=', pr.id).where('status', 'not in', ['APPROVED', 'EXCLUDED']).executeTakeFirst();
  if (waiting) throw new Conflict('Waiting for approvals');
  if (!(await requiredBuildsPassed(ctx, await getPullRequestRow(ctx.db, pr.id)))) throw new Conflict('Some required builds not passed');
  const protection = await branchProtection(ctx, pr.targetProjectId, pr.targetBranch, pr.submitterId);
  if (protection.commitSignatureRequired) throw new Conflict('No valid signature for head commit');
  if (pr.mergeStrategy !== 'SQUASH_SOURCE_BRANCH_COMMITS') {
    const error = await checkCommitMessages(ctx.repoPath(pr.targetProjectId), protection.commitMessageRules, pr.baseCommitHash, preview.headCommitHash);
    if (error !== null) throw new Conflict(error);
  }
  return { ...preview, mergeCommitHash: preview.mergeCommitHash };
}

/**
 * The final commit of a merge (docs/compatibility.md#pull-requests-merge-strategies-and-preview "Final operation"), made from the current
 * preview by the strategy's `finalize` (src/domain/pulls/strategies/) as the merging user.
 */
async function finalCommit(ctx: Context, pr: PullRequestRow, preview: CleanPreview, message: string): Promise<string> {
  const merger = await gitIdentity(ctx.db, ctx.actor.userId, new Date(ctx.now()));
  return strategies[preview.mergeStrategy].finalize(ctx.repoPath(pr.targetProjectId), preview, message, merger);
}

/**
 * Merge (docs/compatibility.md#pull-requests-endpoints item 19, docs/compatibility.md#pull-requests-merge-checks, docs/compatibility.md#pull-requests-merge-strategies-and-preview): write code on the target project; the body is the
 * commit message (default `Merges pull request #N` + title). Under the request's lock: checks,
 * creates the final commit, then, through the ref-change journal: records the intent (request,
 * expected old target head, new commit), moves the target branch (and `refs/pulls/N/merge`) by
 * compare-and-swap from the preview's target head — a concurrent push or merge makes it fail with
 * 409 and nothing changes — and in one transaction confirms the journal entry and marks the
 * request MERGED (only if still open) with its change record and event. A crash after the ref
 * moved is finished by start-up recovery (src/domain/journal/ref-journal.ts).
 *
 * @throws Conflict (409) for every checkMerge rule, a lost race, or a request closed meanwhile.
 */
export async function mergePullRequest(ctx: Context, requestId: number, body: string): Promise<void> {
  const userId = requireUser(ctx.actor);
  const initial = await getPullRequestRow(ctx.db, requestId);
  await loadProjectWith(ctx, initial.targetProjectId, 'writeCode');
  const merged = await withLock(`pull-request:${requestId}`, async () => {
    const pr = await getPullRequestRow(ctx.db, requestId);
    const preview = await checkMerge(ctx, pr);
    const message = body.trim() ? body : defaultMergeMessage(pr);
    const mergeCommit = await finalCommit(ctx, pr, preview, message);
    const repo = ctx.repoPath(pr.targetProjectId);
    const target = `refs/heads/${pr.targetBranch}`;
    const change = { ref: target, oldHash: preview.targetHeadCommitHash, newHash: mergeCommit };
    return journaledRefChange(ctx, pr.targetProjectId, [change], { userId, requestId: pr.id },
      async () => {
        await updateRefs(repo, [
          { ref: target, newHash: mergeCommit, expectedOld: preview.targetHeadCommitHash },
          { ref: pullRefs.merge(pr.number), newHash: mergeCommit },
        ]);
        faultPoint('merge-ref-moved');
      },
      (tx) => applyTransition(tx, pr.id, { to: 'MERGED', reason: null, mergeCommitHash: mergeCommit }, { userId, date: ctx.now() }));
  });
  if (!merged) throw new Conflict('Pull request already closed');
  announceTransition(ctx, requestId, 'MERGED');
}
