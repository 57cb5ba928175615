/**
 * The outbox worker (docs/compatibility.md#gitloom-differs-webhooks-and-notifications): a loop in every server process that expands committed
 * outbox events into webhook deliveries, mails and inbox notifications (docs/compatibility.md#notification-inbox), then sends the messages that are due — with
 * a timeout, exponential backoff between tries (6 tries, the first delay
 * `GITLOOM_OUTBOX_BACKOFF_MS`, doubled each time: ~1 h with the default 2 min) and a recorded
 * attempt each time. Rows are leased like builds (src/domain/builds/scheduler.ts): `FOR UPDATE
 * SKIP LOCKED` on PostgreSQL, a conditional update on SQLite; leases of a crashed process expire
 * and its work is resumed (at once on SQLite, whose file one process owns).
 */
import { randomUUID } from 'node:crypto';
import type { Transporter } from 'nodemailer';
import { recordWhenAvailable } from '../../db/availability.js';
import type { Db } from '../../db/database.js';
import type { ExpressionBuilder } from 'kysely';
import { dialectOf } from '../../db/dialect.js';
import type { Database, OutboxEventRow, OutboxMessageRow } from '../../db/schema.js';
import type { Services } from '../context.js';
import { PollingLoop } from '../polling-loop.js';
import type { StoredEvent } from './events.js';
import { mailsFor, notificationPlan, type MailPayload } from './mails.js';
import { postWebhook, WebhookTargetRefused } from './webhooks.js';
import { deliveriesFor, recordNotifications } from '../notifications/index.js';
import { webHooksFor } from '../projects/index.js';

/** Tries per message before it is FAILED. */
export const MAX_ATTEMPTS = 6;

/**
 * The topic waking the other processes' outbox workers (src/db/notifications.ts): announced in
 * the transaction that queues an event or a delivery.
 */
export const OUTBOX_TOPIC = 'outbox';

/** Options of {@link OutboxWorker}. */
export interface OutboxWorkerOptions {
  /** Milliseconds between ticks (default 250). */
  tickMs?: number;
  /** Timeout of one send in milliseconds (default 10000). */
  timeoutMs?: number;
  /** Logs worker faults. */
  onError?: (error: unknown) => void;
  /** Reports each finished attempt (metrics). */
  onAttempt?: (kind: 'WEBHOOK' | 'MAIL', succeeded: boolean, durationMs: number) => void;
}

const BATCH = 8;
/** Finished deliveries and mails, and expanded events, are kept this long (30 days), then deleted. */
export const RETENTION_MS = 30 * 24 * 3600_000;
const PRUNE_EVERY_MS = 3600_000;

/** One process's outbox worker: `start()` after the database is migrated, `stop()` on close. */
export class OutboxWorker {
  readonly owner = randomUUID();
  private readonly timeoutMs: number;
  private readonly loop: PollingLoop;
  private transport: Transporter | null = null;
  private prunedAt = 0;

  constructor(
    private readonly services: Services,
    private readonly options: OutboxWorkerOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.loop = new PollingLoop(() => this.tick(), options.tickMs ?? 250, options.onError).wakeOn(services.db, OUTBOX_TOPIC);
  }

  /** Starts the loop; when one process owns the database (SQLite) the leases of a previous (crashed) one are released first. */
  async start(): Promise<void> {
    if (dialectOf(this.services.db).ownedByOneProcess) {
      const release = { leaseOwner: null, leaseExpires: null };
      await this.services.db.updateTable('outboxEvents').set(release).where('leaseOwner', 'is not', null).execute();
      await this.services.db.updateTable('outboxMessages').set(release).where('leaseOwner', 'is not', null).execute();
    }
    this.loop.start();
  }

  /** Stops the loop and waits for the sends in progress. */
  async stop(): Promise<void> {
    await this.loop.stop();
    this.transport?.close();
  }

  private async tick(): Promise<void> {
    if (Date.now() - this.prunedAt >= PRUNE_EVERY_MS) await this.prune();
    for (;;) {
      const events = await this.claimEvents();
      for (const event of events) await this.expand(event);
      if (events.length < BATCH || this.loop.stopped) break;
    }
    for (;;) {
      const messages = await this.claimMessages();
      await Promise.all(messages.map((m) => this.send(m)));
      if (messages.length < BATCH || this.loop.stopped) break;
    }
  }

