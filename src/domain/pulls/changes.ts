import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { insertMissing } from '../entities.js';
import { type NumberInProject, rowsAtPlaces } from '../issues/index.js';

/** Change data of docs/compatibility.md#pull-requests-sub-entities: `@type` first, then the type's own fields. */
export type PullRequestChangeData =
  | { '@type': 'PullRequestApproveData' }
  | { '@type': 'PullRequestRequestedForChangesData' }
  | { '@type': 'PullRequestDiscardData' }
  | { '@type': 'PullRequestReopenData' }
  | { '@type': 'PullRequestMergeData'; reason: string | null }
  | { '@type': 'PullRequestTitleChangeData'; oldTitle: string; newTitle: string }
  | { '@type': 'PullRequestDescriptionChangeData'; oldDescription: string | null; newDescription: string | null }
  | { '@type': 'PullRequestMergeStrategyChangeData'; oldStrategy: string; newStrategy: string }
  | { '@type': 'PullRequestTargetBranchChangeData'; oldBranch: string; newBranch: string }
  | { '@type': 'PullRequestSourceBranchDeleteData' }
  | { '@type': 'PullRequestSourceBranchRestoreData' }
  | { '@type': 'PullRequestReferencedFromIssueData'; issueId: number }
  | { '@type': 'PullRequestReferencedFromPullRequestData'; requestId: number }
  | { '@type': 'PullRequestReferencedFromCommitData'; projectId: number; commitHash: string }
  | { '@type': 'PullRequestReferencedFromCodeCommentData'; commentId: number };

/** Activity text of a change, or null for minor changes (docs/compatibility.md#pull-requests-json lastActivity, docs/compatibility.md#pull-requests-sub-entities). */
export function activityOf(data: PullRequestChangeData): string | null {
  switch (data['@type']) {
    case 'PullRequestApproveData':
      return 'approved';
    case 'PullRequestRequestedForChangesData':
      return 'requested for changes';
    case 'PullRequestDiscardData':
      return 'discarded';
    case 'PullRequestReopenData':
      return 'reopened';
    case 'PullRequestMergeData':
      return data.reason ?? 'merged';
    case 'PullRequestTitleChangeData':
      return 'changed title';
    case 'PullRequestMergeStrategyChangeData':
      return 'changed merge strategy';
    case 'PullRequestTargetBranchChangeData':
      return 'changed target branch';
    default:
      return null;
  }
}

/**
 * Auto-watch (docs/compatibility.md#pull-requests-sub-entities "Auto-watch"): each user without a watch row on the request
 * gets `watching=true`; existing rows (explicit opt-outs included) are kept. Ids ≤ 0 (anonymous,
 * system, unknown) are skipped. Runs inside the caller's transaction.
 */
export async function autoWatch(db: Db, requestId: number, userIds: readonly (number | null)[]): Promise<void> {
  const ids = [...new Set(userIds.filter((id): id is number => id !== null && id > 0))];
  await insertMissing(
    db,
    'pullRequestWatches',
    ids.map((userId) => ({ requestId, userId, watching: 1 })),
    ['requestId', 'userId'],
  );
}

/**
 * Records a change row and, for non-minor changes, the request's last activity; the acting user
 * (when a real user) starts watching (docs/compatibility.md#pull-requests-json, docs/compatibility.md#pull-requests-sub-entities). Runs inside the caller's
 * transaction.
 */
export async function recordChange(db: Db, requestId: number, userId: number | null, date: number, data: PullRequestChangeData): Promise<void> {
  await db
    .insertInto('pullRequestChanges')
    .values({ requestId, userId, date, data: JSON.stringify(data) })
    .execute();
  const activity = activityOf(data);
  if (activity !== null) {
    await db
      .updateTable('pullRequests')
      .set({ lastActivityUserId: userId, lastActivityDate: date, lastActivityDescription: activity })
      .where('id', '=', requestId)
      .execute();
  }
  await autoWatch(db, requestId, [userId]);
}

/**
 * Stores the note of reopen / discard / delete-source / restore-source as a comment of the acting
 * user dated like the change, and increments `commentCount` (docs/compatibility.md#pull-requests-endpoints "Note
 * semantics"). Blank notes and non-user actors store nothing.
 */
export async function recordNote(db: Db, requestId: number, userId: number | null, date: number, note: string | null | undefined): Promise<void> {
  if (!note || !note.trim() || userId === null || userId <= 0) return;
  await db.insertInto('pullRequestComments').values({ requestId, userId, content: note, date }).execute();
  await db
    .updateTable('pullRequests')
    .set((eb) => ({ commentCount: eb('commentCount', '+', 1) }))
    .where('id', '=', requestId)
    .execute();
}

/**
 * Prefix of the change data that the partial unique index of migration 0008 covers: one
 * "referenced from" change per (referenced request, referencing entity). The text must stay
 * identical to the index predicate for the `on conflict` clause to find it.
 */
const REFERENCE_PREDICATE = sql<boolean>`data like '{"@type":"PullRequestReferencedFrom%'`;

/** Most change rows inserted by one statement. */
const ROWS_PER_INSERT = 500;

/**
 * Records that an entity references the pull requests at `places` (by target project; unknown
 * places are ignored), except request `exceptRequestId` (an entity does not reference itself): one
 * minor change `data` (a PullRequestReferencedFrom…Data, docs/compatibility.md#pull-requests-sub-entities) per
 * request, however often the reference is repeated or re-saved. Answers the issues area's
 * question (src/domain/issues/referencing-work.ts); runs in the caller's transaction `db`.
 */
export async function recordPullRequestReferences(
  db: Db,
  places: readonly NumberInProject[],
  exceptRequestId: number | null,
  userId: number | null,
  date: number,
  data: PullRequestChangeData,
): Promise<void> {
  if (places.length === 0) return;
  const found = await rowsAtPlaces(places, (projectId, numbers) =>
    db.selectFrom('pullRequests').select(['id', 'number']).where('targetProjectId', '=', projectId).where('number', 'in', numbers).execute(),
  );
  const requestIds = [...found.values()]
    .map((row) => row.id)
    .sort((a, b) => a - b)
    .filter((id) => id !== exceptRequestId);
  const text = JSON.stringify(data);
  // in batches: a text may reference thousands of requests, more rows than one statement takes
  for (let i = 0; i < requestIds.length; i += ROWS_PER_INSERT) {
    await db
      .insertInto('pullRequestChanges')
      .values(requestIds.slice(i, i + ROWS_PER_INSERT).map((requestId) => ({ requestId, userId, date, data: text })))
      .onConflict((oc) => oc.columns(['requestId', 'data']).where(REFERENCE_PREDICATE).doNothing())
      .execute();
  }
}
