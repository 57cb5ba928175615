import type { Db } from '../../db/database.js';
import type { PullRequestRow } from '../../db/schema.js';
import { branchHead, deleteRef, fetchCommits, isAncestor, mergeBase, readCommits, refHead, updateRefs } from '../../git/repository.js';
import type { Context } from '../context.js';
import type { RefChange } from '../events.js';
import { commitFixReferences, indexCommits, indexFixedIssues, updateCommits } from './commits.js';
import { withLock } from './locks.js';
import { ensureMergePreview } from './merge-preview.js';
import { getPullRequestRow, latestUpdate, pullRefs } from './pull-requests.js';
import { resetRequiredReviews } from './required-reviewers.js';
import { transitionPullRequest } from './transitions.js';
import { verifiedEmailOwners } from '../users/index.js';

async function discard(ctx: Context, pr: PullRequestRow): Promise<void> {
  await transitionPullRequest(ctx, pr, { to: 'DISCARDED' }, { userId: null, date: ctx.now() });
}

/**
 * Who added commits (docs/compatibility.md#pull-requests-json: `added commits` by the single committer when every
 * new commit's committer email is a verified email of one user, else `Commits added` by nobody).
 */
async function pushActivity(db: Db, repo: string, commits: readonly string[]): Promise<{ userId: number | null; description: string }> {
  const emails = new Set((await readCommits(repo, commits.slice(0, 1000))).map((c) => c.committer.email.toLowerCase()));
  if (emails.size === 0) return { userId: null, description: 'Commits added' };
  const verified = await verifiedEmailOwners(db, [...emails]);
  const owners = new Set(verified.values());
  if (owners.size === 1 && verified.size === emails.size) return { userId: [...owners][0], description: 'added commits' };
  return { userId: null, description: 'Commits added' };
}

/**
 * The background check of one open request (docs/compatibility.md#pull-requests-background-check): discards it when its
 * source project, source branch or target branch is gone; records a new update when the source
 * branch moved (cross-project commits fetched into the target repository, `refs/updates/<id>` and
 * `refs/pulls/N/head` written, the update's commits indexed, required reviews reset); marks it
 * MERGED when the target already contains its head; otherwise refreshes the merge preview.
 * Serialized per request; safe to run any number of times. A request still open afterwards is
 * dispatched as `pullRequestChecked` (its build triggers), whose first failure is thrown.
 */
export async function checkPullRequest(ctx: Context, requestId: number): Promise<void> {
  const checked = await withLock(`pull-request:${requestId}`, async () => {
    const pr = await getPullRequestRow(ctx.db, requestId).catch(() => null);
    if (!pr || pr.status !== 'OPEN') return false;
    try {
      await checkOpenRequest(ctx, pr);
      if (pr.checkError !== null) await ctx.db.updateTable('pullRequests').set({ checkError: null }).where('id', '=', pr.id).execute();
    } catch (error) {
      // docs/compatibility.md#pull-requests-background-check step 6: the failure is kept on the request (it blocks merging) and reported.
      const message = error instanceof Error ? error.message : String(error);
      const checkError = `Error checking pull request: ${message}, check server log for details`.slice(0, 1024);
      await ctx.db.updateTable('pullRequests').set({ checkError }).where('id', '=', pr.id).execute();
      throw error;
    }
    return (await getPullRequestRow(ctx.db, requestId)).status === 'OPEN';
  });
  if (!checked) return;
  const [failed] = await ctx.events.dispatch('pullRequestChecked', { requestId });
  if (failed !== undefined) throw failed;
}

/**
 * Points `refs/updates/<id>` and `refs/pulls/N/head` at an update's head. Written after the
 * update's row committed, so the id in the ref name is one no rollback can hand out again; an
 * update ref already there (left by an earlier attempt) is simply overwritten.
 */
async function writeUpdateRefs(repo: string, pr: PullRequestRow, update: { id: number; headCommitHash: string }): Promise<void> {
  await updateRefs(repo, [
    { ref: pullRefs.update(update.id), newHash: update.headCommitHash },
    { ref: pullRefs.head(pr.number), newHash: update.headCommitHash },
  ]);
}

