/**
 * Reading files of a commit and materialising a commit in a work tree (for CI builds).
 * Everything runs through the git runner of src/git/command.ts.
 */
import { pathToFileURL } from 'node:url';
import { gitDir, gitText, runGit, value } from './command.js';
import { assertObjectId, isObjectId } from './names.js';
import { objectContents } from './object-reader.js';
import { resolveCommit } from './refs.js';

/**
 * Reads a file of a commit (through the repository's object reader).
 *
 * @param repo absolute path of a bare repository.
 * @param commit 40-hex commit hash (or any revision).
 * @param filePath path relative to the repository root, without a leading `/`.
 * @returns the bytes, or null when the path does not exist at that commit (or is not a file).
 * @throws GitError for other failures.
 * @example await readBlob(repo, head, '.onedev-buildspec.yml')
 */
export async function readBlob(repo: string, commit: string, filePath: string): Promise<Buffer | null> {
  return (await readBlobs(repo, commit, [filePath]))[0];
}

/**
 * Reads several files of a commit through the repository's object reader
 * (src/git/object-reader.ts): for each path, in order, its bytes, or null when it does not exist
 * at that commit, is not a file, or holds a line feed (which the batch protocol cannot carry). A
 * commit named otherwise than by its full hash is resolved first (`git rev-parse`).
 *
 * @throws GitError for other failures.
 */
export async function readBlobs(repo: string, commit: string, filePaths: readonly string[]): Promise<(Buffer | null)[]> {
  const hash = isObjectId(commit) ? commit : commit.startsWith('-') || /[\0\n\r]/.test(commit) ? null : await resolveCommit(repo, commit);
  const readable = (p: string) => hash !== null && p.length > 0 && !/[\0\n]/.test(p);
  const asked = filePaths.filter(readable);
  const objects = await objectContents(
    repo,
    asked.map((p) => `${hash}:${p}`),
  );
  const found = new Map(asked.map((p, i) => [p, objects[i]?.type === 'blob' ? objects[i].content : null]));
  return filePaths.map((p) => found.get(p) ?? null);
}

/**
 * Paths changed between two commits (`git diff --name-only -z old new`, renames off).
 *
 * @returns repository-relative paths.
 * @throws GitError when a commit does not exist.
 */
export async function changedPaths(repo: string, oldCommit: string, newCommit: string): Promise<string[]> {
  const out = await gitText([
    gitDir(repo),
    'diff',
    '--name-only',
    '--no-renames',
    '-z',
    value(assertObjectId(oldCommit)),
    value(assertObjectId(newCommit)),
    '--',
  ]);
  return out.split('\0').filter((p) => p.length > 0);
}

/**
 * Branches (names without `refs/heads/`) whose head contains the commit.
 *
 * @throws GitError when the commit does not exist.
 */
export async function branchesContaining(repo: string, commit: string): Promise<string[]> {
  const out = await gitText([gitDir(repo), 'for-each-ref', '--format=%(refname:strip=2)', '--contains', value(assertObjectId(commit)), 'refs/heads/']);
  return out.split('\n').filter((l) => l.length > 0);
}

/** Options of {@link checkoutCommit}. */
export interface CheckoutCommitOptions {
  /** Stops the git processes. */
  signal?: AbortSignal;
  /** Extra environment (e.g. the job's HOME). */
  env?: Record<string, string>;
  /** Shallow checkout: only the last `depth` commits of the build commit's history (null/absent = full). */
  depth?: number | null;
}

/**
 * Clones a bare repository into `targetDir` (an existing, empty directory) and checks out
 * `commit` detached: `git clone --no-local --no-checkout`, then, when `refName` is not a branch
 * or tag (pull request refs), `git fetch origin <refName>`, then `git checkout --detach`.
 * `origin` points at the bare repository. With `depth` (the CheckoutStep's `cloneDepth`,
 * docs/compatibility.md#builds-build-spec) the work tree is shallow: `git init`, `git fetch --depth N origin
 * <commit>` over the `file://` transport (as `clone --no-local` would), then the checkout.
 *
 * @throws GitError when a step fails (unknown commit, aborted, …).
 */
export async function checkoutCommit(repo: string, targetDir: string, commit: string, refName: string, options: CheckoutCommitOptions = {}): Promise<void> {
  gitDir(repo);
  await checkoutFrom({ clone: repo, fetch: pathToFileURL(repo).href }, targetDir, commit, refName, options);
}

/**
 * {@link checkoutCommit} from a repository served over git's smart HTTP: `url` (`http:` or
 * `https:`) is `origin`. A credential goes in `options.env` (git's `GIT_CONFIG_COUNT`,
 * `GIT_CONFIG_KEY_<n>`, `GIT_CONFIG_VALUE_<n>`, e.g. `http.extraHeader`), never on the command
 * line, where `ps` shows it.
 *
 * @throws RangeError for another scheme; GitError when a step fails.
 */
export async function checkoutCommitOverHttp(
  url: string,
  targetDir: string,
  commit: string,
  refName: string,
  options: CheckoutCommitOptions = {},
): Promise<void> {
  const { protocol } = new URL(url);
  if (protocol !== 'http:' && protocol !== 'https:') throw new RangeError(`Not an HTTP(S) repository URL: ${url}`);
  await checkoutFrom({ clone: url, fetch: url }, targetDir, commit, refName, options);
}

/** The checkout of {@link checkoutCommit}, `source.clone` being what `git clone` takes and `source.fetch` what a shallow fetch takes. */
async function checkoutFrom(
  source: { clone: string; fetch: string },
  targetDir: string,
  commit: string,
  refName: string,
  options: CheckoutCommitOptions,
): Promise<void> {
  assertObjectId(commit);
  const opts = { cwd: targetDir, signal: options.signal, env: options.env, timeoutMs: 3_600_000 };
  const depth = options.depth;
  if (depth != null) {
    if (!Number.isInteger(depth) || depth < 1) throw new RangeError(`Invalid clone depth: ${depth}`);
    await runGit(['init', '--quiet'], opts);
    await runGit(['remote', 'add', 'origin', '--end-of-options', value(source.fetch)], opts);
    await runGit(['fetch', '--quiet', '--no-tags', `--depth=${depth}`, 'origin', '--end-of-options', value(commit)], opts);
    await runGit(['-c', 'advice.detachedHead=false', 'checkout', '--quiet', '--detach', value(commit), '--'], opts);
    return;
  }
  await runGit(['clone', '--quiet', '--no-local', '--no-checkout', '--end-of-options', value(source.clone), '.'], opts);
  const present = await runGit(['cat-file', '-e', value(`${commit}^{commit}`)], { ...opts, okExitCodes: [0, 1, 128] });
  if (present.exitCode !== 0) {
    await runGit(['fetch', '--quiet', '--no-tags', 'origin', '--end-of-options', value(`+${refName}:refs/remotes/origin/gitloom-build`)], opts);
  }
  await runGit(['-c', 'advice.detachedHead=false', 'checkout', '--quiet', '--detach', value(commit), '--'], opts);
}
