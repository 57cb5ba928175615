/**
 * The Git LFS file locking API (docs/compatibility.md#git-lfs; the specification's "File Locking
 * API"): `POST <base>/locks` creates, `GET <base>/locks` lists, `POST <base>/locks/verify` tells
 * the pusher's locks from others', `POST <base>/locks/:id/unlock` releases — another user's lock
 * only with `force` by a user who may manage the project.
 */
import type { LfsLockRow } from '../../db/schema.js';
import { BadRequest, Conflict, Forbidden, NotFound } from '../../errors.js';
import { isUniqueViolation } from '../unique.js';
import { loadProjectWith } from '../projects/index.js';
import { userNamesByIds } from '../users/index.js';
import type { LfsRepository } from './access.js';

/** A lock as the API shows it. */
export interface LfsLock {
  id: string;
  path: string;
  /** RFC 3339 date-time. */
  locked_at: string;
  owner: { name: string };
}

/** A create refused because the path is locked: 409 with the existing lock. */
export class LockExists extends Conflict {
  constructor(readonly lock: LfsLock) {
    super('already created lock');
  }
}

/** Longest lockable path, bytes. */
const MAX_PATH_BYTES = 4096;
/** Default and largest page of a lock list. */
const MAX_LIMIT = 100;

function checkPath(value: unknown): string {
  if (typeof value !== 'string' || value === '' || Buffer.byteLength(value) > MAX_PATH_BYTES || /[\0-\x1f]/.test(value)) {
    throw new BadRequest('path must be a repository path');
  }
  return value;
}

function refNameOf(ref: unknown): string | null {
  const name = (ref as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' && name.length > 0 && name.length <= 1024 ? name : null;
}

async function toLocks(repo: LfsRepository, rows: LfsLockRow[]): Promise<LfsLock[]> {
  const names = await userNamesByIds(repo.ctx.db, new Set(rows.map((r) => r.ownerId)));
  return rows.map((r) => ({ id: String(r.id), path: r.path, locked_at: new Date(r.lockedAt).toISOString(), owner: { name: names.get(r.ownerId) ?? '' } }));
}

/**
 * Locks `body.path` for the caller (write code).
 *
 * @throws BadRequest (no path), LockExists (the path is locked already).
 */
export async function createLock(repo: LfsRepository, body: { path?: unknown; ref?: unknown }): Promise<LfsLock> {
  const path = checkPath(body?.path);
  const { ctx } = repo;
  const values = { projectId: repo.projectId, path, ownerId: ctx.actor.userId, refName: refNameOf(body.ref), lockedAt: ctx.now() };
  try {
    const row = await ctx.db.insertInto('lfsLocks').values(values).returningAll().executeTakeFirstOrThrow();
    return (await toLocks(repo, [row]))[0];
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const existing = await ctx.db.selectFrom('lfsLocks').selectAll().where('projectId', '=', repo.projectId).where('path', '=', path).executeTakeFirst();
    if (!existing) throw error;
    throw new LockExists((await toLocks(repo, [existing]))[0]);
  }
}

/** Parses `cursor` (a lock id) and `limit` (1–100, default 100). */
function page(cursor: unknown, limit: unknown): { after: number; limit: number } {
  const after = cursor === undefined || cursor === '' ? 0 : Number(cursor);
  const size = limit === undefined || limit === '' ? MAX_LIMIT : Number(limit);
  if (!Number.isSafeInteger(after) || after < 0) throw new BadRequest('Invalid cursor');
  if (!Number.isSafeInteger(size) || size < 1) throw new BadRequest('Invalid limit');
  return { after, limit: Math.min(size, MAX_LIMIT) };
}

/** The rows after `after` (lock ids ascending) up to `limit`, and the next cursor. */
async function pageOf(
  repo: LfsRepository,
  filter: { path?: string; id?: number },
  after: number,
  limit: number,
): Promise<{ rows: LfsLockRow[]; next: string | undefined }> {
  let query = repo.ctx.db.selectFrom('lfsLocks').selectAll().where('projectId', '=', repo.projectId).where('id', '>', after);
  if (filter.path !== undefined) query = query.where('path', '=', filter.path);
  if (filter.id !== undefined) query = query.where('id', '=', filter.id);
  const rows = await query
    .orderBy('id')
    .limit(limit + 1)
    .execute();
  const more = rows.length > limit;
  return { rows: rows.slice(0, limit), next: more ? String(rows[limit - 1].id) : undefined };
}

/**
 * Lists the project's locks (read code), filtered by `path` and `id`, paged by `cursor`/`limit`.
 *
 * @throws BadRequest (bad cursor, limit or id).
 */
export async function listLocks(repo: LfsRepository, query: Record<string, unknown>): Promise<{ locks: LfsLock[]; next_cursor?: string }> {
  const { after, limit } = page(query.cursor, query.limit);
  const id = query.id === undefined || query.id === '' ? undefined : Number(query.id);
  if (id !== undefined && !Number.isSafeInteger(id)) return { locks: [] };
  const path = query.path === undefined || query.path === '' ? undefined : checkPath(query.path);
  const { rows, next } = await pageOf(repo, { path, id }, after, limit);
  return { locks: await toLocks(repo, rows), ...(next && { next_cursor: next }) };
}

/** The caller's locks and the others' (write code), paged as {@link listLocks}. */
export async function verifyLocks(
  repo: LfsRepository,
  body: { cursor?: unknown; limit?: unknown },
): Promise<{ ours: LfsLock[]; theirs: LfsLock[]; next_cursor?: string }> {
  const { after, limit } = page(body?.cursor, body?.limit);
  const { rows, next } = await pageOf(repo, {}, after, limit);
  const locks = await toLocks(repo, rows);
  const mine = (i: number) => rows[i].ownerId === repo.ctx.actor.userId;
  return { ours: locks.filter((_, i) => mine(i)), theirs: locks.filter((_, i) => !mine(i)), ...(next && { next_cursor: next }) };
}

/**
 * Releases lock `id` (write code): the caller's own, or anyone's with `force` when the caller
 * may manage the project.
 *
 * @throws NotFound (no such lock in the project), Forbidden (another user's lock without
 *   `force`, or without the manage privilege).
 */
export async function unlock(repo: LfsRepository, id: string, body: { force?: unknown }): Promise<LfsLock> {
  const { ctx } = repo;
  const lockId = /^\d{1,9}$/.test(id) ? Number(id) : -1;
  const row = await ctx.db.selectFrom('lfsLocks').selectAll().where('projectId', '=', repo.projectId).where('id', '=', lockId).executeTakeFirst();
  if (!row) throw new NotFound('Lock not found');
  if (row.ownerId !== ctx.actor.userId) {
    if (body?.force !== true) throw new Forbidden('The lock belongs to another user: unlock it with --force');
    const { permissions } = await loadProjectWith(ctx, repo.projectId);
    if (!permissions.manage) throw new Forbidden("Only a user who may manage the project can release another user's lock");
  }
  await ctx.db.deleteFrom('lfsLocks').where('id', '=', row.id).execute();
  return (await toLocks(repo, [row]))[0];
}
