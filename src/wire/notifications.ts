import { Type } from '@sinclair/typebox';
import { toWireDate } from './dates.js';
import { Nullable, WireDate } from './schema.js';

/**
 * A notification thread (Gitloom addition, docs/compatibility.md#notification-inbox), in the
 * shape of GitHub's notifications API (https://docs.github.com/en/rest/activity/notifications):
 * `id` is text, `subject.url` the thread's page, `project` stands for GitHub's `repository`.
 */
export const NotificationSchema = Type.Object(
  {
    id: Type.String({ description: 'the thread id' }),
    unread: Type.Boolean(),
    reason: Type.String({ description: 'mention, review_requested, assign, author, comment, state_change, subscribed or ci_activity' }),
    updated_at: WireDate,
    last_read_at: Nullable(WireDate),
    subject: Type.Object({
      title: Type.String(),
      url: Type.String({ description: "the thread's web page" }),
      type: Type.String({ description: 'PullRequest, Issue, Build or CodeComment' }),
    }),
    project: Type.Object({ id: Type.Integer(), path: Nullable(Type.String()) }),
    url: Type.String({ description: 'this thread in the API' }),
  },
  { $id: 'Notification' },
);

/** What {@link toWireNotification} reads: a notification as the notifications area lists it. */
export interface NotificationShown {
  id: number;
  subjectType: string;
  title: string;
  url: string;
  reason: string;
  unread: boolean;
  updatedDate: number;
  lastReadDate: number | null;
  project: { id: number; path: string | null };
}

/** Maps a notification to the wire shape of {@link NotificationSchema}; `serverUrl` makes its URLs absolute. */
export function toWireNotification(n: NotificationShown, serverUrl: string) {
  return {
    id: String(n.id),
    unread: n.unread,
    reason: n.reason,
    updated_at: toWireDate(n.updatedDate),
    last_read_at: toWireDate(n.lastReadDate),
    subject: { title: n.title, url: `${serverUrl}${n.url}`, type: n.subjectType },
    project: n.project,
    url: `${serverUrl}/~api/notifications/threads/${n.id}`,
  };
}
