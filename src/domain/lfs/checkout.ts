import { placeLfsObjects } from '../../ci/lfs-checkout.js';
import { pointerFilesAt } from '../../git/lfs-pointers.js';
import type { Context } from '../context.js';
import { formatCount } from './format.js';
import { readableObjects } from './objects.js';
import { NotFound } from '../../errors.js';
import { openObject, type OpenedObject } from './store.js';

/**
 * The Git LFS part of a build's checkout (`!CheckoutStep withLfs: true`,
 * docs/compatibility.md#git-lfs): each pointer file of `commit` in the fresh checkout at
 * `targetDir` is replaced by the object it names, copied from the store — no HTTP, no
 * credentials — with the care of {@link placeLfsObjects}.
 *
 * @param log writes a line to the build log.
 * @throws Error naming the objects the server does not hold (the checkout fails, as `git lfs pull` would).
 */
export async function checkoutLfsObjects(
  ctx: Pick<Context, 'db' | 'config' | 'repoPath'>,
  projectId: number,
  commit: string,
  targetDir: string,
  log: (line: string) => void,
): Promise<void> {
  const files = await pointerFilesAt(ctx.repoPath(projectId), commit);
  if (files.length === 0) return;
  const known = await readableObjects(ctx, projectId, [...new Set(files.map((f) => f.oid))]);
  const missing = files.filter((f) => known.get(f.oid) !== f.size);
  if (missing.length > 0) {
    const named = missing.slice(0, 5).map((f) => `${f.path} (${f.oid})`);
    throw new Error(`Git LFS objects missing on the server: ${named.join(', ')}${missing.length > 5 ? ', …' : ''}`);
  }
  const bytes = await placeLfsObjects(targetDir, files, async (file) => {
    const opened = await openObject(ctx.config, file.oid);
    if (!opened) throw new Error(`Git LFS object ${file.oid} vanished from the store`);
    return opened.stream;
  });
  log(`Fetched ${formatCount(files.length, 'Git LFS file', 'Git LFS files')} (${bytes} bytes) from the server's store`);
}

/**
 * An LFS object of a project's store, for a build's checkout on an agent
 * (docs/compatibility.md#build-agents: `GET /~agent/job/lfs/{oid}`): only an object the project
 * (or a fork ancestor it shares objects with) holds.
 *
 * @throws NotFound when the project holds no such object.
 */
export async function openCheckoutObject(ctx: Pick<Context, 'db' | 'config'>, projectId: number, oid: string): Promise<OpenedObject> {
  const known = await readableObjects(ctx, projectId, [oid]);
  const opened = known.has(oid) ? await openObject(ctx.config, oid) : null;
  if (!opened) throw new NotFound(`Git LFS object not found: ${oid}`);
  return opened;
}
