import { sql, type SqlBool } from 'kysely';
import { dialectOf, PULL_REQUEST_COMMENT_TEXT, PULL_REQUEST_TEXT } from '../../db/dialect.js';
import type { BuildStatus, PullRequestRow } from '../../db/schema.js';
import { resolveCommit } from '../../git/repository.js';
import {
  containsToLike,
  parseIntegerValue,
  parseQuery,
  parseQueryDate,
  QuerySyntaxError,
  wildcardToLike,
  type FieldCriteria,
  type OperatorCriteria,
  type ParsedQuery,
} from '../../query/index.js';
import type { Context } from '../context.js';
import { pullRequestIdsFixingIssue } from './fixed-issues.js';
import { accessibleProjectsCondition, findProjectByPath, labelSpecIdByName, projectIdsMatchingPath } from '../projects/index.js';
import { always, compileCriteria, type Condition, currentUserOrFail, inIds, type LeafCompiler, likeCondition } from '../query/index.js';
import { userIdByLogin } from '../users/index.js';
import { buildStatusCondition } from './builds.js';

/** Sortable fields (docs/compatibility.md#pull-requests-query-language); Status sorts by its ordinal OPEN < MERGED < DISCARDED. */
const SORT_EXPRESSIONS: Record<string, () => ReturnType<typeof sql>> = {
  'Submit Date': () => sql.ref('pullRequests.submitDate'),
  'Last Activity Date': () => sql.ref('pullRequests.lastActivityDate'),
  Number: () => sql.ref('pullRequests.number'),
  Status: () => sql`case ${sql.ref('pullRequests.status')} when 'OPEN' then 0 when 'MERGED' then 1 else 2 end`,
  'Target Project': () => sql.ref('pullRequests.targetProjectId'),
  'Source Project': () => sql.ref('pullRequests.sourceProjectId'),
  'Target Branch': () => sql.ref('pullRequests.targetBranch'),
  'Source Branch': () => sql.ref('pullRequests.sourceBranch'),
  'Comment Count': () => sql.ref('pullRequests.commentCount'),
};

const DATE_COLUMNS: Record<string, string> = {
  'Submit Date': 'pullRequests.submitDate',
  'Last Activity Date': 'pullRequests.lastActivityDate',
  'Close Date': 'pullRequests.closeDate',
};

const STATUSES = ['OPEN', 'MERGED', 'DISCARDED'];
const STRATEGIES = ['CREATE_MERGE_COMMIT', 'CREATE_MERGE_COMMIT_IF_NECESSARY', 'SQUASH_SOURCE_BRANCH_COMMITS', 'REBASE_SOURCE_BRANCH_COMMITS'];
const FAILED_BUILD_STATUSES: BuildStatus[] = ['FAILED', 'CANCELLED', 'TIMED_OUT'];
const PENDING_BUILD_STATUSES: BuildStatus[] = ['PENDING', 'RUNNING', 'WAITING'];

const COMPARE: Record<string, '=' | '>' | '<'> = { is: '=', 'is greater than': '>', 'is less than': '<' };

function reviewBy(userId: number | null, status: string): Condition {
  return (eb) =>
    eb.exists(
      eb
        .selectFrom('pullRequestReviews')
        .select('pullRequestReviews.id')
        .whereRef('pullRequestReviews.requestId', '=', 'pullRequests.id')
        .where('pullRequestReviews.status', '=', status)
        .$if(userId !== null, (q) => q.where('pullRequestReviews.userId', '=', userId!)),
    );
}

function relatedBy(table: 'pullRequestComments' | 'pullRequestAssignments' | 'pullRequestMentions', userId: number): Condition {
  return (eb) =>
    eb.exists(
      eb
        .selectFrom(table)
        .select(`${table}.id` as any)
        .whereRef(`${table}.requestId` as any, '=', 'pullRequests.id')
        .where(`${table}.userId` as any, '=', userId),
    );
}

