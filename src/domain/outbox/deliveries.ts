/**
 * Webhook deliveries as the API shows them (docs/compatibility.md#gitloom-differs-webhooks-and-notifications): the outbox messages of a project's
 * webhooks with every attempt, and redelivery of one of them.
 */
import { randomUUID } from 'node:crypto';
import type { OutboxAttemptRow, OutboxMessageRow } from '../../db/schema.js';
import { NotFound } from '../../errors.js';
import { announce } from '../../db/notifications.js';
import type { Context } from '../context.js';
import { loadProjectWith } from '../projects/index.js';
import { OUTBOX_TOPIC } from './worker.js';

/** A delivery with its attempts, oldest attempt first. */
export type WebhookDelivery = OutboxMessageRow & { attempts: OutboxAttemptRow[] };

/**
 * Deliveries of a project's webhooks, newest first (manage project; 404 when the project is not
 * visible). `offset`/`count` page the list.
 */
export async function listWebhookDeliveries(ctx: Context, projectId: number, offset: number, count: number): Promise<WebhookDelivery[]> {
  await loadProjectWith(ctx, projectId, 'manage');
  const messages = await ctx.db
    .selectFrom('outboxMessages')
    .selectAll()
    .where('projectId', '=', projectId)
    .where('kind', '=', 'WEBHOOK')
    .orderBy('id', 'desc')
    .offset(offset)
    .limit(count)
    .execute();
  if (messages.length === 0) return [];
  const attempts = await ctx.db
    .selectFrom('outboxAttempts')
    .selectAll()
    .where(
      'messageId',
      'in',
      messages.map((m) => m.id),
    )
    .orderBy('id')
    .execute();
  return messages.map((m) => ({ ...m, attempts: attempts.filter((a) => a.messageId === m.id) }));
}

/**
 * Redeliver: queues a new delivery (new delivery id) of the same body to the same URL with the
 * same secret, due now. Manage permission on the delivery's project; 404 for an unknown id.
 * Returns the new delivery's id.
 */
export async function redeliverWebhook(ctx: Context, deliveryId: number): Promise<number> {
  const message = await ctx.db.selectFrom('outboxMessages').selectAll().where('id', '=', deliveryId).where('kind', '=', 'WEBHOOK').executeTakeFirst();
  if (!message) throw new NotFound(`Webhook delivery not found: ${deliveryId}`);
  await loadProjectWith(ctx, message.projectId, 'manage');
  const now = ctx.now();
  const row = await ctx.db
    .insertInto('outboxMessages')
    .values({
      eventId: message.eventId,
      kind: 'WEBHOOK',
      uuid: randomUUID(),
      projectId: message.projectId,
      eventType: message.eventType,
      target: message.target,
      secret: message.secret,
      payload: message.payload,
      status: 'PENDING',
      attemptCount: 0,
      createDate: now,
      nextAttemptDate: now,
      finishDate: null,
      redeliveryOfId: message.id,
      leaseOwner: null,
      leaseExpires: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await announce(ctx.db, OUTBOX_TOPIC);
  return row.id;
}
