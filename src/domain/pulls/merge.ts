import { commitTree, readCommit, readCommits, revList, updateRefs, type CommitIdentityInput } from '../../git/repository.js';
import { Conflict } from '../../errors.js';
import type { Context } from '../context.js';
import { loadProjectWith, requireUser } from '../permissions.js';
import { gitIdentity } from '../users/identities.js';
import { recordChange } from './changes.js';
import { withLock } from './locks.js';
import { ensureMergePreview, type MergePreview } from './merge-preview.js';
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
 * checkMerge (reference/pulls.md §3.1), first failing rule wins, each a 409: closed, in error,
 * conflicts, reviews not all approved, required builds not passed, then the target branch's
 * protection (as it applies to the submitter): a required signature — Gitloom stores no GPG
 * keys, so it can verify no signature and never signs its own commits, hence such a merge is
 * always refused with `No valid signature for head commit` — and, for strategies other than
 * squash, the commit message rules over the request's commits base..head
 * (`Error validating commit message of <abbreviated hash>: <violation>`, commit-messages.ts).
 * The preview is brought up to date first (CONTRACT §8).
 */
async function checkMerge(ctx: Context, pr: PullRequestRow): Promise<MergePreview & { mergeCommitHash: string }> {
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
 * The final commits of a rebase merge: the preview's rebased commits re-created with the merging
 * user as committer (same trees, authors and messages, one `commit-tree` each, no new merges);
 * the request's own commits the preview reused unchanged at its start (a fast-forward prefix)
 * stay as they are.
 */
async function recommitRebase(repo: string, preview: MergePreview & { mergeCommitHash: string }, committer: CommitIdentityInput): Promise<string> {
  const [chain, own] = await Promise.all([
    revList(repo, [preview.mergeCommitHash], [preview.targetHeadCommitHash], { reverse: true, firstParent: true }),
    revList(repo, [preview.headCommitHash], [preview.targetHeadCommitHash]),
  ]);
  const original = new Set(own);
  let head = preview.targetHeadCommitHash;
  let rewriting = false;
  for (const commit of await readCommits(repo, chain)) {
    if (!rewriting && original.has(commit.hash) && commit.parents[0] === head) {
      head = commit.hash;
      continue;
    }
    rewriting = true;
    head = await commitTree(repo, {
      tree: commit.tree, parents: [head], message: commit.message,
      author: { name: commit.author.name, email: commit.author.email, date: commit.author.date, tzOffset: commit.author.tzOffset },
      committer,
    });
  }
  return head;
}

/**
 * The final commit of a merge (reference/pulls.md §4 "Final operation"), made from the current
 * preview: merge and squash commits are re-created with the preview's tree and parents, by the
 * merging user (squash keeps the submitter as author); a fast-forward uses the request head; a
 * rebase re-creates the preview's rebased commits with the merging user as committer.
 */
async function finalCommit(ctx: Context, pr: PullRequestRow, preview: MergePreview & { mergeCommitHash: string }, message: string): Promise<string> {
  const repo = ctx.repoPath(pr.targetProjectId);
  const date = new Date(ctx.now());
  const merger = await gitIdentity(ctx.db, ctx.actor.userId, date);
  switch (preview.mergeStrategy) {
    case 'REBASE_SOURCE_BRANCH_COMMITS':
      return recommitRebase(repo, preview, merger);
    case 'CREATE_MERGE_COMMIT_IF_NECESSARY':
      if (preview.mergeCommitHash === preview.headCommitHash) return preview.headCommitHash;
      break;
    default:
      break;
  }
  const previewCommit = await readCommit(repo, preview.mergeCommitHash);
  const author = preview.mergeStrategy === 'SQUASH_SOURCE_BRANCH_COMMITS'
    ? previewCommit.author
    : merger;
  return commitTree(repo, { tree: previewCommit.tree, parents: previewCommit.parents, message, author, committer: merger });
}

/**
 * Merge (reference/pulls.md §1 #19, §3.1, §4): write code on the target project; the body is the
 * commit message (default `Merges pull request #N` + title). Under the request's lock: checks,
 * creates the final commit, then in one transaction marks the request MERGED (only if still
 * open), records the change and moves the target branch by compare-and-swap from the preview's
 * target head — a concurrent push or merge makes it fail with 409 and nothing changes.
 */
export async function mergePullRequest(ctx: Context, requestId: number, body: string): Promise<void> {
  const userId = requireUser(ctx.actor);
  const initial = await getPullRequestRow(ctx.db, requestId);
  await loadProjectWith(ctx, initial.targetProjectId, 'writeCode');
  const moved = await withLock(`pull-request:${requestId}`, async () => {
    const pr = await getPullRequestRow(ctx.db, requestId);
    const preview = await checkMerge(ctx, pr);
    const message = body.trim() ? body : defaultMergeMessage(pr);
    const merged = await finalCommit(ctx, pr, preview, message);
    const repo = ctx.repoPath(pr.targetProjectId);
    const now = ctx.now();
    await ctx.db.transaction().execute(async (tx) => {
      const closed = await tx
        .updateTable('pullRequests')
        .set({ status: 'MERGED', closeDate: now, previewMergeCommitHash: merged })
        .where('id', '=', pr.id)
        .where('status', '=', 'OPEN')
        .executeTakeFirst();
      if (Number(closed.numUpdatedRows) !== 1) throw new Conflict('Pull request already closed');
      await recordChange(tx, pr.id, userId, now, { '@type': 'PullRequestMergeData', reason: null });
      await updateRefs(repo, [
        { ref: `refs/heads/${pr.targetBranch}`, newHash: merged, expectedOld: preview.targetHeadCommitHash },
        { ref: pullRefs.merge(pr.number), newHash: merged },
      ]);
    });
    return { projectId: pr.targetProjectId, ref: `refs/heads/${pr.targetBranch}`, oldHash: preview.targetHeadCommitHash, newHash: merged };
  });
  ctx.events.emit('refsUpdated', { projectId: moved.projectId, userId, changes: [{ ref: moved.ref, oldHash: moved.oldHash, newHash: moved.newHash }] });
  ctx.events.emit('pullRequestClosed', { requestId });
}
