import type { Generated, Kysely, Selectable } from 'kysely';
import { Conflict } from '../../errors.js';
import type { Db } from '../../db/database.js';
import type { Context } from '../context.js';
import { loadRow } from '../entities.js';
import { loadProjectWith } from './permissions.js';
import { requireAdmin } from '../actor.js';
import { getGroup, referencedGroup, referencedRole, referencedUser } from '../access/index.js';
import { recordAudit } from '../audit/index.js';
import { uniquely } from '../unique.js';
import { getUserRow } from '../users/index.js';

/**
 * User and group authorizations (docs/compatibility.md#authorizations): a role granted to a user or group
 * on a project (and its descendants). One role per (user, project) and per (group, project): a
 * second one is 409. User authorizations need manage permission on the project (on the old and
 * the new project for an update); group authorizations are for administrators only.
 */
export interface UserAuthorizationData {
  projectId: number;
  userId: number;
  roleId: number;
}

export interface GroupAuthorizationData {
  projectId: number;
  groupId: number;
  roleId: number;
}

/** The two kinds of authorization: where they are stored, whom they grant to, and who manages them. */
const KINDS = {
  user: {
    table: 'userAuthorizations',
    label: 'User authorization',
    subject: 'userId',
    subjectLabel: 'User',
    referenced: referencedUser,
    /** user authorizations are managed by whoever may manage the project */
    administratorsOnly: false,
  },
  group: {
    table: 'groupAuthorizations',
    label: 'Group authorization',
    subject: 'groupId',
    subjectLabel: 'Group',
    referenced: referencedGroup,
    /** group authorizations are for administrators only */
    administratorsOnly: true,
  },
} as const;
type AuthorizationKind = keyof typeof KINDS;

/** Both authorization tables seen alike: the grantee column is the kind's `subject`. */
interface AuthorizationTable {
  id: Generated<number>;
  projectId: number;
  roleId: number;
  userId?: number;
  groupId?: number;
}
type AuthorizationDatabase = Record<(typeof KINDS)[AuthorizationKind]['table'], AuthorizationTable>;

/** A role granted to a subject (user or group) on a project. */
interface Grant {
  projectId: number;
  subjectId: number;
  roleId: number;
}

/**
 * Whether the caller may handle authorizations of `kind` on a project: a project the caller
 * cannot see is 404 whatever the kind (docs/compatibility.md#gitloom-differs-errors, do not leak existence); then group
 * authorizations need an administrator, user authorizations manage permission (403).
 */
async function authorizeGrant(ctx: Context, kind: AuthorizationKind, projectId: number): Promise<void> {
  if (KINDS[kind].administratorsOnly) {
    await loadProjectWith(ctx, projectId, 'access');
    requireAdmin(ctx.actor);
  } else {
    await loadProjectWith(ctx, projectId, 'manage');
  }
}

async function getAuthorization<K extends AuthorizationKind>(ctx: Context, kind: K, id: number) {
  const { table, label } = KINDS[kind];
  const row = await loadRow(ctx.db, table, id, label);
  await authorizeGrant(ctx, kind, row.projectId);
  return row;
}

/** A grant as an audit row names it (docs/audit-log.md#actions): the project's path, the user's or group's name, the role's name. */
async function describeGrant(db: Db, kind: AuthorizationKind, grant: Grant): Promise<Record<string, string>> {
  const project = await db.selectFrom('projects').select('path').where('id', '=', grant.projectId).executeTakeFirst();
  const subject = await KINDS[kind].referenced(db, grant.subjectId);
  const role = await referencedRole(db, grant.roleId);
  return { project: project?.path ?? String(grant.projectId), [kind]: subject.name, role: role.name };
}

