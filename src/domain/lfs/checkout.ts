import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { resolveInside } from '../../ci/job-directory.js';
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
 * credentials. `targetDir` is the server's own staging directory (src/ci/job-directory.ts rule
 * 3), but the tree came from the repository, so each file's directory is resolved without
 * following links and the content goes to a new file renamed over the pointer.
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
  let bytes = 0;
  for (const file of files) {
    const dir = await resolveInside(targetDir, path.posix.dirname(file.path) === '.' ? '' : path.posix.dirname(file.path), 'Git LFS file');
    if (!dir.exists) continue;
    await writeObject(ctx.config, file.oid, path.join(dir.path, path.posix.basename(file.path)), file.mode === '100755' ? 0o755 : 0o644);
    bytes += file.size;
  }
  log(`Fetched ${formatCount(files.length, 'Git LFS file', 'Git LFS files')} (${bytes} bytes) from the server's store`);
}

/** Copies object `oid` to a new file beside `target`, then renames it over `target` (never following a link there). */
async function writeObject(config: Context['config'], oid: string, target: string, mode: number): Promise<void> {
  const opened = await openObject(config, oid);
  if (!opened) throw new Error(`Git LFS object ${oid} vanished from the store`);
  const tmp = path.join(path.dirname(target), `.gitloom-lfs-${randomUUID()}`);
  try {
    // a new file (`wx`: never an existing one, never through a link)
    await pipeline(opened.stream, createWriteStream(tmp, { flags: 'wx', mode }));
    await rename(tmp, target);
  } catch (error) {
    opened.stream.destroy();
    await rm(tmp, { force: true });
    throw error;
  }
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
