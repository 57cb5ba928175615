import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { GroupTable } from '../../db/schema.js';
import { BadRequest, Conflict } from '../../errors.js';
import { recordAudit } from '../audit/index.js';
import type { Context } from '../context.js';
import { getSecuritySetting } from '../settings/index.js';
import { namedEntity } from '../query/index.js';

export type GroupRow = Selectable<GroupTable>;

/** Group JSON as input (docs/compatibility.md#groups-and-memberships). */
export interface GroupData {
  name?: string;
  description?: string | null;
  administrator?: boolean;
  createRootProjects?: boolean;
  enforce2FA?: boolean;
}

function validateGroupName(name: unknown): string {
  if (typeof name !== 'string' || name.trim() === '') throw new BadRequest('Group name is required');
  return name.trim();
}

const groups = namedEntity('Group', 'groups', { taken: 'Group', ignoringCase: true, auditType: 'group' });

/** Loads a group or throws BadRequest — for references inside request bodies. */
export async function referencedGroup(db: Db, groupId: number): Promise<GroupRow> {
  const group = await db.selectFrom('groups').selectAll().where('id', '=', groupId).executeTakeFirst();
  if (!group) throw new BadRequest(`Group not found: ${groupId}`);
  return group;
}

/** Get group (administrators; docs/compatibility.md#groups-and-memberships). */
export async function getGroup(ctx: Context, groupId: number): Promise<GroupRow> {
  return groups.get(ctx, groupId);
}

/** Query groups (administrators): `name` case-insensitive whole-name match with `*`; by name. */
export async function queryGroups(ctx: Context, name: string | undefined, offset: number, count: number): Promise<GroupRow[]> {
  return groups.query(ctx, name, offset, count);
}

/** Create a group (administrators). Name required and unique case-insensitively (409). */
export async function createGroup(ctx: Context, data: GroupData): Promise<number> {
  return groups.create(ctx, () => ({
    name: validateGroupName(data.name),
    description: data.description ?? null,
    administrator: data.administrator ? 1 : 0,
    createRootProjects: data.createRootProjects ? 1 : 0,
    enforce2fa: data.enforce2FA ? 1 : 0,
  }));
}

/** Update a group (administrators): partial merge; a new name must be unique (409); a rename is carried into protections. */
export async function updateGroup(ctx: Context, groupId: number, data: GroupData): Promise<void> {
  const group = await groups.get(ctx, groupId);
  const name = data.name === undefined ? group.name : validateGroupName(data.name);
  const flag = (v: boolean | undefined, current: number) => (v === undefined ? current : v ? 1 : 0);
  await groups.update(ctx, group, name, async (tx) => {
    if (name !== group.name) await ctx.events.dispatchInTransaction('principalRenamed', { db: tx, kind: 'group', from: group.name, to: name });
    await tx
      .updateTable('groups')
      .set({
        name,
        description: data.description === undefined ? group.description : data.description,
        administrator: flag(data.administrator, group.administrator),
        createRootProjects: flag(data.createRootProjects, group.createRootProjects),
        enforce2fa: flag(data.enforce2FA, group.enforce2fa),
      })
      .where('id', '=', groupId)
      .execute();
  });
}

/**
 * Delete a group (administrators). Refused (409) while it is the security setting's default
 * login group or named by a project's branch/tag protections; its authorizations and
 * memberships cascade.
 */
export async function deleteGroup(ctx: Context, groupId: number): Promise<void> {
  const group = await groups.get(ctx, groupId);
  const places: string[] = [];
  await ctx.events.dispatchInTransaction('principalDeleting', { db: ctx.db, kind: 'group', name: group.name, usages: places });
  if ((await getSecuritySetting(ctx)).defaultLoginGroupId === groupId) places.unshift('default login group of the security setting');
  if (places.length > 0) {
    throw new Conflict(`Group '${group.name}' is still being used in below places:\n${places.map((p) => `    -> ${p}`).join('\n')}`);
  }
  await ctx.db.transaction().execute(async (tx) => {
    await tx.deleteFrom('groups').where('id', '=', groupId).execute();
    await recordAudit(ctx, tx, { action: 'group.delete', targetType: 'group', targetId: groupId, targetName: group.name, before: group });
  });
}

/** The memberships of a group (administrators). */
export async function groupMemberships(ctx: Context, groupId: number) {
  await groups.get(ctx, groupId);
  return ctx.db.selectFrom('memberships').selectAll().where('groupId', '=', groupId).orderBy('id').execute();
}
