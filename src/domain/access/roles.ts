import type { RoleRow } from '../../db/schema.js';
import { BadRequest, Conflict } from '../../errors.js';
import { recordAudit } from '../audit/index.js';
import type { Context } from '../context.js';
import type { JobPrivilege } from '../projects/index.js';
import { validatePatternSet } from '../pattern-sets.js';
import { namedEntity } from '../query/index.js';

/** Role JSON as input (docs/compatibility.md#roles); every field optional for the partial merge. */
export interface RoleData {
  name?: string;
  manageProject?: boolean;
  createChildren?: boolean;
  managePullRequests?: boolean;
  manageCodeComments?: boolean;
  codePrivilege?: 'NONE' | 'READ' | 'WRITE';
  manageIssues?: boolean;
  accessConfidentialIssues?: boolean;
  scheduleIssues?: boolean;
  editableIssueFields?: unknown;
  manageBuilds?: boolean;
  jobPrivileges?: Partial<JobPrivilege>[];
}

const FIELD_SET_TYPES: Record<string, string | null> = {
  AllIssueFields: null,
  NoneIssueFields: null,
  IncludeIssueFields: 'includeFields',
  ExcludeIssueFields: 'excludeFields',
};

/**
 * Validates `editableIssueFields` (docs/compatibility.md#roles, docs/compatibility.md#gitloom-differs-json): an object whose
 * first key is `@type`, one of AllIssueFields, NoneIssueFields, IncludeIssueFields{includeFields},
 * ExcludeIssueFields{excludeFields}. Returns the normalized JSON text; BadRequest otherwise.
 */
export function normalizeEditableIssueFields(value: unknown): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new BadRequest('editableIssueFields must be an object with "@type"');
  const record = value as Record<string, unknown>;
  const type = record['@type'];
  if (typeof type !== 'string' || !(type in FIELD_SET_TYPES)) {
    throw new BadRequest(`editableIssueFields: unknown or missing @type: ${type === undefined ? '(none)' : JSON.stringify(type)}`);
  }
  const listField = FIELD_SET_TYPES[type];
  for (const key of Object.keys(record)) {
    if (key !== '@type' && key !== listField) throw new BadRequest(`editableIssueFields: unknown field '${key}' for ${type}`);
  }
  if (listField === null) return JSON.stringify({ '@type': type });
  const list = record[listField] ?? [];
  if (!Array.isArray(list) || list.some((f) => typeof f !== 'string')) throw new BadRequest(`editableIssueFields.${listField} must be an array of strings`);
  return JSON.stringify({ '@type': type, [listField]: list });
}

/**
 * Validates JobPrivilege[] (docs/compatibility.md#roles): `jobNames` required; `jobNames` and
 * `accessibleReports` are pattern sets read by the parser the matchers use (a malformed or
 * over-long pattern would match nothing). Returns JSON text.
 *
 * @throws BadRequest naming the field, e.g. `jobPrivileges[0].jobNames is required`,
 *   `jobPrivileges[0].jobNames: Malformed pattern set: unterminated quote in '"ci'`.
 */
export function normalizeJobPrivileges(list: Partial<JobPrivilege>[]): string {
  return JSON.stringify(
    list.map((p, i) => {
      if (typeof p.jobNames !== 'string' || p.jobNames.trim() === '') throw new BadRequest(`jobPrivileges[${i}].jobNames is required`);
      validatePatternSet(p.jobNames, `jobPrivileges[${i}].jobNames`);
      if (p.accessibleReports !== undefined && p.accessibleReports !== null) {
        if (typeof p.accessibleReports !== 'string') throw new BadRequest(`jobPrivileges[${i}].accessibleReports must be a string or null`);
        validatePatternSet(p.accessibleReports, `jobPrivileges[${i}].accessibleReports`);
      }
      return {
        jobNames: p.jobNames,
        manageJob: p.manageJob ?? false,
        runJob: p.runJob ?? false,
        accessLog: p.accessLog ?? false,
        accessibleReports: p.accessibleReports ?? null,
      };
    }),
  );
}

function validateRoleName(name: unknown): string {
  if (typeof name !== 'string' || name.trim() === '') throw new BadRequest('Role name is required');
  if (/[[\]<>{}]/.test(name)) throw new BadRequest('Role name should not contain any of "[]<>{}"');
  return name.trim();
}

