/**
 * The build query language (docs/compatibility.md#builds-query-language) compiled to one SQL statement, restricted
 * to the builds the caller may see (AccessBuild per project and job, docs/compatibility.md#builds-endpoints queryBasicInfo).
 */
import { sql, type Expression, type ExpressionBuilder } from 'kysely';
import type { BuildRow } from '../../db/schema.js';
import { containsToLike, parseIntegerValue, parseQuery, parseQueryDate, QuerySyntaxError, wildcardToLike } from '../../query/index.js';
import { gitDir, gitText, value } from '../../git/command.js';
import { resolveCommit } from '../../git/refs.js';
import { ANONYMOUS_ID, type Context } from '../context.js';
import {
  accessibleProjectsCondition,
  findProjectByPath,
  forkRootId,
  jobPermissions,
  labelSpecIdByName,
  projectIdsMatchingPath,
  projectPathsByIds,
  projectPermissions,
} from '../projects/index.js';
import { agentIdsNamed } from '../agents/index.js';
import { findIssueAt, fixingCommitsOfIssue } from '../issues/index.js';
import { findPullRequestAt } from '../pulls/index.js';
import { always, compileCriteria, type Condition, equals, inIds, type LeafCompiler, likeCondition, never } from '../query/index.js';
import { criterionUser } from '../users/index.js';

const STATUS_ORDER = ['WAITING', 'PENDING', 'RUNNING', 'FAILED', 'CANCELLED', 'TIMED_OUT', 'SUCCESSFUL'];
const FINAL = ['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'];

const DATE_COLUMNS: Record<string, string> = {
  'Submit Date': 'builds.submitDate',
  'Pending Date': 'builds.pendingDate',
  'Running Date': 'builds.runningDate',
  'Finish Date': 'builds.finishDate',
};

const ORDERS: Record<string, (eb: ExpressionBuilder<any, any>) => Expression<unknown>> = {
  Job: () => sql`builds.job_name`,
  Status: () =>
    sql`case builds.status ${sql.join(
      STATUS_ORDER.map((s, i) => sql`when ${sql.lit(s)} then ${sql.lit(i)}`),
      sql` `,
    )} end`,
  Number: () => sql`builds.number`,
  'Submit Date': () => sql`builds.submit_date`,
  'Pending Date': () => sql`builds.pending_date`,
  'Running Date': () => sql`builds.running_date`,
  'Finish Date': () => sql`builds.finish_date`,
  Project: () => sql`(select p.path from projects p where p.id = builds.project_id)`,
  Commit: () => sql`builds.commit_hash`,
};

/** `"proj/path#N"` → the build; the project part is required (docs/compatibility.md#builds-query-language Number). */
async function buildReference(ctx: Context, text: string): Promise<{ projectId: number; numberScopeId: number; number: number }> {
  const match = /^(.*)#(\d+)$/.exec(text.trim());
  if (!match) throw new QuerySyntaxError(`Invalid build reference: ${text}`);
  if (!match[1]) throw new QuerySyntaxError('Project is not specified');
  const project = await findProjectByPath(ctx.db, match[1]);
  if (!project) throw new QuerySyntaxError(`Unable to find project: ${match[1]}`);
  const scope = await ctx.db.selectFrom('builds').select('numberScopeId').where('projectId', '=', project.id).limit(1).executeTakeFirst();
  return {
    projectId: project.id,
    numberScopeId: scope?.numberScopeId ?? (await forkRootId(ctx.db, project.id)),
    number: parseIntegerValue('Number', match[2]),
  };
}

/** The referenced build's row (for depends on / dependencies of / in pipeline of). */
async function referencedBuild(ctx: Context, text: string): Promise<BuildRow> {
  const ref = await buildReference(ctx, text);
  const build = await ctx.db.selectFrom('builds').selectAll().where('projectId', '=', ref.projectId).where('number', '=', ref.number).executeTakeFirst();
  if (!build) throw new QuerySyntaxError(`Unable to find build: ${text}`);
  return build;
}

/** Commits among `candidates` that are `ancestor` or descend from it (one `rev-list --ancestry-path`). */
async function descendants(repo: string, ancestor: string, candidates: readonly string[]): Promise<string[]> {
  if (candidates.length === 0) return [];
  const out = await gitText([gitDir(repo), 'rev-list', '--ancestry-path', '--stdin'], {
    input: [...candidates.map((c) => value(c).text), `^${value(ancestor).text}`].join('\n') + '\n',
  }).catch(() => '');
  const found = new Set(out.split('\n').filter(Boolean));
  return candidates.filter((c) => c === ancestor || found.has(c));
}

