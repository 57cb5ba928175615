import { sql, type Expression, type RawBuilder, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Database, ProjectRow, RoleRow } from '../db/schema.js';
import { Forbidden, NotFound, Unauthorized } from '../errors.js';
import { ANONYMOUS_ID, type Actor, type Context } from './context.js';
import { matchesPatterns } from '../ci/patterns.js';
import { getSecuritySetting } from './settings/settings.js';

/**
 * The one permission module (reference/platform.md §7). A caller's privileges on a project are
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

const ALL: Omit<ProjectPermissions, 'roles'> = {
  access: true, readCode: true, writeCode: true, manage: true, managePullRequests: true,
  manageCodeComments: true, manageIssues: true, scheduleIssues: true, accessConfidentialIssues: true,
  manageBuilds: true, createChildren: true,
};

/** Paths of a project and its ancestors, from its own path (`a/b/c` → `a`, `a/b`, `a/b/c`). */
export function ancestorPaths(path: string): string[] {
  const segments = path.split('/');
  return segments.map((_, i) => segments.slice(0, i + 1).join('/'));
}

/** Folds a set of roles into privileges; anonymous callers get the reduced set of §7. */
export function permissionsFromRoles(roles: RoleRow[], anonymousCaller: boolean): ProjectPermissions {
  const p: ProjectPermissions = {
    access: roles.length > 0, readCode: false, writeCode: false, manage: false, managePullRequests: false,
    manageCodeComments: false, manageIssues: false, scheduleIssues: false, accessConfidentialIssues: false,
    manageBuilds: false, createChildren: false, roles,
  };
  for (const role of roles) {
    if (anonymousCaller) {
      if (role.codePrivilege !== 'NONE' || role.manageProject || role.managePullRequests || role.manageCodeComments) p.readCode = true;
      continue;
    }
    if (role.manageProject) return { ...ALL, roles };
    if (role.codePrivilege !== 'NONE') p.readCode = true;
    if (role.codePrivilege === 'WRITE' || role.managePullRequests || role.manageCodeComments) p.writeCode = p.readCode = true;
    if (role.managePullRequests) p.managePullRequests = true;
    if (role.manageCodeComments) p.manageCodeComments = true;
    if (role.manageIssues) p.manageIssues = p.scheduleIssues = p.accessConfidentialIssues = true;
    if (role.scheduleIssues) p.scheduleIssues = true;
    if (role.accessConfidentialIssues) p.accessConfidentialIssues = true;
    if (role.manageBuilds) p.manageBuilds = true;
    if (role.createChildren) p.createChildren = true;
  }
  return p;
}

/** Whether default roles apply to this caller (always for users; for anonymous per setting). */
async function defaultRolesApply(ctx: Context): Promise<boolean> {
  return ctx.actor.userId !== ANONYMOUS_ID || (await getSecuritySetting(ctx)).enableAnonymousAccess;
}

/**
 * The caller's privileges on a project (reference/platform.md §7). One query over the project's
 * ancestors. Takes the project row so callers that already loaded it pay nothing more.
 */
export async function projectPermissions(ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>): Promise<ProjectPermissions> {
  if (ctx.actor.isAdmin) return { ...ALL, roles: [] };
  const paths = ancestorPaths(project.path);
  const userId = ctx.actor.userId;
  const groupIds = ctx.actor.groupIds;
  const withDefaults = await defaultRolesApply(ctx);
  const roles = await ctx.db
    .selectFrom('roles')
    .selectAll('roles')
    .where((eb) => {
      const ancestorIds = eb.selectFrom('projects').select('projects.id').where('projects.path', 'in', paths);
      const grants: Expression<SqlBool>[] = [];
      if (userId !== ANONYMOUS_ID) {
        grants.push(eb('roles.id', 'in', eb.selectFrom('userAuthorizations').select('roleId')
          .where('userId', '=', userId).where('projectId', 'in', ancestorIds)));
      }
      if (groupIds.length > 0) {
        grants.push(eb('roles.id', 'in', eb.selectFrom('groupAuthorizations').select('roleId')
          .where('groupId', 'in', groupIds).where('projectId', 'in', ancestorIds)));
      }
      if (withDefaults) {
        grants.push(eb('roles.id', 'in', eb.selectFrom('projects').select('defaultRoleId')
          .where('path', 'in', paths).where('defaultRoleId', 'is not', null)));
      }
      return grants.length > 0 ? eb.or(grants) : sql<SqlBool>`1 = 0`;
    })
    .execute();
  return permissionsFromRoles(roles, userId === ANONYMOUS_ID);
}

