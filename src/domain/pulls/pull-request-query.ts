import { sql } from 'kysely';
import type { PullRequestRow } from '../../db/schema.js';
import {
  containsToLike, parseIntegerValue, parseQuery, parseQueryDate, QuerySyntaxError, wildcardToLike,
} from '../../query/index.js';
import type { Context } from '../context.js';
import { accessibleProjectsCondition } from '../permissions.js';
import { findProjectByPath } from '../projects/projects.js';
import {
  always, compileCriteria, compileOrders, currentUserOrFail, inIds, likeCondition, never, projectIdsMatchingPath,
  userIdByLogin, type Condition, type LeafCompiler,
} from '../query/compile.js';

const SORT_COLUMNS: Record<string, string> = {
  'Submit Date': 'pullRequests.submitDate',
  'Last Activity Date': 'pullRequests.lastActivityDate',
  Number: 'pullRequests.number',
  Status: 'pullRequests.status',
  'Target Project': 'pullRequests.targetProjectId',
  'Source Project': 'pullRequests.sourceProjectId',
  'Target Branch': 'pullRequests.targetBranch',
  'Source Branch': 'pullRequests.sourceBranch',
  'Comment Count': 'pullRequests.commentCount',
};

const DATE_COLUMNS: Record<string, string> = {
  'Submit Date': 'pullRequests.submitDate',
  'Last Activity Date': 'pullRequests.lastActivityDate',
  'Close Date': 'pullRequests.closeDate',
};

const STATUSES = ['OPEN', 'MERGED', 'DISCARDED'];
const STRATEGIES = ['CREATE_MERGE_COMMIT', 'CREATE_MERGE_COMMIT_IF_NECESSARY', 'SQUASH_SOURCE_BRANCH_COMMITS', 'REBASE_SOURCE_BRANCH_COMMITS'];

function reviewBy(userId: number | null, status: string): Condition {
  return (eb) => eb.exists(eb.selectFrom('pullRequestReviews').select('id')
    .whereRef('requestId', '=', 'pullRequests.id').where('status', '=', status)
    .$if(userId !== null, (q) => q.where('userId', '=', userId!)));
}

function commentedBy(userId: number): Condition {
  return (eb) => eb.exists(eb.selectFrom('pullRequestComments').select('id')
    .whereRef('requestId', '=', 'pullRequests.id').where('userId', '=', userId));
}

function textContains(word: string): Condition {
  const pattern = containsToLike(word, { wildcard: false });
  return (eb) => eb.or([
    likeCondition('pullRequests.title', pattern)(eb),
    likeCondition('pullRequests.description', pattern)(eb),
    eb.exists(eb.selectFrom('pullRequestComments').select('id').whereRef('requestId', '=', 'pullRequests.id')
      .where(sql.ref('content'), 'like', sql`${pattern} escape '\\'`)),
  ]);
}

/** `"proj/path#N"` → target project and number; `Project is not specified` without a path. */
async function numberReference(ctx: Context, value: string): Promise<{ projectId: number; number: number }> {
  const match = /^(.*)#(\d+)$/.exec(value.trim());
  if (!match) throw new QuerySyntaxError(`Invalid pull request reference: ${value}`);
  if (!match[1]) throw new QuerySyntaxError('Project is not specified');
  const project = await findProjectByPath(ctx.db, match[1]);
  if (!project) throw new QuerySyntaxError(`Unable to find project: ${match[1]}`);
  return { projectId: project.id, number: Number(match[2]) };
}