function buildLeaf(ctx: Context): LeafCompiler {
  const now = new Date(ctx.now());
  return async (c) => {
    switch (c.kind) {
      case 'number':
        return (eb) => eb('builds.number', '=', c.number);
      case 'fuzzy': {
        const words = c.text.split(/\s+/).filter(Boolean);
        return (eb) =>
          eb.and(
            words.map((w) => {
              const pattern = containsToLike(w, { wildcard: false });
              return eb.or([likeCondition('builds.version', pattern)(eb), likeCondition('builds.jobName', pattern)(eb)]);
            }),
          );
      }
      case 'operator': {
        const user = async () => criterionUser(ctx, c.value);
        switch (c.operator) {
          case 'successful':
            return (eb) => eb('builds.status', '=', 'SUCCESSFUL');
          case 'failed':
            return (eb) => eb('builds.status', '=', 'FAILED');
          case 'cancelled':
            return (eb) => eb('builds.status', '=', 'CANCELLED');
          case 'timed out':
            return (eb) => eb('builds.status', '=', 'TIMED_OUT');
          case 'waiting':
            return (eb) => eb('builds.status', '=', 'WAITING');
          case 'pending':
            return (eb) => eb('builds.status', '=', 'PENDING');
          case 'running':
            return (eb) => eb('builds.status', '=', 'RUNNING');
          case 'finished':
            return (eb) => eb('builds.status', 'in', FINAL);
          case 'submitted by me':
          case 'submitted by':
            return equals('builds.submitterId', await user());
          case 'cancelled by me':
          case 'cancelled by': {
            const id = await user();
            return (eb) => eb('builds.cancellerId', '=', id);
          }
          case 'depends on': {
            const b = await referencedBuild(ctx, c.value!);
            return (eb) => eb('builds.id', 'in', eb.selectFrom('buildDependences').select('dependentId').where('dependencyId', '=', b.id));
          }
          case 'dependencies of': {
            const b = await referencedBuild(ctx, c.value!);
            return (eb) => eb('builds.id', 'in', eb.selectFrom('buildDependences').select('dependencyId').where('dependentId', '=', b.id));
          }
          case 'in pipeline of': {
            const b = await referencedBuild(ctx, c.value!);
            return (eb) => eb('builds.pipeline', '=', b.pipeline);
          }
          case 'ran on': {
            // OneDev's RanOnCriteria: the builds an agent of that name ran (docs/compatibility.md#build-agents)
            const agentIds = await agentIdsNamed(ctx, c.value!);
            if (agentIds.length === 0) throw new QuerySyntaxError(`Unable to find agent: ${c.value}`);
            // builds on no agent are not "ran on" it, and `not(ran on …)` keeps them
            return (eb) => eb.and([eb('builds.agentId', 'is not', null), eb('builds.agentId', 'in', agentIds)]);
          }
          case 'fixed issue':
            return fixedIssue(ctx, c.value!);
          default:
            throw new QuerySyntaxError(`Unsupported criteria: ${c.operator}`);
        }
      }
      case 'field':
        return fieldCriteria(ctx, c.field, c.operator, c.value, now);
      default:
        throw new QuerySyntaxError('Unsupported criteria');
    }
  };
}

/** `fixed issue "proj#N"`: builds whose commit is, or descends from, a commit fixing the issue. */
async function fixedIssue(ctx: Context, text: string): Promise<Condition> {
  const match = /^(.*)#(\d+)$/.exec(text.trim());
  if (!match || !match[1]) throw new QuerySyntaxError(`Invalid issue reference: ${text}`);
  const project = await findProjectByPath(ctx.db, match[1]);
  if (!project) throw new QuerySyntaxError(`Unable to find project: ${match[1]}`);
  const issue = await findIssueAt(ctx.db, project.id, parseIntegerValue('Number', match[2]));
  if (!issue) throw new QuerySyntaxError(`Unable to find issue: ${text}`);
  const fixes = await fixingCommitsOfIssue(ctx.db, issue.id);
  const ids: number[] = [];
  for (const fix of fixes) {
    const builds = await ctx.db.selectFrom('builds').select(['id', 'commitHash']).where('projectId', '=', fix.projectId).execute();
    const commits = [...new Set(builds.map((b) => b.commitHash))];
    const hit = new Set(await descendants(ctx.repoPath(fix.projectId), fix.commitHash, commits));
    for (const b of builds) if (hit.has(b.commitHash)) ids.push(b.id);
  }
  return inIds('builds.id', ids);
}

