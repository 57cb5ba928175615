import type { Db } from '../../db/database.js';
import type { RoleRow, UserRow } from '../../db/schema.js';
import { BadRequest } from '../../errors.js';
import { findUserRow } from '../users/index.js';

/**
 * Loads a user named by a request body, or throws BadRequest `User not found: <id>` (docs/compatibility.md#gitloom-differs-improved-behaviour:
 * creates validate references). The built-in system and unknown users cannot be referenced.
 */
export async function referencedUser(db: Db, userId: number): Promise<UserRow> {
  const user = userId > 0 ? await findUserRow(db, userId) : undefined;
  if (!user) throw new BadRequest(`User not found: ${userId}`);
  return user;
}

/** Loads a role named by a request body, or throws BadRequest `Role not found: <id>`. */
export async function referencedRole(db: Db, roleId: number): Promise<RoleRow> {
  const role = await db.selectFrom('roles').selectAll().where('id', '=', roleId).executeTakeFirst();
  if (!role) throw new BadRequest(`Role not found: ${roleId}`);
  return role;
}