  /** Deletes what {@link RETENTION_MS} no longer keeps (attempts go with their message). */
  private async prune(): Promise<void> {
    const { db } = this.services;
    this.prunedAt = Date.now();
    const before = this.prunedAt - RETENTION_MS;
    await db.deleteFrom('outboxMessages').where('status', '<>', 'PENDING').where('finishDate', '<', before).execute();
    await db.deleteFrom('outboxEvents').where('expandedDate', '<', before).execute();
  }

  /**
   * Leases unexpanded events. Those this worker leased before are taken again: ticks never
   * overlap, so they are left over from a tick the database's unavailability broke off.
   */
  private async claimEvents(): Promise<OutboxEventRow[]> {
    const { db } = this.services;
    const now = Date.now();
    const claimable = (eb: ExpressionBuilder<Database, 'outboxEvents'>) =>
      eb.and([eb('expandedDate', 'is', null), eb.or([eb('leaseExpires', 'is', null), eb('leaseExpires', '<', now), eb('leaseOwner', '=', this.owner)])]);
    return dialectOf(db).claim(db.selectFrom('outboxEvents').select('id').where(claimable).orderBy('id').limit(BATCH), (ids) =>
      db
        .updateTable('outboxEvents')
        .set({ leaseOwner: this.owner, leaseExpires: now + 60_000 })
        .where('id', 'in', ids)
        .where(claimable)
        .returningAll()
        .execute(),
    );
  }

  /** Turns one event into its messages and inbox notifications and marks it expanded, in one transaction. */
  private async expand(event: OutboxEventRow): Promise<void> {
    const { db, config } = this.services;
    const now = Date.now();
    const body = JSON.stringify((JSON.parse(event.payload) as StoredEvent).body);
    await db.transaction().execute(async (tx) => {
      const base = {
        eventId: event.id,
        projectId: event.projectId,
        eventType: event.type,
        status: 'PENDING' as const,
        attemptCount: 0,
        createDate: now,
        nextAttemptDate: now,
        finishDate: null,
        redeliveryOfId: null,
        leaseOwner: null,
        leaseExpires: null,
      };
      for (const hook of await webHooksFor(tx, event.projectId, event.type)) {
        await tx
          .insertInto('outboxMessages')
          .values({ ...base, kind: 'WEBHOOK', uuid: randomUUID(), target: hook.postUrl, secret: hook.secret, payload: body })
          .execute();
      }
      // one decision of who is told, for the inbox and for mail, each as the recipient's settings choose
      const plan = await notificationPlan(tx, event, config.serverUrl);
      if (plan) {
        const reasons = new Map([...plan.recipients].map(([userId, r]) => [userId, r.reason]));
        const chosen = await deliveriesFor(tx, reasons);
        await recordNotifications(tx, plan.inbox, new Map([...reasons].filter(([userId]) => chosen.inbox.has(userId))), event.date);
        if (config.smtp) {
          for (const draft of await mailsFor(tx, plan, chosen.mail, config.serverUrl)) {
            await tx
              .insertInto('outboxMessages')
              .values({ ...base, kind: 'MAIL', uuid: randomUUID(), target: draft.to, secret: null, payload: JSON.stringify(draft.mail) })
              .execute();
          }
        }
      }
      await tx
        .updateTable('outboxEvents')
        .set({ expandedDate: now, leaseOwner: null, leaseExpires: null })
        .where('id', '=', event.id)
        .where('leaseOwner', '=', this.owner)
        .execute();
    });
  }

  /** Leases due messages; as for events, this worker's own leases are left over from a broken-off tick. */
  private async claimMessages(): Promise<OutboxMessageRow[]> {
    const { db } = this.services;
    const now = Date.now();
    const claimable = (eb: ExpressionBuilder<Database, 'outboxMessages'>) =>
      eb.and([
        eb('status', '=', 'PENDING'),
        eb('nextAttemptDate', '<=', now),
        eb.or([eb('leaseExpires', 'is', null), eb('leaseExpires', '<', now), eb('leaseOwner', '=', this.owner)]),
      ]);
    return dialectOf(db).claim(db.selectFrom('outboxMessages').select('id').where(claimable).orderBy('id').limit(BATCH), (ids) =>
      db
        .updateTable('outboxMessages')
        .set({ leaseOwner: this.owner, leaseExpires: now + 2 * this.timeoutMs + 5000 })
        .where('id', 'in', ids)
        .where(claimable)
        .returningAll()
        .execute(),
    );
  }

