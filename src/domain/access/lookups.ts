import { expressionBuilder, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database, RoleRow } from '../../db/schema.js';

/**
 * Lookups of roles, groups and memberships for the other areas (docs/architecture.md#domain-areas):
 * each is one query, batched by ids where a caller has several, or a query fragment a caller
 * composes into one SQL statement of its own.
 */

/** A group as an actor needs it (docs/compatibility.md#platform-permissions): flags are 0/1. */
export interface GroupFlags {
  id: number;
  administrator: number;
  createRootProjects: number;
  /** Members must use two-factor authentication (OneDev's `enforce2FA`). */
  enforce2fa: number;
}

/** The groups a user is a member of, with their flags, in one query (the default login group is not among them unless joined). */
export async function groupFlagsOfUser(db: Db, userId: number): Promise<GroupFlags[]> {
  return db
    .selectFrom('memberships as m')
    .innerJoin('groups as g', 'g.id', 'm.groupId')
    .select(['g.id', 'g.administrator', 'g.createRootProjects', 'g.enforce2fa'])
    .where('m.userId', '=', userId)
    .execute();
}

/** The flags of one group, or undefined when it does not exist. */
export async function groupFlags(db: Db, groupId: number): Promise<GroupFlags | undefined> {
  return db.selectFrom('groups').select(['id', 'administrator', 'createRootProjects', 'enforce2fa']).where('id', '=', groupId).executeTakeFirst();
}

/** Names of groups by id, in one query: id → name; unknown ids are absent. */
export async function groupNamesByIds(db: Db, ids: Iterable<number>): Promise<Map<number, string>> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return new Map();
  const rows = await db.selectFrom('groups').select(['id', 'name']).where('id', 'in', wanted).execute();
  return new Map(rows.map((row) => [row.id, row.name]));
}

/** The names of the groups a user is a member of, in one query. */
export async function groupNamesOfUser(db: Db, userId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('memberships')
    .innerJoin('groups', 'groups.id', 'memberships.groupId')
    .select('groups.name')
    .where('memberships.userId', '=', userId)
    .execute();
  return rows.map((row) => row.name);
}

/** The id of the group with this name, compared case-insensitively; undefined when none. Callers word their own 400. */
export async function findGroupIdByName(db: Db, name: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('groups')
    .select('id')
    .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()))
    .executeTakeFirst();
  return row?.id;
}

/** Ids of the members of the group with this exact name but `exceptUserId`, ascending, in one query (none for an unknown group). */
export async function groupMemberIds(db: Db, groupName: string, exceptUserId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('memberships')
    .innerJoin('groups', 'groups.id', 'memberships.groupId')
    .select('memberships.userId')
    .where('groups.name', '=', groupName)
    .where('memberships.userId', '<>', exceptUserId)
    .orderBy('memberships.userId')
    .execute();
  return rows.map((row) => row.userId);
}

/** Whether a role of this id exists. */
export async function roleExists(db: Db, roleId: number): Promise<boolean> {
  const row = await db.selectFrom('roles').select('id').where('id', '=', roleId).executeTakeFirst();
  return row !== undefined;
}

/**
 * The roles satisfying `condition`, in one query: the caller composes the condition over
 * `roles` (typically `roles.id in <subquery of its own tables>`).
 */
export async function rolesWhere(db: Db, condition: (eb: ExpressionBuilder<Database, 'roles'>) => Expression<SqlBool>): Promise<RoleRow[]> {
  return db.selectFrom('roles').selectAll('roles').where(condition).execute();
}

/** A query fragment: the ids of the groups `userId` is a member of, as a subquery (for `… in` conditions). */
export function membershipGroupIds(userId: number) {
  return expressionBuilder<Database, never>().selectFrom('memberships').select('memberships.groupId').where('memberships.userId', '=', userId);
}

/** A query fragment: the name of the role whose id is `roleId`, as a scalar subquery (typed non-null: `roleId` must reference a role, as a foreign key does). */
export function roleNameOf(roleId: Expression<number>) {
  return expressionBuilder<Database, never>().selectFrom('roles').select('roles.name').where('roles.id', '=', roleId).$asScalar().$notNull();
}

/** A query fragment: the name of the group whose id is `groupId`, as a scalar subquery (typed non-null: `groupId` must reference a group, as a foreign key does). */
export function groupNameOf(groupId: Expression<number>) {
  return expressionBuilder<Database, never>().selectFrom('groups').select('groups.name').where('groups.id', '=', groupId).$asScalar().$notNull();
}

/** Every role's id and name, ordered by name, in one query (for forms choosing a role). */
export async function roleNames(db: Db): Promise<{ id: number; name: string }[]> {
  return db.selectFrom('roles').select(['id', 'name']).orderBy('name').execute();
}
