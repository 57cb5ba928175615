/**
 * Email notifications (docs/compatibility.md#mentions-and-notifications): who gets a mail for an
 * outbox event and what it says. Watchers of a pull request or issue get its comments, state
 * changes and merges; a requested reviewer gets the review request (also when named at opening);
 * mentioned users get
 * "(Mentioned You)" instead; the submitter of a pull request gets its failed builds. One mail
 * per event and recipient, never to the actor, plain text and HTML, threaded per conversation.
 */
import type { Db } from '../../db/database.js';
import type { OutboxEventRow } from '../../db/schema.js';
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
  STATE_CHANGED: 'State Changed',
};

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

interface Plan {
  /** Recipient → subject tag (`Commented`, `Mentioned You`, …). */
  recipients: Map<number, string>;
  subject: (tag: string) => string;
  summary: string;
  link: string;
  thread: string;
  opensThread: boolean;
}

/**
 * The mails an event causes, one per recipient with a verified primary email, the actor
 * excluded. `serverUrl` makes the links and its host is the Message-ID domain.
 */
export async function mailsFor(db: Db, event: OutboxEventRow, serverUrl: string): Promise<MailDraft[]> {
  const stored = JSON.parse(event.payload) as StoredEvent;
  const payload = stored.body as Record<string, any>;
  const plan = await planFor(db, event, payload, stored, serverUrl);
  if (!plan) return [];
  for (const id of [...plan.recipients.keys()]) if (id <= 0 || id === event.actorId) plan.recipients.delete(id);
  const emails = await primaryEmails(db, [...plan.recipients.keys()]);
  const host = new URL(serverUrl).hostname || 'gitloom';
  const root = `${plan.thread}@${host}`;
  const drafts: MailDraft[] = [];
  for (const [userId, tag] of plan.recipients) {
    const to = emails.get(userId);
    if (!to) continue;
    const { text, html } = compose({ summary: plan.summary, text: payload.text ?? null, link: plan.link });
    drafts.push({
      userId,
      to,
      mail: { subject: plan.subject(tag), text, html, messageId: plan.opensThread ? root : null, inReplyTo: plan.opensThread ? null : root },
    });
  }
  return drafts;
}

async function planFor(db: Db, event: OutboxEventRow, payload: Record<string, any>, stored: StoredEvent, serverUrl: string): Promise<Plan | null> {
  const { watcherIds: watchers, reviewerIds: reviewers } = stored;
  const projectPath = (await findProjectRow(db, event.projectId))?.path ?? null;
  if (projectPath === null) return null;
  const actor = await actorName(db, event.actorId);
  const mentioned = await mentionedUserIds(db, payload.text);
  const recipients = new Map<number, string>();
  const add = (ids: number[], tag: string) => ids.forEach((id) => recipients.set(id, tag));
  switch (event.type) {
    case 'PULL_REQUEST': {
      const pr = payload.pullRequest as { id: number; number: number; title: string; uuid: string };
      if (event.action === 'REVIEW_REQUESTED') add([payload.reviewerId as number], TAGS.REVIEW_REQUESTED);
      else add(watchers, TAGS[event.action]);
      add(reviewers, TAGS.REVIEW_REQUESTED);
      add(mentioned, 'Mentioned You');
      return {
        recipients,
        subject: (tag) => `[Pull Request ${projectPath}#${pr.number}] (${tag}) ${pr.title}`,
        summary: `${actor} ${VERBS[event.action]} pull request #${pr.number}: ${pr.title}`,
        link: `${serverUrl}/${projectPath}/~pulls/${pr.number}`,
        thread: `pull-request-${pr.uuid}`,
        opensThread: event.action === 'OPENED',
      };
    }
    case 'ISSUE': {
      const issue = payload.issue as { id: number; number: number; title: string; uuid: string; state: string };
      add(watchers, TAGS[event.action]);
      add(mentioned, 'Mentioned You');
      const state = event.action === 'STATE_CHANGED' ? ` (now ${issue.state})` : '';
      return {
        recipients,
        subject: (tag) => `[Issue ${projectPath}#${issue.number}] (${tag}) ${issue.title}`,
        summary: `${actor} ${VERBS[event.action]} issue #${issue.number}: ${issue.title}${state}`,
        link: `${serverUrl}/${projectPath}/~issues/${issue.number}`,
        thread: `issue-${issue.uuid}`,
        opensThread: event.action === 'OPENED',
      };
    }
    case 'CODE_COMMENT': {
      const comment = payload.codeComment as { id: number; uuid: string; mark: { path: string }; compareContext: { pullRequestId: number | null } };
      add(mentioned, 'Mentioned You');
      return {
        recipients,
        subject: () => `[Code Comment] ${projectPath}:${comment.mark.path}`,
        summary: `${actor} added a code comment on ${comment.mark.path}`,
        link: `${serverUrl}/${projectPath}/~code-comments/${comment.id}`,
        thread: `code-comment-${comment.uuid}`,
        opensThread: true,
      };
    }
    case 'BUILD': {
      const build = payload.build as { id: number; number: number; jobName: string; status: string; requestId: number | null; uuid: string };
      if (!['FAILED', 'TIMED_OUT'].includes(build.status) || build.requestId === null) return null;
      const pr = await findPullRequestRow(db, build.requestId);
      if (!pr) return null;
      recipients.set(pr.submitterId, 'Build Failed');
      const status = build.status === 'FAILED' ? 'failed' : 'timed out';
      return {
        recipients,
        subject: () => `[Build ${projectPath}#${build.number}] ${build.jobName} ${status} for pull request #${pr.number}`,
        summary: `Build #${build.number} (${build.jobName}) of pull request #${pr.number} ${status}: ${pr.title}`,
        link: `${serverUrl}/${projectPath}/~builds/${build.number}`,
        thread: `pull-request-${pr.uuid}`,
        opensThread: false,
      };
    }
    default:
      return null;
  }
}
