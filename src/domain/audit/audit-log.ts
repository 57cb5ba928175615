import type { Db } from '../../db/database.js';
import { ANONYMOUS_ID, type Context } from '../context.js';

/** What an audited change names (docs/audit-log.md#what-a-row-holds). */
export interface AuditEvent {
  /** A stable dotted name: `<target type>.<verb>`, e.g. `accessToken.create` (docs/audit-log.md#actions). */
  action: string;
  /** The kind of thing acted on, e.g. `user`, `project`, `accessToken`. */
  targetType: string;
  targetId?: string | number | null;
  /** The target's name as it is at the change (a deleted target keeps it here). */
  targetName?: string | null;
  /** The project the target belongs to, when it does: the project's audit page lists it. */
  projectId?: number | null;
  /** The values before the change (absent for a creation); names only, never a secret's value. */
  before?: unknown;
  /** The values after the change (absent for a deletion); names only, never a secret's value. */
  after?: unknown;
  /**
   * Who acted, when it is not the context's actor: a sign-in names the user signing in (or the
   * name tried, with a null id, when nobody matched).
   */
  actor?: { id: number | null; name: string };
}

/**
 * Writes one audit row for a change (docs/audit-log.md). Pass the transaction that makes the
 * change as `db`, so the row commits with it and a rolled-back change leaves none. The row names
 * the context's actor (or `event.actor`), client address and user agent, and the context's time.
 * A summary is stored as JSON; what it holds is the caller's choice and must never be a secret's
 * value.
 *
 * @param ctx the acting context (actor, client address, clock).
 * @param db the transaction of the change (or `ctx.db` for a change that is this row alone).
 */
/**
 * A text as a row may hold it: PostgreSQL text takes no NUL, and a failed sign-in records
 * whatever name was tried, so each NUL becomes U+FFFD (the replacement character).
 */
const storable = <T extends string | null>(text: T): T => (text === null ? text : (text.replaceAll('\0', '\uFFFD') as T));

export async function recordAudit(ctx: Pick<Context, 'actor' | 'now' | 'client'>, db: Db, event: AuditEvent): Promise<void> {
  const actor = event.actor ?? (ctx.actor.userId === ANONYMOUS_ID ? { id: null, name: '' } : { id: ctx.actor.userId, name: ctx.actor.name });
  const summary = event.before === undefined && event.after === undefined ? null : JSON.stringify({ before: event.before, after: event.after });
  await db
    .insertInto('auditEvents')
    .values({
      time: ctx.now(),
      actorId: actor.id,
      actorName: storable(actor.name),
      address: ctx.client?.address ?? null,
      userAgent: storable(ctx.client?.userAgent ?? null),
      action: event.action,
      targetType: event.targetType,
      targetId: event.targetId == null ? null : storable(String(event.targetId)),
      targetName: storable(event.targetName ?? null),
      projectId: event.projectId ?? null,
      summary,
    })
    .execute();
}

/**
 * The fields of two versions of a record that differ, for an audit summary: `{ before, after }`
 * holding only those fields (compared as JSON), e.g. `auditChanges({a: 1, b: 2}, {a: 1, b: 3})`
 * is `{ before: { b: 2 }, after: { b: 3 } }`. Leave secret fields out of both arguments.
 */
export function auditChanges(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): { before: Record<string, unknown>; after: Record<string, unknown> } {
  const changed = { before: {} as Record<string, unknown>, after: {} as Record<string, unknown> };
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (JSON.stringify(before[key]) === JSON.stringify(after[key])) continue;
    changed.before[key] = before[key];
    changed.after[key] = after[key];
  }
  return changed;
}