async function checkOpenRequest(ctx: Context, pr: PullRequestRow): Promise<void> {
  const targetRepo = ctx.repoPath(pr.targetProjectId);
  if (pr.sourceProjectId === null) return discard(ctx, pr);
  const sourceHead = await branchHead(ctx.repoPath(pr.sourceProjectId), pr.sourceBranch);
  if (!sourceHead) return discard(ctx, pr);
  const targetHead = await branchHead(targetRepo, pr.targetBranch);
  if (!targetHead) return discard(ctx, pr);

  let update = await latestUpdate(ctx.db, pr.id);
  // a run stopped between committing an update and writing its refs
  if (update.headCommitHash === sourceHead && (await refHead(targetRepo, pullRefs.update(update.id))) === null) {
    await writeUpdateRefs(targetRepo, pr, update);
  }
  if (update.headCommitHash !== sourceHead) {
    const staging = `refs/pulls-staging/${pr.uuid}`;
    const crossProject = pr.sourceProjectId !== pr.targetProjectId;
    if (crossProject) await fetchCommits(targetRepo, ctx.repoPath(pr.sourceProjectId), sourceHead, staging);
    try {
      if (await mergeBase(targetRepo, targetHead, sourceHead)) {
        const previous = update;
        const commits = await updateCommits(targetRepo, sourceHead, [previous.headCommitHash, targetHead]);
        const activity = await pushActivity(ctx.db, targetRepo, commits);
        const fixReferences = await commitFixReferences(targetRepo, commits);
        const now = ctx.now();
        update = await ctx.db.transaction().execute(async (tx) => {
          const row = await tx
            .insertInto('pullRequestUpdates')
            .values({ requestId: pr.id, headCommitHash: sourceHead, targetHeadCommitHash: targetHead, date: now })
            .returningAll()
            .executeTakeFirstOrThrow();
          await tx
            .updateTable('pullRequests')
            .set({ lastActivityDate: now, lastActivityUserId: activity.userId, lastActivityDescription: activity.description })
            .where('id', '=', pr.id)
            .execute();
          await indexCommits(tx, pr.id, commits);
          await indexFixedIssues(tx, pr.id, pr.targetProjectId, 'COMMIT', fixReferences);
          await resetRequiredReviews(tx, pr, now);
          return row;
        });
        await writeUpdateRefs(targetRepo, pr, update);
      }
    } finally {
      if (crossProject) await deleteRef(targetRepo, staging).catch(() => undefined);
    }
  }

  if (await isAncestor(targetRepo, update.headCommitHash, targetHead)) {
    await transitionPullRequest(ctx, pr, { to: 'MERGED', reason: 'merged pull request' }, { userId: null, date: ctx.now() });
    return;
  }
  await ensureMergePreview(ctx, await getPullRequestRow(ctx.db, pr.id));
}

/**
 * After refs of a project moved: re-checks every open request whose source or target branch is
 * among the changed branches (docs/compatibility.md#pull-requests-background-check "Triggered after"). Branch creations are
 * ignored, as in OneDev.
 */
export async function onRefsUpdated(ctx: Context, projectId: number, changes: RefChange[]): Promise<void> {
  const branches = changes.filter((c) => c.ref.startsWith('refs/heads/') && c.oldHash !== null).map((c) => c.ref.slice('refs/heads/'.length));
  if (branches.length === 0) return;
  const affected = await ctx.db
    .selectFrom('pullRequests')
    .select('id')
    .where('status', '=', 'OPEN')
    .where((eb) =>
      eb.or([
        eb.and([eb('sourceProjectId', '=', projectId), eb('sourceBranch', 'in', branches)]),
        eb.and([eb('targetProjectId', '=', projectId), eb('targetBranch', 'in', branches)]),
      ]),
    )
    .execute();
  for (const { id } of affected) await checkPullRequest(ctx, id);
}
