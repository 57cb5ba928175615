/**
 * How much the outbox still has to send (the `gitloom_outbox_pending_messages` metric).
 */
import type { Db } from '../../db/database.js';

/** The number of webhook deliveries and mails waiting to be sent (status PENDING: due or backing off). */
export async function pendingMessageCount(db: Db): Promise<number> {
  const row = await db
    .selectFrom('outboxMessages')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('status', '=', 'PENDING')
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