/** Subquery of the ids of requests with a comment matching a lower-case LIKE pattern. */
function commentMatches(ctx: Context, pattern: string) {
  return sql`select request_id from pull_request_comments where id in (${dialectOf(ctx.db).textMatches(PULL_REQUEST_COMMENT_TEXT, pattern)})`;
}

/** `"Title" contains` / `"Description" contains` (docs/compatibility.md#pull-requests-query-language). */
function textContains(ctx: Context, column: 'title' | 'description', pattern: string): Condition {
  return () => sql<SqlBool>`${sql.ref('pullRequests.id')} in (${dialectOf(ctx.db).textMatches(PULL_REQUEST_TEXT, pattern, [column])})`;
}

/** `"Comment" contains`: some comment of the request matches. */
function commentContains(ctx: Context, pattern: string): Condition {
  return () => sql<SqlBool>`${sql.ref('pullRequests.id')} in (${commentMatches(ctx, pattern)})`;
}

/** `~a b~`: every word in the title, the description or a comment (case-insensitive). */
function fuzzy(ctx: Context, text: string): Condition {
  const words = text.split(/\s+/).filter(Boolean);
  if (words.length === 0) return always;
  const parts = words.map((word) => {
    const pattern = containsToLike(word, { wildcard: false });
    return sql<SqlBool>`${sql.ref('pullRequests.id')} in (${dialectOf(ctx.db).textMatches(PULL_REQUEST_TEXT, pattern)} union ${commentMatches(ctx, pattern)})`;
  });
  return (eb) => eb.and(parts);
}

/** Whole-name branch match, case-insensitive, `*` wildcard; an exact name uses the index. */
function branchMatches(column: string, value: string): Condition {
  if (!value.includes('*')) return () => sql<SqlBool>`lower(${sql.ref(column)}) = ${value.toLowerCase()}`;
  return likeCondition(column, wildcardToLike(value));
}

/** `"proj/path#N"` → target project and number; `Project is not specified` without a path. */
async function numberReference(ctx: Context, value: string): Promise<{ projectId: number; number: number }> {
  const match = /^(.*)#(\d+)$/.exec(value.trim()) ?? /^()(\d+)$/.exec(value.trim());
  if (!match) throw new QuerySyntaxError(`Invalid pull request number: ${value}`);
  if (!match[1]) throw new QuerySyntaxError('Project is not specified');
  const project = await findProjectByPath(ctx.db, match[1]);
  if (!project) throw new QuerySyntaxError(`Unable to find project: ${match[1]}`);
  return { projectId: project.id, number: parseIntegerValue('Number', match[2]) };
}

/** `includes commit "proj:rev"`: requests of that project (as target or source) whose updates brought the commit. */
async function includesCommit(ctx: Context, value: string): Promise<Condition> {
  const colon = value.lastIndexOf(':');
  if (colon <= 0 || colon === value.length - 1) throw new QuerySyntaxError(`Invalid commit reference (expected "project:revision"): ${value}`);
  const project = await findProjectByPath(ctx.db, value.slice(0, colon));
  if (!project) throw new QuerySyntaxError(`Unable to find project: ${value.slice(0, colon)}`);
  const revision = value.slice(colon + 1);
  const hash = revision.startsWith('-') ? null : await resolveCommit(ctx.repoPath(project.id), revision);
  if (!hash) throw new QuerySyntaxError(`Unable to find revision: ${revision}`);
  return (eb) =>
    eb.and([
      eb.or([eb('pullRequests.targetProjectId', '=', project.id), eb('pullRequests.sourceProjectId', '=', project.id)]),
      eb.exists(
        eb
          .selectFrom('pullRequestCommits')
          .select('pullRequestCommits.requestId')
          .whereRef('pullRequestCommits.requestId', '=', 'pullRequests.id')
          .where('pullRequestCommits.commitHash', '=', hash),
      ),
    ]);
}

