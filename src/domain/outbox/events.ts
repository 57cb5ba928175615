/**
 * Outbox events (docs/compatibility.md#gitloom-differs-webhooks-and-notifications): what happened, written in the transaction that commits it,
 * later expanded into webhook deliveries and mails by the {@link OutboxWorker}. The payload is
 * a snapshot taken in that transaction: the JSON a webhook receives.
 */
import type { Db } from '../../db/database.js';
import { announce } from '../../db/notifications.js';
import { toWireBuild } from '../../wire/builds.js';
import { toWireCodeComment } from '../../wire/code-comments.js';
import { toWireDate } from '../../wire/dates.js';
import { toWireIssue } from '../../wire/issues.js';
import { toWirePullRequest } from '../../wire/pulls.js';
import { findBuildRow } from '../builds/index.js';
import { findCodeCommentRow } from '../code-comments/index.js';
import { findIssueRow, issueWatcherIds, stateOrdinal } from '../issues/index.js';
import { assigneeIds, findPullRequestRow, pendingReviewerIds, pullRequestWatcherIds } from '../pulls/index.js';
import type { Activity, FieldUser } from '../events.js';
import { OUTBOX_TOPIC } from './worker.js';

const TYPE_NAMES: Record<string, string> = {
  'PULL_REQUEST:OPENED': 'PullRequestOpened',
  'PULL_REQUEST:REOPENED': 'PullRequestChanged',
  'PULL_REQUEST:MERGED': 'PullRequestMerged',
  'PULL_REQUEST:DISCARDED': 'PullRequestDiscarded',
  'PULL_REQUEST:COMMENTED': 'PullRequestCommentCreated',
  'PULL_REQUEST:REVIEW_REQUESTED': 'PullRequestReviewRequested',
  'PULL_REQUEST:ASSIGNED': 'PullRequestAssigned',
  'ISSUE:OPENED': 'IssueOpened',
  'ISSUE:STATE_CHANGED': 'IssueStateChanged',
  'ISSUE:COMMENTED': 'IssueCommentCreated',
  'ISSUE:FIELDS_CHANGED': 'IssueChanged',
  'CODE_COMMENT:CREATED': 'CodeCommentCreated',
};

/**
 * Records an event in the outbox, inside the caller's transaction (`db` is the transaction), so
 * the announcement exists exactly when the change it announces was committed, with the watchers
 * of the pull request or issue at that moment (call it after the actor's and mentioned users'
 * auto-watches were written). The webhook body
 * snapshot: `{"@type", date, userId, projectId, <entity>, text}` where the entity is the wire
 * JSON of `pullRequest`, `issue`, `codeComment` or `build`, or, for CODE_PUSH, `refName`,
 * `oldCommitId`, `newCommitId` (OneDev's RefUpdated). An entity already gone records nothing.
 *
 */
export async function enqueueEvent(db: Db, event: Activity): Promise<void> {
  const snapshot = await snapshotOf(db, event);
  if (!snapshot) return;
  const payload = {
    '@type': snapshot.typeName,
    date: toWireDate(event.date),
    userId: event.actorId,
    projectId: snapshot.projectId,
    ...snapshot.body,
    text: event.text ?? null,
    ...(event.type === 'PULL_REQUEST' && event.reviewerId !== undefined && { reviewerId: event.reviewerId }),
    ...(event.type === 'PULL_REQUEST' && event.assigneeId !== undefined && { assigneeId: event.assigneeId }),
  };
  const opened = event.type === 'PULL_REQUEST' && event.action === 'OPENED';
  const stored: StoredEvent = {
    body: payload,
    watcherIds: await watchersNow(db, event),
    reviewerIds: opened ? await pendingReviewerIds(db, event.requestId) : [],
    assigneeIds: opened ? await assigneeIds(db, event.requestId) : [],
    fieldUsers: event.type === 'ISSUE' ? (event.fieldUsers ?? []) : [],
  };
  await db
    .insertInto('outboxEvents')
    .values({
      type: event.type,
      action: snapshot.action,
      projectId: snapshot.projectId,
      actorId: event.actorId,
      date: event.date,
      payload: JSON.stringify(stored),
      expandedDate: null,
      leaseOwner: null,
      leaseExpires: null,
    })
    .execute();
  await announce(db, OUTBOX_TOPIC);
}

/**
 * The stored form of an event (`outbox_events.payload`): the webhook body, the users watching
 * the pull request or issue when the event happened and, for an opened pull request, its
 * requested reviewers and its assignees, and the users an issue event put in user fields (mail
 * recipients are decided by the state then, not by the state when the worker gets to it).
 */
export interface StoredEvent {
  body: Record<string, unknown>;
  watcherIds: number[];
  reviewerIds: number[];
  /** Absent in events stored before assignees were recorded: none. */
  assigneeIds?: number[];
  /** Absent in events stored before user fields were recorded: none. */
  fieldUsers?: FieldUser[];
}

async function watchersNow(db: Db, event: Activity): Promise<number[]> {
  if (event.type === 'PULL_REQUEST') return pullRequestWatcherIds(db, event.requestId);
  if (event.type === 'ISSUE') return issueWatcherIds(db, event.issueId);
  return [];
}

interface Snapshot {
  typeName: string;
  action: string;
  projectId: number;
  body: Record<string, unknown>;
}

async function snapshotOf(db: Db, event: Activity): Promise<Snapshot | null> {
  switch (event.type) {
    case 'PULL_REQUEST': {
      const row = await findPullRequestRow(db, event.requestId);
      if (!row) return null;
      return {
        typeName: TYPE_NAMES[`PULL_REQUEST:${event.action}`],
        action: event.action,
        projectId: row.targetProjectId,
        body: { pullRequest: toWirePullRequest(row) },
      };
    }
    case 'ISSUE': {
      const row = await findIssueRow(db, event.issueId);
      if (!row) return null;
      return {
        typeName: TYPE_NAMES[`ISSUE:${event.action}`],
        action: event.action,
        projectId: row.projectId,
        body: { issue: toWireIssue(row, stateOrdinal(row.state)) },
      };
    }
    case 'CODE_COMMENT': {
      const row = await findCodeCommentRow(db, event.commentId);
      if (!row) return null;
      return { typeName: TYPE_NAMES['CODE_COMMENT:CREATED'], action: event.action, projectId: row.projectId, body: { codeComment: toWireCodeComment(row) } };
    }
    case 'BUILD': {
      const row = await findBuildRow(db, event.buildId);
      if (!row) return null;
      return { typeName: 'BuildEvent', action: row.status, projectId: row.projectId, body: { build: toWireBuild(row) } };
    }
    case 'CODE_PUSH':
      return {
        typeName: 'RefUpdated',
        action: 'UPDATED',
        projectId: event.projectId,
        body: { refName: event.refName, oldCommitId: event.oldCommitId, newCommitId: event.newCommitId },
      };
  }
}
