/**
 * `/~inbox`: the signed-in user's notifications (docs/compatibility.md#notification-inbox), one
 * row per thread, unread first and in bold, newest update first; filters (`?query=` all,
 * unread, mentions, review-requests, assigned, participating); per row forms marking it read, unread or
 * done, and one marking all read — plain forms posted to `/~inbox/threads/:id` and
 * `/~inbox/read-all`, coming back to the list. Opening a thread's page marks it read.
 */
import {
  listNotifications,
  markAllNotificationsRead,
  markNotification,
  type Notification,
  type NotificationFilter,
  type NotificationReason,
  type ThreadMark,
} from '../../domain/notifications/index.js';
import { BadRequest } from '../../errors.js';
import { Flash } from '../components/flash.js';
import { InlineForm } from '../components/forms.js';
import { Layout } from '../components/layout.js';
import { Pager, queryPage } from '../components/query-list.js';
import { idParam } from '../components/settings.js';
import { redirect, safeRedirect, type PageContext, type PageModule, type PageResult } from '../page.js';
import { When } from './pulls/shared.js';

/** The filters of the inbox: `?query=` value, label, and what the list shows. */
const FILTERS: readonly { name: string; label: string; filter: Pick<NotificationFilter, 'all' | 'participating' | 'reasons'> }[] = [
  { name: 'all', label: 'All', filter: { all: true } },
  { name: 'unread', label: 'Unread', filter: { all: false } },
  { name: 'mentions', label: 'Mentions', filter: { all: true, reasons: ['mention'] } },
  { name: 'review-requests', label: 'Review requests', filter: { all: true, reasons: ['review_requested'] } },
  { name: 'assigned', label: 'Assigned', filter: { all: true, reasons: ['assign'] } },
  { name: 'participating', label: 'Participating', filter: { all: true, participating: true } },
];

/** How a reason reads in a row. */
const REASON_LABELS: Record<NotificationReason, string> = {
  mention: 'mentioned',
  review_requested: 'review requested',
  assign: 'assigned',
  author: 'author',
  comment: 'comment',
  state_change: 'state change',
  subscribed: 'watching',
  ci_activity: 'build failed',
};

/** How a subject type reads in a row. */
const SUBJECT_LABELS: Record<string, string> = { PullRequest: 'Pull request', Issue: 'Issue', Build: 'Build', CodeComment: 'Code comment' };

const MARKS: readonly ThreadMark[] = ['read', 'unread', 'done'];

function NotificationRow({ page, n, back }: { page: PageContext; n: Notification; back: string }) {
  const mark = (op: ThreadMark, text: string) => (
    <InlineForm
      page={page}
      action={`/~inbox/threads/${n.id}`}
      label={`Mark ${n.title} ${op}`}
      fields={{ op, return: back }}
      buttonClass="link"
      buttonLabel={`${text}: ${n.title}`}
    >
      {text}
    </InlineForm>
  );
  return (
    <li class={n.unread ? 'notification unread' : 'notification'}>
      <span class="notification-subject">
        <span class="meta">{`${n.project.path ?? 'deleted project'} · ${SUBJECT_LABELS[n.subjectType] ?? n.subjectType}`}</span>{' '}
        <a href={n.url}>{n.unread ? <strong>{n.title}</strong> : n.title}</a>
        {n.unread && <span class="visually-hidden"> (unread)</span>}
      </span>
      <span class="notification-meta">
        <span class="badge">{REASON_LABELS[n.reason] ?? n.reason}</span> <When date={n.updatedDate} />
      </span>
      <span class="actions">
        {n.unread ? mark('read', 'Mark read') : mark('unread', 'Mark unread')}
        {mark('done', 'Done')}
      </span>
    </li>
  );
}

async function inboxPage(page: PageContext): Promise<PageResult> {
  const list = await queryPage(page, 'all', async (name, offset, limit) => {
    const chosen = FILTERS.find((f) => f.name === name);
    if (!chosen) throw new BadRequest(`Unknown inbox filter: ${name} (one of ${FILTERS.map((f) => f.name).join(', ')})`);
    return listNotifications(page.ctx, { ...chosen.filter, unreadFirst: true, offset, limit });
  });
  const back = page.request.url;
  return (
    <Layout page={page} title="Inbox">
      <div class="inbox-head">
        <h1>Inbox</h1>
        <InlineForm page={page} action="/~inbox/read-all" label="Mark all read" fields={{ return: back }}>
          Mark all read
        </InlineForm>
      </div>
      <nav aria-label="Inbox filters">
        <ul class="tabs">
          {FILTERS.map((f) => (
            <li key={f.name}>
              <a href={`/~inbox?query=${f.name}`} aria-current={f.name === list.query ? 'page' : undefined}>
                {f.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <Flash error={list.error} />
      {list.rows.length === 0 ? (
        <p class="empty">No notification.</p>
      ) : (
        <ul class="list inbox">
          {list.rows.map((n) => (
            <NotificationRow key={n.id} page={page} n={n} back={back} />
          ))}
        </ul>
      )}
      <Pager action="/~inbox" list={list} />
    </Layout>
  );
}

/** The list the forms come back to: their `return` field when it is the inbox, else the inbox. */
function backToInbox(page: PageContext): string {
  const target = safeRedirect(page.form.return);
  return target === '/~inbox' || target.startsWith('/~inbox?') ? target : '/~inbox';
}

export const inboxPages: PageModule = {
  pages: [
    { method: 'GET', path: '/~inbox', access: 'user', handler: inboxPage },
    {
      method: 'POST',
      path: '/~inbox/threads/:id',
      access: 'user',
      handler: async (page) => {
        const op = page.form.op as ThreadMark;
        if (!MARKS.includes(op)) throw new BadRequest(`Unknown mark: ${page.form.op ?? ''} (one of read, unread, done)`);
        await markNotification(page.ctx, idParam(page, 'id'), op);
        return redirect(backToInbox(page));
      },
    },
    {
      method: 'POST',
      path: '/~inbox/read-all',
      access: 'user',
      handler: async (page) => {
        await markAllNotificationsRead(page.ctx);
        return redirect(backToInbox(page));
      },
    },
  ],
};