function pullRequestLeaf(ctx: Context): LeafCompiler {
  const now = new Date(ctx.now());
  return async (c) => {
    switch (c.kind) {
      case 'number': return (eb) => eb('pullRequests.number', '=', c.number);
      case 'fuzzy': {
        const words = c.text.split(/\s+/).filter(Boolean);
        return (eb) => eb.and(words.map((w) => textContains(w)(eb)));
      }
      case 'operator': {
        const user = async () => (c.value === null ? currentUserOrFail(ctx) : userIdByLogin(ctx.db, c.value));
        switch (c.operator) {
          case 'open': return (eb) => eb('pullRequests.status', '=', 'OPEN');
          case 'merged': return (eb) => eb('pullRequests.status', '=', 'MERGED');
          case 'discarded': return (eb) => eb('pullRequests.status', '=', 'DISCARDED');
          case 'assigned to me':
          case 'assigned to': {
            const id = await user();
            return (eb) => eb.exists(eb.selectFrom('pullRequestAssignments').select('id').whereRef('requestId', '=', 'pullRequests.id').where('userId', '=', id));
          }
          case 'submitted by me':
          case 'submitted by': {
            const id = await user();
            return (eb) => eb('pullRequests.submitterId', '=', id);
          }
          case 'commented by me':
          case 'commented by': return commentedBy(await user());
          case 'to be reviewed by me':
          case 'to be reviewed by': return reviewBy(await user(), 'PENDING');
          case 'approved by me':
          case 'approved by': return reviewBy(await user(), 'APPROVED');
          case 'requested for changes by me':
          case 'requested for changes by': return reviewBy(await user(), 'REQUESTED_FOR_CHANGES');
          case 'someone requested for changes': return reviewBy(null, 'REQUESTED_FOR_CHANGES');
          case 'has pending reviews': return reviewBy(null, 'PENDING');
          case 'has merge conflicts':
            return (eb) => eb.and([eb('pullRequests.previewHeadCommitHash', 'is not', null), eb('pullRequests.previewMergeCommitHash', 'is', null)]);
          // Mentions are recorded by the conversation features; until a mention row exists none match.
          case 'mentioned me':
          case 'mentioned':
            await user();
            return never;
          // Builds gate these; with no builds recorded, no request has failed or pending builds.
          case 'has failed builds':
          case 'to be verified by builds':
            return never;
          default:
            throw new QuerySyntaxError(`Unsupported criteria: ${c.operator}`);
        }
      }
      case 'field':
        switch (c.field) {
          case 'Number': {
            const ref = await numberReference(ctx, c.value!);
            const op = c.operator === 'is' ? '=' : c.operator === 'is greater than' ? '>' : '<';
            return (eb) => eb.and([eb('pullRequests.targetProjectId', '=', ref.projectId), eb('pullRequests.number', op, ref.number)]);
          }
          case 'Status': {
            const status = c.value!.toUpperCase();
            if (!STATUSES.includes(status)) throw new QuerySyntaxError(`Invalid status: ${c.value}`);
            return (eb) => eb('pullRequests.status', '=', status);
          }
          case 'Merge Strategy': {
            const strategy = c.value!.trim().toUpperCase().replace(/\s+/g, '_');
            if (!STRATEGIES.includes(strategy)) throw new QuerySyntaxError(`Invalid merge strategy: ${c.value}`);
            return (eb) => eb('pullRequests.mergeStrategy', '=', strategy);
          }
          case 'Title': return likeCondition('pullRequests.title', containsToLike(c.value!));
          case 'Description': return likeCondition('pullRequests.description', containsToLike(c.value!));
          case 'Comment': {
            const pattern = containsToLike(c.value!, { wildcard: false });
            return (eb) => eb.exists(eb.selectFrom('pullRequestComments').select('id').whereRef('requestId', '=', 'pullRequests.id')
              .where(sql`lower(content)`, 'like', sql`${pattern} escape '\\'`));
          }
          case 'Target Project': return inIds('pullRequests.targetProjectId', await projectIdsMatchingPath(ctx.db, c.value!));
          case 'Source Project': return inIds('pullRequests.sourceProjectId', await projectIdsMatchingPath(ctx.db, c.value!));
          case 'Target Branch': return likeCondition('pullRequests.targetBranch', wildcardToLike(c.value!));
          case 'Source Branch': return likeCondition('pullRequests.sourceBranch', wildcardToLike(c.value!));
          case 'Label': throw new QuerySyntaxError(`Undefined label: ${c.value}`);
          case 'Comment Count': {
            const value = parseIntegerValue(c.field, c.value!);
            const op = c.operator === 'is' ? '=' : c.operator === 'is greater than' ? '>' : '<';
            return (eb) => eb('pullRequests.commentCount', op, value);
          }
          default: {
            const column = DATE_COLUMNS[c.field];
            if (!column) throw new QuerySyntaxError(`Field not found: ${c.field}`);
            const date = parseQueryDate(c.value!, now).getTime();
            return (eb) => eb(column, c.operator === 'is since' ? '>' : '<', date);
          }
        }
      default:
        throw new QuerySyntaxError('Unsupported criteria');
    }
  };
}

/**
 * Query Basic Info (reference/pulls.md §1 #12, §6): the pull request query language compiled to
 * one SQL statement over requests whose target project the caller can read code of; default
 * order last activity date descending, then id.
 */
export async function queryPullRequests(ctx: Context, text: string, offset: number, count: number): Promise<PullRequestRow[]> {
  const parsed = parseQuery('pulls', text);
  const condition = parsed.criteria ? await compileCriteria(parsed.criteria, pullRequestLeaf(ctx)) : always;
  const orders = compileOrders(parsed, SORT_COLUMNS);
  const readable = await accessibleProjectsCondition(ctx, 'readCode');
  let query = ctx.db.selectFrom('pullRequests').selectAll('pullRequests').where((eb) => condition(eb));
  if (readable) query = query.where((eb) => readable(eb, 'pullRequests.targetProjectId'));
  for (const order of orders.length > 0 ? orders : [{ expression: 'pullRequests.lastActivityDate', direction: 'desc' as const }]) {
    query = query.orderBy(sql.ref(order.expression), order.direction);
  }
  return query.orderBy('pullRequests.id', 'desc').offset(offset).limit(count).execute();
}

