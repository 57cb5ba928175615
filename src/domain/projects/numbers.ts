import type { Transaction } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database } from '../../db/schema.js';

/**
 * The fork root of a project: follow `forkedFromId` to the top. Pull requests, issues and builds
 * of a fork family share one number scope (reference/pulls.md §1.1 step 11).
 */
export async function forkRootId(db: Db, projectId: number): Promise<number> {
  let id = projectId;
  for (let depth = 0; depth < 1000; depth++) {
    const row = await db.selectFrom('projects').select('forkedFromId').where('id', '=', id).executeTakeFirst();
    if (!row?.forkedFromId) return id;
    id = row.forkedFromId;
  }
  return id;
}

/**
 * Takes the next number of a kind (`pull-request`, `issue`, `build`) in a scope, inside the
 * caller's transaction so a rolled-back create gives its number back. Numbers start at 1.
 */
export async function takeNextNumber(tx: Transaction<Database>, scopeId: number, kind: string): Promise<number> {
  const updated = await tx
    .updateTable('numberSequences')
    .set((eb) => ({ nextNumber: eb('nextNumber', '+', 1) }))
    .where('scopeId', '=', scopeId)
    .where('kind', '=', kind)
    .returning('nextNumber')
    .executeTakeFirst();
  if (updated) return updated.nextNumber - 1;
  await tx.insertInto('numberSequences').values({ scopeId, kind, nextNumber: 2 }).execute();
  return 1;
}
