/**
 * Merges without a working tree: ancestry checks, `git merge-tree --write-tree` (with an explicit
 * base for cherry-picks), and the rebase used by REBASE_SOURCE_BRANCH_COMMITS
 * (docs/compatibility.md#pull-requests-merge-strategies-and-preview; docs/architecture.md#git-merge-preview, docs/architecture.md#git-synthetic-root).
 */
import { GitError, gitDir, gitAtLeast, runGit, value } from './command.js';
import { commitTree, readCommits, type CommitIdentityInput } from './commits.js';
import { assertObjectId } from './names.js';

/**
 * Whether commit `a` is an ancestor of (or equal to) commit `b` (`merge-base --is-ancestor`):
 * the one ancestry check, also of pushes (src/git/hooks.ts isFastForward).
 *
 * @param repo absolute path of a bare repository.
 * @param a,b revisions (usually hashes).
 * @param options `env`: extra environment for git (a push's quarantine, to see the objects it
 *   brings); `missing`: the answer when a revision does not exist, instead of throwing.
 * @throws GitError when a revision does not exist and no `missing` answer is given, and when
 *   git fails otherwise (a missing or broken repository: cat-file fails too).
 */
export async function isAncestor(repo: string, a: string, b: string, options: { env?: Record<string, string>; missing?: boolean } = {}): Promise<boolean> {
  const args = [gitDir(repo), 'merge-base', '--is-ancestor', value(a), value(b)];
  const res = await runGit(args, { env: options.env, okExitCodes: options.missing === undefined ? [0, 1] : [0, 1, 128] });
  if (res.exitCode !== 128) return res.exitCode === 0;
  // 128 is also a missing or broken repository: only an absent commit gets the `missing` answer
  const check = await runGit([gitDir(repo), 'cat-file', '--batch-check=%(objecttype)'], { env: options.env, input: `${a}^{commit}\n${b}^{commit}\n` });
  if (
    check.stdout
      .toString('utf8')
      .split('\n')
      .slice(0, 2)
      .every((type) => type === 'commit')
  ) {
    throw new GitError(['merge-base', '--is-ancestor', a, b], 128, res.stderr, 'exited with 128');
  }
  return options.missing === true;
}

/**
 * The best common ancestor of two commits.
 *
 * @param repo absolute path of a bare repository.
 * @param a,b revisions (usually hashes).
 * @returns the 40-hex hash, or null when the histories are unrelated.
 * @throws GitError when a revision does not exist.
 */
export async function mergeBase(repo: string, a: string, b: string): Promise<string | null> {
  const res = await runGit([gitDir(repo), 'merge-base', value(a), value(b)], { okExitCodes: [0, 1] });
  if (res.exitCode === 1) return null;
  return res.stdout.toString('utf8').trim() || null;
}

/** Result of a tree-level merge. */
export interface MergeTreeResult {
  /** 40-hex hash of the merged tree (with conflict markers when there are conflicts). */
  tree: string;
  /** Conflicted paths, in git's order without duplicates. */
  conflicts: string[];
  /** Whether the merge is free of conflicts (git exit status 0). */
  clean: boolean;
}

function parseMergeTree(stdout: Buffer, exitCode: number): MergeTreeResult {
  const fields = stdout.toString('utf8').split('\0');
  const tree = fields[0].trim();
  const conflicts: string[] = [];
  for (const f of fields.slice(1)) {
    if (f === '') break;
    if (!conflicts.includes(f)) conflicts.push(f);
  }
  return { tree, conflicts, clean: exitCode === 0 };
}

/**
 * Three-way merges two commits over their merge base(s) without a working tree
 * (`git merge-tree --write-tree --name-only -z --no-messages`). Exit status 1 = conflicts.
 *
 * @param repo absolute path of a bare repository.
 * @param ours revision of the target side (e.g. the target branch head).
 * @param theirs revision of the merged side (e.g. the pull request head).
 * @param opts.allowUnrelated merge histories without a common ancestor (else git fails).
 * @returns the merged tree and the conflicted paths.
 * @throws GitError when a revision does not exist or the histories are unrelated.
 * @see docs/architecture.md#git-merge-preview
 */
export async function mergeTree(repo: string, ours: string, theirs: string, opts: { allowUnrelated?: boolean } = {}): Promise<MergeTreeResult> {
  const args = [gitDir(repo), 'merge-tree', '--write-tree', '--name-only', '-z', '--no-messages'];
  if (opts.allowUnrelated) args.push('--allow-unrelated-histories');
  const res = await runGit([...args, value(ours), value(theirs)], { okExitCodes: [0, 1] });
  return parseMergeTree(res.stdout, res.exitCode);
}

