import { sql, type SqlBool } from 'kysely';
import type { CodeCommentRow } from '../../db/schema.js';
import { BadRequest } from '../../errors.js';
import { containsToLike, escapeLike, parseIntegerValue, parseQuery, parseQueryDate, QuerySyntaxError } from '../../query/index.js';
import type { Context } from '../context.js';
import { loadProjectWith, projectCommit } from '../projects/index.js';
import { findPullRequestRow } from '../pulls/index.js';
import { allWords, always, compileCriteria, type Condition, equals, type LeafCompiler, likeCondition, mentioned } from '../query/index.js';
import { criterionUser } from '../users/index.js';

const SORT_EXPRESSIONS: Record<string, ReturnType<typeof sql>> = {
  Status: sql`code_comments.resolved`,
  'Create Date': sql`code_comments.create_date`,
  'Last Activity Date': sql`code_comments.last_activity_date`,
  'Reply Count': sql`code_comments.reply_count`,
};

function repliedBy(userId: number): Condition {
  return (eb) => eb.exists(eb.selectFrom('codeCommentReplies').select('id').whereRef('commentId', '=', 'codeComments.id').where('userId', '=', userId));
}

function replyContains(pattern: string): Condition {
  return (eb) =>
    eb.exists(
      eb
        .selectFrom('codeCommentReplies')
        .select('id')
        .whereRef('commentId', '=', 'codeComments.id')
        .where(sql<SqlBool>`lower(content) like ${pattern} escape '\\'`),
    );
}

/** `"Path" is "p"`: case-insensitive; `*` any characters; a trailing `/` matches everything below. */
function pathPattern(value: string): string {
  const like = value.toLowerCase().split('*').map(escapeLike).join('%');
  return value.endsWith('/') ? `${like}%` : like;
}

function codeCommentLeaf(ctx: Context): LeafCompiler {
  const now = new Date(ctx.now());
  return async (c) => {
    switch (c.kind) {
      case 'fuzzy':
        return allWords(c.text, (w) => {
          const pattern = containsToLike(w, { wildcard: false });
          return (eb) =>
            eb.or([likeCondition('codeComments.content', pattern)(eb), replyContains(pattern)(eb), likeCondition('codeComments.markPath', pattern)(eb)]);
        });
      case 'operator': {
        const user = async () => criterionUser(ctx, c.value);
        switch (c.operator) {
          case 'resolved':
            return (eb) => eb('codeComments.resolved', '=', 1);
          case 'unresolved':
            return (eb) => eb('codeComments.resolved', '=', 0);
          case 'created by me':
          case 'created by':
            return equals('codeComments.userId', await user());
          case 'replied by me':
          case 'replied by':
            return repliedBy(await user());
          case 'mentioned me':
          case 'mentioned':
            return mentioned('codeCommentMentions', 'commentId', 'codeComments.id', await user());
          case 'on commit': {
            const { projectId, commit } = await projectCommit(ctx, c.value!);
            return (eb) => eb.and([eb('codeComments.projectId', '=', projectId), eb('codeComments.markCommitHash', '=', commit)]);
          }
          default:
            throw new QuerySyntaxError(`Unsupported criteria: ${c.operator}`);
        }
      }
      case 'field':
        switch (c.field) {
          case 'Content':
            return likeCondition('codeComments.content', containsToLike(c.value!));
          case 'Reply':
            return replyContains(containsToLike(c.value!, { wildcard: false }));
          case 'Path':
            return likeCondition('codeComments.markPath', pathPattern(c.value!));
          case 'Create Date':
          case 'Last Activity Date': {
            const column = c.field === 'Create Date' ? 'codeComments.createDate' : 'codeComments.lastActivityDate';
            const date = parseQueryDate(c.value!, now).getTime();
            return (eb) => eb(column, c.operator === 'is since' ? '>' : '<', date);
          }
          case 'Reply Count': {
            const value = parseIntegerValue(c.field, c.value!);
            const op = c.operator === 'is' ? '=' : c.operator === 'is greater than' ? '>' : '<';
            return (eb) => eb('codeComments.replyCount', op, value);
          }
          default:
            throw new QuerySyntaxError(`Field not found: ${c.field}`);
        }
      default:
        throw new QuerySyntaxError('Unsupported criteria');
    }
  };
}

/**
 * Query (docs/compatibility.md#code-comments, docs/compatibility.md#code-comments-query-language): by project and/or pull request (at least one,
 * 400 `Either projectId or pullRequestId should be specified`; a request of another project is
 * 400), ReadCode on the project; with a request only its comments count, else the project's own.
 * The code comment query language compiles to one SQL statement; default order last activity
 * date descending, then id.
 */
export async function queryCodeComments(
  ctx: Context,
  scope: { projectId?: number; pullRequestId?: number },
  text: string,
  offset: number,
  count: number,
): Promise<CodeCommentRow[]> {
  if (scope.projectId === undefined && scope.pullRequestId === undefined) throw new BadRequest('Either projectId or pullRequestId should be specified');
  let projectId = scope.projectId;
  if (scope.pullRequestId !== undefined) {
    const pr = await findPullRequestRow(ctx.db, scope.pullRequestId);
    if (!pr) throw new BadRequest(`Pull request not found: ${scope.pullRequestId}`);
    if (projectId !== undefined && pr.targetProjectId !== projectId) throw new BadRequest('Specified pull request does not belong to specified project');
    projectId = pr.targetProjectId;
  }
  await loadProjectWith(ctx, projectId!, 'readCode');
  const parsed = parseQuery('codeComments', text, { now: new Date(ctx.now()) });
  const condition = parsed.criteria ? await compileCriteria(parsed.criteria, codeCommentLeaf(ctx)) : always;
  let query = ctx.db
    .selectFrom('codeComments')
    .selectAll('codeComments')
    .where((eb) => condition(eb));
  query =
    scope.pullRequestId !== undefined
      ? query.where('codeComments.comparePullRequestId', '=', scope.pullRequestId)
      : query.where('codeComments.projectId', '=', projectId!);
  const orders = parsed.orders.length > 0 ? parsed.orders : [{ field: 'Last Activity Date', direction: 'desc' as const }];
  for (const order of orders) query = query.orderBy(SORT_EXPRESSIONS[order.field], order.direction);
  return query.orderBy('codeComments.id', 'desc').offset(offset).limit(count).execute();
}
