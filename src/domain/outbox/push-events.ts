import type { Db } from '../../db/database.js';
import type { RefChange } from '../events.js';
import { enqueueEvent } from './events.js';

/**
 * Records one CODE_PUSH outbox event per moved ref (OneDev's RefUpdated: `refName`,
 * `oldCommitId`, `newCommitId`, null for a created or deleted ref), acting as `userId`.
 */
export async function enqueuePushEvents(db: Db, projectId: number, changes: readonly RefChange[], userId: number | null, date: number): Promise<void> {
  for (const change of changes) {
    await enqueueEvent(db, {
      type: 'CODE_PUSH',
      projectId,
      refName: change.ref,
      oldCommitId: change.oldHash,
      newCommitId: change.newHash,
      actorId: userId,
      date,
    });
  }
}