/** Records an authorization's change in `tx` as `<kind>Authorization.<verb>`, on the project of `grant` (or of `before` for a deletion). */
async function auditGrant(ctx: Context, tx: Db, kind: AuthorizationKind, verb: string, id: number, before: Grant | null, after: Grant | null): Promise<void> {
  const was = before && (await describeGrant(tx, kind, before));
  const is = after && (await describeGrant(tx, kind, after));
  const named = (is ?? was)!;
  await recordAudit(ctx, tx, {
    action: `${kind}Authorization.${verb}`,
    targetType: `${kind}Authorization`,
    targetId: id,
    targetName: `${named[kind]} on ${named.project}`,
    projectId: (after ?? before)!.projectId,
    ...(was && { before: was }),
    ...(is && { after: is }),
  });
}

async function saveAuthorization(ctx: Context, kind: AuthorizationKind, id: number | null, grant: Grant, previous: Grant | null = null): Promise<number> {
  const { table, subject, subjectLabel, referenced } = KINDS[kind];
  await authorizeGrant(ctx, kind, grant.projectId);
  await referenced(ctx.db, grant.subjectId);
  await referencedRole(ctx.db, grant.roleId);
  const message = `${subjectLabel} ${grant.subjectId} is already authorized on project ${grant.projectId}`;
  const values = { projectId: grant.projectId, [subject]: grant.subjectId, roleId: grant.roleId };
  const db = ctx.db as unknown as Kysely<AuthorizationDatabase>;
  return uniquely(message, () =>
    db.transaction().execute(async (tx) => {
      let clash = tx.selectFrom(table).select('id').where(subject, '=', grant.subjectId).where('projectId', '=', grant.projectId);
      if (id !== null) clash = clash.where('id', '<>', id);
      if (await clash.executeTakeFirst()) throw new Conflict(message);
      if (id !== null) {
        await tx.updateTable(table).set(values).where('id', '=', id).execute();
        await auditGrant(ctx, tx as unknown as Db, kind, 'update', id, previous, grant);
        return id;
      }
      const created = (await tx.insertInto(table).values(values).returning('id').executeTakeFirstOrThrow()).id;
      await auditGrant(ctx, tx as unknown as Db, kind, 'create', created, null, grant);
      return created;
    }),
  );
}

async function updateAuthorization(ctx: Context, kind: AuthorizationKind, id: number, patch: Partial<Grant>): Promise<void> {
  const row = (await getAuthorization(ctx, kind, id)) as Selectable<AuthorizationTable>;
  const previous = { projectId: row.projectId, subjectId: row[KINDS[kind].subject]!, roleId: row.roleId };
  const grant = { projectId: patch.projectId ?? row.projectId, subjectId: patch.subjectId ?? previous.subjectId, roleId: patch.roleId ?? row.roleId };
  await saveAuthorization(ctx, kind, id, grant, previous);
}

async function deleteAuthorization(ctx: Context, kind: AuthorizationKind, id: number): Promise<void> {
  const row = (await getAuthorization(ctx, kind, id)) as Selectable<AuthorizationTable>;
  const grant = { projectId: row.projectId, subjectId: row[KINDS[kind].subject]!, roleId: row.roleId };
  await ctx.db.transaction().execute(async (tx) => {
    await auditGrant(ctx, tx, kind, 'delete', id, grant, null);
    await tx.deleteFrom(KINDS[kind].table).where('id', '=', id).execute();
  });
}

/** Get a user authorization: manage permission on its project (404 when the project is invisible). */
export function getUserAuthorization(ctx: Context, id: number) {
  return getAuthorization(ctx, 'user', id);
}

/** Create a user authorization; returns the id. 404 invisible project, 400 unknown user/role, 409 duplicate. */
export function createUserAuthorization(ctx: Context, data: UserAuthorizationData): Promise<number> {
  return saveAuthorization(ctx, 'user', null, { projectId: data.projectId, subjectId: data.userId, roleId: data.roleId });
}

/** Update a user authorization (partial merge of projectId/userId/roleId). */
export function updateUserAuthorization(ctx: Context, id: number, patch: Partial<UserAuthorizationData>): Promise<void> {
  return updateAuthorization(ctx, 'user', id, { projectId: patch.projectId, subjectId: patch.userId, roleId: patch.roleId });
}

