import type { IssueRow, PullRequestRow } from '../../db/schema.js';
import { NotFound } from '../../errors.js';
import type { Context } from '../context.js';
import { canAccess, projectPathsByIds } from '../projects/index.js';
import { pullRequestsFixingIssue } from './fixing-work.js';
import { codeCommentProjects, pullRequestNumbers } from './referencing-work.js';
import {
  listIssueChanges,
  listIssueComments,
  listIssueCommits,
  listIssueFields,
  listIssueMilestones,
  listIssueVotes,
  listIssueWatches,
  loadAccessibleIssue,
  type LoadedIssue,
} from './issues.js';
import { userNamesByIds } from '../users/index.js';

/**
 * Reads of the issue pages (src/web/pages/issues/) over the functions the API's issue
 * routes call (same permissions), plus the lookups a page needs to show names instead of ids:
 * issues by project and number, user names, project paths, "referenced from" entities.
 */

/**
 * The issue numbered `number` of a project (`/<project>/~issues/<number>`), with canAccess(issue)
 * as `GET /~api/issues/{id}` checks it. NotFound `Issue not found: #N` when there is none.
 */
export async function issueByNumber(ctx: Context, projectId: number, number: number): Promise<LoadedIssue> {
  const row =
    Number.isSafeInteger(number) && number > 0
      ? await ctx.db.selectFrom('issues').select('id').where('projectId', '=', projectId).where('number', '=', number).executeTakeFirst()
      : undefined;
  if (!row) throw new NotFound(`Issue not found: #${number}`);
  return loadAccessibleIssue(ctx, row.id);
}

/** Names of users by id (one query; unknown ids are left out). */
export async function userNames(ctx: Context, ids: Iterable<number | null>): Promise<Map<number, string>> {
  return userNamesByIds(
    ctx.db,
    [...ids].filter((id): id is number => id !== null),
  );
}

/** Paths of projects by id (one query), for links to the issues of a cross-project list. */
export async function projectPaths(ctx: Context, ids: Iterable<number>): Promise<Map<number, string>> {
  return projectPathsByIds(ctx.db, ids);
}

/** An entity whose text references the issue ("referenced from" changes), resolved for display. */
export interface IssueReferrer {
  kind: 'issue' | 'pullRequest' | 'codeComment' | 'commit';
  /** Path of the project holding it. */
  projectPath: string;
  /** Issue or pull request number; null for commits and code comments. */
  number: number | null;
  /** Commit hash (commits) or code comment id (as text). */
  key: string | null;
  date: number;
}

/** Everything the issue page shows besides the issue row. */
export interface IssueActivity {
  fields: Awaited<ReturnType<typeof listIssueFields>>;
  milestones: Awaited<ReturnType<typeof listIssueMilestones>>;
  comments: Awaited<ReturnType<typeof listIssueComments>>;
  watches: Awaited<ReturnType<typeof listIssueWatches>>;
  votes: Awaited<ReturnType<typeof listIssueVotes>>;
  /** State changes, oldest first. */
  stateChanges: { userId: number | null; date: number; oldState: string; newState: string; reason: string | null }[];
  referrers: IssueReferrer[];
  /** Fixing commits and pull requests: null without ReadCode on the project (the API's 403). */
  fixingCommits: { projectPath: string; commitHash: string }[] | null;
  fixingPulls: { projectPath: string; row: PullRequestRow }[] | null;
  /** Names of every user id above (submitter, commenters, watchers, voters, changers). */
  names: Map<number, string>;
}

interface ChangeData {
  '@type': string;
  oldState?: string;
  newState?: string;
  reason?: string;
  issueId?: number;
  requestId?: number;
  commentId?: number;
  projectId?: number;
  commitHash?: string;
}

/**
 * The issue page's data for an accessible issue, read through the API's sub-list functions
 * (`/fields`, `/milestones`, `/comments`, `/watches`, `/votes`, `/changes`, `/commits`, `/pulls`)
 * in a bounded number of queries. Referrers in projects the caller can not access are left out.
 */
export async function issueActivity(ctx: Context, loaded: LoadedIssue): Promise<IssueActivity> {
  const issueId = loaded.issue.id;
  const [fields, milestones, comments, watches, votes, changes] = await Promise.all([
    listIssueFields(ctx, issueId),
    listIssueMilestones(ctx, issueId),
    listIssueComments(ctx, issueId),
    listIssueWatches(ctx, issueId),
    listIssueVotes(ctx, issueId),
    listIssueChanges(ctx, issueId),
  ]);
  const readCode = loaded.permissions.readCode;
  const [commits, pulls] = readCode ? await Promise.all([listIssueCommits(ctx, issueId), pullRequestsFixingIssue.ask(ctx, issueId)]) : [null, null];
  const { stateChanges, refs } = readChanges(changes);
  const rows = await referencingRows(ctx, refs);
  const projectIds = new Set<number>([
    ...rows.issues.map((i) => i.projectId),
    ...rows.requests.map((r) => r.targetProjectId),
    ...rows.codeComments.map((c) => c.projectId),
    ...refs.map((r) => r.data.projectId).filter((id): id is number => id !== undefined),
    ...(commits ?? []).map((c) => c.projectId),
    ...(pulls ?? []).map((p) => p.targetProjectId),
  ]);
  const paths = await projectPaths(ctx, projectIds);
  const visible = await accessibleProjects(ctx, projectIds, paths);
  const referrers = refs.map((ref) => referrerOf(ref, rows, paths, visible)).filter((referrer): referrer is IssueReferrer => referrer !== null);
  const names = await userNames(ctx, [
    loaded.issue.submitterId,
    ...comments.map((c) => c.userId),
    ...watches.map((w) => w.userId),
    ...votes.map((v) => v.userId),
    ...stateChanges.map((s) => s.userId),
  ]);
  return {
    fields,
    milestones,
    comments,
    watches,
    votes,
    stateChanges,
    referrers,
    names,
    fixingCommits: commits && commits.map((c) => ({ projectPath: paths.get(c.projectId) ?? '', commitHash: c.commitHash })),
    fixingPulls: pulls && pulls.map((row) => ({ projectPath: paths.get(row.targetProjectId) ?? '', row })),
  };
}

