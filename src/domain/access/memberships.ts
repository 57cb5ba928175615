import { recordAudit } from '../audit/index.js';
import type { Db } from '../../db/database.js';
import type { Context } from '../context.js';
import { loadRow } from '../entities.js';
import { requireAdmin } from '../actor.js';
import { referencedUser } from './references.js';
import { referencedGroup } from './groups.js';
import { uniquely } from '../unique.js';
import { Conflict } from '../../errors.js';
import { getUserRow } from '../users/index.js';

/** Get membership (administrators; docs/compatibility.md#groups-and-memberships). */
export async function getMembership(ctx: Context, id: number) {
  requireAdmin(ctx.actor);
  return loadRow(ctx.db, 'memberships', id, 'Membership');
}

/**
 * Create membership (administrators): the user and group must exist (400); a user belongs to a
 * group once (409). Returns the id.
 */
export async function createMembership(ctx: Context, data: { userId: number; groupId: number }): Promise<number> {
  requireAdmin(ctx.actor);
  const user = await referencedUser(ctx.db, data.userId);
  const group = await referencedGroup(ctx.db, data.groupId);
  const message = `User ${data.userId} is already a member of group ${data.groupId}`;
  return uniquely(message, () =>
    ctx.db.transaction().execute(async (tx) => {
      const existing = await tx.selectFrom('memberships').select('id').where('userId', '=', data.userId).where('groupId', '=', data.groupId).executeTakeFirst();
      if (existing) throw new Conflict(message);
      const { id } = await tx.insertInto('memberships').values(data).returning('id').executeTakeFirstOrThrow();
      await recordAudit(ctx, tx, { ...membershipAudit(id, user.name, group.name), action: 'membership.create', after: { user: user.name, group: group.name } });
      return id;
    }),
  );
}

/** Delete membership (administrators). */
export async function deleteMembership(ctx: Context, id: number): Promise<void> {
  requireAdmin(ctx.actor);
  const membership = await loadRow(ctx.db, 'memberships', id, 'Membership');
  const user = await getUserRow(ctx.db, membership.userId);
  const group = await referencedGroup(ctx.db, membership.groupId);
  await ctx.db.transaction().execute(async (tx) => {
    await tx.deleteFrom('memberships').where('id', '=', id).execute();
    await recordAudit(ctx, tx, { ...membershipAudit(id, user.name, group.name), action: 'membership.delete', before: { user: user.name, group: group.name } });
  });
}

/** The target of a membership's audit rows (docs/audit-log.md#actions): named `<user> in <group>`, a group's administrator flag is what makes it matter. */
function membershipAudit(id: number, user: string, group: string) {
  return { targetType: 'membership', targetId: id, targetName: `${user} in ${group}` };
}

/** The memberships of a user (administrators only; docs/compatibility.md#users-endpoints). */
export async function userMemberships(ctx: Context, userId: number) {
  requireAdmin(ctx.actor);
  await getUserRow(ctx.db, userId);
  return ctx.db.selectFrom('memberships').selectAll().where('userId', '=', userId).orderBy('id').execute();
}

/** What {@link syncMemberships} changed: group names added and removed, sorted. */
export interface MembershipSync {
  added: string[];
  removed: string[];
}

/**
 * Makes a user's memberships exactly the Gitloom groups named by `groupNames` (an external
 * system's groups, docs/security.md#single-sign-on): names are compared case-insensitively and
 * names of no Gitloom group are ignored. Runs in `db` (the caller's transaction).
 */
export async function syncMemberships(db: Db, userId: number, groupNames: readonly string[]): Promise<MembershipSync> {
  const wanted = new Set(groupNames.map((n) => n.toLowerCase()));
  const [groups, current] = await Promise.all([
    wanted.size === 0
      ? Promise.resolve([])
      : db
          .selectFrom('groups')
          .select(['id', 'name'])
          .where((eb) => eb(eb.fn('lower', ['name']), 'in', [...wanted]))
          .execute(),
    db
      .selectFrom('memberships')
      .innerJoin('groups', 'groups.id', 'memberships.groupId')
      .select(['groups.id', 'groups.name'])
      .where('memberships.userId', '=', userId)
      .execute(),
  ]);
  const currentIds = new Set(current.map((g) => g.id));
  const wantedIds = new Set(groups.map((g) => g.id));
  const added = groups.filter((g) => !currentIds.has(g.id));
  const removed = current.filter((g) => !wantedIds.has(g.id));
  if (added.length > 0)
    await db
      .insertInto('memberships')
      .values(added.map((g) => ({ userId, groupId: g.id })))
      .execute();
  if (removed.length > 0) {
    await db
      .deleteFrom('memberships')
      .where('userId', '=', userId)
      .where(
        'groupId',
        'in',
        removed.map((g) => g.id),
      )
      .execute();
  }
  const names = (list: { name: string }[]) => list.map((g) => g.name).sort();
  return { added: names(added), removed: names(removed) };
}
