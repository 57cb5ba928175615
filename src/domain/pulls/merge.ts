import { GitError } from '../../git/command.js';
import { RefUpdateConflict, updateRefs } from '../../git/repository.js';
import type { ErrorCode } from '../../error-codes.js';
import { Conflict } from '../../errors.js';
import type { Context } from '../context.js';
import { branchProtection, checkCommitMessages, hasPullMirror, loadProjectWith, PULL_MIRROR_REFUSAL } from '../projects/index.js';
import { requireUser } from '../actor.js';
import { gitIdentity } from '../users/index.js';
import { faultPoint } from '../fault-points.js';
import { journaledRefChange } from '../journal/index.js';
import { announceTransition, applyTransition } from './transitions.js';
import { withLock } from './locks.js';
import { ensureMergePreview, storedPreview, type MergePreview } from './merge-preview.js';
import { strategies, type CleanPreview } from './strategies/index.js';
import { getPullRequestRow, latestUpdate, pullRefs } from './pull-requests.js';
import type { PullRequestRow } from '../../db/schema.js';
import { requiredBuildsPassed } from './builds.js';

/** The default merge message when the request body is empty. */
export function defaultMergeMessage(pr: Pick<PullRequestRow, 'number' | 'title'>): string {
  return `Merges pull request #${pr.number}\n\n${pr.title}`;
}

/** What {@link mergeRefusal} knows of a request's merge preview. */
export interface PreviewState {
  /** The current preview; null when the target branch is gone. */
  preview: MergePreview | null;
  /** The stored preview is stale and being recomputed: the conflict rule is not evaluated. */
  updating: boolean;
  /** The request's head (its latest update): the commits the message rules read end there. */
  head: string;
}

/** Why a merge is refused: the 409's message and its code. */
export interface MergeRefusal {
  message: string;
  code: ErrorCode;
}

/**
 * checkMerge (docs/compatibility.md#pull-requests-merge-checks) without side effects: the first rule the request breaks,
 * as the 409's message and code (`GITLOOM_ERR_MERGE_*`, src/error-codes.ts), or null. In order: closed, a target project that is a pull
 * mirror (`GITLOOM_ERR_PULL_MIRRORED`: its branches follow the remote, docs/compatibility.md#repository-mirrors), in error, target branch gone, conflicts, reviews
 * not all approved, required builds not passed, then the target branch's protection (as it
 * applies to the submitter): a required signature — Gitloom stores no GPG keys, so it can verify
 * no signature and never signs its own commits, hence such a merge is always refused with
 * `No valid signature for head commit` — and, for strategies other than squash, the commit
 * message rules over the request's commits base..head
 * (`Error validating commit message of <abbreviated hash>: <violation>`, commit-messages.ts).
 * Reads only: the merge box of the pull request page shows it.
 */
export async function mergeRefusal(ctx: Context, pr: PullRequestRow, state: PreviewState): Promise<MergeRefusal | null> {
  if (pr.status !== 'OPEN') return { message: 'Pull request already closed', code: 'GITLOOM_ERR_MERGE_CLOSED' };
  if (await hasPullMirror.ask(ctx.db, pr.targetProjectId)) return { message: PULL_MIRROR_REFUSAL, code: 'GITLOOM_ERR_PULL_MIRRORED' };
  if (pr.checkError) return { message: `Pull request is in error: ${pr.checkError}`, code: 'GITLOOM_ERR_MERGE_IN_ERROR' };
  if (!state.updating) {
    if (!state.preview) return { message: 'Target branch no longer exists', code: 'GITLOOM_ERR_MERGE_TARGET_GONE' };
    if (!state.preview.mergeCommitHash) return { message: 'There are merge conflicts', code: 'GITLOOM_ERR_MERGE_CONFLICTS' };
  }
  const waiting = await ctx.db
    .selectFrom('pullRequestReviews')
    .select('id')
    .where('requestId', '=', pr.id)
    .where('status', 'not in', ['APPROVED', 'EXCLUDED'])
    .executeTakeFirst();
  if (waiting) return { message: 'Waiting for approvals', code: 'GITLOOM_ERR_MERGE_REVIEW_REQUIRED' };
  if (!(await requiredBuildsPassed(ctx, pr))) return { message: 'Some required builds not passed', code: 'GITLOOM_ERR_MERGE_BUILD_REQUIRED' };
  const protection = await branchProtection(ctx, pr.targetProjectId, pr.targetBranch, pr.submitterId);
  if (protection.commitSignatureRequired) return { message: 'No valid signature for head commit', code: 'GITLOOM_ERR_MERGE_SIGNATURE_REQUIRED' };
  if (pr.mergeStrategy !== 'SQUASH_SOURCE_BRANCH_COMMITS') {
    const violation = await checkCommitMessages(ctx.repoPath(pr.targetProjectId), protection.commitMessageRules, pr.baseCommitHash, state.head);
    if (violation !== null) return { message: violation, code: 'GITLOOM_ERR_MERGE_COMMIT_MESSAGE' };
  }
  return null;
}

