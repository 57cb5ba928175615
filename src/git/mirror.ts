/**
 * Repository copies for backup and restore (docs/backup.md): a mirror taken by git itself (every
 * ref, HEAD and the objects they reach, consistent at one moment even while pushes continue),
 * optionally incremental over a previous mirror, and the way back into a freshly initialised
 * repository.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { gitDir, gitText, runGit, value } from './command.js';
import { initBareRepository } from './refs.js';

/**
 * Copies a bare repository to `dest` with `git clone --mirror` (all refs, including
 * `refs/pulls/*`, and HEAD; objects hard-linked where possible), then drops the `origin` remote
 * the clone records, so the copy names nothing of the source.
 *
 * @throws GitError when git fails.
 */
export async function mirrorRepository(source: string, dest: string): Promise<void> {
  await runGit(['clone', '--mirror', '--quiet', '--', value(source), value(dest)]);
  await runGit([gitDir(dest), 'config', '--remove-section', 'remote.origin']);
}

/**
 * Copies a bare repository to `dest` on top of `previous`, an earlier mirror of it: the earlier
 * mirror's object files (packs and loose objects, which git never changes once written) are
 * hard-linked (copied when `dest` is on another file system), its refs taken over, and then git
 * fetches every ref from `source` with pruning — only objects the earlier mirror lacks are
 * transferred (one new pack, or loose objects when few). HEAD follows the source's.
 *
 * @throws GitError when git fails; a file system error when `previous` cannot be read.
 */
export async function mirrorIncrementally(source: string, previous: string, dest: string): Promise<void> {
  await runGit(['init', '--bare', '--quiet', '--', value(dest)]);
  const objects = path.join(previous, 'objects');
  for (const dir of await fs.readdir(objects)) {
    if (!/^([0-9a-f]{2}|pack)$/.test(dir)) continue;
    await fs.mkdir(path.join(dest, 'objects', dir), { recursive: true });
    for (const file of await fs.readdir(path.join(objects, dir))) await linkOrCopy(path.join(objects, dir, file), path.join(dest, 'objects', dir, file));
  }
  const refs = await gitText([gitDir(previous), 'for-each-ref', '--format=create %(refname) %(objectname)']);
  await runGit([gitDir(dest), 'update-ref', '--stdin'], { input: refs });
  // no automatic gc: repacking would rewrite the linked objects into one new pack
  await runGit([gitDir(dest), 'fetch', '--quiet', '--prune', '--no-tags', '--no-auto-gc', '--', value(source), '+refs/*:refs/*']);
  await copyHead(source, dest);
}

async function linkOrCopy(from: string, to: string): Promise<void> {
  try {
    await fs.link(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    await fs.copyFile(from, to);
  }
}

/** Points `dest`'s HEAD where `source`'s symbolic HEAD points (a detached or missing HEAD is left). */
async function copyHead(source: string, dest: string): Promise<void> {
  const head = await runGit([gitDir(source), 'symbolic-ref', '-q', 'HEAD'], { okExitCodes: [0, 1] });
  if (head.exitCode === 0) await runGit([gitDir(dest), 'symbolic-ref', 'HEAD', value(head.stdout.toString('utf8').trim())]);
}

/**
 * Recreates a repository at `dest` from a mirror: initialised as Gitloom initialises every
 * repository (src/git/refs.ts), every ref of the mirror fetched, HEAD pointed where the
 * mirror's HEAD points.
 *
 * @throws GitError when git fails (for example `dest` already holds a repository with refs).
 */
export async function restoreRepository(mirror: string, dest: string): Promise<void> {
  await initBareRepository(dest);
  await runGit([gitDir(dest), 'fetch', '--quiet', '--no-tags', '--', value(mirror), '+refs/*:refs/*']);
  await copyHead(mirror, dest);
}