async function fieldCriteria(ctx: Context, field: string, operator: string, raw: string | null, now: Date): Promise<Condition> {
  const empty = operator === 'is empty';
  const v = raw ?? '';
  switch (field) {
    case 'Project':
      return inIds('builds.projectId', await projectIdsMatchingPath(ctx.db, v));
    case 'Job':
      return likeCondition('builds.jobName', wildcardToLike(v));
    case 'Version':
      return empty ? (eb) => eb('builds.version', 'is', null) : likeCondition('builds.version', wildcardToLike(v));
    case 'Branch':
      return empty ? (eb) => eb.not(likeCondition('builds.refName', 'refs/heads/%')(eb)) : likeCondition('builds.refName', `refs/heads/${wildcardToLike(v)}`);
    case 'Tag':
      return empty ? (eb) => eb.not(likeCondition('builds.refName', 'refs/tags/%')(eb)) : likeCondition('builds.refName', `refs/tags/${wildcardToLike(v)}`);
    case 'Status': {
      const status = v
        .trim()
        .toUpperCase()
        .replace(/[\s_]+/g, '_');
      if (!STATUS_ORDER.includes(status)) throw new QuerySyntaxError(`Invalid status: ${v}`);
      return (eb) => eb('builds.status', '=', status);
    }
    case 'Number': {
      const ref = await buildReference(ctx, v);
      const op = operator === 'is' ? '=' : operator === 'is greater than' ? '>' : '<';
      return (eb) => eb.and([eb('builds.numberScopeId', '=', ref.numberScopeId), eb('builds.number', op, ref.number)]);
    }
    case 'Commit':
      return commitCriterion(ctx, v);
    case 'Pull Request':
      return empty ? (eb) => eb('builds.requestId', 'is', null) : pullRequestCriterion(ctx, v);
    case 'Label':
      return labelCriterion(ctx, v);
    default: {
      const dateColumn = DATE_COLUMNS[field];
      if (dateColumn) {
        const date = parseQueryDate(v, now).getTime();
        return (eb) => eb(dateColumn, operator === 'is since' ? '>' : '<', date);
      }
      return paramCriterion(field, empty, v);
    }
  }
}

/** `Commit is "v"`: a bare hash (any project; abbreviated = prefix) or `projectPath:revision`. */
async function commitCriterion(ctx: Context, v: string): Promise<Condition> {
  const sep = v.indexOf(':');
  if (sep < 0 && /^[0-9a-f]{7,64}$/i.test(v.trim())) {
    // A bare hash (docs/compatibility.md#builds-query-language): a commit of any project; abbreviated = prefix.
    const hash = v.trim().toLowerCase();
    return hash.length === 40 || hash.length === 64 ? (eb) => eb('builds.commitHash', '=', hash) : likeCondition('builds.commitHash', `${hash}%`);
  }
  if (sep <= 0) throw new QuerySyntaxError(`Invalid commit: ${v} (expected a commit hash or projectPath:revision)`);
  const project = await findProjectByPath(ctx.db, v.slice(0, sep));
  if (!project) throw new QuerySyntaxError(`Unable to find project: ${v.slice(0, sep)}`);
  const revision = v.slice(sep + 1);
  const commit = revision && !revision.startsWith('-') ? await resolveCommit(ctx.repoPath(project.id), revision) : null;
  if (!commit) throw new QuerySyntaxError(`Unable to find commit: ${v}`);
  return (eb) => eb.and([eb('builds.projectId', '=', project.id), eb('builds.commitHash', '=', commit)]);
}

/** `Pull Request is "proj#N"`: the builds of that pull request. */
async function pullRequestCriterion(ctx: Context, v: string): Promise<Condition> {
  const match = /^(.*)#(\d+)$/.exec(v.trim());
  if (!match || !match[1]) throw new QuerySyntaxError(`Invalid pull request reference: ${v}`);
  const project = await findProjectByPath(ctx.db, match[1]);
  if (!project) throw new QuerySyntaxError(`Unable to find project: ${match[1]}`);
  const pr = await findPullRequestAt(ctx.db, project.id, parseIntegerValue('Number', match[2]));
  if (!pr) throw new QuerySyntaxError(`Unable to find pull request: ${v}`);
  return (eb) => eb('builds.requestId', '=', pr.id);
}

/** `Label is "name"`: the builds carrying that label. */
async function labelCriterion(ctx: Context, v: string): Promise<Condition> {
  const specId = await labelSpecIdByName(ctx.db, v);
  if (specId === null) throw new QuerySyntaxError(`Unable to find label: ${v}`);
  return (eb) =>
    eb.exists(eb.selectFrom('buildLabels').select('buildLabels.id').whereRef('buildLabels.buildId', '=', 'builds.id').where('buildLabels.specId', '=', specId));
}

