/**
 * Which project references which object of the LFS store (table `lfs_objects`,
 * docs/compatibility.md#git-lfs). A project reads the objects it references and those of the
 * projects it was forked from (so a fork shares its origin's objects without a copy); deleting
 * projects hands their references to their surviving forks, then removes the files no project
 * references any more.
 */
import type { Db } from '../../db/database.js';
import type { Config } from '../../config.js';
import type { Context } from '../context.js';
import { directForkIds, forkAncestorIds, loadProjectWith } from '../projects/index.js';
import { removeObject, storedSize } from './store.js';

/**
 * The stored objects among `oids` that `projectId` may read (its own references and its fork
 * ancestors'), with their sizes as stored (a referenced object whose file is gone is left out,
 * so it can be uploaded again).
 */
export async function readableObjects(ctx: Pick<Context, 'db' | 'config'>, projectId: number, oids: readonly string[]): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  if (oids.length === 0) return found;
  const projects = await forkAncestorIds(ctx.db, projectId);
  for (let i = 0; i < oids.length; i += 500) {
    const rows = await ctx.db
      .selectFrom('lfsObjects')
      .select('oid')
      .distinct()
      .where('projectId', 'in', projects)
      .where('oid', 'in', oids.slice(i, i + 500))
      .execute();
    for (const { oid } of rows) {
      const size = await storedSize(ctx.config, oid);
      if (size !== null) found.set(oid, size);
    }
  }
  return found;
}

/** Records that `projectId` references object `oid` of `size` bytes (idempotent). */
export async function referenceObject(db: Db, projectId: number, oid: string, size: number, now: number): Promise<void> {
  await db
    .insertInto('lfsObjects')
    .values({ projectId, oid, size, createDate: now })
    .onConflict((oc) => oc.columns(['projectId', 'oid']).doNothing())
    .execute();
}

/** A project's LFS usage: objects it references and their total size in bytes. */
export interface LfsUsage {
  objects: number;
  bytes: number;
}

/**
 * The LFS usage of a project (who may see the project may see it): the objects it references
 * and their total size — shared objects count in full for every project referencing them.
 *
 * @throws NotFound/Unauthorized for a project the caller cannot see.
 */
export async function lfsUsage(ctx: Context, projectId: number): Promise<LfsUsage> {
  await loadProjectWith(ctx, projectId, 'access');
  const row = await ctx.db
    .selectFrom('lfsObjects')
    .select((eb) => [eb.fn.countAll().as('objects'), eb.fn.sum('size').as('bytes')])
    .where('projectId', '=', projectId)
    .executeTakeFirst();
  return { objects: Number(row?.objects ?? 0), bytes: Number(row?.bytes ?? 0) };
}

/**
 * Inside the transaction deleting `projectIds`: each surviving project forked from one of them
 * takes over the references that project could read (its own and its fork ancestors'), so the
 * fork keeps its objects when its origin goes; the deleted projects' references go; once the
 * deletion committed (`afterCommit`), the files of objects no project references any more are
 * removed.
 */
export async function onProjectsDeleting(
  config: Pick<Config, 'dataDir' | 'objectStore'>,
  event: { db: Db; projectIds: number[]; date: number; afterCommit: (() => Promise<void>)[] },
): Promise<void> {
  const { db, projectIds } = event;
  const deleted = new Set(projectIds);
  for (const projectId of projectIds) {
    const heirs = (await directForkIds(db, projectId)).filter((id) => !deleted.has(id));
    if (heirs.length === 0) continue;
    const sources = await forkAncestorIds(db, projectId);
    const objects = await db.selectFrom('lfsObjects').select(['oid', 'size']).distinct().where('projectId', 'in', sources).execute();
    for (const heir of heirs) {
      for (const object of objects) await referenceObject(db, heir, object.oid, object.size, event.date);
    }
  }
  const oids = (await db.selectFrom('lfsObjects').select('oid').distinct().where('projectId', 'in', projectIds).execute()).map((r) => r.oid);
  await db.deleteFrom('lfsObjects').where('projectId', 'in', projectIds).execute();
  const orphans: string[] = [];
  for (let i = 0; i < oids.length; i += 500) {
    const chunk = oids.slice(i, i + 500);
    const kept = new Set((await db.selectFrom('lfsObjects').select('oid').distinct().where('oid', 'in', chunk).execute()).map((r) => r.oid));
    orphans.push(...chunk.filter((oid) => !kept.has(oid)));
  }
  // an upload of the same object racing this leaves a reference without a file: reads treat it
  // as missing (readableObjects), so the client uploads it again
  if (orphans.length > 0) event.afterCommit.push(async () => Promise.all(orphans.map((oid) => removeObject(config, oid))).then(() => undefined));
}
