import { sql, type SqlBool } from 'kysely';
import { dialectOf, ISSUE_COMMENT_TEXT, ISSUE_TEXT } from '../../db/dialect.js';
import type { IssueRow } from '../../db/schema.js';
import { readCommit } from '../../git/repository.js';
import {
  containsToLike,
  parseIntegerValue,
  parseQuery,
  parseQueryDate,
  QuerySyntaxError,
  type FieldCriteria,
  type OperatorCriteria,
  type ParsedQuery,
} from '../../query/index.js';
import { ANONYMOUS_ID, type Context } from '../context.js';
import { accessibleProjectsCondition, findProjectByPath, milestoneIdsNamed, projectCommit, projectIdsMatchingPath } from '../projects/index.js';
import { allWords, always, compileCriteria, type Condition, currentUserOrFail, equals, inIds, type LeafCompiler, mentioned, never } from '../query/index.js';
import { criterionUser, getUserRow, userIdByLogin } from '../users/index.js';
import { parseFixReferences, resolveFixReferences } from './fix-references.js';
import { fixedIssueIdsBetween } from './fixed-issues.js';
import { buildByReference, issuesFixedInBuild, issuesFixedInPullRequest } from './fixing-work.js';
import { fieldSpec, ISSUE_FIELDS, ISSUE_STATES } from './issue-setting.js';

/** The links of a fresh install; no link between issues is stored, so none is ever present. */
const KNOWN_LINKS = ['Child Issue', 'Parent Issue', 'Blocked By', 'Blocking'];

const STATE_ORDINAL_SQL = sql`(case ${sql.join(
  ISSUE_STATES.map((s, i) => sql`when issues.state = ${s} then ${i}`),
  sql` `,
)} else -1 end)`;

const SORT_EXPRESSIONS: Record<string, ReturnType<typeof sql>> = {
  'Vote Count': sql`issues.vote_count`,
  'Comment Count': sql`issues.comment_count`,
  Number: sql`issues.number`,
  State: STATE_ORDINAL_SQL,
  'Submit Date': sql`issues.submit_date`,
  Project: sql`(select p.path from projects p where p.id = issues.project_id)`,
  'Last Activity Date': sql`issues.last_activity_date`,
};

function hasField(name: string, where: (eb: any) => any = () => sql<SqlBool>`1 = 1`): Condition {
  return (eb) =>
    eb.exists(
      eb.selectFrom('issueFields').select('issueFields.id').whereRef('issueFields.issueId', '=', 'issues.id').where('issueFields.name', '=', name).where(where),
    );
}

function commentedBy(userId: number): Condition {
  return (eb) => eb.exists(eb.selectFrom('issueComments').select('id').whereRef('issueId', '=', 'issues.id').where('userId', '=', userId));
}

/** Subquery of the ids of issues with a comment matching a lower-case LIKE pattern. */
function commentMatches(ctx: Context, pattern: string) {
  return sql`select issue_id from issue_comments where id in (${dialectOf(ctx.db).textMatches(ISSUE_COMMENT_TEXT, pattern)})`;
}

/** `~a b~` for one word: in the title, the description or a comment (case-insensitive). */
function textContains(ctx: Context, word: string): Condition {
  const pattern = containsToLike(word, { wildcard: false });
  return () => sql<SqlBool>`${sql.ref('issues.id')} in (${dialectOf(ctx.db).textMatches(ISSUE_TEXT, pattern)} union ${commentMatches(ctx, pattern)})`;
}

function compare(operator: string): '=' | '>' | '<' {
  return operator === 'is' ? '=' : operator === 'is greater than' ? '>' : '<';
}

/** One end of `fixed between`: a build (`proj#n`), or a commit, branch or tag (`proj:rev`). */
async function revisionTarget(ctx: Context, target: { type: string; value: string }): Promise<{ projectId: number; commit: string }> {
  if (target.type === 'build') return buildByReference.ask(ctx, target.value);
  if (target.type === 'branch' || target.type === 'tag') {
    const colon = target.value.indexOf(':');
    const prefix = target.type === 'branch' ? 'refs/heads/' : 'refs/tags/';
    if (colon > 0) return projectCommit(ctx, `${target.value.slice(0, colon)}:${prefix}${target.value.slice(colon + 1)}`);
  }
  return projectCommit(ctx, target.value);
}

