import { sql, type Expression, type RawBuilder, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Database, ProjectRow, RoleRow } from '../../db/schema.js';
import { preparedQuery } from '../../db/database.js';
import { dialectOf } from '../../db/dialect.js';
import { NotFound } from '../../errors.js';
import { deny } from '../actor.js';
import { ANONYMOUS_ID, memoized, type Context } from '../context.js';
import { matchesPatterns } from '../../ci/patterns.js';
import { getSecuritySetting } from '../settings/index.js';
import { rolesWhere } from '../access/index.js';

/**
 * The one permission module (docs/compatibility.md#platform-permissions). A caller's privileges on a project are
 * the union of every role reaching it: user and group authorizations on the project or an
 * ancestor, and the default role of the project or an ancestor (for anonymous callers only when
 * anonymous access is on, and then reduced to read access). Administrators have everything.
 */
export interface JobPrivilege {
  jobNames: string;
  manageJob: boolean;
  runJob: boolean;
  accessLog: boolean;
  accessibleReports: string | null;
}

export interface ProjectPermissions {
  access: boolean;
  readCode: boolean;
  writeCode: boolean;
  manage: boolean;
  managePullRequests: boolean;
  manageCodeComments: boolean;
  manageIssues: boolean;
  scheduleIssues: boolean;
  accessConfidentialIssues: boolean;
  manageBuilds: boolean;
  createChildren: boolean;
  /** Roles reaching the project (empty for administrators, who need none). */
  roles: RoleRow[];
}

/** An administrator's privileges on any project: all of them, through no role (shared, so frozen). */
const ADMINISTRATOR: ProjectPermissions = Object.freeze({
  access: true,
  readCode: true,
  writeCode: true,
  manage: true,
  managePullRequests: true,
  manageCodeComments: true,
  manageIssues: true,
  scheduleIssues: true,
  accessConfidentialIssues: true,
  manageBuilds: true,
  createChildren: true,
  roles: Object.freeze([]) as unknown as RoleRow[],
});

/** Paths of a project and its ancestors, from its own path (`a/b/c` → `a`, `a/b`, `a/b/c`). */
export function ancestorPaths(path: string): string[] {
  const segments = path.split('/');
  return segments.map((_, i) => segments.slice(0, i + 1).join('/'));
}

/** The yes/no columns of a role (`Flag`: 0 or 1). */
type RoleFlag =
  | 'manageProject'
  | 'createChildren'
  | 'managePullRequests'
  | 'manageCodeComments'
  | 'manageIssues'
  | 'accessConfidentialIssues'
  | 'scheduleIssues'
  | 'manageBuilds';

/** What of a role grants a privilege: a yes/no column, or its code privilege being at least READ or WRITE. */
type Grant = RoleFlag | 'codeRead' | 'codeWrite';

/**
 * The one table of privileges (docs/compatibility.md#platform-permissions, users-roles.md §3): the role columns
 * that grant each privilege besides `manageProject`, which grants every one. `access` is granted
 * by any role at all. {@link permissionsFromRoles} reads it over loaded roles and
 * {@link accessibleProjectsCondition} turns it into SQL, so both always agree.
 */
const GRANTS: Record<Exclude<ProjectPrivilege, 'access'>, readonly Grant[]> = {
  readCode: ['codeRead', 'managePullRequests', 'manageCodeComments'],
  writeCode: ['codeWrite', 'managePullRequests', 'manageCodeComments'],
  manage: [],
  managePullRequests: ['managePullRequests'],
  manageCodeComments: ['manageCodeComments'],
  manageIssues: ['manageIssues'],
  scheduleIssues: ['manageIssues', 'scheduleIssues'],
  accessConfidentialIssues: ['manageIssues', 'accessConfidentialIssues'],
  manageBuilds: ['manageBuilds'],
  createChildren: ['createChildren'],
};

/** The privileges an anonymous caller's roles can grant: read access only (docs/compatibility.md#platform-permissions). */
const ANONYMOUS_PRIVILEGES: readonly ProjectPrivilege[] = ['access', 'readCode'];

/** The grants of a privilege, `manageProject` first. */
const grantsOf = (privilege: Exclude<ProjectPrivilege, 'access'>): Grant[] => ['manageProject', ...GRANTS[privilege]];

/** Whether a loaded role carries a grant. */
function roleGrants(role: RoleRow, grant: Grant): boolean {
  if (grant === 'codeRead') return role.codePrivilege !== 'NONE';
  if (grant === 'codeWrite') return role.codePrivilege === 'WRITE';
  return Boolean(role[grant]);
}