/** Delete a user authorization (manage permission on its project). */
export function deleteUserAuthorization(ctx: Context, id: number): Promise<void> {
  return deleteAuthorization(ctx, 'user', id);
}

/** Get a group authorization (administrators). */
export function getGroupAuthorization(ctx: Context, id: number) {
  return getAuthorization(ctx, 'group', id);
}

/** Create a group authorization (administrators); returns the id. */
export function createGroupAuthorization(ctx: Context, data: GroupAuthorizationData): Promise<number> {
  return saveAuthorization(ctx, 'group', null, { projectId: data.projectId, subjectId: data.groupId, roleId: data.roleId });
}

/** Update a group authorization (administrators; partial merge). */
export function updateGroupAuthorization(ctx: Context, id: number, patch: Partial<GroupAuthorizationData>): Promise<void> {
  return updateAuthorization(ctx, 'group', id, { projectId: patch.projectId, subjectId: patch.groupId, roleId: patch.roleId });
}

/** Delete a group authorization (administrators). */
export function deleteGroupAuthorization(ctx: Context, id: number): Promise<void> {
  return deleteAuthorization(ctx, 'group', id);
}

/** Get User Authorizations of a project (docs/compatibility.md#projects-endpoints item 7): manage permission. */
export async function projectUserAuthorizations(ctx: Context, projectId: number) {
  await loadProjectWith(ctx, projectId, 'manage');
  return ctx.db.selectFrom('userAuthorizations').selectAll().where('projectId', '=', projectId).orderBy('id').execute();
}

/** Get Group Authorizations of a project (docs/compatibility.md#projects-endpoints item 6): administrators only. */
export async function projectGroupAuthorizations(ctx: Context, projectId: number) {
  await loadProjectWith(ctx, projectId, 'access');
  requireAdmin(ctx.actor);
  return ctx.db.selectFrom('groupAuthorizations').selectAll().where('projectId', '=', projectId).orderBy('id').execute();
}

/** A group's authorizations (administrators; `GET /groups/{id}/authorizations`). */
export async function groupAuthorizations(ctx: Context, groupId: number) {
  requireAdmin(ctx.actor);
  await getGroup(ctx, groupId);
  return ctx.db.selectFrom('groupAuthorizations').selectAll().where('groupId', '=', groupId).orderBy('id').execute();
}

/** A user's authorizations (administrators only; docs/compatibility.md#users-endpoints). */
export async function userAuthorizations(ctx: Context, userId: number) {
  requireAdmin(ctx.actor);
  await getUserRow(ctx.db, userId);
  return ctx.db.selectFrom('userAuthorizations').selectAll().where('userId', '=', userId).orderBy('id').execute();
}

/**
 * The places that still use a role, for refusing its deletion (docs/compatibility.md#gitloom-differs-errors
 * "in use"): `N user authorization(s)`, `N group authorization(s)` (each when N > 0), then
 * `default role of project 'path'` for at most ten projects, by path. Runs in `db` (the
 * deleting transaction).
 */
export async function roleUsages(db: Db, roleId: number): Promise<string[]> {
  const [users, groups, projects] = await Promise.all([
    db
      .selectFrom('userAuthorizations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('roleId', '=', roleId)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('groupAuthorizations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('roleId', '=', roleId)
      .executeTakeFirstOrThrow(),
    db.selectFrom('projects').select('path').where('defaultRoleId', '=', roleId).orderBy('path').limit(10).execute(),
  ]);
  const places: string[] = [];
  if (Number(users.n) > 0) places.push(`${Number(users.n)} user authorization(s)`);
  if (Number(groups.n) > 0) places.push(`${Number(groups.n)} group authorization(s)`);
  for (const p of projects) places.push(`default role of project '${p.path}'`);
  return places;
}
