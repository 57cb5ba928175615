/**
 * One push of a push mirror (docs/compatibility.md#repository-mirrors): the remote's branches and
 * tags become the project's, as `git push --mirror` makes them but for `refs/heads/*` and
 * `refs/tags/*` only — forced, and the ones the project no longer has deleted on the remote.
 * A project without any branch or tag pushes nothing (it never empties a remote).
 */
import { pushMirror, type RemoteConnection } from '../../git/remotes.js';
import { listRefs } from '../../git/repository.js';
import type { Context } from '../context.js';

/** A push the remote refused, in part or whole: the refused refs and the remote's reasons. */
export class MirrorPushRefused extends Error {}

/**
 * Pushes a project's branches and tags to a push mirror's remote.
 *
 * @throws MirrorPushRefused when the remote refused some refs (`refs/heads/x: [remote rejected] (…)`).
 * @throws GitError when git cannot reach the remote or authenticate.
 */
export async function pushToMirror(ctx: Context, mirror: { projectId: number }, connection: RemoteConnection, signal: AbortSignal): Promise<void> {
  const repo = ctx.repoPath(mirror.projectId);
  if ((await listRefs(repo, 'refs/heads/')).size === 0 && (await listRefs(repo, 'refs/tags/')).size === 0) return;
  const outcome = await pushMirror(repo, connection, signal);
  if (outcome.ok) return;
  if (outcome.rejected.length > 0) throw new MirrorPushRefused(`The remote refused: ${outcome.rejected.join('; ')}`);
  throw new MirrorPushRefused(outcome.stderr.trim() || 'git push failed');
}
