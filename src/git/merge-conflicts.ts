/**
 * The details of a conflicted merge without a working tree, for resolving it: the conflicted
 * paths with their index stages and git's messages (`git merge-tree --write-tree -z --messages`),
 * the blobs of those stages (read by the caller, `readBlobs` of blob-batches.ts), and the tree of a resolution — the merged tree
 * with each conflicted path set to what was chosen (a temporary index: `read-tree`,
 * `update-index -z --index-info`, `write-tree`; docs/architecture.md#git-merge-conflicts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gitDir, gitText, runGit, value } from './command.js';
import { assertObjectId, ZERO_HASH } from './names.js';
import { assertRepositoryPath } from './trees.js';

/** One index stage of a conflicted path: its mode (`100644`, `100755`, `120000`, `160000`) and object id. */
export interface StageEntry {
  mode: string;
  oid: string;
}

/** A conflicted path and its stages: 1 the merge base, 2 the first merged commit, 3 the second; absent where the side has no such path. */
export interface ConflictedPath {
  path: string;
  base: StageEntry | null;
  ours: StageEntry | null;
  theirs: StageEntry | null;
}

/** One of git's messages about the merge: the paths it concerns, its kind (`CONFLICT (rename/delete)`, `Auto-merging`, …) and its text. */
export interface MergeMessage {
  paths: string[];
  type: string;
  text: string;
}

/** What {@link mergeConflictDetails} reports. */
export interface MergeConflictDetails {
  /** 40-hex id of the merged tree (conflicted text files hold conflict markers). */
  tree: string;
  /** Whether the merge is free of conflicts (git's exit status 0). */
  clean: boolean;
  /** The conflicted paths in git's order. */
  paths: ConflictedPath[];
  /** Git's messages in its order (informational ones too). */
  messages: MergeMessage[];
}

/**
 * Parses the `-z` output of `git merge-tree --write-tree --messages` (git-merge-tree(1) "OUTPUT"):
 * the tree id, NUL; then `<mode> SP <object> SP <stage> TAB <path>` NUL per conflicted stage;
 * an empty field; then per message `<count>` NUL, that many paths NUL, `<type>` NUL, `<text>` NUL.
 *
 * @param stdout git's output.
 * @param exitCode 0 (clean) or 1 (conflicts).
 * @returns the tree, the conflicted paths with their stages (git's order) and the messages.
 * @example parseMergeTreeOutput(Buffer.from('t\x00100644 b 2\ta.txt\x00\x001\x00a.txt\x00Auto-merging\x00Auto-merging a.txt\n\x00'), 1)
 */
export function parseMergeTreeOutput(stdout: Buffer, exitCode: number): MergeConflictDetails {
  const fields = stdout.toString('utf8').split('\0');
  const tree = fields[0].trim();
  const byPath = new Map<string, ConflictedPath>();
  let i = 1;
  for (; i < fields.length && fields[i] !== ''; i++) {
    const tab = fields[i].indexOf('\t');
    const [mode, oid, stage] = fields[i].slice(0, tab).split(' ');
    const filePath = fields[i].slice(tab + 1);
    let entry = byPath.get(filePath);
    if (!entry) byPath.set(filePath, (entry = { path: filePath, base: null, ours: null, theirs: null }));
    const key = stage === '1' ? 'base' : stage === '2' ? 'ours' : 'theirs';
    entry[key] = { mode, oid };
  }
  const messages: MergeMessage[] = [];
  for (i++; i < fields.length;) {
    const count = Number(fields[i]);
    if (!Number.isInteger(count) || count < 0 || i + count + 2 >= fields.length) break;
    const paths = fields.slice(i + 1, i + 1 + count);
    messages.push({ paths, type: fields[i + 1 + count], text: fields[i + 2 + count].trimEnd() });
    i += count + 3;
  }
  return { tree, clean: exitCode === 0, paths: [...byPath.values()], messages };
}

/**
 * Merges two commits as `git merge-tree --write-tree -z --messages <ours> <theirs>` does, over
 * their merge base(s), and reports the conflicts in detail.
 *
 * @param repo absolute path of a bare repository.
 * @param ours 40-hex commit whose side is stage 2.
 * @param theirs 40-hex commit whose side is stage 3.
 * @throws BadRequest for a malformed hash; GitError when a commit is missing or the histories are unrelated.
 */
export async function mergeConflictDetails(repo: string, ours: string, theirs: string): Promise<MergeConflictDetails> {
  const res = await runGit([gitDir(repo), 'merge-tree', '--write-tree', '-z', '--messages', assertObjectId(ours), assertObjectId(theirs)], {
    okExitCodes: [0, 1],
  });
  return parseMergeTreeOutput(res.stdout, res.exitCode);
}

/** What a resolution sets one path to: an existing object with its mode, new content (a blob is written), or nothing (removed). */
export type PathResolution = { path: string; entry: StageEntry } | { path: string; content: Buffer; mode: string } | { path: string; removed: true };

/**
 * Writes the tree of a resolved merge: `tree` (the merged tree) with every path of `resolutions`
 * set — new contents are written with `hash-object -w --stdin` — in a temporary index
 * (`GIT_INDEX_FILE`) filled by `read-tree`, changed by `update-index -z --index-info` (mode 0
 * removes a path) and written with `write-tree`.
 *
 * @param repo absolute path of a bare repository.
 * @param tree 40-hex id of the tree to start from.
 * @param resolutions one per path.
 * @returns the new tree's id.
 * @throws BadRequest for a malformed id or path; GitError when git fails.
 * @see docs/architecture.md#git-commits
 */
export async function writeResolvedTree(repo: string, tree: string, resolutions: readonly PathResolution[]): Promise<string> {
  const dir = gitDir(repo);
  const lines: string[] = [];
  for (const r of resolutions) {
    assertRepositoryPath(r.path);
    if ('removed' in r) lines.push(`0 ${ZERO_HASH}\t${r.path}\0`);
    else if ('entry' in r) lines.push(`${r.entry.mode} ${assertObjectId(r.entry.oid)}\t${r.path}\0`);
    else lines.push(`${r.mode} ${(await gitText([dir, 'hash-object', '-w', '--stdin'], { input: r.content })).trim()}\t${r.path}\0`);
  }
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'gitloom-resolve-'));
  try {
    const env = { GIT_INDEX_FILE: path.join(scratch, 'index') };
    await runGit([dir, 'read-tree', value(assertObjectId(tree))], { env });
    await runGit([dir, 'update-index', '-z', '--index-info'], { env, input: lines.join('') });
    return (await gitText([dir, 'write-tree'], { env })).trim();
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
