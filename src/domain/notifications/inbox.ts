/**
 * The notification inbox (docs/compatibility.md#notification-inbox): one row per user and thread,
 * written by the outbox worker in the transaction that expands an event, read and marked by its
 * user only (another user's thread is a 404, like an unknown one). Modelled on GitHub's
 * notifications API (https://docs.github.com/en/rest/activity/notifications): unread, read, done.
 */
import type { Db } from '../../db/database.js';
import type { NotificationRow } from '../../db/schema.js';
import { NotFound } from '../../errors.js';
import { requireUser } from '../actor.js';
import type { Context } from '../context.js';
import { projectPathsByIds } from '../projects/index.js';
import type { NotificationReason } from './reasons.js';
import { PARTICIPATING_REASONS } from './reasons.js';

/** What a notification is about: `PullRequest`, `Issue`, `Build` or `CodeComment` (a code comment outside a pull request). */
export type SubjectType = 'PullRequest' | 'Issue' | 'Build' | 'CodeComment';

/** A thread as an event names it: its subject, project, title and page path (`/<project>/~pulls/3`). */
export interface NotificationThread {
  subjectType: SubjectType;
  subjectId: number;
  projectId: number;
  title: string;
  url: string;
}

/** A notification as read: the row and its project's path (null when the project is gone). */
export interface Notification {
  id: number;
  subjectType: SubjectType;
  subjectId: number;
  title: string;
  url: string;
  reason: NotificationReason;
  unread: boolean;
  done: boolean;
  /** Epoch ms of the thread's latest event. */
  updatedDate: number;
  /** Epoch ms the user last read it, null when never. */
  lastReadDate: number | null;
  project: { id: number; path: string | null };
}

/**
 * Records an event of `thread` in the inbox of each recipient (user id → reason), inside the
 * caller's transaction: a recipient's existing notification of the thread is updated (unread,
 * out of done, the latest reason, title and date), otherwise one is added. One statement.
 */
export async function recordNotifications(db: Db, thread: NotificationThread, recipients: Map<number, NotificationReason>, date: number): Promise<void> {
  if (recipients.size === 0) return;
  const rows = [...recipients].map(([userId, reason]) => ({ userId, ...thread, reason, unread: 1, done: 0, updatedDate: date, lastReadDate: null }));
  await db
    .insertInto('notifications')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['userId', 'subjectType', 'subjectId']).doUpdateSet((eb) => ({
        projectId: eb.ref('excluded.projectId'),
        title: eb.ref('excluded.title'),
        url: eb.ref('excluded.url'),
        reason: eb.ref('excluded.reason'),
        updatedDate: eb.ref('excluded.updatedDate'),
        unread: 1,
        done: 0,
      })),
    )
    .execute();
}

/** Deletes every user's notification of a thread, inside the caller's transaction (a deleted pull request's). */
export async function forgetThread(db: Db, subjectType: SubjectType, subjectId: number): Promise<void> {
  await db.deleteFrom('notifications').where('subjectType', '=', subjectType).where('subjectId', '=', subjectId).execute();
}

/** Which notifications a list shows (done ones never). */
export interface NotificationFilter {
  /** Read ones too (GitHub's `all`); else unread only. */
  all: boolean;
  /** Only direct participation: {@link PARTICIPATING_REASONS}. */
  participating?: boolean;
  /** Only these reasons. */
  reasons?: readonly NotificationReason[];
  /** Updated at or after (epoch ms). */
  since?: number;
  /** Updated before (epoch ms). */
  before?: number;
  /** Unread ones first (the inbox page), else by update only. */
  unreadFirst?: boolean;
  offset: number;
  limit: number;
}

/**
 * The caller's notifications, newest update first (unread first with `unreadFirst`), with their
 * projects' paths (one more query). Throws Unauthorized for anonymous callers.
 */
