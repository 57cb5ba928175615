import { Conflict } from '../../errors.js';
import type { Context } from '../context.js';
import { loadRow } from '../entities.js';
import { loadProjectWith, requireAdmin } from '../permissions.js';
import { referencedGroup } from './groups.js';
import { referencedRole, referencedUser } from './references.js';
import { uniquely } from './unique.js';

/**
 * User and group authorizations (reference/users-roles.md §4): a role granted to a user or group
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

/** Get a user authorization: manage permission on its project (404 when the project is invisible). */
export async function getUserAuthorization(ctx: Context, id: number) {
  const row = await loadRow(ctx.db, 'userAuthorizations', id, 'User authorization');
  await loadProjectWith(ctx, row.projectId, 'manage');
  return row;
}

async function saveUserAuthorization(ctx: Context, id: number | null, data: UserAuthorizationData): Promise<number> {
  await loadProjectWith(ctx, data.projectId, 'manage');
  await referencedUser(ctx.db, data.userId);
  await referencedRole(ctx.db, data.roleId);
  const message = `User ${data.userId} is already authorized on project ${data.projectId}`;
  return uniquely(message, () => ctx.db.transaction().execute(async (tx) => {
    let clash = tx.selectFrom('userAuthorizations').select('id').where('userId', '=', data.userId).where('projectId', '=', data.projectId);
    if (id !== null) clash = clash.where('id', '<>', id);
    if (await clash.executeTakeFirst()) throw new Conflict(message);
    if (id !== null) {
      await tx.updateTable('userAuthorizations').set(data).where('id', '=', id).execute();
      return id;
    }
    return (await tx.insertInto('userAuthorizations').values(data).returning('id').executeTakeFirstOrThrow()).id;
  }));
}

/** Create a user authorization; returns the id. 404 invisible project, 400 unknown user/role, 409 duplicate. */
export function createUserAuthorization(ctx: Context, data: UserAuthorizationData): Promise<number> {
  return saveUserAuthorization(ctx, null, data);
}

/** Update a user authorization (partial merge of projectId/userId/roleId). */
export async function updateUserAuthorization(ctx: Context, id: number, patch: Partial<UserAuthorizationData>): Promise<void> {
  const row = await getUserAuthorization(ctx, id);
  await saveUserAuthorization(ctx, id, { projectId: patch.projectId ?? row.projectId, userId: patch.userId ?? row.userId, roleId: patch.roleId ?? row.roleId });
}

/** Delete a user authorization (manage permission on its project). */
export async function deleteUserAuthorization(ctx: Context, id: number): Promise<void> {
  await getUserAuthorization(ctx, id);
  await ctx.db.deleteFrom('userAuthorizations').where('id', '=', id).execute();
}

/** Get a group authorization (administrators). */
export async function getGroupAuthorization(ctx: Context, id: number) {
  requireAdmin(ctx.actor);
  return loadRow(ctx.db, 'groupAuthorizations', id, 'Group authorization');
}

async function saveGroupAuthorization(ctx: Context, id: number | null, data: GroupAuthorizationData): Promise<number> {
  requireAdmin(ctx.actor);
  await loadProjectWith(ctx, data.projectId, 'manage');
  await referencedGroup(ctx.db, data.groupId);
  await referencedRole(ctx.db, data.roleId);
  const message = `Group ${data.groupId} is already authorized on project ${data.projectId}`;
  return uniquely(message, () => ctx.db.transaction().execute(async (tx) => {
    let clash = tx.selectFrom('groupAuthorizations').select('id').where('groupId', '=', data.groupId).where('projectId', '=', data.projectId);
    if (id !== null) clash = clash.where('id', '<>', id);
    if (await clash.executeTakeFirst()) throw new Conflict(message);
    if (id !== null) {
      await tx.updateTable('groupAuthorizations').set(data).where('id', '=', id).execute();
      return id;
    }
    return (await tx.insertInto('groupAuthorizations').values(data).returning('id').executeTakeFirstOrThrow()).id;
  }));
}

/** Create a group authorization (administrators); returns the id. */
export function createGroupAuthorization(ctx: Context, data: GroupAuthorizationData): Promise<number> {
  return saveGroupAuthorization(ctx, null, data);
}

/** Update a group authorization (administrators; partial merge). */
export async function updateGroupAuthorization(ctx: Context, id: number, patch: Partial<GroupAuthorizationData>): Promise<void> {
  const row = await getGroupAuthorization(ctx, id);
  await saveGroupAuthorization(ctx, id, { projectId: patch.projectId ?? row.projectId, groupId: patch.groupId ?? row.groupId, roleId: patch.roleId ?? row.roleId });
}

/** Delete a group authorization (administrators). */
export async function deleteGroupAuthorization(ctx: Context, id: number): Promise<void> {
  await getGroupAuthorization(ctx, id);
  await ctx.db.deleteFrom('groupAuthorizations').where('id', '=', id).execute();
}

/** Get User Authorizations of a project (reference/projects.md §2 #7): manage permission. */
export async function projectUserAuthorizations(ctx: Context, projectId: number) {
  await loadProjectWith(ctx, projectId, 'manage');
  return ctx.db.selectFrom('userAuthorizations').selectAll().where('projectId', '=', projectId).orderBy('id').execute();
}

/** Get Group Authorizations of a project (reference/projects.md §2 #6): administrators only. */
export async function projectGroupAuthorizations(ctx: Context, projectId: number) {
  await loadProjectWith(ctx, projectId, 'access');
  requireAdmin(ctx.actor);
  return ctx.db.selectFrom('groupAuthorizations').selectAll().where('projectId', '=', projectId).orderBy('id').execute();
}

/** A group's authorizations (administrators; `GET /groups/{id}/authorizations`). */
export async function groupAuthorizations(ctx: Context, groupId: number) {
  requireAdmin(ctx.actor);
  await loadRow(ctx.db, 'groups', groupId, 'Group');
  return ctx.db.selectFrom('groupAuthorizations').selectAll().where('groupId', '=', groupId).orderBy('id').execute();
}

/** A user's authorizations (administrators only; reference/users-roles.md §2). */
export async function userAuthorizations(ctx: Context, userId: number) {
  requireAdmin(ctx.actor);
  await loadRow(ctx.db, 'users', userId, 'User');
  return ctx.db.selectFrom('userAuthorizations').selectAll().where('userId', '=', userId).orderBy('id').execute();
}