/**
 * A SQL condition "project `ref` is accessible to the caller", for filtering listings in the
 * database (issue: no in-memory filtering). `ref` names the project id column to test.
 * Returns null for administrators (no filter needed).
 */
export async function accessibleProjectsCondition(
  ctx: Context,
  need: 'access' | 'readCode' | 'accessConfidentialIssues' = 'access',
): Promise<((eb: ExpressionBuilder<any, any>, ref: string) => Expression<SqlBool>) | null> {
  if (ctx.actor.isAdmin) return null;
  const { userId, groupIds } = ctx.actor;
  const withDefaults = await defaultRolesApply(ctx);
  const anonymousCaller = userId === ANONYMOUS_ID;
  if (need === 'accessConfidentialIssues' && anonymousCaller) return () => sql<SqlBool>`1 = 0`;
  const postgres = ctx.engine === 'postgres';
  return (eb, ref) => {
    const roleOk = (roleRef: string) =>
      need === 'access'
        ? sql<SqlBool>`1 = 1`
        : need === 'accessConfidentialIssues'
        ? sql<SqlBool>`(${sql.ref(`${roleRef}.manage_project`)} = 1 or ${sql.ref(`${roleRef}.manage_issues`)} = 1 or ${sql.ref(`${roleRef}.access_confidential_issues`)} = 1)`
        : sql<SqlBool>`(${sql.ref(`${roleRef}.code_privilege`)} <> 'NONE' or ${sql.ref(`${roleRef}.manage_project`)} = 1 or ${sql.ref(`${roleRef}.manage_pull_requests`)} = 1 or ${sql.ref(`${roleRef}.manage_code_comments`)} = 1)`;
    const grantRoots: RawBuilder<unknown>[] = [];
    if (!anonymousCaller) {
      grantRoots.push(sql<number>`select ua.project_id as root_id from user_authorizations ua join roles r on r.id = ua.role_id where ua.user_id = ${userId} and ${roleOk('r')}`);
    }
    if (groupIds.length > 0) {
      grantRoots.push(sql<number>`select ga.project_id as root_id from group_authorizations ga join roles r on r.id = ga.role_id where ga.group_id in (${sql.join(groupIds)}) and ${roleOk('r')}`);
    }
    if (withDefaults) {
      grantRoots.push(sql<number>`select dp.id as root_id from projects dp join roles r on r.id = dp.default_role_id where ${roleOk('r')}`);
    }
    if (grantRoots.length === 0) return sql<SqlBool>`1 = 0`;
    const roots = sql.join(grantRoots, sql` union `);
    // The descendants of path P are the paths in the range (P + '/', P + '0') in byte order ('/' is
    // 0x2F, '0' is 0x30): a range scan of a path index per grant root, not a comparison of every
    // project with every root. PostgreSQL compares in the "C" collation (byte order whatever the
    // database collation), served by the index `projects_path_bytes` of migration 0009.
    const path = (alias: string) => (postgres ? sql`${sql.ref(`${alias}.path`)} collate "C"` : sql.ref(`${alias}.path`));
    // PostgreSQL cannot estimate a range join of projects with projects (it expects millions of
    // rows, then plans badly and JIT-compiles): the root paths are collected into an array first
    // (estimated small), and `= any(array(…))` computes the ids once and probes indexes with them.
    const rootPaths = postgres
      ? sql`unnest(array(select g.path from projects g where g.id in (${roots}))) as g(path)`
      : sql`projects g`;
    const ids = sql`select g.id from projects g where g.id in (${roots}) union select d.id from ${rootPaths} join projects d on ${path('d')} > ${path('g')} || '/' and ${path('d')} < ${path('g')} || '0'${postgres ? sql`` : sql` where g.id in (${roots})`}`;
    return postgres ? sql<SqlBool>`${sql.ref(ref)} = any(array(${ids}))` : sql<SqlBool>`${sql.ref(ref)} in (${ids})`;
  };
}

/** Throws 401 for anonymous callers, else 403 (reference/platform.md §7: a denial). */
export function deny(actor: Actor, detail?: string): never {
  if (actor.userId === ANONYMOUS_ID) throw new Unauthorized(detail ?? 'Permission denied');
  throw new Forbidden(detail);
}