/**
 * The rules of {@link mergeRefusal} on a preview brought up to date first (docs/compatibility.md#gitloom-differs-improved-behaviour); the
 * caller holds the request's lock. With `trustTarget`, a clean stored preview of the request's
 * current head and strategy is taken as it is, without reading the target branch: the merge's
 * compare-and-swap on that branch checks its target head (see {@link mergePullRequest}).
 *
 * @throws Conflict (409) with the first refusal.
 */
export async function checkMerge(ctx: Context, pr: PullRequestRow, options: { trustTarget?: boolean } = {}): Promise<CleanPreview> {
  const open = pr.status === 'OPEN' && !pr.checkError;
  const trusted = open && options.trustTarget ? await storedCleanPreview(ctx, pr) : null;
  const preview = trusted ?? (open ? await ensureMergePreview(ctx, pr) : null);
  // re-read after a new preview: it also moves the commit the required builds run on
  const current = preview && !trusted ? await getPullRequestRow(ctx.db, pr.id) : pr;
  const refusal = await mergeRefusal(ctx, current, { preview, updating: false, head: preview?.headCommitHash ?? '' });
  if (refusal !== null) throw new Conflict(refusal.message, { code: refusal.code });
  return preview as CleanPreview;
}

/** The request's stored preview when it is clean and of its latest head and strategy (its target head unchecked), else null. */
async function storedCleanPreview(ctx: Context, pr: PullRequestRow): Promise<MergePreview | null> {
  const stored = storedPreview(pr);
  if (!stored?.mergeCommitHash || stored.mergeStrategy !== pr.mergeStrategy) return null;
  const update = await latestUpdate(ctx.db, pr.id);
  return stored.headCommitHash === update.headCommitHash ? stored : null;
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
 * A settled preview is trusted without reading the target branch first (docs/architecture.md#git-merge-preview):
 * when the branch moved since, the swap fails (or git refuses the final commit when a commit the
 * preview names is gone), and the merge starts over once from a preview recomputed on the
 * branch's head.
 *
 * @throws Conflict (409) for every checkMerge rule, a lost race, or a request closed meanwhile.
 */
export async function mergePullRequest(ctx: Context, requestId: number, body: string): Promise<void> {
  const userId = requireUser(ctx.actor);
  const initial = await getPullRequestRow(ctx.db, requestId);
  await loadProjectWith(ctx, initial.targetProjectId, 'writeCode');
  const merged = await withLock(`pull-request:${requestId}`, async () => {
    for (let trustTarget = true; ; trustTarget = false) {
      const pr = await getPullRequestRow(ctx.db, requestId);
      const preview = await checkMerge(ctx, pr, { trustTarget });
      const message = body.trim() ? body : defaultMergeMessage(pr);
      const repo = ctx.repoPath(pr.targetProjectId);
      const target = `refs/heads/${pr.targetBranch}`;
      try {
        const mergeCommit = await finalCommit(ctx, pr, preview, message);
        const change = { ref: target, oldHash: preview.targetHeadCommitHash, newHash: mergeCommit };
        return await journaledRefChange(
          ctx,
          pr.targetProjectId,
          [change],
          { userId, requestId: pr.id },
          async () => {
            await updateRefs(repo, [
              { ref: target, newHash: mergeCommit, expectedOld: preview.targetHeadCommitHash },
              { ref: pullRefs.merge(pr.number), newHash: mergeCommit },
            ]);
            faultPoint('merge-ref-moved');
          },
          (tx) => applyTransition(ctx, tx, pr.id, { to: 'MERGED', reason: null, mergeCommitHash: mergeCommit }, { userId, date: ctx.now() }),
        );
      } catch (error) {
        // the target moved since the trusted preview (or a commit it names is gone, so git refused
        // the final commit): once more from a preview of the branch's head
        if (!(trustTarget && ((error instanceof RefUpdateConflict && error.ref === target) || error instanceof GitError))) throw error;
      }
    }
  });
  if (!merged) throw new Conflict('Pull request already closed');
  announceTransition(ctx, requestId, 'MERGED');
}
