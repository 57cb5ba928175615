/**
 * Repository copies for backup and restore: a mirror taken by git itself (every ref, HEAD and
 * the objects they reach, consistent at one moment even while pushes continue) and the way
 * back into a freshly initialised repository.
 */
import { gitDir, runGit, value } from './command.js';
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
 * Recreates a repository at `dest` from a mirror: initialised as Gitloom initialises every
 * repository (src/git/refs.ts), every ref of the mirror fetched, HEAD pointed where the
 * mirror's HEAD points.
 *
 * @throws GitError when git fails (for example `dest` already holds a repository with refs).
 */
export async function restoreRepository(mirror: string, dest: string): Promise<void> {
  await initBareRepository(dest);
  await runGit([gitDir(dest), 'fetch', '--quiet', '--no-tags', '--', value(mirror), '+refs/*:refs/*']);
  const head = await runGit([gitDir(mirror), 'symbolic-ref', '-q', 'HEAD'], { okExitCodes: [0, 1] });
  if (head.exitCode === 0) await runGit([gitDir(dest), 'symbolic-ref', 'HEAD', value(head.stdout.toString('utf8').trim())]);
}
