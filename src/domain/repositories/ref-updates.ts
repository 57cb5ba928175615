/**
 * The one way the repository API (and the web pages calling the same functions) moves a ref:
 * branch and tag protection as for a push, compare-and-swap, the default branch of a repository
 * that had none, then the push reactions (pull request updates, builds, fixed issues) through the
 * ref-change journal.
 */
import { Conflict } from '../../errors.js';
import { deleteRef, getDefaultBranch, setDefaultBranch, updateRef } from '../../git/repository.js';
import { ZERO_HASH } from '../../git/names.js';
import type { Db } from '../../db/database.js';
import type { Context } from '../context.js';
import { requireUser } from '../actor.js';
import { journaledRefChange } from '../journal/index.js';
import { assertNotPullMirror, checkPush } from '../projects/index.js';

/** One ref change: created (`oldHash` null), moved, or deleted (`newHash` null). */
export interface RefMove {
  /** Full ref name, `refs/heads/…` or `refs/tags/…`. */
  ref: string;
  /** The hash the ref must have now (compare-and-swap); null = it must not exist. */
  oldHash: string | null;
  /** The new object id; null deletes the ref. */
  newHash: string | null;
}

/**
 * Applies one ref change for the calling user as a push of it would be applied:
 * 1. the branch or tag protection of the project and its ancestors decides with the pre-receive
 *    check's rules and messages (`Can not create this branch`, `Can not delete this tag`,
 *    `Review required for this change. Please submit pull request instead`, commit message
 *    rules, …; docs/compatibility.md#projects-settings) — a refusal is 409 with that message;
 * 2. the ref moves by compare-and-swap from `oldHash` (409 `Ref <ref> has moved` when someone
 *    else moved it first);
 * 3. a created branch becomes the default branch of a repository that had none
 *    (docs/compatibility.md#projects-repository-and-default-branch);
 * 4. the change is written to the ref-change journal (src/domain/journal/ref-journal.ts), so the
 *    reactions of a push follow.
 * The caller has checked write-code permission. A pull-mirrored project refuses every change
 * (docs/compatibility.md#repository-mirrors). `confirm` runs in the transaction confirming the
 * journal rows (an audit row of the change, docs/audit-log.md#actions).
 *
 * @throws Unauthorized for an anonymous caller; Conflict (409) for a pull mirror, a protection
 *   refusal or a lost race.
 */
export async function moveRef(ctx: Context, projectId: number, move: RefMove, confirm?: (tx: Db) => Promise<void>): Promise<void> {
  const userId = requireUser(ctx.actor);
  const repo = ctx.repoPath(projectId);
  await assertNotPullMirror(ctx, projectId);
  const pushed = { ref: move.ref, oldHash: move.oldHash ?? ZERO_HASH, newHash: move.newHash ?? ZERO_HASH };
  const [refusal] = await checkPush(ctx, projectId, userId, [pushed], {});
  if (refusal !== undefined) {
    throw new Conflict(refusal.startsWith(`${move.ref}: `) ? refusal.slice(move.ref.length + 2) : refusal);
  }
  const change = { ref: move.ref, oldHash: move.oldHash, newHash: move.newHash };
  await journaledRefChange(
    ctx,
    projectId,
    [change],
    { userId },
    async () => {
      if (move.newHash === null) await deleteRef(repo, move.ref, move.oldHash ?? undefined);
      else await updateRef(repo, move.ref, move.newHash, move.oldHash);
      if (move.oldHash === null && move.ref.startsWith('refs/heads/') && (await getDefaultBranch(repo)) === null) {
        await setDefaultBranch(repo, move.ref.slice('refs/heads/'.length));
      }
    },
    confirm,
  );
}
