/**
 * The last commit of each entry of a directory for the tree views (files pages, project home):
 * one history walk per directory and commit (src/git/last-commits.ts), kept in the bounded cache
 * of object reads (src/domain/object-reads.ts) by commit and directory — a branch that has not moved is
 * answered from memory. A walk runs once however many pages ask for it at the same time, and
 * goes on to fill the cache when a page stops waiting for it; two walks run at once at most, and
 * one runs a minute at most (the entries found by then are its answer).
 */
import type { ProjectRow } from '../../db/schema.js';
import { lastCommitsOf, type LastCommit } from '../../git/last-commits.js';
import type { Context } from '../context.js';
import { readableRepository } from './browse.js';
import { objectRead } from '../object-reads.js';

export type { LastCommit };

/** Walks run at once, the others wait their turn: a crawler visiting many commits' trees must not take every core. */
const MAX_WALKS = 2;
let walking = 0;
const turns: (() => void)[] = [];

/** Runs `walk` when fewer than {@link MAX_WALKS} walks run, in order of arrival. */
async function inTurn<T>(walk: () => Promise<T>): Promise<T> {
  // a walk ending hands its turn to the next one waiting
  if (walking >= MAX_WALKS) await new Promise<void>((resolve) => turns.push(resolve));
  else walking++;
  try {
    return await walk();
  } finally {
    const next = turns.shift();
    if (next) next();
    else walking--;
  }
}

/**
 * The last commit of each entry of directory `dir` at commit `commitHash` (read code).
 *
 * @param names the directory's entry names (as listed at that commit).
 * @param waitMs how long to wait for a walk that is not in the cache (default: until it ends);
 *   past it the answer is null and the walk goes on, to answer the next request.
 * @returns entry name → last commit (entries the history does not name, a submodule never
 *   changed, are missing), or null after `waitMs`.
 * @throws Forbidden/Unauthorized without read code; BadRequest for a malformed commit or path;
 *   GitError when git fails.
 */
export async function lastCommitsAt(
  ctx: Context,
  project: ProjectRow,
  commitHash: string,
  dir: string,
  names: readonly string[],
  waitMs = Infinity,
): Promise<Map<string, LastCommit> | null> {
  const repo = await readableRepository(ctx, project);
  const walk = objectRead(
    repo,
    `last-commits:${dir}`,
    [commitHash],
    () => inTurn(() => lastCommitsOf(repo, commitHash, dir, names)),
    (found) => 64 + 192 * found.size,
  );
  if (waitMs === Infinity) return walk;
  // a walk nobody waits for any more must not fail unobserved
  walk.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), waitMs);
  });
  try {
    return await Promise.race([walk, late]);
  } finally {
    clearTimeout(timer);
  }
}
