/**
 * The Git LFS part of a build's checkout (`!CheckoutStep withLfs: true`,
 * docs/compatibility.md#git-lfs), wherever the objects come from: the server's store
 * (src/domain/lfs/checkout.ts) or the server over HTTP (a build agent, src/agent/checkout.ts).
 * The checkout is the server's (or agent's) own staging directory (src/ci/job-directory.ts rule
 * 3), but its tree came from the repository, so each file's directory is resolved without
 * following links and the content goes to a new file renamed over the pointer.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { PointerFile } from '../git/lfs-pointers.js';
import { resolveInside } from './job-directory.js';

/**
 * Replaces each pointer file of `files` in the checkout at `targetDir` by the object it names,
 * opened by `open` (a stream the function consumes, destroyed on failure). A file whose
 * directory is gone from the tree is skipped.
 *
 * @returns the bytes written.
 * @throws what `open` or the writes throw (the checkout fails).
 */
export async function placeLfsObjects(targetDir: string, files: readonly PointerFile[], open: (file: PointerFile) => Promise<Readable>): Promise<number> {
  let bytes = 0;
  for (const file of files) {
    const parent = path.posix.dirname(file.path);
    const dir = await resolveInside(targetDir, parent === '.' ? '' : parent, 'Git LFS file');
    if (!dir.exists) continue;
    const target = path.join(dir.path, path.posix.basename(file.path));
    await writeBeside(await open(file), target, file.mode === '100755' ? 0o755 : 0o644);
    bytes += file.size;
  }
  return bytes;
}

/** Copies `source` to a new file beside `target`, then renames it over `target` (never following a link there). */
async function writeBeside(source: Readable, target: string, mode: number): Promise<void> {
  const tmp = path.join(path.dirname(target), `.gitloom-lfs-${randomUUID()}`);
  try {
    // a new file (`wx`: never an existing one, never through a link)
    await pipeline(source, createWriteStream(tmp, { flags: 'wx', mode }));
    await rename(tmp, target);
  } catch (error) {
    source.destroy();
    await rm(tmp, { force: true });
    throw error;
  }
}
