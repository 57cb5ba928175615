import type { Db } from '../../db/database.js';
import type { PullRequestRow } from '../../db/schema.js';
import { Conflict } from '../../errors.js';
import { getDefaultBranch, readCommits, revList } from '../../git/repository.js';
import { parseIntegerValue, QuerySyntaxError } from '../../query/index.js';
import type { Context } from '../context.js';
import type { RefChange } from '../events.js';
import { accessibleProjectsCondition } from '../projects/permissions.js';
import { deny } from '../actor.js';
import { findProjectByPath } from '../projects/projects.js';
import { commitFixReferences, indexFixedIssues, indexTextFixedIssues, updateCommits } from '../pulls/commits.js';
import { findPullRequestRow, listUpdates, loadReadablePullRequest } from '../pulls/pull-requests.js';
import { parseFixReferences, resolveFixReferences, type FixReference } from './fix-references.js';
import { recordCommitReferences } from './references.js';
import { CLOSED_STATE, INITIAL_STATE } from './issue-setting.js';
import { changeState, loadAccessibleIssue } from './issues.js';

/** Most commits read for one push or one range (the newest ones). */
const MAX_COMMITS = 1000;
/** Most commits read for a range between two revisions (the newest ones). */
const MAX_RANGE_COMMITS = 10_000;

async function messagesOf(repo: string, include: string[], exclude: string[]): Promise<{ hash: string; message: string }[]> {
  const hashes = await revList(repo, include, exclude, { max: MAX_COMMITS });
  return (await readCommits(repo, hashes)).map((c) => ({ hash: c.hash, message: c.message }));
}

/**
 * The fixed issues of a pull request (docs/compatibility.md#pull-requests-fixed-issues): the issues named by the fix
 * references indexed for its commits, title and description (src/domain/pulls/commits.ts), as
 * they exist now. Distinct issue ids, ascending.
 */
