/**
 * Per-user notification settings (docs/compatibility.md#notification-inbox): for each reason group,
 * whether its notifications go to the inbox and whether they are mailed. A group without a stored
 * row does both.
 */
import type { Db } from '../../db/database.js';
import { BadRequest } from '../../errors.js';
import { requireUser } from '../actor.js';
import type { Context } from '../context.js';
import { REASON_GROUPS, reasonGroup, type NotificationReason, type ReasonGroup } from './reasons.js';

/** One group's choice: inbox and mail on or off. */
export interface DeliveryChoice {
  group: ReasonGroup;
  inbox: boolean;
  mail: boolean;
}

/** The caller's settings, every group in the order of {@link REASON_GROUPS}. Throws Unauthorized for anonymous callers. */
export async function getNotificationSettings(ctx: Context): Promise<DeliveryChoice[]> {
  const userId = requireUser(ctx.actor);
  const rows = await ctx.db.selectFrom('notificationSettings').selectAll().where('userId', '=', userId).execute();
  const stored = new Map(rows.map((r) => [r.reasonGroup, r]));
  return REASON_GROUPS.map(({ group }) => {
    const row = stored.get(group);
    return { group, inbox: row ? row.inbox === 1 : true, mail: row ? row.mail === 1 : true };
  });
}

/**
 * Stores the caller's choices (groups not given keep theirs). Throws BadRequest for an unknown
 * group, Unauthorized for anonymous callers.
 */
export async function setNotificationSettings(ctx: Context, choices: DeliveryChoice[]): Promise<void> {
  const userId = requireUser(ctx.actor);
  const known = new Set<string>(REASON_GROUPS.map((g) => g.group));
  const unknown = choices.find((c) => !known.has(c.group));
  if (unknown) throw new BadRequest(`Unknown notification group: ${unknown.group}`);
  if (choices.length === 0) return;
  await ctx.db
    .insertInto('notificationSettings')
    .values(choices.map((c) => ({ userId, reasonGroup: c.group, inbox: c.inbox ? 1 : 0, mail: c.mail ? 1 : 0 })))
    .onConflict((oc) => oc.columns(['userId', 'reasonGroup']).doUpdateSet((eb) => ({ inbox: eb.ref('excluded.inbox'), mail: eb.ref('excluded.mail') })))
    .execute();
}

/**
 * Splits recipients by their settings, in one query: `inbox` and `mail` hold the users whose
 * group of the given reason has it on. `recipients` maps user id → reason.
 */
export async function deliveriesFor(db: Db, recipients: Map<number, NotificationReason>): Promise<{ inbox: Set<number>; mail: Set<number> }> {
  const inbox = new Set(recipients.keys());
  const mail = new Set(recipients.keys());
  if (recipients.size === 0) return { inbox, mail };
  const rows = await db
    .selectFrom('notificationSettings')
    .selectAll()
    .where('userId', 'in', [...recipients.keys()])
    .execute();
  for (const row of rows) {
    if (reasonGroup(recipients.get(row.userId)!) !== row.reasonGroup) continue;
    if (row.inbox !== 1) inbox.delete(row.userId);
    if (row.mail !== 1) mail.delete(row.userId);
  }
  return { inbox, mail };
}