/** A job param (an extra field): its exact value (secret params never match), or, `is empty`, no non-null value. */
function paramCriterion(field: string, empty: boolean, v: string): Condition {
  if (empty) {
    return (eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('buildParams')
            .select('buildParams.id')
            .whereRef('buildParams.buildId', '=', 'builds.id')
            .where('buildParams.name', '=', field)
            .where('buildParams.value', 'is not', null),
        ),
      );
  }
  return (eb) =>
    eb.exists(
      eb
        .selectFrom('buildParams')
        .select('buildParams.id')
        .whereRef('buildParams.buildId', '=', 'builds.id')
        .where('buildParams.name', '=', field)
        .where('buildParams.type', '<>', 'Secret')
        .where('buildParams.value', '=', v),
    );
}

/**
 * The caller's visibility filter: null for administrators; otherwise accessible projects, and
 * per project either all jobs (ManageBuilds/ManageProject) or the jobs their job privileges name.
 * Job names are taken from the builds of accessible projects (one query), judged once per
 * (project, job), then expressed in SQL.
 */
async function visibleBuildsCondition(ctx: Context): Promise<Condition | null> {
  if (ctx.actor.isAdmin) return null;
  const accessible = await accessibleProjectsCondition(ctx, 'access');
  if (!accessible) return null;
  const pairs = await ctx.db
    .selectFrom('builds')
    .select(['builds.projectId', 'builds.jobName'])
    .distinct()
    .where((eb) => accessible(eb, 'builds.projectId'))
    .execute();
  const paths = await projectPathsByIds(
    ctx.db,
    pairs.map((p) => p.projectId),
  );
  const byProject = new Map<number, { path: string; jobs: string[] }>();
  for (const p of pairs) {
    const path = paths.get(p.projectId);
    if (path === undefined) continue;
    const entry = byProject.get(p.projectId) ?? { path, jobs: [] };
    entry.jobs.push(p.jobName);
    byProject.set(p.projectId, entry);
  }
  const anonymousCaller = ctx.actor.userId === ANONYMOUS_ID;
  const allowed: { projectId: number; jobs: string[] }[] = [];
  for (const [projectId, entry] of byProject) {
    const permissions = await projectPermissions(ctx, { id: projectId, path: entry.path });
    const jobs = entry.jobs.filter((job) => jobPermissions(permissions, job, anonymousCaller).accessBuild);
    if (jobs.length > 0) allowed.push({ projectId, jobs });
  }
  if (allowed.length === 0) return never;
  return (eb) => eb.or(allowed.map((a) => eb.and([eb('builds.projectId', '=', a.projectId), eb('builds.jobName', 'in', a.jobs)])));
}

/**
 * Query Basic Info (docs/compatibility.md#builds-endpoints, docs/compatibility.md#builds-query-language): the build query compiled to SQL, default order
 * number descending; only builds the caller may access. `scope.projectId` keeps the builds of one
 * project (the builds list of a project page, where the query box works inside the project).
 *
 * @throws QuerySyntaxError (400) for syntax errors, unknown fields, users, projects, builds, labels or statuses.
 */
export async function queryBuilds(ctx: Context, text: string, offset: number, count: number, scope: { projectId?: number } = {}): Promise<BuildRow[]> {
  const paramNames = (await ctx.db.selectFrom('buildParams').select('name').distinct().execute()).map((r) => r.name);
  const parsed = parseQuery('builds', text, { extraFields: paramNames, now: new Date(ctx.now()) });
  const condition = parsed.criteria ? await compileCriteria(parsed.criteria, buildLeaf(ctx)) : always;
  const visible = await visibleBuildsCondition(ctx);
  let query = ctx.db
    .selectFrom('builds')
    .selectAll('builds')
    .where((eb) => condition(eb));
  if (visible) query = query.where((eb) => visible(eb));
  if (scope.projectId !== undefined) query = query.where('builds.projectId', '=', scope.projectId);
  for (const order of parsed.orders) {
    const expression = ORDERS[order.field];
    if (!expression) throw new QuerySyntaxError(`Can not order by field: ${order.field}`);
    query = query.orderBy(expression, order.direction);
  }
  if (parsed.orders.length === 0) query = query.orderBy('builds.number', 'desc');
  return query.orderBy('builds.id', 'desc').offset(offset).limit(count).execute();
}