const roles = namedEntity('Role', 'roles', { taken: 'Role', ignoringCase: true, auditType: 'role' });

function validateCodePrivilege(value: unknown): 'NONE' | 'READ' | 'WRITE' {
  if (value !== 'NONE' && value !== 'READ' && value !== 'WRITE') throw new BadRequest('codePrivilege must be one of NONE, READ, WRITE');
  return value;
}

const flag = (value: boolean | undefined, current: number) => (value === undefined ? current : value ? 1 : 0);

function toColumns(data: RoleData, current: RoleRow | null) {
  const base = current ?? {
    manageProject: 0,
    createChildren: 0,
    managePullRequests: 0,
    manageCodeComments: 0,
    codePrivilege: 'NONE' as const,
    manageIssues: 0,
    accessConfidentialIssues: 0,
    scheduleIssues: 0,
    editableIssueFields: '{"@type":"AllIssueFields"}',
    manageBuilds: 0,
    jobPrivileges: '[]',
  };
  return {
    manageProject: flag(data.manageProject, base.manageProject),
    createChildren: flag(data.createChildren, base.createChildren),
    managePullRequests: flag(data.managePullRequests, base.managePullRequests),
    manageCodeComments: flag(data.manageCodeComments, base.manageCodeComments),
    codePrivilege: data.codePrivilege === undefined ? base.codePrivilege : validateCodePrivilege(data.codePrivilege),
    manageIssues: flag(data.manageIssues, base.manageIssues),
    accessConfidentialIssues: flag(data.accessConfidentialIssues, base.accessConfidentialIssues),
    scheduleIssues: flag(data.scheduleIssues, base.scheduleIssues),
    editableIssueFields: data.editableIssueFields === undefined ? base.editableIssueFields : normalizeEditableIssueFields(data.editableIssueFields),
    manageBuilds: flag(data.manageBuilds, base.manageBuilds),
    jobPrivileges: data.jobPrivileges === undefined ? base.jobPrivileges : normalizeJobPrivileges(data.jobPrivileges),
  };
}

/** Get role (administrators; docs/compatibility.md#roles). NotFound for an unknown id. */
export async function getRole(ctx: Context, roleId: number): Promise<RoleRow> {
  return roles.get(ctx, roleId);
}

/**
 * Query roles (administrators): `name` is a case-insensitive whole-name match where `*` is a
 * wildcard; ordered by name.
 */
export async function queryRoles(ctx: Context, name: string | undefined, offset: number, count: number): Promise<RoleRow[]> {
  return roles.query(ctx, name, offset, count);
}

/** Create a role (administrators). Name required and unique (409); `@type` validated (400). Returns the id. */
export async function createRole(ctx: Context, data: RoleData): Promise<number> {
  return roles.create(ctx, () => {
    const name = validateRoleName(data.name);
    return { name, ...toColumns(data, null) };
  });
}

/** Update a role (administrators): partial merge; a new name must be unique (409). */
export async function updateRole(ctx: Context, roleId: number, data: RoleData): Promise<void> {
  const role = await roles.get(ctx, roleId);
  const name = data.name === undefined ? role.name : validateRoleName(data.name);
  const columns = toColumns(data, role);
  await roles.update(ctx, role, name, (tx) =>
    tx
      .updateTable('roles')
      .set({ name, ...columns })
      .where('id', '=', roleId)
      .execute(),
  );
}

/**
 * Delete a role (administrators). A role still used by a user or group authorization or as a
 * project's default role is refused with 409 (docs/compatibility.md#gitloom-differs-errors "in use"), naming the places.
 */
export async function deleteRole(ctx: Context, roleId: number): Promise<void> {
  const role = await roles.get(ctx, roleId);
  await ctx.db.transaction().execute(async (tx) => {
    const places: string[] = [];
    await ctx.events.dispatchInTransaction('roleDeleting', { db: tx, roleId, usages: places });
    if (places.length > 0) {
      throw new Conflict(`Role '${role.name}' is still being used in below places:\n${places.map((p) => `    -> ${p}`).join('\n')}`);
    }
    await tx.deleteFrom('roles').where('id', '=', roleId).execute();
    await recordAudit(ctx, tx, { action: 'role.delete', targetType: 'role', targetId: roleId, targetName: role.name, before: role });
  });
}
