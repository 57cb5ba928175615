/**
 * What the web UI's project settings pages read (`/<project>/~settings/…`): the members of a
 * project with user, group and role names, the roles and label specs a manager can choose from,
 * and the ids behind names typed in forms. Reads only — every change goes through the functions
 * the API routes call (authorizations.ts, projects.ts, settings.ts, labels.ts, milestones.ts).
 */
import type { Kysely } from 'kysely';
import type { Db } from '../../db/database.js';
import { BadRequest } from '../../errors.js';
import type { Context } from '../context.js';
import { loadProjectWith } from './permissions.js';
import { requireAdmin } from '../actor.js';
import { userIdByName as namedUserId, userNameOf } from '../users/index.js';
import { findGroupIdByName, groupNameOf, roleNameOf, roleNames } from '../access/index.js';

/** A named thing to choose in a form (a role, a label spec). */
export interface Choice {
  id: number;
  name: string;
}

/** One authorization of a project, with the grantee's and the role's names. */
export interface MemberGrant {
  /** The authorization's id (`/user-authorizations/{id}` or `/group-authorizations/{id}`). */
  id: number;
  /** The user's or group's id and name. */
  subjectId: number;
  subjectName: string;
  roleId: number;
  roleName: string;
}

/**
 * The members of a project (docs/compatibility.md#projects-endpoints items 6 and 7): its user authorizations (manage
 * permission: 404 when the project is invisible, 401/403 otherwise) and, for administrators
 * only, its group authorizations (`groups` is null for other managers). Both by name.
 */
export async function projectMembers(ctx: Context, projectId: number): Promise<{ users: MemberGrant[]; groups: MemberGrant[] | null }> {
  await loadProjectWith(ctx, projectId, 'manage');
  const users = await grantsOf(ctx.db, projectId, 'user');
  const groups = ctx.actor.isAdmin ? await grantsOf(ctx.db, projectId, 'group') : null;
  return { users, groups };
}

/** The user or group authorizations of a project, with the grantee's and the role's names, by grantee name. */
function grantsOf(db: Db, projectId: number, grantee: 'user' | 'group'): Promise<MemberGrant[]> {
  const table = `${grantee}Authorizations` as const;
  const nameOf = grantee === 'user' ? userNameOf : groupNameOf;
  return (db as Kysely<any>)
    .selectFrom(table)
    .select((eb) => [
      `${table}.id as id`,
      `${table}.${grantee}Id as subjectId`,
      nameOf(eb.ref(`${table}.${grantee}Id`)).as('subjectName'),
      `${table}.roleId as roleId`,
      roleNameOf(eb.ref(`${table}.roleId`)).as('roleName'),
    ])
    .where(`${table}.projectId`, '=', projectId)
    .orderBy('subjectName')
    .$castTo<MemberGrant>()
    .execute();
}

/**
 * The roles a manager of the project may grant or make its default role (every role, by name):
 * manage permission on the project.
 */
export async function grantableRoles(ctx: Context, projectId: number): Promise<Choice[]> {
  await loadProjectWith(ctx, projectId, 'manage');
  return roleNames(ctx.db);
}

/**
 * The label specs a manager of the project may put on it (every spec, by name): manage
 * permission on the project.
 */
export async function labelSpecChoices(ctx: Context, projectId: number): Promise<Choice[]> {
  await loadProjectWith(ctx, projectId, 'manage');
  return ctx.db.selectFrom('labelSpecs').select(['id', 'name']).orderBy('name').execute();
}

/** The labels of a project by name, with the project label's id: manage permission. */
export async function projectLabelNames(ctx: Context, projectId: number): Promise<Choice[]> {
  await loadProjectWith(ctx, projectId, 'manage');
  return ctx.db
    .selectFrom('projectLabels')
    .innerJoin('labelSpecs', 'labelSpecs.id', 'projectLabels.specId')
    .select(['projectLabels.id as id', 'labelSpecs.name as name'])
    .where('projectLabels.projectId', '=', projectId)
    .orderBy('labelSpecs.name')
    .execute();
}

/**
 * The id of the user with this login name (case-insensitive), for forms naming a user: signed-in
 * callers. Throws BadRequest `User not found: <name>`.
 */
export async function userIdByName(ctx: Context, name: string): Promise<number> {
  return namedUserId(ctx.db, name, 'User not found');
}

/**
 * The id of the group with this name (case-insensitive), for forms naming a group:
 * administrators. Throws BadRequest `Group not found: <name>`.
 */
export async function groupIdByName(ctx: Context, name: string): Promise<number> {
  requireAdmin(ctx.actor);
  const id = await findGroupIdByName(ctx.db, name.trim());
  if (id === undefined) throw new BadRequest(`Group not found: ${name.trim()}`);
  return id;
}
