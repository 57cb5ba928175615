/**
 * Every pull request with its latest update, as the consistency check compares them with git (docs/backup.md "Consistency").
 */
import type { Db } from '../../db/database.js';

/**
 * Each pull request that has an update, in id order, with what the check needs: number, status,
 * target and source (project and branch), check error, and its latest update's id and head commit.
 */
export async function pullRequestsWithLatestUpdate(db: Db) {
  return db
    .selectFrom('pullRequests')
    .innerJoin('pullRequestUpdates', 'pullRequestUpdates.requestId', 'pullRequests.id')
    .select([
      'pullRequests.id',
      'pullRequests.number',
      'pullRequests.status',
      'pullRequests.targetProjectId',
      'pullRequests.targetBranch',
      'pullRequests.sourceProjectId',
      'pullRequests.sourceBranch',
      'pullRequests.checkError',
      'pullRequestUpdates.id as updateId',
      'pullRequestUpdates.headCommitHash',
    ])
    .where('pullRequestUpdates.id', 'in', (eb) =>
      eb
        .selectFrom('pullRequestUpdates')
        .select((e) => e.fn.max('id').as('id'))
        .groupBy('requestId'),
    )
    .orderBy('pullRequests.id')
    .execute();
}