/** A criterion without a field (`open`, `submitted by "alice"`, `has merge conflicts` …; docs/compatibility.md#pull-requests-query-language). */
async function operatorCondition(ctx: Context, c: OperatorCriteria): Promise<Condition> {
  const user = async () => (c.value === null ? currentUserOrFail(ctx) : userIdByLogin(ctx.db, c.value));
  switch (c.operator) {
    case 'open':
      return (eb) => eb('pullRequests.status', '=', 'OPEN');
    case 'merged':
      return (eb) => eb('pullRequests.status', '=', 'MERGED');
    case 'discarded':
      return (eb) => eb('pullRequests.status', '=', 'DISCARDED');
    case 'assigned to me':
    case 'assigned to':
      return relatedBy('pullRequestAssignments', await user());
    case 'submitted by me':
    case 'submitted by': {
      const id = await user();
      return (eb) => eb('pullRequests.submitterId', '=', id);
    }
    case 'commented by me':
    case 'commented by':
      return relatedBy('pullRequestComments', await user());
    case 'mentioned me':
    case 'mentioned':
      return relatedBy('pullRequestMentions', await user());
    case 'to be reviewed by me':
    case 'to be reviewed by':
      return reviewBy(await user(), 'PENDING');
    case 'approved by me':
    case 'approved by':
      return reviewBy(await user(), 'APPROVED');
    case 'requested for changes by me':
    case 'requested for changes by':
      return reviewBy(await user(), 'REQUESTED_FOR_CHANGES');
    case 'someone requested for changes':
      return reviewBy(null, 'REQUESTED_FOR_CHANGES');
    case 'has pending reviews':
      return reviewBy(null, 'PENDING');
    case 'has merge conflicts':
      return (eb) => eb.and([eb('pullRequests.previewHeadCommitHash', 'is not', null), eb('pullRequests.previewMergeCommitHash', 'is', null)]);
    case 'has failed builds':
      return buildStatusCondition.ask(FAILED_BUILD_STATUSES);
    case 'to be verified by builds':
      return buildStatusCondition.ask(PENDING_BUILD_STATUSES);
    case 'includes commit':
      return includesCommit(ctx, c.value!);
    case 'includes issue':
      return inIds('pullRequests.id', await pullRequestIdsFixingIssue(ctx, c.value!));
    default:
      throw new QuerySyntaxError(`Unsupported criteria: ${c.operator}`, c.column);
  }
}

/** A `"Field" operator "value"` criterion (docs/compatibility.md#pull-requests-query-language); dates relative to `now`. */
async function fieldCondition(ctx: Context, c: FieldCriteria, now: Date): Promise<Condition> {
  const value = c.value!;
  switch (c.field) {
    case 'Number': {
      const ref = await numberReference(ctx, value);
      const op = COMPARE[c.operator];
      return (eb) => eb.and([eb('pullRequests.targetProjectId', '=', ref.projectId), eb('pullRequests.number', op, ref.number)]);
    }
    case 'Status': {
      const status = value.trim().toUpperCase();
      if (!STATUSES.includes(status)) throw new QuerySyntaxError(`Invalid status: ${value}`, c.column);
      return (eb) => eb('pullRequests.status', '=', status);
    }
    case 'Merge Strategy': {
      const strategy = value.trim().toUpperCase().replace(/\s+/g, '_');
      if (!STRATEGIES.includes(strategy)) throw new QuerySyntaxError(`Invalid merge strategy: ${value}`, c.column);
      return (eb) => eb('pullRequests.mergeStrategy', '=', strategy);
    }
    case 'Title':
      return textContains(ctx, 'title', containsToLike(value));
    case 'Description':
      return textContains(ctx, 'description', containsToLike(value));
    case 'Comment':
      return commentContains(ctx, containsToLike(value, { wildcard: false }));
    case 'Target Project':
      return inIds('pullRequests.targetProjectId', await projectIdsMatchingPath(ctx.db, value));
    case 'Source Project':
      return inIds('pullRequests.sourceProjectId', await projectIdsMatchingPath(ctx.db, value));
    case 'Target Branch':
      return branchMatches('pullRequests.targetBranch', value);
    case 'Source Branch':
      return branchMatches('pullRequests.sourceBranch', value);
    case 'Label': {
      const specId = await labelSpecIdByName(ctx.db, value);
      if (specId === null) throw new QuerySyntaxError(`Undefined label: ${value}`, c.column);
      return (eb) =>
        eb.exists(
          eb
            .selectFrom('pullRequestLabels')
            .select('pullRequestLabels.id')
            .whereRef('pullRequestLabels.requestId', '=', 'pullRequests.id')
            .where('pullRequestLabels.specId', '=', specId),
        );
    }
    case 'Comment Count': {
      const count = parseIntegerValue(c.field, value);
      const op = COMPARE[c.operator];
      return (eb) => eb('pullRequests.commentCount', op, count);
    }
    default: {
      const column = DATE_COLUMNS[c.field];
      if (!column) throw new QuerySyntaxError(`Field not found: ${c.field}`, c.column);
      const date = parseQueryDate(value, now).getTime();
      return (eb) => eb(column, c.operator === 'is since' ? '>' : '<', date);
    }
  }
}