const SYNTHETIC: CommitIdentityInput = { name: 'Gitloom', email: 'noreply@gitloom.invalid', date: new Date(0) };
const EMPTY_TREE_INPUT = '';

async function emptyTree(repo: string): Promise<string> {
  const res = await runGit([gitDir(repo), 'mktree'], { input: EMPTY_TREE_INPUT });
  return res.stdout.toString('utf8').trim();
}

async function treeOf(repo: string, commit: string): Promise<string> {
  const res = await runGit([gitDir(repo), 'rev-parse', '--verify', '-q', `${assertObjectId(commit)}^{tree}`]);
  return res.stdout.toString('utf8').trim();
}

/**
 * Three-way merges `ours` and `theirs` over an explicit base commit, i.e. cherry-picks the change
 * `base → theirs` onto `ours`. Uses `merge-tree --merge-base` on git ≥ 2.40; on older git it makes
 * a synthetic root `X` with `base`'s tree and merges `ours'`/`theirs'` (their trees on top of `X`);
 * the synthetic commits are unreferenced and vanish at gc.
 *
 * @param repo absolute path of a bare repository.
 * @param base 40-hex base commit, or null for an empty base (cherry-picking a root commit).
 * @param ours 40-hex commit to apply onto.
 * @param theirs 40-hex commit whose change is applied.
 * @returns the merged tree and the conflicted paths.
 * @throws BadRequest for a malformed hash; GitError when an object is missing.
 * @see docs/architecture.md#git-synthetic-root
 */
export async function mergeTreeWithBase(repo: string, base: string | null, ours: string, theirs: string): Promise<MergeTreeResult> {
  assertObjectId(ours);
  assertObjectId(theirs);
  if (base !== null && (await gitAtLeast(2, 40))) {
    const res = await runGit(
      [gitDir(repo), 'merge-tree', '--write-tree', '--name-only', '-z', '--no-messages', `--merge-base=${assertObjectId(base)}`, ours, theirs],
      { okExitCodes: [0, 1] },
    );
    return parseMergeTree(res.stdout, res.exitCode);
  }
  const baseTree = base === null ? await emptyTree(repo) : await treeOf(repo, base);
  const [oursTree, theirsTree] = await Promise.all([treeOf(repo, ours), treeOf(repo, theirs)]);
  const root = await commitTree(repo, {
    tree: baseTree,
    parents: [],
    message: 'base',
    author: SYNTHETIC,
    committer: SYNTHETIC,
  });
  const [o, t] = await Promise.all(
    [oursTree, theirsTree].map((tree, i) =>
      commitTree(repo, { tree, parents: [root], message: i === 0 ? 'ours' : 'theirs', author: SYNTHETIC, committer: SYNTHETIC }),
    ),
  );
  return mergeTree(repo, o, t);
}

/** Input of {@link rebaseCommits}. */
export interface RebaseInput {
  /** 40-hex commit to rebase onto (the target branch head). */
  onto: string;
  /** 40-hex commits to replay, parents before children (`revList(head, [target], {reverse, topoOrder})`). */
  commits: readonly string[];
  /** Committer of rewritten commits (the author of each is kept). */
  committer: CommitIdentityInput;
}

/**
 * Replays commits onto `onto` like a rebase: merge commits are skipped; each other commit is
 * cherry-picked onto the running head with its first parent as base; a commit whose first parent
 * already is the running head is reused unchanged (so a linear branch fast-forwards); commits that
 * become empty are dropped. Rewritten commits keep author and message; committer = `committer`.
 *
 * @param repo absolute path of a bare repository.
 * @param input onto, commits (oldest first) and committer.
 * @returns the hash of the new head (`onto` when nothing remains), or null on any conflict.
 * @throws BadRequest for a malformed hash; NotFound when a commit is missing.
 * @see docs/compatibility.md#pull-requests-merge-strategies-and-preview (REBASE_SOURCE_BRANCH_COMMITS)
 */
export async function rebaseCommits(repo: string, input: RebaseInput): Promise<string | null> {
  const commits = await readCommits(repo, [input.onto, ...input.commits]);
  let head = input.onto;
  let headTree = commits[0].tree;
  for (const c of commits.slice(1)) {
    if (c.parents.length > 1) continue;
    const base = c.parents[0] ?? null;
    if (base === head) {
      head = c.hash;
      headTree = c.tree;
      continue;
    }
    const merged = await mergeTreeWithBase(repo, base, head, c.hash);
    if (!merged.clean) return null;
    if (merged.tree === headTree) continue;
    head = await commitTree(repo, {
      tree: merged.tree,
      parents: [head],
      message: c.message,
      author: { name: c.author.name, email: c.author.email, date: c.author.date, tzOffset: c.author.tzOffset },
      committer: input.committer,
    });
    headTree = merged.tree;
  }
  return head;
}