/** Issue ids fixed by the commits `from..to` of one project. */
async function fixedBetween(ctx: Context, from: { type: string; value: string }, to: { type: string; value: string }): Promise<number[]> {
  const a = await revisionTarget(ctx, from);
  const b = await revisionTarget(ctx, to);
  if (a.projectId !== b.projectId) throw new QuerySyntaxError('Both revisions should be in the same project');
  return fixedIssueIdsBetween(ctx, a.projectId, a.commit, b.commit);
}

/**
 * `proj#12`, `proj12`, `#12`, `12` split into the text before the number (without one `#`) and
 * the trailing digits (empty when there are none): what `/^(.*?)#?(\d+)$/` captures, read
 * backwards in linear time (that expression tries every digit of a long run as the start of the
 * number, quadratic in a long query value of digits).
 */
function splitIssueNumber(text: string): { path: string; digits: string } {
  let start = text.length;
  while (start > 0 && text[start - 1] >= '0' && text[start - 1] <= '9') start--;
  const path = text.slice(0, start > 0 && text[start - 1] === '#' ? start - 1 : start);
  return { path, digits: text.slice(start) };
}

/** `"Number" is "proj#12"` (or `#12` / `12` in any project). */
async function numberCondition(ctx: Context, operator: string, value: string): Promise<Condition> {
  const { path, digits } = splitIssueNumber(value.trim());
  if (digits === '') throw new QuerySyntaxError(`Invalid issue number: ${value}`);
  const number = parseIntegerValue('Number', digits);
  const op = compare(operator);
  if (!path) return (eb) => eb('issues.number', op, number);
  const project = await findProjectByPath(ctx.db, path);
  if (!project) throw new QuerySyntaxError(`Unable to find project: ${path}`);
  return (eb) => eb.and([eb('issues.projectId', '=', project.id), eb('issues.number', op, number)]);
}