function pullRequestLeaf(ctx: Context): LeafCompiler {
  const now = new Date(ctx.now());
  return async (c) => {
    switch (c.kind) {
      case 'number':
        return (eb) => eb('pullRequests.number', '=', c.number);
      case 'fuzzy':
        return fuzzy(ctx, c.text);
      case 'operator':
        return operatorCondition(ctx, c);
      case 'field':
        return fieldCondition(ctx, c, now);
      default:
        throw new QuerySyntaxError('Unsupported criteria');
    }
  };
}

/**
 * Compiles a parsed pull request query (docs/compatibility.md#pull-requests-query-language) to a SQL condition over
 * `pull_requests`: names (users, projects, labels, revisions, issues) are resolved first, so the
 * whole query is one statement using the indexes. Throws QuerySyntaxError (400) with OneDev's
 * messages.
 */
export async function compilePullRequestCriteria(ctx: Context, parsed: ParsedQuery): Promise<Condition> {
  return parsed.criteria ? compileCriteria(parsed.criteria, pullRequestLeaf(ctx)) : always;
}

/**
 * Query Basic Info (docs/compatibility.md#pull-requests-endpoints item 12, docs/compatibility.md#pull-requests-query-language): the pull request query language compiled to
 * one SQL statement over requests whose target project the caller can read code of; default
 * order last activity date descending; ties broken by id descending so pages are stable.
 * `scope.targetProjectId` keeps the requests of one target project (the web UI's project list).
 */
export async function queryPullRequests(
  ctx: Context,
  text: string,
  offset: number,
  count: number,
  scope: { targetProjectId?: number } = {},
): Promise<PullRequestRow[]> {
  const parsed = parseQuery('pulls', text);
  const condition = await compilePullRequestCriteria(ctx, parsed);
  const readable = await accessibleProjectsCondition(ctx, 'readCode');
  let query = ctx.db
    .selectFrom('pullRequests')
    .selectAll('pullRequests')
    .where((eb) => condition(eb));
  if (readable) query = query.where((eb) => readable(eb, 'pullRequests.targetProjectId'));
  if (scope.targetProjectId !== undefined) query = query.where('pullRequests.targetProjectId', '=', scope.targetProjectId);
  const orders = parsed.orders.length > 0 ? parsed.orders : [{ field: 'Last Activity Date', direction: 'desc' as const }];
  for (const order of orders) {
    const expression = SORT_EXPRESSIONS[order.field];
    if (!expression) throw new QuerySyntaxError(`Can not order by field: ${order.field}`);
    query = query.orderBy(expression(), order.direction);
  }
  return query.orderBy('pullRequests.id', 'desc').offset(offset).limit(count).execute();
}