export async function pullRequestFixedIssueIds(db: Db, requestId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('pullRequestFixedIssues')
    .innerJoin('issues', (join) =>
      join.onRef('issues.projectId', '=', 'pullRequestFixedIssues.projectId').onRef('issues.number', '=', 'pullRequestFixedIssues.number'),
    )
    .select('issues.id')
    .distinct()
    .where('pullRequestFixedIssues.requestId', '=', requestId)
    .orderBy('issues.id')
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Indexes the fix references of the requests opened before the index existed (listed by
 * migration 0008), from their updates' commits as docs/compatibility.md#pull-requests-fixed-issues defines them, their
 * title and description; each request leaves the backlog in the transaction that indexes it.
 * A no-op once the backlog is empty; the readers of the index call it first.
 */
export async function indexFixedIssueBacklog(ctx: Context): Promise<void> {
  for (;;) {
    const batch = await ctx.db.selectFrom('pullRequestFixedIssueBacklog').select('requestId').orderBy('requestId').limit(100).execute();
    if (batch.length === 0) return;
    for (const { requestId } of batch) {
      const pr = await ctx.db.selectFrom('pullRequests').selectAll().where('id', '=', requestId).executeTakeFirst();
      const references: FixReference[] = [];
      if (pr) {
        const repo = ctx.repoPath(pr.targetProjectId);
        let previous = pr.baseCommitHash;
        for (const update of await listUpdates(ctx.db, pr.id)) {
          const hashes = await updateCommits(repo, update.headCommitHash, [previous, update.targetHeadCommitHash]).catch(() => []);
          references.push(...(await commitFixReferences(repo, hashes).catch(() => [])));
          previous = update.headCommitHash;
        }
      }
      await ctx.db.transaction().execute(async (tx) => {
        const current = pr ? await findPullRequestRow(tx, pr.id) : null;
        if (current) {
          await indexFixedIssues(tx, current.id, current.targetProjectId, 'COMMIT', references);
          await indexTextFixedIssues(tx, current.id, current.targetProjectId, 'TITLE', current.title);
          await indexTextFixedIssues(tx, current.id, current.targetProjectId, 'DESCRIPTION', current.description);
        }
        await tx.deleteFrom('pullRequestFixedIssueBacklog').where('requestId', '=', requestId).execute();
      });
    }
  }
}

/** Get Fixed Issue Ids (docs/compatibility.md#pull-requests-endpoints item 11): read code on the target project. */
export async function getPullRequestFixedIssueIds(ctx: Context, requestId: number): Promise<number[]> {
  await indexFixedIssueBacklog(ctx);
  return pullRequestFixedIssueIds(ctx.db, (await loadReadablePullRequest(ctx, requestId)).id);
}

/** `"proj#n"` → the pull request it names; QuerySyntaxError when the project or request is unknown. */
async function pullRequestByReference(ctx: Context, value: string): Promise<PullRequestRow> {
  const match = /^(.+)#(\d+)$/.exec(value.trim());
  if (!match) throw new QuerySyntaxError(`Invalid pull request reference: ${value}`);
  const project = await findProjectByPath(ctx.db, match[1]);
  if (!project) throw new QuerySyntaxError(`Unable to find project: ${match[1]}`);
  const pr = await ctx.db
    .selectFrom('pullRequests')
    .selectAll()
    .where('targetProjectId', '=', project.id)
    .where('number', '=', parseIntegerValue('Number', match[2]))
    .executeTakeFirst();
  if (!pr) throw new QuerySyntaxError(`Unable to find pull request: ${value}`);
  return pr;
}

/** `fixed in pull request "proj#n"` of the issue query language (docs/compatibility.md#issues-query-language). */
export async function fixedIssueIdsOfPullRequestReference(ctx: Context, value: string): Promise<number[]> {
  await indexFixedIssueBacklog(ctx);
  return pullRequestFixedIssueIds(ctx.db, (await pullRequestByReference(ctx, value)).id);
}

/**
 * The pull requests whose fixed issues include an issue (docs/compatibility.md#pull-requests-fixed-issues), by id: a join
 * with the fix reference index; `readable` restricts them to what the caller may read.
 */
async function pullRequestsFixing(ctx: Context, issue: { projectId: number; number: number }, readable = false): Promise<PullRequestRow[]> {
  await indexFixedIssueBacklog(ctx);
  const condition = readable ? await accessibleProjectsCondition(ctx, 'readCode') : null;
  let query = ctx.db
    .selectFrom('pullRequests')
    .selectAll('pullRequests')
    .where('pullRequests.id', 'in', (eb) =>
      eb
        .selectFrom('pullRequestFixedIssues')
        .select('pullRequestFixedIssues.requestId')
        .where('pullRequestFixedIssues.projectId', '=', issue.projectId)
        .where('pullRequestFixedIssues.number', '=', issue.number),
    );
  if (condition) query = query.where((eb) => condition(eb, 'pullRequests.targetProjectId'));
  return query.orderBy('pullRequests.id').execute();
}

/**
 * `includes issue "proj#n"` of the pull request query language (docs/compatibility.md#pull-requests-query-language): ids of
 * the requests whose fixed issues include that issue. QuerySyntaxError when the project or the
 * issue is unknown.
 */
export async function pullRequestIdsFixingIssue(ctx: Context, value: string): Promise<number[]> {
  const match = /^(.+)#(\d+)$/.exec(value.trim());
  if (!match) throw new QuerySyntaxError(`Invalid issue reference: ${value}`);
  const project = await findProjectByPath(ctx.db, match[1]);
  if (!project) throw new QuerySyntaxError(`Unable to find project: ${match[1]}`);
  const issue = await ctx.db
    .selectFrom('issues')
    .select(['id', 'projectId', 'number'])
    .where('projectId', '=', project.id)
    .where('number', '=', parseIntegerValue('Number', match[2]))
    .executeTakeFirst();
  if (!issue) throw new QuerySyntaxError(`Unable to find issue: ${value}`);
  return (await pullRequestsFixing(ctx, issue)).map((pr) => pr.id);
}

/**
 * `/issues/{id}/pulls` (docs/compatibility.md#issues): the pull requests fixing the issue
 * that the caller may read; ReadCode on the issue's project.
 */
export async function listIssuePullRequests(ctx: Context, issueId: number): Promise<PullRequestRow[]> {
  const { issue, permissions } = await loadAccessibleIssue(ctx, issueId);
  if (!permissions.readCode) deny(ctx.actor);
  return pullRequestsFixing(ctx, issue, true);
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