async function customField(ctx: Context, name: string, operator: string, value: string | null): Promise<Condition> {
  const spec = fieldSpec(name);
  if (!spec) throw new QuerySyntaxError(`Field not found: ${name}`);
  const notApplicable = () => new QuerySyntaxError(`Field '${name}' is not applicable for operator '${operator}'`);
  if (operator === 'is empty') return (eb) => eb.not(hasField(name)(eb));
  switch (spec.type) {
    case 'Enumeration': {
      if (operator !== 'is' && operator !== 'is greater than' && operator !== 'is less than') throw notApplicable();
      const ordinal = spec.choices.findIndex((c) => c.toLowerCase() === value!.toLowerCase());
      if (ordinal < 0) throw new QuerySyntaxError(`Invalid value for field '${name}': ${value}`);
      return hasField(name, (eb) => eb('issueFields.ordinal', compare(operator), ordinal));
    }
    case 'User': {
      if (operator === 'is me') {
        const login = await getUserRow(ctx.db, currentUserOrFail(ctx));
        return hasField(name, (eb) => eb('issueFields.value', '=', login.name));
      }
      if (operator !== 'is') throw notApplicable();
      await userIdByLogin(ctx.db, value!);
      return hasField(name, (eb) => eb('issueFields.value', '=', value!.toLowerCase()));
    }
    default:
      if (operator !== 'is') throw notApplicable();
      return hasField(name, (eb) => eb('issueFields.value', '=', value!.replace(/^#/, '')));
  }
}

/** A criterion without a field (`confidential`, `submitted by "alice"`, `fixed in build "p#1"` …; docs/compatibility.md#issues-query-language). */
async function operatorCondition(ctx: Context, c: OperatorCriteria): Promise<Condition> {
  const user = async () => criterionUser(ctx, c.value);
  switch (c.operator) {
    case 'confidential':
      return (eb) => eb('issues.confidential', '=', 1);
    case 'submitted by me':
    case 'submitted by':
      return equals('issues.submitterId', await user());
    case 'commented by me':
    case 'commented by':
      return commentedBy(await user());
    case 'mentioned me':
    case 'mentioned':
      return mentioned('issueMentions', 'issueId', 'issues.id', await user());
    case 'fixed in commit': {
      const { projectId, commit } = await projectCommit(ctx, c.value!);
      const message = (await readCommit(ctx.repoPath(projectId), commit)).message;
      return inIds('issues.id', await resolveFixReferences(ctx.db, projectId, parseFixReferences(message)));
    }
    case 'fixed in pull request':
      return inIds('issues.id', await issuesFixedInPullRequest.ask(ctx, c.value!));
    case 'fixed in build':
      return inIds('issues.id', await issuesFixedInBuild.ask(ctx, (await buildByReference.ask(ctx, c.value!)).id));
    case 'has any':
      if (!KNOWN_LINKS.includes(c.value!)) throw new QuerySyntaxError(`Link not found: ${c.value}`);
      return never;
    default:
      throw new QuerySyntaxError(`Unsupported criteria: ${c.operator}`);
  }
}

/** A `"Field" operator "value"` criterion (docs/compatibility.md#issues-query-language); dates relative to `now`. */
async function fieldCondition(ctx: Context, c: FieldCriteria, now: Date): Promise<Condition> {
  switch (c.field) {
    case 'Project':
      return inIds('issues.projectId', await projectIdsMatchingPath(ctx.db, c.value!));
    case 'Number':
      return numberCondition(ctx, c.operator, c.value!);
    case 'State': {
      const index = ISSUE_STATES.findIndex((s) => s.toLowerCase() === c.value!.toLowerCase());
      if (index < 0) throw new QuerySyntaxError(`Undefined state: ${c.value}`);
      const states = ISSUE_STATES.filter((_, i) => (c.operator === 'is' ? i === index : c.operator === 'is after' ? i > index : i < index));
      return states.length === 0 ? never : (eb) => eb('issues.state', 'in', states);
    }
    case 'Title':
    case 'Description': {
      const matches = dialectOf(ctx.db).textMatches(ISSUE_TEXT, containsToLike(c.value!), [c.field === 'Title' ? 'title' : 'description']);
      return () => sql<SqlBool>`${sql.ref('issues.id')} in (${matches})`;
    }
    case 'Comment': {
      const matches = commentMatches(ctx, containsToLike(c.value!));
      return () => sql<SqlBool>`${sql.ref('issues.id')} in (${matches})`;
    }
    case 'Submit Date':
    case 'Last Activity Date': {
      const column = c.field === 'Submit Date' ? 'issues.submitDate' : 'issues.lastActivityDate';
      const date = parseQueryDate(c.value!, now).getTime();
      return (eb) => eb(column, c.operator === 'is since' ? '>' : '<', date);
    }
    case 'Vote Count':
    case 'Comment Count': {
      const value = parseIntegerValue(c.field, c.value!);
      const column = c.field === 'Vote Count' ? 'issues.voteCount' : 'issues.commentCount';
      return (eb) => eb(column, compare(c.operator), value);
    }
    case 'Milestone': {
      const scheduled =
        (name: string | null): Condition =>
        (eb) =>
          eb.exists(
            eb
              .selectFrom('issueSchedules')
              .select('issueSchedules.id')
              .whereRef('issueSchedules.issueId', '=', 'issues.id')
              .where('issueSchedules.milestoneId', 'in', milestoneIdsNamed(eb, name)),
          );
      return c.operator === 'is empty' ? (eb) => eb.not(scheduled(null)(eb)) : scheduled(c.value!);
    }
    default:
      return customField(ctx, c.field, c.operator, c.value);
  }
}

function issueLeaf(ctx: Context): LeafCompiler {
  const now = new Date(ctx.now());
  return async (c) => {
    switch (c.kind) {
      case 'number':
        return (eb) => eb('issues.number', '=', c.number);
      case 'fuzzy':
        return allWords(c.text, (word) => textContains(ctx, word));
      case 'fixedBetween':
        return inIds('issues.id', await fixedBetween(ctx, c.from, c.to));
      case 'linkMatch':
        if (!KNOWN_LINKS.includes(c.link)) throw new QuerySyntaxError(`Link not found: ${c.link}`);
        await compileCriteria(c.criteria, issueLeaf(ctx));
        return c.quantifier === 'all' ? always : never;
      case 'operator':
        return operatorCondition(ctx, c);
      case 'field':
        return fieldCondition(ctx, c, now);
      default:
        throw new QuerySyntaxError('Unsupported criteria');
    }
  };
}

/** Parses an issue query with the built-in custom fields (Type, Priority, Assignees, Failed Build). */
export function parseIssueQuery(text: string, now?: Date): ParsedQuery {
  return parseQuery('issues', text, { extraFields: ISSUE_FIELDS.map((f) => f.name), now });
}

/** A condition on the `issues` table for the caller: a query's criteria (or none), compiled. */
export async function compileIssueCriteria(ctx: Context, parsed: ParsedQuery): Promise<Condition> {
  return parsed.criteria ? compileCriteria(parsed.criteria, issueLeaf(ctx)) : always;
}

/**
 * The issues the caller may see, as a condition on `issues`: an accessible project and, for a
 * confidential issue, AccessConfidentialIssues there or a per-issue grant (docs/compatibility.md#platform-permissions).
 * Null for administrators.
 */
export async function visibleIssuesCondition(ctx: Context): Promise<Condition | null> {
  const accessible = await accessibleProjectsCondition(ctx, 'access');
  if (!accessible) return null;
  const confidential = await accessibleProjectsCondition(ctx, 'accessConfidentialIssues');
  const userId = ctx.actor.userId;
  return (eb) =>
    eb.and([
      accessible(eb, 'issues.projectId'),
      eb.or([
        eb('issues.confidential', '=', 0),
        confidential ? confidential(eb, 'issues.projectId') : sql<SqlBool>`1 = 1`,
        ...(userId === ANONYMOUS_ID
          ? []
          : [
              eb.exists(
                eb
                  .selectFrom('issueAuthorizations')
                  .select('issueAuthorizations.id')
                  .whereRef('issueAuthorizations.issueId', '=', 'issues.id')
                  .where('issueAuthorizations.userId', '=', userId),
              ),
            ]),
      ]),
    ]);
}

/**
 * Query (docs/compatibility.md#issues, docs/compatibility.md#issues-query-language): the issue query language compiled to one SQL
 * statement over the issues the caller may see; `order by` any built-in sort field or custom
 * field (by the value's ordinal); default last activity date descending, then id. `projectId`
 * limits the result to one project's issues (the project's issue list page).
 */
export async function queryIssues(ctx: Context, text: string, offset: number, count: number, projectId?: number): Promise<IssueRow[]> {
  const parsed = parseIssueQuery(text, new Date(ctx.now()));
  const condition = await compileIssueCriteria(ctx, parsed);
  const visible = await visibleIssuesCondition(ctx);
  let query = ctx.db
    .selectFrom('issues')
    .selectAll('issues')
    .where((eb) => condition(eb));
  if (visible) query = query.where((eb) => visible(eb));
  if (projectId !== undefined) query = query.where('issues.projectId', '=', projectId);
  const orders = parsed.orders.length > 0 ? parsed.orders : [{ field: 'Last Activity Date', direction: 'desc' as const }];
  for (const order of orders) {
    const expression =
      SORT_EXPRESSIONS[order.field] ?? sql`(select min(f.ordinal) from issue_fields f where f.issue_id = issues.id and f.name = ${order.field})`;
    query = query.orderBy(expression, order.direction);
  }
  return query.orderBy('issues.id', 'desc').offset(offset).limit(count).execute();
}
