import { Type } from '@sinclair/typebox';
import type { OutboxAttemptRow, OutboxMessageRow } from '../db/schema.js';
import { toWireDate } from './dates.js';
import { Nullable, WireDate } from './schema.js';

/** One send attempt of a webhook delivery (docs/compatibility.md#gitloom-differs-webhooks-and-notifications). */
export const WebhookAttemptSchema = Type.Object({
  date: WireDate,
  durationMillis: Type.Integer(),
  successful: Type.Boolean(),
  responseStatus: Nullable(Type.Integer()),
  responseExcerpt: Nullable(Type.String()),
  error: Nullable(Type.String()),
});

/** A webhook delivery (Gitloom addition, docs/compatibility.md#gitloom-differs-webhooks-and-notifications); the secret is never shown. */
export const WebhookDeliverySchema = Type.Object(
  {
    id: Type.Integer(),
    deliveryId: Type.String({ description: 'the X-Gitloom-Delivery header value (a UUID)' }),
    projectId: Type.Integer(),
    eventType: Type.String({ description: 'CODE_PUSH, PULL_REQUEST, ISSUE, CODE_COMMENT or BUILD' }),
    postUrl: Type.String(),
    status: Type.String({ description: 'PENDING, DELIVERED or FAILED' }),
    attemptCount: Type.Integer(),
    createDate: WireDate,
    nextAttemptDate: Nullable(WireDate),
    finishDate: Nullable(WireDate),
    redeliveryOfId: Nullable(Type.Integer()),
    body: Type.String({ description: 'the JSON body posted' }),
    attempts: Type.Array(WebhookAttemptSchema),
  },
  { $id: 'WebhookDelivery' },
);

/** Maps a webhook outbox message and its attempts to the wire shape. */
export function toWireWebhookDelivery(row: OutboxMessageRow & { attempts: OutboxAttemptRow[] }) {
  return {
    id: row.id,
    deliveryId: row.uuid,
    projectId: row.projectId,
    eventType: row.eventType,
    postUrl: row.target,
    status: row.status,
    attemptCount: row.attemptCount,
    createDate: toWireDate(row.createDate),
    nextAttemptDate: toWireDate(row.nextAttemptDate),
    finishDate: toWireDate(row.finishDate),
    redeliveryOfId: row.redeliveryOfId,
    body: row.payload,
    attempts: row.attempts.map((a) => ({
      date: toWireDate(a.date),
      durationMillis: a.durationMs,
      successful: Boolean(a.succeeded),
      responseStatus: a.responseStatus,
      responseExcerpt: a.responseExcerpt,
      error: a.error,
    })),
  };
}
