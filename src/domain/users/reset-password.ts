import { randomBytes } from 'node:crypto';
import { NotFound } from '../../errors.js';
import { recordAudit } from '../audit/index.js';
import { systemActor, type Context } from '../context.js';
import { hashPassword } from './passwords.js';
import { normalizeUserName } from './users.js';

/**
 * Sets a user's password from the command line (`gitloom admin reset-password <login>`): the
 * given one, or a generated one (16 random bytes, base64url). Built-in users without a password
 * (the system and unknown users) cannot get one. Every web session of the user ends with it (an
 * administrator's reset, docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input); access tokens stay. Audited as
 * `user.changePassword` by the system user (docs/audit-log.md#actions). Returns the password set.
 *
 * @throws NotFound when no loginable user has that login name (case-insensitive).
 */
export async function resetPassword(ctx: Pick<Context, 'db' | 'events'>, login: string, password: string | null): Promise<string> {
  const { db } = ctx;
  const user = await db.selectFrom('users').select(['id', 'name']).where('name', '=', normalizeUserName(login)).where('id', '>', 0).executeTakeFirst();
  if (!user) throw new NotFound(`User not found: ${login}`);
  const value = password ?? randomBytes(16).toString('base64url');
  const passwordHash = await hashPassword(value);
  await db.transaction().execute(async (tx) => {
    await tx.updateTable('users').set({ passwordHash }).where('id', '=', user.id).execute();
    await ctx.events.dispatchInTransaction('passwordChanged', { db: tx, userId: user.id, keepSession: null });
    // by the command line: the system user, from no address
    await recordAudit({ actor: systemActor, now: Date.now }, tx, {
      action: 'user.changePassword',
      targetType: 'user',
      targetId: user.id,
      targetName: user.name,
    });
  });
  return value;
}