/** A "referenced from" change of the issue: its data and date. */
interface ReferenceChange {
  data: ChangeData;
  date: number;
}

/** The issue's changes split into its state changes and its "referenced from" changes, oldest first. */
function readChanges(changes: readonly { userId: number | null; date: number; data: string }[]): {
  stateChanges: IssueActivity['stateChanges'];
  refs: ReferenceChange[];
} {
  const stateChanges: IssueActivity['stateChanges'] = [];
  const refs: ReferenceChange[] = [];
  for (const change of changes) {
    const data = JSON.parse(change.data) as ChangeData;
    if (data['@type'] === 'IssueStateChangeData') {
      stateChanges.push({
        userId: change.userId,
        date: change.date,
        oldState: data.oldState ?? '',
        newState: data.newState ?? '',
        reason: data.reason ?? null,
      });
    } else if (data['@type'].startsWith('IssueReferencedFrom')) refs.push({ data, date: change.date });
  }
  return { stateChanges, refs };
}

/** The issues, pull requests and code comments the "referenced from" changes name (one query each). */
async function referencingRows(ctx: Context, refs: readonly ReferenceChange[]) {
  const issueIds = refs.map((r) => r.data.issueId).filter((id): id is number => id !== undefined);
  const requestIds = refs.map((r) => r.data.requestId).filter((id): id is number => id !== undefined);
  const commentIds = refs.map((r) => r.data.commentId).filter((id): id is number => id !== undefined);
  const [issues, requests, codeComments] = await Promise.all([
    issueIds.length ? ctx.db.selectFrom('issues').select(['id', 'projectId', 'number']).where('id', 'in', issueIds).execute() : [],
    requestIds.length ? pullRequestNumbers.ask(ctx.db, requestIds) : [],
    commentIds.length ? codeCommentProjects.ask(ctx.db, commentIds) : [],
  ]);
  return { issues, requests, codeComments };
}

/** The projects among `projectIds` (with their `paths`) the caller can access. */
async function accessibleProjects(ctx: Context, projectIds: Iterable<number>, paths: Map<number, string>): Promise<Set<number>> {
  const visible = new Set<number>();
  for (const id of projectIds) {
    const path = paths.get(id);
    if (path !== undefined && (await canAccess(ctx, { id, path }))) visible.add(id);
  }
  return visible;
}

/** The entity a "referenced from" change names, or null when it is gone or in a project the caller can not access. */
function referrerOf(
  { data, date }: ReferenceChange,
  rows: Awaited<ReturnType<typeof referencingRows>>,
  paths: Map<number, string>,
  visible: Set<number>,
): IssueReferrer | null {
  if (data.issueId !== undefined) {
    const issue = rows.issues.find((i) => i.id === data.issueId);
    if (!issue || !visible.has(issue.projectId)) return null;
    return { kind: 'issue', projectPath: paths.get(issue.projectId) ?? '', number: issue.number, key: null, date };
  }
  if (data.requestId !== undefined) {
    const request = rows.requests.find((r) => r.id === data.requestId);
    if (!request || !visible.has(request.targetProjectId)) return null;
    return { kind: 'pullRequest', projectPath: paths.get(request.targetProjectId) ?? '', number: request.number, key: null, date };
  }
  if (data.commentId !== undefined) {
    const comment = rows.codeComments.find((c) => c.id === data.commentId);
    if (!comment || !visible.has(comment.projectId)) return null;
    return { kind: 'codeComment', projectPath: paths.get(comment.projectId) ?? '', number: null, key: String(comment.id), date };
  }
  if (data.projectId !== undefined && data.commitHash && visible.has(data.projectId)) {
    return { kind: 'commit', projectPath: paths.get(data.projectId) ?? '', number: null, key: data.commitHash, date };
  }
  return null;
}

/** The issues of a list page with the paths of their projects and their submitters' names. */
export async function issueListNames(ctx: Context, issues: readonly IssueRow[]) {
  const [paths, names] = await Promise.all([
    projectPaths(
      ctx,
      issues.map((i) => i.projectId),
    ),
    userNames(
      ctx,
      issues.map((i) => i.submitterId),
    ),
  ]);
  return { paths, names };
}
