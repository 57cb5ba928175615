import type { Transaction } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database } from '../../db/schema.js';

/**
 * The fork root of a project: follow `forkedFromId` to the top. Pull requests, issues and builds
 * of a fork family share one number scope (docs/compatibility.md#pull-requests-opening step 6).
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
 * One upsert (`INSERT … ON CONFLICT DO UPDATE … RETURNING`): concurrent first numbers of a
 * scope queue on the row instead of colliding on its key, on SQLite and PostgreSQL alike.
 */
export async function takeNextNumber(tx: Transaction<Database>, scopeId: number, kind: string): Promise<number> {
  const { nextNumber } = await tx
    .insertInto('numberSequences')
    .values({ scopeId, kind, nextNumber: 2 })
    .onConflict((oc) => oc.columns(['scopeId', 'kind']).doUpdateSet((eb) => ({ nextNumber: eb('numberSequences.nextNumber', '+', 1) })))
    .returning('nextNumber')
    .executeTakeFirstOrThrow();
  return nextNumber - 1;
}
