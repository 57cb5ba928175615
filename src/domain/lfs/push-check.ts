import { quarantineEnv, type PushedRef } from '../../git/hooks.js';
import { pushedLfsPointers } from '../../git/lfs-pointers.js';
import { ZERO_HASH } from '../../git/names.js';
import type { Context } from '../context.js';
import { readableObjects } from './objects.js';

/** Unknown objects named in one refusal at most. */
const LISTED = 10;

/**
 * The pre-receive check of Git LFS (docs/compatibility.md#git-lfs): the pointer files a push adds
 * (blobs no existing ref reaches, read only when smaller than a pointer can be) must name objects
 * the project can read — uploaded to it, or to a project it was forked from. Returns the
 * refusals in git-lfs's own words (one line naming the unknown objects), empty when the push may
 * go on.
 *
 * @param quarantine the push's quarantine environment, as the hook forwarded it.
 */
export async function checkLfsPush(
  ctx: Pick<Context, 'db' | 'config' | 'repoPath'>,
  projectId: number,
  updates: readonly PushedRef[],
  quarantine: Record<string, unknown>,
): Promise<string[]> {
  const repo = ctx.repoPath(projectId);
  const heads = [...new Set(updates.filter((u) => u.newHash !== ZERO_HASH).map((u) => u.newHash))];
  const pointers = await pushedLfsPointers(repo, heads, quarantineEnv(repo, quarantine));
  if (pointers.length === 0) return [];
  const oids = [...new Set(pointers.map((p) => p.oid))];
  const known = await readableObjects(ctx, projectId, oids);
  const missing = oids.filter((oid) => !known.has(oid));
  if (missing.length === 0) return [];
  const named = missing.slice(0, LISTED).join(', ') + (missing.length > LISTED ? `, … (${missing.length - LISTED} more)` : '');
  return [
    `Your push referenced ${missing.length} unknown Git LFS object${missing.length === 1 ? '' : 's'}: ${named}. Try to push them with 'git lfs push --all'`,
  ];
}