  private async send(message: OutboxMessageRow): Promise<void> {
    const started = Date.now();
    let outcome: { succeeded: boolean; responseStatus: number | null; excerpt: string | null; error: string | null; final: boolean };
    try {
      if (message.kind === 'WEBHOOK') {
        const result = await postWebhook(
          { url: message.target, secret: message.secret ?? '', eventType: message.eventType, deliveryId: message.uuid, body: message.payload },
          { allowPrivate: this.services.config.webhookAllowPrivate, timeoutMs: this.timeoutMs },
        );
        const succeeded = result.status >= 200 && result.status < 300;
        outcome = { succeeded, responseStatus: result.status, excerpt: result.excerpt, error: succeeded ? null : `HTTP ${result.status}`, final: false };
      } else {
        const info = await this.sendMail(message);
        outcome = { succeeded: true, responseStatus: null, excerpt: String(info).slice(0, 1000), error: null, final: false };
      }
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      outcome = { succeeded: false, responseStatus: null, excerpt: null, error: text.slice(0, 1000), final: error instanceof WebhookTargetRefused };
    }
    const now = Date.now();
    const durationMs = now - started;
    this.options.onAttempt?.(message.kind, outcome.succeeded, durationMs);
    const attemptCount = message.attemptCount + 1;
    const finished = outcome.succeeded || outcome.final || attemptCount >= MAX_ATTEMPTS;
    const status = outcome.succeeded ? 'DELIVERED' : finished ? 'FAILED' : 'PENDING';
    // the attempt happened: it is recorded once the database answers, so it is neither lost nor repeated
    await recordWhenAvailable(
      () =>
        this.services.db.transaction().execute(async (tx) => {
          await tx
            .insertInto('outboxAttempts')
            .values({
              messageId: message.id,
              date: started,
              durationMs,
              succeeded: outcome.succeeded ? 1 : 0,
              responseStatus: outcome.responseStatus,
              responseExcerpt: outcome.excerpt,
              error: outcome.error,
            })
            .execute();
          await tx
            .updateTable('outboxMessages')
            .set({
              status,
              attemptCount,
              leaseOwner: null,
              leaseExpires: null,
              finishDate: finished ? now : null,
              nextAttemptDate: finished ? null : now + this.services.config.outboxBackoffMs * 2 ** (attemptCount - 1),
            })
            .where('id', '=', message.id)
            .where('leaseOwner', '=', this.owner)
            .execute();
        }),
      () => this.loop.stopped,
    );
  }

  private async sendMail(message: OutboxMessageRow): Promise<string> {
    const smtp = this.services.config.smtp;
    if (!smtp) throw new Error('No SMTP server configured (GITLOOM_SMTP_URL or GITLOOM_SMTP_HOST)');
    // loaded on first use: a server without SMTP never pays for it
    const { default: nodemailer } = await import('nodemailer');
    this.transport ??= nodemailer.createTransport(
      smtp.url ?? {
        host: smtp.host!,
        port: smtp.port,
        secure: smtp.secure,
        ...(smtp.user && { auth: { user: smtp.user, pass: smtp.password ?? '' } }),
      },
    );
    const mail = JSON.parse(message.payload) as MailPayload;
    const host = new URL(this.services.config.serverUrl).hostname || 'gitloom';
    const info = await this.transport.sendMail({
      from: smtp.from,
      to: message.target,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      messageId: `<${mail.messageId ?? `${message.uuid}@${host}`}>`,
      ...(mail.inReplyTo && { inReplyTo: `<${mail.inReplyTo}>`, references: [`<${mail.inReplyTo}>`] }),
    });
    return String(info.response ?? '');
  }
}

/**
 * Age in milliseconds of the oldest work the outbox has not done: an event not yet expanded or
 * a message due but not sent (0 when none). Health and metrics read it.
 */
export async function outboxLag(db: Db, now: number): Promise<number> {
  const event = await db
    .selectFrom('outboxEvents')
    .select((eb) => eb.fn.min('date').as('oldest'))
    .where('expandedDate', 'is', null)
    .executeTakeFirst();
  const message = await db
    .selectFrom('outboxMessages')
    .select((eb) => eb.fn.min('nextAttemptDate').as('oldest'))
    .where('status', '=', 'PENDING')
    .where('nextAttemptDate', '<=', now)
    .executeTakeFirst();
  const oldest = [event?.oldest, message?.oldest].filter((v): v is number => v !== null && v !== undefined).map(Number);
  return oldest.length === 0 ? 0 : Math.max(0, now - Math.min(...oldest));
}
