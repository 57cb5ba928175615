/**
 * The issues a pull request fixes (docs/compatibility.md#pull-requests-fixed-issues): the fix
 * references indexed for its commits, title and description (src/domain/pulls/commits.ts), the
 * queries over them, and the requests fixing an issue.
 */
import type { Db } from '../../db/database.js';
import type { PullRequestRow } from '../../db/schema.js';
import { GitError } from '../../git/command.js';
import { parseIntegerValue, QuerySyntaxError } from '../../query/index.js';
import { deny } from '../actor.js';
import type { Context } from '../context.js';
import { findIssueAt, type FixReference, issuesAtPlaces, loadAccessibleIssue } from '../issues/index.js';
import { accessibleProjectsCondition, findProjectByPath } from '../projects/index.js';
import { commitFixReferences, indexFixedIssues, indexTextFixedIssues, updateCommits } from './commits.js';
import { findPullRequestRow, listUpdates, loadReadablePullRequest } from './pull-requests.js';

/**
 * The fixed issues of a pull request (docs/compatibility.md#pull-requests-fixed-issues): the issues named by the fix
 * references indexed for its commits, title and description (src/domain/pulls/commits.ts), as
 * they exist now. Distinct issue ids, ascending.
 */
export async function pullRequestFixedIssueIds(db: Db, requestId: number): Promise<number[]> {
  const places = await db.selectFrom('pullRequestFixedIssues').select(['projectId', 'number']).where('requestId', '=', requestId).execute();
  if (places.length === 0) return [];
  const issues = await issuesAtPlaces(db, places);
  return [...new Set([...issues.values()].map((issue) => issue.id))].sort((a, b) => a - b);
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
          try {
            references.push(...(await commitFixReferences(repo, await updateCommits(repo, update.headCommitHash, [previous, update.targetHeadCommitHash]))));
          } catch (error) {
            // an update whose commits are gone from the repository indexes nothing
            if (!(error instanceof GitError)) throw error;
          }
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
  const issue = await findIssueAt(ctx.db, project.id, parseIntegerValue('Number', match[2]));
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
