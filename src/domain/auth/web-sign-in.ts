import { recordAudit } from '../audit/index.js';
import type { Client, Context } from '../context.js';
import { findUserRow } from '../users/index.js';
import { createSession } from './sessions.js';

/**
 * Starts the web session of a sign-in whose credentials (and second factor, when the user has
 * one) were just checked, from `client` ({@link createSession}), and audits it as
 * `signIn.success` in the session's transaction (docs/audit-log.md#actions): the sign-in pages'
 * last step. Returns what {@link createSession} returns.
 */
export async function startWebSession(ctx: Context, userId: number, client: Client): Promise<{ token: string; csrfToken: string; expireDate: number }> {
  return ctx.db.transaction().execute(async (tx) => {
    const session = await createSession(tx, userId, ctx.now(), client);
    const user = await findUserRow(tx, userId);
    const name = user?.name ?? String(userId);
    await recordAudit(ctx, tx, { action: 'signIn.success', targetType: 'user', targetId: userId, targetName: name, actor: { id: userId, name } });
    return session;
  });
}
