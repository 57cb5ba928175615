/**
 * Who is told of an outbox event and what the mail says (docs/compatibility.md#mentions-and-notifications,
 * docs/compatibility.md#notification-inbox): one computation of the recipients, with their
 * reasons, for both the inbox and mail. Watchers of a pull request or issue get its comments,
 * state changes and merges; a requested reviewer gets the review request (also when named at
 * opening); an assignee of a pull request gets "(Assigned)" (also when named at opening, as
 * OneDev's PullRequestNotificationManager tells assignees before reviewers), a user put in an
 * issue's user field "(<field>: You)" (as OneDev's IssueNotificationManager); mentioned users get
 * "(Mentioned You)" instead; the submitter of a pull request gets
 * its failed builds. One mail per event and recipient, never to the actor, plain text and HTML,
 * threaded per conversation.
 */
import type { Db } from '../../db/database.js';
import type { OutboxEventRow } from '../../db/schema.js';
import type { NotificationReason, NotificationThread } from '../notifications/index.js';
import { findProjectRow } from '../projects/index.js';
import { findPullRequestRow } from '../pulls/index.js';
import { mentionedUserIds, primaryEmails, userDisplayName } from '../users/index.js';
import type { StoredEvent } from './events.js';

/** A mail ready to queue: recipient address and the stored payload. */
export interface MailDraft {
  userId: number;
  to: string;
  mail: MailPayload;
}

/** The stored form of a mail (outbox_messages.payload). */
export interface MailPayload {
  subject: string;
  text: string;
  html: string;
  /** Message-ID without angle brackets; the thread root for the first mail of a conversation. */
  messageId: string | null;
  /** The conversation's root Message-ID (In-Reply-To and References). */
  inReplyTo: string | null;
}

const VERBS: Record<string, string> = {
  OPENED: 'opened',
  REOPENED: 'reopened',
  MERGED: 'merged',
  DISCARDED: 'discarded',
  COMMENTED: 'commented on',
  REVIEW_REQUESTED: 'requested your review on',
  ASSIGNED: 'assigned you to',
  FIELDS_CHANGED: 'changed the fields of',
  STATE_CHANGED: 'changed the state of',
  CREATED: 'added',
};
const TAGS: Record<string, string> = {
  OPENED: 'Opened',
  REOPENED: 'Reopened',
  MERGED: 'Merged',
  DISCARDED: 'Discarded',
  COMMENTED: 'Commented',
  REVIEW_REQUESTED: 'Review Requested',
  ASSIGNED: 'Assigned',
  STATE_CHANGED: 'State Changed',
};

/** The build statuses its pull request's submitter is told of. */
const FAILED = ['FAILED', 'TIMED_OUT'];

/** Escapes text for HTML element content and attributes. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function compose(parts: { summary: string; text: string | null; link: string }): { text: string; html: string } {
  const text = [parts.summary, parts.text ?? '', parts.link].filter((p) => p !== '').join('\n\n');
  const html =
    `<p>${escapeHtml(parts.summary)}</p>` +
    (parts.text ? `<pre style="white-space:pre-wrap;font-family:inherit">${escapeHtml(parts.text)}</pre>` : '') +
    `<p><a href="${escapeHtml(parts.link)}">${escapeHtml(parts.link)}</a></p>`;
  return { text, html };
}

async function actorName(db: Db, actorId: number | null): Promise<string> {
  if (actorId === null) return 'Gitloom';
  return (await userDisplayName(db, actorId)) ?? 'Someone';
}

/** Why one recipient is told: the mail's subject tag (`Commented`, `Mentioned You`, …) and the inbox reason. */
interface Recipient {
  tag: string;
  reason: NotificationReason;
}

/** Who is told of an event and how: recipients (the actor excluded), the mail's parts and the inbox thread. */
export interface NotificationPlan {
  recipients: Map<number, Recipient>;
  subject: (tag: string) => string;
  summary: string;
  link: string;
  /** The mail thread's root Message-ID local part. */
  thread: string;
  opensThread: boolean;
  /** The inbox thread the event lands in. */
  inbox: NotificationThread;
  /** The event's text (comment, description), quoted in mails. */
  text: string | null;
}

