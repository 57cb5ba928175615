import type { Db } from '../../db/database.js';

/** Change data of reference/pulls.md §5: `@type` first, then the type's own fields. */
export type PullRequestChangeData =
  | { '@type': 'PullRequestApproveData' }
  | { '@type': 'PullRequestRequestedForChangesData' }
  | { '@type': 'PullRequestDiscardData' }
  | { '@type': 'PullRequestReopenData' }
  | { '@type': 'PullRequestMergeData'; reason: string | null }
  | { '@type': 'PullRequestTitleChangeData'; oldTitle: string; newTitle: string }
  | { '@type': 'PullRequestDescriptionChangeData'; oldDescription: string | null; newDescription: string | null }
  | { '@type': 'PullRequestMergeStrategyChangeData'; oldStrategy: string; newStrategy: string }
  | { '@type': 'PullRequestSourceBranchDeleteData' }
  | { '@type': 'PullRequestSourceBranchRestoreData' };

/** Activity text of a change, or null for minor changes (reference/pulls.md §2 lastActivity). */
export function activityOf(data: PullRequestChangeData): string | null {
  switch (data['@type']) {
    case 'PullRequestApproveData': return 'approved';
    case 'PullRequestRequestedForChangesData': return 'requested for changes';
    case 'PullRequestDiscardData': return 'discarded';
    case 'PullRequestReopenData': return 'reopened';
    case 'PullRequestMergeData': return data.reason ?? 'merged';
    case 'PullRequestTitleChangeData': return 'changed title';
    case 'PullRequestMergeStrategyChangeData': return 'changed merge strategy';
    default: return null;
  }
}

/**
 * Records a change row and, for non-minor changes, the request's last activity
 * (reference/pulls.md §2, §5). Runs inside the caller's transaction.
 */
export async function recordChange(
  db: Db,
  requestId: number,
  userId: number | null,
  date: number,
  data: PullRequestChangeData,
): Promise<void> {
  await db.insertInto('pullRequestChanges').values({ requestId, userId, date, data: JSON.stringify(data) }).execute();
  const activity = activityOf(data);
  if (activity !== null) {
    await db
      .updateTable('pullRequests')
      .set({ lastActivityUserId: userId, lastActivityDate: date, lastActivityDescription: activity })
      .where('id', '=', requestId)
      .execute();
  }
}
