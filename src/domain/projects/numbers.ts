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
 * A project and the projects it was forked from, nearest first (`[id, parent, grandparent, …]`,
 * following `forkedFromId`; at most 100, and a cycle stops the walk). Git LFS lets a fork read
 * the objects of these (docs/compatibility.md#git-lfs).
 */
export async function forkAncestorIds(db: Db, projectId: number): Promise<number[]> {
  const ids = [projectId];
  for (let depth = 0; depth < 100; depth++) {
    const row = await db
      .selectFrom('projects')
      .select('forkedFromId')
      .where('id', '=', ids[ids.length - 1])
      .executeTakeFirst();
    if (!row?.forkedFromId || ids.includes(row.forkedFromId)) break;
    ids.push(row.forkedFromId);
  }
  return ids;
}

/** The ids of the projects forked directly from `projectId` (no permission check). */
export async function directForkIds(db: Db, projectId: number): Promise<number[]> {
  return (await db.selectFrom('projects').select('id').where('forkedFromId', '=', projectId).execute()).map((r) => r.id);
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