export async function listNotifications(ctx: Context, filter: NotificationFilter): Promise<Notification[]> {
  const userId = requireUser(ctx.actor);
  let query = ctx.db.selectFrom('notifications').selectAll().where('userId', '=', userId).where('done', '=', 0);
  if (!filter.all) query = query.where('unread', '=', 1);
  if (filter.participating) query = query.where('reason', 'in', PARTICIPATING_REASONS);
  if (filter.reasons) query = query.where('reason', 'in', filter.reasons.length > 0 ? filter.reasons : ['']);
  if (filter.since !== undefined) query = query.where('updatedDate', '>=', filter.since);
  if (filter.before !== undefined) query = query.where('updatedDate', '<', filter.before);
  if (filter.unreadFirst) query = query.orderBy('unread', 'desc');
  const rows = await query.orderBy('updatedDate', 'desc').orderBy('id', 'desc').offset(filter.offset).limit(filter.limit).execute();
  return withProjects(ctx.db, rows);
}

async function withProjects(db: Db, rows: NotificationRow[]): Promise<Notification[]> {
  const paths = await projectPathsByIds(
    db,
    rows.map((r) => r.projectId),
  );
  return rows.map((r) => ({
    id: r.id,
    subjectType: r.subjectType as SubjectType,
    subjectId: r.subjectId,
    title: r.title,
    url: r.url,
    reason: r.reason as NotificationReason,
    unread: r.unread === 1,
    done: r.done === 1,
    updatedDate: Number(r.updatedDate),
    lastReadDate: r.lastReadDate === null ? null : Number(r.lastReadDate),
    project: { id: r.projectId, path: paths.get(r.projectId) ?? null },
  }));
}

/** One of the caller's notifications (done ones too). Throws NotFound for an unknown id or another user's, Unauthorized for anonymous callers. */
export async function getNotification(ctx: Context, id: number): Promise<Notification> {
  const userId = requireUser(ctx.actor);
  const row = await ctx.db.selectFrom('notifications').selectAll().where('id', '=', id).where('userId', '=', userId).executeTakeFirst();
  if (!row) throw new NotFound(`Notification thread not found: ${id}`);
  return (await withProjects(ctx.db, [row]))[0];
}

/** What a thread is marked: read (`last_read` now), unread, or done (read and out of the inbox until its next event). */
export type ThreadMark = 'read' | 'unread' | 'done';

/** Marks one of the caller's notifications. Throws NotFound for an unknown id or another user's. */
export async function markNotification(ctx: Context, id: number, mark: ThreadMark): Promise<void> {
  const userId = requireUser(ctx.actor);
  const now = ctx.now();
  const set = mark === 'unread' ? { unread: 1 } : mark === 'read' ? { unread: 0, lastReadDate: now } : { unread: 0, done: 1, lastReadDate: now };
  const result = await ctx.db.updateTable('notifications').set(set).where('id', '=', id).where('userId', '=', userId).executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw new NotFound(`Notification thread not found: ${id}`);
}

/**
 * Marks every unread notification of the caller updated at or before `lastReadAt` (epoch ms,
 * default now) read, as GitHub's `PUT /notifications`. Returns how many were marked.
 */
export async function markAllNotificationsRead(ctx: Context, lastReadAt?: number): Promise<number> {
  const userId = requireUser(ctx.actor);
  const now = ctx.now();
  const result = await ctx.db
    .updateTable('notifications')
    .set({ unread: 0, lastReadDate: now })
    .where('userId', '=', userId)
    .where('done', '=', 0)
    .where('unread', '=', 1)
    .where('updatedDate', '<=', lastReadAt ?? now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Marks the caller's notification of a thread read, when there is an unread one: what opening
 * the thread's page does. One indexed UPDATE; nothing for anonymous visitors.
 */
export async function markThreadRead(ctx: Context, subjectType: SubjectType, subjectId: number): Promise<void> {
  if (ctx.actor.userId <= 0) return;
  await ctx.db
    .updateTable('notifications')
    .set({ unread: 0, lastReadDate: ctx.now() })
    .where('userId', '=', ctx.actor.userId)
    .where('subjectType', '=', subjectType)
    .where('subjectId', '=', subjectId)
    .where('unread', '=', 1)
    .execute();
}

/** How many unread notifications the caller has in the inbox (one indexed COUNT); 0 for anonymous visitors. */
export async function unreadNotificationCount(ctx: Context): Promise<number> {
  if (ctx.actor.userId <= 0) return 0;
  const row = await ctx.db
    .selectFrom('notifications')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('userId', '=', ctx.actor.userId)
    .where('done', '=', 0)
    .where('unread', '=', 1)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