/**
 * Who is told of an event, why, and in which thread: null when nobody is (a push, a build that
 * did not fail, an entity or project gone). The actor and built-in users are never among the
 * recipients. `serverUrl` makes the mail links.
 */
export async function notificationPlan(db: Db, event: OutboxEventRow, serverUrl: string): Promise<NotificationPlan | null> {
  const stored = JSON.parse(event.payload) as StoredEvent;
  const plan = await planFor(db, event, stored.body as Record<string, any>, stored, serverUrl);
  if (!plan) return null;
  for (const id of [...plan.recipients.keys()]) if (id <= 0 || id === event.actorId) plan.recipients.delete(id);
  return plan;
}

/**
 * The mails of a plan to the chosen recipients (`userIds`: those whose settings mail their
 * reason), one per recipient with a verified primary email. `serverUrl`'s host is the
 * Message-ID domain.
 */
export async function mailsFor(db: Db, plan: NotificationPlan, userIds: Iterable<number>, serverUrl: string): Promise<MailDraft[]> {
  const wanted = [...userIds].filter((id) => plan.recipients.has(id));
  const emails = await primaryEmails(db, wanted);
  const host = new URL(serverUrl).hostname || 'gitloom';
  const root = `${plan.thread}@${host}`;
  const { text, html } = compose({ summary: plan.summary, text: plan.text, link: plan.link });
  const drafts: MailDraft[] = [];
  for (const userId of wanted) {
    const to = emails.get(userId);
    if (!to) continue;
    const subject = plan.subject(plan.recipients.get(userId)!.tag);
    drafts.push({ userId, to, mail: { subject, text, html, messageId: plan.opensThread ? root : null, inReplyTo: plan.opensThread ? null : root } });
  }
  return drafts;
}

/** The inbox reason of a watcher: `author` for the thread's submitter, else by what happened. */
function watcherReason(userId: number, submitterId: number, action: string): NotificationReason {
  if (userId === submitterId) return 'author';
  if (action === 'COMMENTED') return 'comment';
  return action === 'OPENED' ? 'subscribed' : 'state_change';
}

