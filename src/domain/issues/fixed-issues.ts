import { Conflict } from '../../errors.js';
import { getDefaultBranch, readCommits, revList } from '../../git/repository.js';
import type { Context } from '../context.js';
import type { RefChange } from '../events.js';
import { parseFixReferences, resolveFixReferences } from './fix-references.js';
import { recordCommitReferences } from './references.js';
import { CLOSED_STATE, INITIAL_STATE } from './issue-setting.js';
import { changeState } from './issues.js';

/** Most commits read for one push or one range (the newest ones). */
const MAX_COMMITS = 1000;
/** Most commits read for a range between two revisions (the newest ones). */
const MAX_RANGE_COMMITS = 10_000;

async function messagesOf(repo: string, include: string[], exclude: string[]): Promise<{ hash: string; message: string }[]> {
  const hashes = await revList(repo, include, exclude, { max: MAX_COMMITS });
  return (await readCommits(repo, hashes)).map((c) => ({ hash: c.hash, message: c.message }));
}

/**
 * The issues fixed by the commits `from..to` of a project (`from` excluded, at most the newest
 * 10,000 commits), resolved against that project: distinct ids in the order the messages name
 * them. Serves builds' fixed issues (docs/compatibility.md#builds-fixed-issues: commits since the previous build)
 * and the issue query's `fixed between` (docs/compatibility.md#issues).
 *
 * @throws GitError when a revision is missing from the repository.
 */
export async function fixedIssueIdsBetween(ctx: Pick<Context, 'db' | 'repoPath'>, projectId: number, from: string, to: string): Promise<number[]> {
  const repo = ctx.repoPath(projectId);
  const commits = await readCommits(repo, await revList(repo, [to], [from], { max: MAX_RANGE_COMMITS }));
  return resolveFixReferences(
    ctx.db,
    projectId,
    commits.flatMap((c) => parseFixReferences(c.message)),
  );
}

/**
 * After a push (the `refsUpdated` event): records every new commit of a branch whose message
 * fixes issues (served by `/issues/{id}/commits` and `fixed in commit`), and closes the open
 * issues fixed by commits reaching the default branch (docs/compatibility.md#issues-default-settings
 * transitions, docs/compatibility.md#fixed-issue-references). Acts as the pushing user when known, else the system.
 */
export async function onFixingCommitsPushed(ctx: Context, projectId: number, changes: readonly RefChange[], userId: number | null): Promise<void> {
  const repo = ctx.repoPath(projectId);
  const defaultBranch = await getDefaultBranch(repo);
  for (const change of changes) {
    if (!change.ref.startsWith('refs/heads/') || !change.newHash) continue;
    const commits = await messagesOf(repo, [change.newHash], change.oldHash ? [change.oldHash] : []);
    await recordCommitReferences(ctx.db, projectId, userId, ctx.now(), commits);
    const fixes: { hash: string; issueIds: number[] }[] = [];
    for (const commit of commits) {
      const issueIds = await resolveFixReferences(ctx.db, projectId, parseFixReferences(commit.message));
      if (issueIds.length > 0) fixes.push({ hash: commit.hash, issueIds });
    }
    if (fixes.length === 0) continue;
    await ctx.db
      .insertInto('issueCommits')
      .values(fixes.flatMap((f) => f.issueIds.map((issueId) => ({ issueId, projectId, commitHash: f.hash }))))
      .onConflict((oc) => oc.columns(['issueId', 'projectId', 'commitHash']).doNothing())
      .execute();
    if (change.ref !== `refs/heads/${defaultBranch}`) continue;
    const toClose = [...new Set(fixes.flatMap((f) => f.issueIds))];
    const open = await ctx.db.selectFrom('issues').selectAll().where('id', 'in', toClose).where('state', '=', INITIAL_STATE).execute();
    for (const issue of open) {
      const fix = fixes.find((f) => f.issueIds.includes(issue.id))!;
      try {
        await changeState(ctx, issue, CLOSED_STATE, userId, ctx.now(), { reason: `Fixed by commit ${fix.hash}` });
      } catch (error) {
        // Closed (or otherwise moved) meanwhile by someone else: nothing left to do.
        if (!(error instanceof Conflict)) throw error;
      }
    }
  }
}