/** SQL: the role row `alias` carries a grant (column names in snake case, flags stored as 1). */
function grantSql(alias: string, grant: Grant): RawBuilder<SqlBool> {
  if (grant === 'codeRead') return sql<SqlBool>`${sql.ref(`${alias}.code_privilege`)} <> 'NONE'`;
  if (grant === 'codeWrite') return sql<SqlBool>`${sql.ref(`${alias}.code_privilege`)} = 'WRITE'`;
  return sql<SqlBool>`${sql.ref(`${alias}.${grant.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`)} = 1`;
}

/** Folds a set of roles into privileges by {@link GRANTS}; anonymous callers get the reduced set of §7. */
export function permissionsFromRoles(roles: RoleRow[], anonymousCaller: boolean): ProjectPermissions {
  const p = { access: roles.length > 0, roles } as ProjectPermissions;
  for (const privilege of Object.keys(GRANTS) as Exclude<ProjectPrivilege, 'access'>[]) {
    const grants = grantsOf(privilege);
    p[privilege] = (!anonymousCaller || ANONYMOUS_PRIVILEGES.includes(privilege)) && roles.some((role) => grants.some((grant) => roleGrants(role, grant)));
  }
  return p;
}

/** No privilege at all: a project outside a limited token's projects (shared, so frozen). */
const NO_PRIVILEGES: ProjectPermissions = Object.freeze(permissionsFromRoles(Object.freeze([]) as unknown as RoleRow[], false));

/** Whether default roles apply to this caller (always for users; for anonymous per setting). */
async function defaultRolesApply(ctx: Context): Promise<boolean> {
  return ctx.actor.userId !== ANONYMOUS_ID || (await getSecuritySetting(ctx)).enableAnonymousAccess;
}

/**
 * The caller's privileges on a project (docs/compatibility.md#platform-permissions). One query over the project's
 * ancestors, once per read-only request (memoized in its context). Takes the project row so
 * callers that already loaded it pay nothing more.
 */
export async function projectPermissions(ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>): Promise<ProjectPermissions> {
  // a token limited to projects reaches nothing else (docs/compatibility.md#gitloom-differs-sessions-and-tokens)
  const limit = ctx.actor.token?.projectIds;
  if (limit && !limit.includes(project.id)) return NO_PRIVILEGES;
  if (ctx.actor.isAdmin) return ADMINISTRATOR;
  return memoized(ctx, `permissions:${project.id}:${project.path}`, () => readProjectPermissions(ctx, project));
}

async function readProjectPermissions(ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>): Promise<ProjectPermissions> {
  const paths = ancestorPaths(project.path);
  const userId = ctx.actor.userId;
  const groupIds = ctx.actor.groupIds;
  const withDefaults = await defaultRolesApply(ctx);
  const roles = await rolesWhere(ctx.db, (eb) => {
    const ancestorIds = eb.selectFrom('projects').select('projects.id').where('projects.path', 'in', paths);
    const grants: Expression<SqlBool>[] = [];
    if (userId !== ANONYMOUS_ID) {
      grants.push(
        eb('roles.id', 'in', eb.selectFrom('userAuthorizations').select('roleId').where('userId', '=', userId).where('projectId', 'in', ancestorIds)),
      );
    }
    if (groupIds.length > 0) {
      grants.push(
        eb('roles.id', 'in', eb.selectFrom('groupAuthorizations').select('roleId').where('groupId', 'in', groupIds).where('projectId', 'in', ancestorIds)),
      );
    }
    if (withDefaults) {
      grants.push(eb('roles.id', 'in', eb.selectFrom('projects').select('defaultRoleId').where('path', 'in', paths).where('defaultRoleId', 'is not', null)));
    }
    return grants.length > 0 ? eb.or(grants) : sql<SqlBool>`1 = 0`;
  });
  return permissionsFromRoles(roles, userId === ANONYMOUS_ID);
}

/** A SQL condition on the project id column `ref`. */
type ProjectCondition = (eb: ExpressionBuilder<any, any>, ref: string) => Expression<SqlBool>;

/**
 * A SQL condition "project `ref` is accessible to the caller", for filtering listings in the
 * database (issue: no in-memory filtering). `ref` names the project id column to test.
 * Returns null for administrators (no filter needed). A token limited to projects
 * (docs/compatibility.md#gitloom-differs-sessions-and-tokens) adds "and `ref` is one of them".
 */
export async function accessibleProjectsCondition(
  ctx: Context,
  need: 'access' | 'readCode' | 'accessConfidentialIssues' = 'access',
): Promise<ProjectCondition | null> {
  const limit = ctx.actor.token?.projectIds;
  const condition = await grantedProjectsCondition(ctx, need);
  if (!limit) return condition;
  const inLimit: ProjectCondition = (eb, ref) => (limit.length === 0 ? sql<SqlBool>`1 = 0` : eb(eb.ref(ref), 'in', [...limit]));
  return condition ? (eb, ref) => eb.and([inLimit(eb, ref), condition(eb, ref)]) : inLimit;
}

/** {@link accessibleProjectsCondition} by the caller's roles alone. */
async function grantedProjectsCondition(ctx: Context, need: 'access' | 'readCode' | 'accessConfidentialIssues'): Promise<ProjectCondition | null> {
  if (ctx.actor.isAdmin) return null;
  const { userId, groupIds } = ctx.actor;
  const withDefaults = await defaultRolesApply(ctx);
  const anonymousCaller = userId === ANONYMOUS_ID;
  if (anonymousCaller && !ANONYMOUS_PRIVILEGES.includes(need)) return () => sql<SqlBool>`1 = 0`;
  const dialect = dialectOf(ctx.db);
  return (eb, ref) => {
    const roleOk = (roleRef: string) =>
      need === 'access'
        ? sql<SqlBool>`1 = 1`
        : sql<SqlBool>`(${sql.join(
            grantsOf(need).map((grant) => grantSql(roleRef, grant)),
            sql` or `,
          )})`;
    const grantRoots: RawBuilder<unknown>[] = [];
    if (!anonymousCaller) {
      grantRoots.push(
        sql<number>`select ua.project_id as root_id from user_authorizations ua join roles r on r.id = ua.role_id where ua.user_id = ${userId} and ${roleOk('r')}`,
      );
    }
    if (groupIds.length > 0) {
      grantRoots.push(
        sql<number>`select ga.project_id as root_id from group_authorizations ga join roles r on r.id = ga.role_id where ga.group_id in (${sql.join(groupIds)}) and ${roleOk('r')}`,
      );
    }
    if (withDefaults) {
      grantRoots.push(sql<number>`select dp.id as root_id from projects dp join roles r on r.id = dp.default_role_id where ${roleOk('r')}`);
    }
    if (grantRoots.length === 0) return sql<SqlBool>`1 = 0`;
    // a range scan of the bytewise path index (migration 0009) per grant root
    return dialect.inPathSubtrees(ref, 'projects', sql.join(grantRoots, sql` union `));
  };
}

/**
 * The ids of projects the caller can see, named by id (numbers) or by path (strings, compared
 * case-insensitively), in one query: NotFound naming the first that is missing or invisible
 * (existence is not leaked). Returns the ids without repeats.
 */
export async function visibleProjectIds(ctx: Context, projects: readonly (number | string)[]): Promise<number[]> {
  const ids = [...new Set(projects.filter((p): p is number => typeof p === 'number'))];
  const paths = [...new Set(projects.filter((p): p is string => typeof p === 'string').map((p) => p.toLowerCase()))];
  if (ids.length === 0 && paths.length === 0) return [];
  const accessible = await accessibleProjectsCondition(ctx);
  let query = ctx.db
    .selectFrom('projects')
    .select(['id', sql<string>`lower(path)`.as('path')])
    .where((eb) => eb.or([...(ids.length ? [eb('id', 'in', ids)] : []), ...(paths.length ? [eb(sql`lower(path)`, 'in', paths)] : [])]));
  if (accessible) query = query.where((eb) => accessible(eb, 'projects.id'));
  const rows = await query.execute();
  const missing = [...ids.filter((id) => !rows.some((r) => r.id === id)), ...paths.filter((path) => !rows.some((r) => r.path === path))];
  if (missing.length > 0) throw new NotFound(`Project not found: ${missing[0]}`);
  return [...new Set(rows.map((r) => r.id))];
}

const projectById = preparedQuery((db, id: number) => db.selectFrom('projects').selectAll().where('id', '=', id));

/**
 * Loads a project the caller may see and checks a privilege on it. A missing project or one
 * without access is 404 (docs/compatibility.md#gitloom-differs-errors: existence is not leaked); lacking `need` is 401/403.
 */
export async function loadProjectWith(
  ctx: Context,
  projectId: number,
  need: keyof Omit<ProjectPermissions, 'roles'> = 'access',
): Promise<{ project: ProjectRow; permissions: ProjectPermissions }> {
  const [project] = await memoized(ctx, `project:${projectId}`, () => projectById(ctx.db, projectId));
  if (!project) throw new NotFound(`Project not found: ${projectId}`);
  const permissions = await projectPermissions(ctx, project);
  if (!permissions.access) throw new NotFound(`Project not found: ${projectId}`);
  if (!permissions[need]) deny(ctx.actor);
  return { project, permissions };
}

/** The privileges of {@link ProjectPermissions} by name (`access`, `readCode`, `manage`, …). */
export type ProjectPrivilege = keyof Omit<ProjectPermissions, 'roles'>;

/** Whether the caller holds `need` on a project (docs/compatibility.md#platform-permissions: canAccess, canReadCode, …). */
export async function can(ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>, need: ProjectPrivilege): Promise<boolean> {
  return (await projectPermissions(ctx, project))[need];
}

/** canAccess(project) of docs/compatibility.md#platform-permissions. */
export const canAccess = (ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>) => can(ctx, project, 'access');
/** canReadCode(project). */
export const canReadCode = (ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>) => can(ctx, project, 'readCode');

/** What a caller may do with the builds of one job (docs/compatibility.md#platform-permissions, users-roles.md §3). */
export interface JobPermissions {
  /** AccessBuild: see builds and artifacts of the job. */
  accessBuild: boolean;
  /** AccessBuildLog. */
  accessLog: boolean;
  /** RunJob (also rebuild). */
  runJob: boolean;
  /** ManageJob (cancel, delete builds). */
  manageJob: boolean;
  /** Report names pattern the caller may read (`*` = all), or null for none. */
  accessibleReports: string | null;
}

/** Parses a role's stored JobPrivilege list (JSON text); malformed entries are skipped. */
export function roleJobPrivileges(role: Pick<RoleRow, 'jobPrivileges'>): JobPrivilege[] {
  try {
    const parsed = JSON.parse(role.jobPrivileges) as unknown;
    return Array.isArray(parsed) ? parsed.filter((p): p is JobPrivilege => typeof p?.jobNames === 'string') : [];
  } catch {
    return [];
  }
}

function jobNamesMatch(patterns: string, jobName: string): boolean {
  try {
    return matchesPatterns(patterns, jobName);
  } catch {
    return false;
  }
}

/**
 * Folds privileges into the permissions on one job, by job name, with the pattern syntax of
 * docs/compatibility.md#roles (space-separated, `*`/`?` wildcards, `-` excludes): manageProject
 * and manageBuilds manage every job; a matching JobPrivilege grants build access plus its flags
 * (manageJob ⊃ runJob ⊃ accessLog ⊃ reports). Anonymous callers keep build, log and report access
 * per job privilege and logs of all jobs for manageProject/manageBuilds, never run or manage.
 */
export function jobPermissions(permissions: ProjectPermissions, jobName: string, anonymousCaller: boolean): JobPermissions {
  const none: JobPermissions = { accessBuild: false, accessLog: false, runJob: false, manageJob: false, accessibleReports: null };
  const all: JobPermissions = { accessBuild: true, accessLog: true, runJob: true, manageJob: true, accessibleReports: '*' };
  if (!anonymousCaller && (permissions.manage || permissions.manageBuilds)) return all;
  const result = { ...none };
  const reports: string[] = [];
  for (const role of permissions.roles) {
    if (anonymousCaller && (role.manageProject || role.manageBuilds)) {
      result.accessBuild = result.accessLog = true;
      reports.push('*');
    }
    for (const privilege of roleJobPrivileges(role)) {
      if (!jobNamesMatch(privilege.jobNames, jobName)) continue;
      result.accessBuild = true;
      const manage = privilege.manageJob && !anonymousCaller;
      const run = (privilege.runJob || privilege.manageJob) && !anonymousCaller;
      if (manage) result.manageJob = true;
      if (run) result.runJob = true;
      if (privilege.accessLog || privilege.runJob || privilege.manageJob) result.accessLog = true;
      if (privilege.manageJob || privilege.runJob || privilege.accessLog) reports.push('*');
      else if (privilege.accessibleReports) reports.push(privilege.accessibleReports);
    }
  }
  result.accessibleReports = reports.includes('*') ? '*' : reports.length > 0 ? reports.join(' ') : null;
  return result;
}

/** Types re-exported for callers building their own conditions. */
export type { Database };