async function planFor(db: Db, event: OutboxEventRow, payload: Record<string, any>, stored: StoredEvent, serverUrl: string): Promise<NotificationPlan | null> {
  const { watcherIds: watchers, reviewerIds: reviewers, assigneeIds: assignees = [], fieldUsers = [] } = stored;
  // pushes and builds that did not fail tell nobody: answered before any query
  if (event.type === 'CODE_PUSH' || (event.type === 'BUILD' && !FAILED.includes(payload.build?.status))) return null;
  const projectPath = (await findProjectRow(db, event.projectId))?.path ?? null;
  if (projectPath === null) return null;
  const actor = await actorName(db, event.actorId);
  const text: string | null = payload.text ?? null;
  const mentioned = await mentionedUserIds(db, text);
  const recipients = new Map<number, Recipient>();
  const add = (ids: number[], tag: string, reason: (id: number) => NotificationReason) => ids.forEach((id) => recipients.set(id, { tag, reason: reason(id) }));
  const mentions = () => add(mentioned, 'Mentioned You', () => 'mention');
  const projectId = event.projectId;
  switch (event.type) {
    case 'PULL_REQUEST': {
      const pr = payload.pullRequest as { id: number; number: number; title: string; uuid: string; submitterId: number };
      if (event.action === 'REVIEW_REQUESTED') add([payload.reviewerId as number], TAGS.REVIEW_REQUESTED, () => 'review_requested');
      else if (event.action === 'ASSIGNED') add([payload.assigneeId as number], TAGS.ASSIGNED, () => 'assign');
      else add(watchers, TAGS[event.action], (id) => watcherReason(id, pr.submitterId, event.action));
      add(reviewers, TAGS.REVIEW_REQUESTED, () => 'review_requested');
      add(assignees, TAGS.ASSIGNED, () => 'assign');
      mentions();
      const path = `/${projectPath}/~pulls/${pr.number}`;
      return {
        recipients,
        subject: (tag) => `[Pull Request ${projectPath}#${pr.number}] (${tag}) ${pr.title}`,
        summary: `${actor} ${VERBS[event.action]} pull request #${pr.number}: ${pr.title}`,
        link: `${serverUrl}${path}`,
        thread: `pull-request-${pr.uuid}`,
        opensThread: event.action === 'OPENED',
        inbox: { subjectType: 'PullRequest', subjectId: pr.id, projectId, title: pr.title, url: path },
        text,
      };
    }
    case 'ISSUE': {
      const issue = payload.issue as { id: number; number: number; title: string; uuid: string; state: string; submitterId: number };
      // a change of fields alone tells only the users it put in user fields
      if (event.action !== 'FIELDS_CHANGED') add(watchers, TAGS[event.action], (id) => watcherReason(id, issue.submitterId, event.action));
      for (const { field, userId } of fieldUsers) add([userId], `${field}: You`, () => 'assign');
      mentions();
      const state = event.action === 'STATE_CHANGED' ? ` (now ${issue.state})` : '';
      const path = `/${projectPath}/~issues/${issue.number}`;
      return {
        recipients,
        subject: (tag) => `[Issue ${projectPath}#${issue.number}] (${tag}) ${issue.title}`,
        summary: `${actor} ${VERBS[event.action]} issue #${issue.number}: ${issue.title}${state}`,
        link: `${serverUrl}${path}`,
        thread: `issue-${issue.uuid}`,
        opensThread: event.action === 'OPENED',
        inbox: { subjectType: 'Issue', subjectId: issue.id, projectId, title: issue.title, url: path },
        text,
      };
    }
    case 'CODE_COMMENT': {
      const comment = payload.codeComment as {
        id: number;
        uuid: string;
        mark: { path: string; commitHash: string };
        compareContext: { pullRequestId: number | null };
      };
      mentions();
      const path = `/${projectPath}/~code-comments/${comment.id}`;
      // a comment on a pull request's changes belongs to the request's thread; another one's page is its file at the commented commit
      const pr = comment.compareContext.pullRequestId === null ? null : await findPullRequestRow(db, comment.compareContext.pullRequestId);
      return {
        recipients,
        subject: () => `[Code Comment] ${projectPath}:${comment.mark.path}`,
        summary: `${actor} added a code comment on ${comment.mark.path}`,
        link: `${serverUrl}${path}`,
        thread: `code-comment-${comment.uuid}`,
        opensThread: true,
        inbox: pr
          ? { subjectType: 'PullRequest', subjectId: pr.id, projectId, title: pr.title, url: `/${projectPath}/~pulls/${pr.number}` }
          : {
              subjectType: 'CodeComment',
              subjectId: comment.id,
              projectId,
              title: `Code comment on ${comment.mark.path}`,
              url: `/${projectPath}/~files/${comment.mark.commitHash}/${comment.mark.path.split('/').map(encodeURIComponent).join('/')}`,
            },
        text,
      };
    }
    case 'BUILD': {
      const build = payload.build as { id: number; number: number; jobName: string; status: string; requestId: number | null; uuid: string };
      if (build.requestId === null) return null;
      const pr = await findPullRequestRow(db, build.requestId);
      if (!pr) return null;
      recipients.set(pr.submitterId, { tag: 'Build Failed', reason: 'ci_activity' });
      const status = build.status === 'FAILED' ? 'failed' : 'timed out';
      const path = `/${projectPath}/~builds/${build.number}`;
      const title = `Build #${build.number} (${build.jobName}) of pull request #${pr.number} ${status}`;
      return {
        recipients,
        subject: () => `[Build ${projectPath}#${build.number}] ${build.jobName} ${status} for pull request #${pr.number}`,
        summary: `${title}: ${pr.title}`,
        link: `${serverUrl}${path}`,
        thread: `pull-request-${pr.uuid}`,
        opensThread: false,
        inbox: { subjectType: 'Build', subjectId: build.id, projectId, title, url: path },
        text,
      };
    }
    default:
      return null;
  }
}
