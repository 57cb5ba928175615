import { sql } from 'kysely';
import type { ProjectRow } from '../../db/schema.js';
import { containsToLike, parseQuery, parseQueryDate, QuerySyntaxError, wildcardToLike } from '../../query/index.js';
import { OWNER_ROLE_ID, type Context } from '../context.js';
import { accessibleProjectsCondition } from './permissions.js';
import { labelSpecIdByName } from './labels.js';
import { always, compileCriteria, compileOrders, type Condition, currentUserOrFail, inIds, type LeafCompiler, likeCondition, never } from '../query/index.js';
import { projectIdsMatchingPath } from './criteria.js';
import { userIdByLogin } from '../users/index.js';
import { membershipGroupIds } from '../access/index.js';

const SORT_COLUMNS: Record<string, string> = {
  Path: 'projects.path',
  Name: 'projects.name',
  'Service Desk Name': 'projects.serviceDeskName',
  'Last Activity Date': 'projects.lastActivityDate',
  'Last Commit Date': 'projects.lastCommitDate',
};

/** Projects a user owns directly: Project Owner via a user authorization or one of their groups. */
function ownedBy(userId: number): Condition {
  return (eb) =>
    eb.or([
      eb('projects.id', 'in', eb.selectFrom('userAuthorizations').select('projectId').where('userId', '=', userId).where('roleId', '=', OWNER_ROLE_ID)),
      eb(
        'projects.id',
        'in',
        eb
          .selectFrom('groupAuthorizations')
          .select('groupAuthorizations.projectId')
          .where('groupAuthorizations.groupId', 'in', membershipGroupIds(userId))
          .where('groupAuthorizations.roleId', '=', OWNER_ROLE_ID),
      ),
    ]);
}

function projectLeaf(ctx: Context): LeafCompiler {
  const now = new Date(ctx.now());
  return async (c) => {
    switch (c.kind) {
      case 'fuzzy': {
        const words = c.text.split(/\s+/).filter(Boolean);
        return (eb) => eb.and(words.map((w) => likeCondition('projects.path', containsToLike(w, { wildcard: false }))(eb)));
      }
      case 'operator':
        switch (c.operator) {
          case 'roots':
            return (eb) => eb('projects.parentId', 'is', null);
          case 'leafs':
            return (eb) => eb.not(eb.exists(eb.selectFrom('projects as child').select('child.id').whereRef('child.parentId', '=', 'projects.id')));
          case 'fork roots':
            return (eb) => eb('projects.forkedFromId', 'is', null);
          case 'owned by me':
            return ownedBy(currentUserOrFail(ctx));
          case 'owned by':
            return ownedBy(await userIdByLogin(ctx.db, c.value!));
          case 'owned by none':
            return (eb) =>
              eb.and([
                eb.not(
                  eb.exists(eb.selectFrom('userAuthorizations').select('id').whereRef('projectId', '=', 'projects.id').where('roleId', '=', OWNER_ROLE_ID)),
                ),
                eb.not(
                  eb.exists(eb.selectFrom('groupAuthorizations').select('id').whereRef('projectId', '=', 'projects.id').where('roleId', '=', OWNER_ROLE_ID)),
                ),
              ]);
          case 'children of':
            return inIds('projects.parentId', await projectIdsMatchingPath(ctx.db, c.value!));
          case 'forks of':
            return inIds('projects.forkedFromId', await projectIdsMatchingPath(ctx.db, c.value!));
          // One storage, no replicas: these cluster states never hold.
          case 'has outdated replicas':
          case 'without enough replicas':
          case 'missing storage':
            return never;
          default:
            throw new QuerySyntaxError(`Unsupported criteria: ${c.operator}`);
        }
      case 'field':
        switch (c.field) {
          case 'Name':
            return likeCondition('projects.name', wildcardToLike(c.value!));
          case 'Path':
            return likeCondition('projects.path', wildcardToLike(c.value!));
          case 'Service Desk Name':
            return likeCondition('projects.serviceDeskName', wildcardToLike(c.value!));
          case 'Description':
            return likeCondition('projects.description', containsToLike(c.value!));
          case 'Label': {
            const specId = await labelSpecIdByName(ctx.db, c.value!);
            if (specId === null) throw new QuerySyntaxError(`Undefined label: ${c.value}`);
            return (eb) => eb('projects.id', 'in', eb.selectFrom('projectLabels').select('projectLabels.projectId').where('projectLabels.specId', '=', specId));
          }
          case 'Last Activity Date':
          case 'Last Commit Date': {
            const column = c.field === 'Last Activity Date' ? 'projects.lastActivityDate' : 'projects.lastCommitDate';
            const date = parseQueryDate(c.value!, now).getTime();
            return (eb) => eb(column, c.operator === 'is since' ? '>' : '<', date);
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
 * Query Basic Info (docs/compatibility.md#projects-endpoints item 9, docs/compatibility.md#projects-query-language): the project query language compiled to one
 * SQL statement, restricted to projects the caller can access (administrators see all), sorted
 * by the `order by` fields or by path, then id.
 */
export async function queryProjects(ctx: Context, text: string, offset: number, count: number): Promise<ProjectRow[]> {
  const parsed = parseQuery('projects', text);
  const condition = parsed.criteria ? await compileCriteria(parsed.criteria, projectLeaf(ctx)) : always;
  const orders = compileOrders(parsed, SORT_COLUMNS);
  const accessible = await accessibleProjectsCondition(ctx);
  let query = ctx.db
    .selectFrom('projects')
    .selectAll('projects')
    .where((eb) => condition(eb));
  if (accessible) query = query.where((eb) => accessible(eb, 'projects.id'));
  // projects without a value (no commit yet, no service desk) sort last either way, on every engine
  for (const order of orders.length > 0 ? orders : [{ expression: 'projects.path', direction: 'asc' as const }]) {
    query = query.orderBy(sql.ref(order.expression), (ob) => (order.direction === 'desc' ? ob.desc() : ob.asc()).nullsLast());
  }
  return query.orderBy('projects.id').offset(offset).limit(count).execute();
}
