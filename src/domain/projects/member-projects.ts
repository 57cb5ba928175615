/**
 * The projects a signed-in user is a member of (the dashboard's "My projects"): those where an
 * authorization names the user or one of the user's groups — the Project Owner role included —
 * each with the roles it grants and through which group. A project reached only through its
 * default role, or through an authorization on an ancestor, is no membership of it.
 */
import { sql, type Expression, type SqlBool } from 'kysely';
import { requireUser } from '../actor.js';
import type { Context } from '../context.js';
import { groupNameOf, roleNameOf } from '../access/index.js';

/** One role a member holds on a project: the role's name and the group granting it (null: the user's own authorization). */
export interface MemberRole {
  roleName: string;
  groupName: string | null;
}

/** A project the user is a member of, with the roles granted to the user there. */
export interface MemberProject {
  id: number;
  path: string;
  roles: MemberRole[];
}

/**
 * The caller's member projects, by path, at most `limit` of them (`more` tells whether there are
 * others), in two queries whatever their number: the projects, then their authorizations of the
 * caller (user authorizations and those of the caller's groups, the default login group
 * included, as permissions count them). Unauthorized for anonymous callers.
 */
export async function memberProjects(ctx: Context, limit: number): Promise<{ projects: MemberProject[]; more: boolean }> {
  const userId = requireUser(ctx.actor);
  const { groupIds } = ctx.actor;
  const rows = await ctx.db
    .selectFrom('projects')
    .select(['projects.id', 'projects.path'])
    .where((eb) => {
      const grants: Expression<SqlBool>[] = [eb('projects.id', 'in', eb.selectFrom('userAuthorizations').select('projectId').where('userId', '=', userId))];
      if (groupIds.length > 0) {
        grants.push(eb('projects.id', 'in', eb.selectFrom('groupAuthorizations').select('projectId').where('groupId', 'in', groupIds)));
      }
      return eb.or(grants);
    })
    .orderBy('projects.path')
    .limit(limit + 1)
    .execute();
  const shown = rows.slice(0, limit);
  if (shown.length === 0) return { projects: [], more: false };
  const ids = shown.map((p) => p.id);
  let roles = ctx.db
    .selectFrom('userAuthorizations')
    .select((eb) => [
      'userAuthorizations.projectId as projectId',
      roleNameOf(eb.ref('userAuthorizations.roleId')).as('roleName'),
      sql<string | null>`null`.as('groupName'),
    ])
    .where('userAuthorizations.userId', '=', userId)
    .where('userAuthorizations.projectId', 'in', ids);
  if (groupIds.length > 0) {
    roles = roles.unionAll(
      ctx.db
        .selectFrom('groupAuthorizations')
        .select((eb) => [
          'groupAuthorizations.projectId as projectId',
          roleNameOf(eb.ref('groupAuthorizations.roleId')).as('roleName'),
          groupNameOf(eb.ref('groupAuthorizations.groupId')).as('groupName'),
        ])
        .where('groupAuthorizations.groupId', 'in', groupIds)
        .where('groupAuthorizations.projectId', 'in', ids),
    );
  }
  const byProject = new Map<number, MemberRole[]>(ids.map((id) => [id, []]));
  for (const role of await roles.execute()) byProject.get(role.projectId)?.push({ roleName: role.roleName, groupName: role.groupName });
  for (const list of byProject.values()) list.sort((a, b) => (a.groupName ?? '').localeCompare(b.groupName ?? '') || a.roleName.localeCompare(b.roleName));
  return { projects: shown.map((p) => ({ ...p, roles: byProject.get(p.id)! })), more: rows.length > limit };
}