/** Requires a logged-in caller; throws Unauthorized otherwise. */
export function requireUser(actor: Actor): number {
  if (actor.userId === ANONYMOUS_ID) throw new Unauthorized();
  return actor.userId;
}

/** Requires an administrator: 401 anonymous, 403 otherwise. */
export function requireAdmin(actor: Actor): void {
  if (!actor.isAdmin) deny(actor);
}

/**
 * Loads a project the caller may see and checks a privilege on it. A missing project or one
 * without access is 404 (CONTRACT.md §4: existence is not leaked); lacking `need` is 401/403.
 */
export async function loadProjectWith(
  ctx: Context,
  projectId: number,
  need: keyof Omit<ProjectPermissions, 'roles'> = 'access',
): Promise<{ project: ProjectRow; permissions: ProjectPermissions }> {
  const project = await ctx.db.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirst();
  if (!project) throw new NotFound(`Project not found: ${projectId}`);
  const permissions = await projectPermissions(ctx, project);
  if (!permissions.access) throw new NotFound(`Project not found: ${projectId}`);
  if (!permissions[need]) deny(ctx.actor);
  return { project, permissions };
}

/** The privileges of {@link ProjectPermissions} by name (`access`, `readCode`, `manage`, …). */
export type ProjectPrivilege = keyof Omit<ProjectPermissions, 'roles'>;

/**
 * Whether the caller holds `need` on a project (reference/platform.md §7: canAccess, canReadCode,
 * canWriteCode, canManage, canManagePullRequests, canManageIssues, canManageBuilds, …).
 */
export async function can(ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>, need: ProjectPrivilege): Promise<boolean> {
  return (await projectPermissions(ctx, project))[need];
}

/** canAccess(project) of reference/platform.md §7. */
export const canAccess = (ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>) => can(ctx, project, 'access');
/** canReadCode(project). */
export const canReadCode = (ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>) => can(ctx, project, 'readCode');
/** canWriteCode(project). */
export const canWriteCode = (ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>) => can(ctx, project, 'writeCode');
/** canManage(project). */
export const canManage = (ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>) => can(ctx, project, 'manage');
/** canManagePullRequests(project). */
export const canManagePullRequests = (ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>) => can(ctx, project, 'managePullRequests');
/** canManageIssues(project). */
export const canManageIssues = (ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>) => can(ctx, project, 'manageIssues');
/** canManageCodeComments(project). */
export const canManageCodeComments = (ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>) => can(ctx, project, 'manageCodeComments');
/** canManageBuilds(project). */
export const canManageBuilds = (ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>) => can(ctx, project, 'manageBuilds');

/** What a caller may do with the builds of one job (reference/platform.md §7, users-roles.md §3). */
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
 * reference/users-roles.md §3 (space-separated, `*`/`?` wildcards, `-` excludes): manageProject
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

async function jobPermissionsOf(ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>, jobName: string): Promise<JobPermissions> {
  const permissions = await projectPermissions(ctx, project);
  if (!permissions.access) return jobPermissions({ ...permissions, roles: [] }, jobName, true);
  return jobPermissions(permissions, jobName, ctx.actor.userId === ANONYMOUS_ID);
}

/** canAccess(build): build access for the job `jobName` of the project (reference/platform.md §7). */
export async function canAccessBuild(ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>, jobName: string): Promise<boolean> {
  return (await jobPermissionsOf(ctx, project, jobName)).accessBuild;
}

/** canAccessLog(build) by job name. */
export async function canAccessLog(ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>, jobName: string): Promise<boolean> {
  return (await jobPermissionsOf(ctx, project, jobName)).accessLog;
}

/** canRunJob(project, jobName). */
export async function canRunJob(ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>, jobName: string): Promise<boolean> {
  return (await jobPermissionsOf(ctx, project, jobName)).runJob;
}

/** canManage(build) / ManageJob by job name. */
export async function canManageJob(ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>, jobName: string): Promise<boolean> {
  return (await jobPermissionsOf(ctx, project, jobName)).manageJob;
}

/** canAccessReport(build, report): the report name matches the accessible report patterns. */
export async function canAccessReport(ctx: Context, project: Pick<ProjectRow, 'id' | 'path'>, jobName: string, report: string): Promise<boolean> {
  const { accessibleReports } = await jobPermissionsOf(ctx, project, jobName);
  return accessibleReports !== null && jobNamesMatch(accessibleReports, report);
}

/** Types re-exported for callers building their own conditions. */
export type { Database };
