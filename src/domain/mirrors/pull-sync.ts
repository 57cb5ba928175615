/**
 * One sync of a pull mirror (docs/compatibility.md#repository-mirrors): the project's branches
 * and tags become the remote's — new ones created, moved ones moved (also when forced), ones the
 * remote no longer has deleted — through the ref-change journal, so builds, pull requests,
 * webhooks and push mirrors react exactly as to a push. Only `refs/heads/*` and `refs/tags/*`
 * are mirrored: every other namespace (`refs/pulls/*`, …) is the server's own. HEAD follows the
 * remote's default branch.
 */
import { deleteRefsUnder, fetchRemoteRefs, listRemoteRefs, type RemoteConnection } from '../../git/remotes.js';
import { getDefaultBranch, listRefs, pickDefaultBranch, setDefaultBranch, updateRefs } from '../../git/repository.js';
import type { Context } from '../context.js';
import type { RefChange } from '../events.js';
import { journaledRefChange } from '../journal/index.js';

/** A remote that lists no branch and no tag while the project has some: never a reason to delete them all. */
export class EmptyRemote extends Error {}

/** Ref changes written to the journal and applied in one git transaction, at most. */
const CHUNK = 200;

/** The namespace a pull mirror's sync fetches into, removed when the sync ends: `refs/mirror-staging/<mirror id>/`. */
export function stagingPrefix(mirrorId: number): string {
  return `refs/mirror-staging/${mirrorId}/`;
}

/** The branches and tags of a repository, by full name. */
async function branchesAndTags(repo: string): Promise<Map<string, string>> {
  return new Map([...(await listRefs(repo, 'refs/heads/')), ...(await listRefs(repo, 'refs/tags/'))]);
}

function sameRefs(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  return a.size === b.size && [...a].every(([ref, hash]) => b.get(ref) === hash);
}

/** The changes turning `local` into `remote`: deletions first (a deleted `a` makes room for a new `a/b`), then creations and moves. */
function changesBetween(local: ReadonlyMap<string, string>, remote: ReadonlyMap<string, string>): RefChange[] {
  const deletions = [...local].filter(([ref]) => !remote.has(ref)).map(([ref, hash]) => ({ ref, oldHash: hash, newHash: null }));
  const moves = [...remote].filter(([ref, hash]) => local.get(ref) !== hash).map(([ref, hash]) => ({ ref, oldHash: local.get(ref) ?? null, newHash: hash }));
  return [...deletions, ...moves];
}

/**
 * Applies ref changes through the journal, {@link CHUNK} at a time, each chunk one
 * compare-and-swap transaction of git (a ref someone else moved fails the chunk: nothing of it
 * moves, and the sync fails to be retried). The journal entries carry no user: the system made them.
 */
async function applyChanges(ctx: Context, projectId: number, changes: readonly RefChange[]): Promise<void> {
  const repo = ctx.repoPath(projectId);
  const deletions = changes.filter((c) => c.newHash === null);
  const others = changes.filter((c) => c.newHash !== null);
  for (const group of [deletions, others]) {
    for (let i = 0; i < group.length; i += CHUNK) {
      const chunk = group.slice(i, i + CHUNK);
      await journaledRefChange(ctx, projectId, chunk, { userId: null }, () =>
        updateRefs(
          repo,
          chunk.map((c) => ({ ref: c.ref, newHash: c.newHash, expectedOld: c.oldHash })),
        ),
      );
    }
  }
}

/** Points HEAD at the remote's default branch when the project has it, else keeps or picks one. */
async function followRemoteHead(repo: string, remoteHead: string | null): Promise<void> {
  const current = await getDefaultBranch(repo);
  const wanted = remoteHead?.slice('refs/heads/'.length) ?? null;
  const branches = [...(await listRefs(repo, 'refs/heads/')).keys()].map((ref) => ref.slice('refs/heads/'.length));
  if (wanted !== null && branches.includes(wanted)) {
    if (wanted !== current) await setDefaultBranch(repo, wanted);
    return;
  }
  const fallback = current === null ? pickDefaultBranch(branches) : null;
  if (fallback !== null) await setDefaultBranch(repo, fallback);
}

/**
 * Syncs a pull mirror's project with its remote: lists the remote's branches and tags (nothing
 * more happens when they equal the project's; a remote with none while the project has some is
 * refused, {@link EmptyRemote}: an empty remote never empties a project), fetches them into a staging namespace of the
 * repository (`refs/mirror-staging/<mirror id>/`, removed again whatever happens), applies the
 * differences through the journal and makes HEAD follow the remote's.
 *
 * @throws GitError when git cannot reach or read the remote, or a ref moved meanwhile; EmptyRemote.
 */
export async function syncPullMirror(
  ctx: Context,
  mirror: { id: number; projectId: number },
  connection: RemoteConnection,
  signal: AbortSignal,
): Promise<void> {
  const repo = ctx.repoPath(mirror.projectId);
  const remote = await listRemoteRefs(connection, signal);
  const local = await branchesAndTags(repo);
  if (remote.refs.size === 0 && local.size > 0)
    throw new EmptyRemote('The remote has no branches or tags: the mirror keeps its own rather than delete them all');
  if (!sameRefs(local, remote.refs)) {
    const staging = stagingPrefix(mirror.id);
    await deleteRefsUnder(repo, staging);
    try {
      await fetchRemoteRefs(repo, connection, staging, signal);
      const fetched = new Map([...(await listRefs(repo, staging))].map(([ref, hash]) => [`refs/${ref.slice(staging.length)}`, hash]));
      await applyChanges(ctx, mirror.projectId, changesBetween(local, fetched));
    } finally {
      await deleteRefsUnder(repo, staging);
    }
  }
  await followRemoteHead(repo, remote.head);
}
