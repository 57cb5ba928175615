/**
 * Repository creation, refs and the default branch of bare repositories
 * (docs/compatibility.md#projects-repository-and-default-branch; docs/architecture.md#git-compare-and-swap with `update-ref`).
 * Every function takes the absolute path of a bare repository.
 */
import { mkdir } from 'node:fs/promises';
import { BadRequest, Conflict } from '../errors.js';
import { GitError, gitDir, gitText, runGit, value } from './command.js';
import { assertObjectId, assertValidBranchName, assertValidRefName, isObjectId, ZERO_HASH } from './names.js';
import { objectInfo } from './object-reader.js';
import { readHead, readRef, readRefs } from './ref-files.js';

/** A lost compare-and-swap race on a ref: someone else moved it first (409). */
export class RefUpdateConflict extends Conflict {
  /**
   * @param ref the full ref name.
   * @param detail the problem detail; default `Ref <ref> has moved`.
   */
  constructor(
    readonly ref: string,
    detail = `Ref ${ref} has moved`,
  ) {
    super(detail, { code: 'GITLOOM_ERR_REF_MOVED' });
  }
}

/**
 * Creates a bare repository at `path` (directories created as needed). HEAD is left symbolic to
 * an unborn branch, so the repository has no default branch until a branch exists. Sets
 * `uploadpack.allowReachableSHA1InWant=true` (fetching a reachable commit by id, as a build's
 * checkout does over `file://`), `receive.denyNonFastForwards=false`,
 * `core.logAllRefUpdates=false`, `diff.algorithm=histogram` and `http.receivepack=true`.
 *
 * @param path absolute path of the new repository (e.g. `<data>/repos/42.git`).
 * @throws GitError when git fails (e.g. the path is an existing file).
 * @see docs/compatibility.md#projects-repository-and-default-branch
 */
export async function initBareRepository(path: string): Promise<void> {
  const dir = gitDir(path);
  await mkdir(path, { recursive: true });
  await runGit(['init', '--bare', '--quiet', '--initial-branch=master', '--', value(path)]);
  const config: [string, string][] = [
    ['uploadpack.allowReachableSHA1InWant', 'true'],
    ['receive.denyNonFastForwards', 'false'],
    ['core.logAllRefUpdates', 'false'],
    ['diff.algorithm', 'histogram'],
    ['http.receivepack', 'true'],
  ];
  for (const [key, val] of config) await runGit([dir, 'config', key, val]);
}

/**
 * The repository's default branch: the short name HEAD points to when HEAD is a symbolic ref to
 * `refs/heads/*` and that branch exists; otherwise null.
 *
 * @param repo absolute path of a bare repository.
 * @throws GitError when git fails.
 * @see docs/compatibility.md#projects-repository-and-default-branch
 */
export async function getDefaultBranch(repo: string): Promise<string | null> {
  const target = await headTarget(repo);
  if (target === null || !target.startsWith('refs/heads/')) return null;
  const branch = target.slice('refs/heads/'.length);
  return (await branchHead(repo, branch)) === null ? null : branch;
}

/** The ref HEAD names (read from its file, or by `git symbolic-ref`), null when HEAD is detached. */
async function headTarget(repo: string): Promise<string | null> {
  const target = await readHead(repo);
  if (target !== undefined) return target;
  const res = await runGit([gitDir(repo), 'symbolic-ref', '-q', 'HEAD'], { okExitCodes: [0, 1] });
  return res.exitCode === 0 ? res.stdout.toString('utf8').trim() : null;
}

/**
 * The default branch and its head commit, for pages that need both on every request: read from
 * the ref files, or in one git call (`rev-parse HEAD^{commit} --symbolic-full-name HEAD`).
 *
 * @param repo absolute path of a bare repository.
 * @returns null when HEAD is unborn (empty repository), dangling or detached.
 * @throws GitError when git fails for another reason.
 */
export async function defaultBranchHead(repo: string): Promise<{ branch: string; commitHash: string } | null> {
  const read = await defaultBranchHeadFromFiles(repo);
  if (read !== undefined) return read;
  const res = await runGit([gitDir(repo), 'rev-parse', '-q', 'HEAD^{commit}', '--symbolic-full-name', 'HEAD'], { okExitCodes: [0, 128] });
  if (res.exitCode !== 0) return null;
  const [commitHash, target] = res.stdout.toString('utf8').trim().split('\n');
  if (!commitHash || !target?.startsWith('refs/heads/')) return null;
  return { branch: target.slice('refs/heads/'.length), commitHash };
}

/** {@link defaultBranchHead} from the ref files; undefined when git must be asked. */
async function defaultBranchHeadFromFiles(repo: string): Promise<{ branch: string; commitHash: string } | null | undefined> {
  const target = await readHead(repo);
  if (target === undefined) return undefined;
  if (target === null || !target.startsWith('refs/heads/')) return null;
  // git refuses to point a branch at anything but a commit, so the branch's object is HEAD^{commit}
  const commitHash = await readRef(repo, target);
  return commitHash == null ? commitHash : { branch: target.slice('refs/heads/'.length), commitHash };
}

/**
 * Points HEAD at `refs/heads/<branch>`, making it the default branch.
 *
 * @param repo absolute path of a bare repository.
 * @param branch short branch name; must exist.
 * @throws BadRequest `Invalid branch name: X` or `Branch not exist: X`.
 * @see docs/compatibility.md#projects-repository-and-default-branch
 */
export async function setDefaultBranch(repo: string, branch: string): Promise<void> {
  await assertValidBranchName(branch);
  if ((await branchHead(repo, branch)) === null) throw new BadRequest(`Branch not exist: ${branch}`);
  await runGit([gitDir(repo), 'symbolic-ref', 'HEAD', value(`refs/heads/${branch}`)]);
}

/**
 * Chooses the branch to become the default among newly pushed branches: `main`, then `master`,
 * then the alphabetically first.
 *
 * @param branches short branch names.
 * @returns the chosen name, or null for an empty list.
 * @see docs/compatibility.md#projects-repository-and-default-branch ("re-links HEAD to the first pushed branch")
 */
export function pickDefaultBranch(branches: readonly string[]): string | null {
  if (branches.includes('main')) return 'main';
  if (branches.includes('master')) return 'master';
  return [...branches].sort()[0] ?? null;
}

/**
 * Resolves a revision expression (hash, abbreviated hash, branch, tag, `main~2`, …) to the full
 * hash of the commit it names, as `git rev-parse --verify <rev>^{commit}` does. A full hash (which
 * git reads as an object id before any ref of that name) is asked of the object reader
 * (src/git/object-reader.ts) instead of a new git process.
 *
 * @param repo absolute path of a bare repository.
 * @param rev the revision; must not start with `-`.
 * @returns the 40-hex commit hash, or null when it names no commit.
 * @throws BadRequest for a revision starting with `-` or containing control characters.
 */
export async function resolveCommit(repo: string, rev: string): Promise<string | null> {
  if (isObjectId(rev)) {
    const [commit] = await objectInfo(repo, [`${rev}^{commit}`]);
    return commit?.oid ?? null;
  }
  const res = await runGit([gitDir(repo), 'rev-parse', '--verify', '-q', value(`${rev}^{commit}`)], {
    okExitCodes: [0, 1, 128],
  });
  if (res.exitCode !== 0) return null;
  const hash = res.stdout.toString('utf8').trim();
  return hash || null;
}

/**
 * The commit a branch points to.
 *
 * @param repo absolute path of a bare repository.
 * @param branch short branch name.
 * @returns the hash, or null when the branch does not exist (or the name is not a valid ref).
 */
export async function branchHead(repo: string, branch: string): Promise<string | null> {
  const ref = `refs/heads/${branch}`;
  if (branch.startsWith('-')) return null;
  return refHead(repo, ref);
}

/**
 * The object a full ref points to.
 *
 * @param repo absolute path of a bare repository.
 * @param ref full ref name, e.g. `refs/pulls/3/head`.
 * @returns the hash, or null when the ref does not exist or the name is invalid.
 * @throws GitError when the repository cannot be read: a missing ref is not confused with a
 *   missing or broken repository (a pull request must not be discarded for a read failure).
 */
export async function refHead(repo: string, ref: string): Promise<string | null> {
  if (/[\0\n\r*?[]/.test(ref) || !ref.startsWith('refs/')) return null;
  const read = await readRef(repo, ref);
  if (read !== undefined) return read;
  // for-each-ref answers 0 with nothing for a missing ref; its pattern also matches refs below
  // `ref/`, so only the exact name counts
  const out = await gitText([gitDir(repo), 'for-each-ref', '--format=%(objectname) %(refname)', value(ref)]);
  for (const line of out.split('\n')) {
    const space = line.indexOf(' ');
    if (space > 0 && line.slice(space + 1) === ref) return line.slice(0, space);
  }
  return null;
}

/** A branch and the commit it points to. */
export interface Branch {
  /** Short name (without `refs/heads/`). */
  name: string;
  /** 40-hex commit hash. */
  commitHash: string;
}

/**
 * All branches, sorted by name.
 *
 * @param repo absolute path of a bare repository.
 * @throws GitError when git fails.
 */
export async function listBranches(repo: string): Promise<Branch[]> {
  const refs = await listRefs(repo, 'refs/heads/');
  return [...refs].map(([ref, commitHash]) => ({ name: ref.slice('refs/heads/'.length), commitHash }));
}

/**
 * The refs under a prefix, or under any of several.
 *
 * @param repo absolute path of a bare repository.
 * @param prefix only refs under this prefix or these prefixes (default `refs/`).
 * @returns full ref name → object hash, in ref-name order.
 * @throws GitError when git fails.
 */
export async function listRefs(repo: string, prefix: string | readonly string[] = 'refs/'): Promise<Map<string, string>> {
  const prefixes = typeof prefix === 'string' ? [prefix] : prefix;
  const read = await readRefs(repo, prefixes);
  if (read !== undefined) return read;
  const out = await gitText([gitDir(repo), 'for-each-ref', '--format=%(objectname) %(refname)', ...prefixes.map((p) => value(p))]);
  const refs = new Map<string, string>();
  for (const line of out.split('\n')) {
    const space = line.indexOf(' ');
    if (space > 0) refs.set(line.slice(space + 1), line.slice(0, space));
  }
  return refs;
}

/**
 * The branches and tags of a repository and the branch HEAD names: what revision selectors show
 * on every page. Read from the ref files, or in one git call (`git for-each-ref` with `%(HEAD)`).
 *
 * @param repo absolute path of a bare repository.
 * @returns `refs`: full ref name (`refs/heads/…`, `refs/tags/…`) → object hash, in ref-name
 *   order; `head`: the short name of the branch HEAD points to, null when HEAD is unborn,
 *   dangling or detached.
 * @throws GitError when git fails.
 */
export async function branchesAndTags(repo: string): Promise<{ refs: Map<string, string>; head: string | null }> {
  const [read, target] = await Promise.all([readRefs(repo, ['refs/heads/', 'refs/tags/']), readHead(repo)]);
  if (read !== undefined && target !== undefined) {
    return { refs: read, head: target !== null && target.startsWith('refs/heads/') && read.has(target) ? target.slice('refs/heads/'.length) : null };
  }
  const out = await gitText([gitDir(repo), 'for-each-ref', '--format=%(HEAD)%(objectname) %(refname)', 'refs/heads/', 'refs/tags/']);
  const refs = new Map<string, string>();
  let head: string | null = null;
  for (const line of out.split('\n')) {
    const space = line.indexOf(' ', 1);
    if (space < 0) continue;
    const ref = line.slice(space + 1);
    refs.set(ref, line.slice(1, space));
    if (line[0] === '*' && ref.startsWith('refs/heads/')) head = ref.slice('refs/heads/'.length);
  }
  return { refs, head };
}

/**
 * Moves (or creates) a ref with compare-and-swap.
 *
 * @param repo absolute path of a bare repository.
 * @param ref full ref name, e.g. `refs/heads/main`.
 * @param newHash the new object hash.
 * @param expectedOld the hash the ref must currently have; null = the ref must not exist.
 * @throws RefUpdateConflict (409) `Ref <ref> has moved` when the ref does not have `expectedOld`.
 * @throws BadRequest for an invalid ref name or hash.
 * @see docs/architecture.md#git-compare-and-swap
 */
export async function updateRef(repo: string, ref: string, newHash: string, expectedOld: string | null): Promise<void> {
  await updateRefs(repo, [{ ref, newHash, expectedOld }]);
}

/**
 * Deletes a ref, optionally only if it still has `expectedOld`.
 *
 * @param repo absolute path of a bare repository.
 * @param ref full ref name.
 * @param expectedOld the hash the ref must currently have; undefined = any value (a missing ref
 *   is then not an error).
 * @throws RefUpdateConflict when `expectedOld` is given and the ref does not have it.
 */
export async function deleteRef(repo: string, ref: string, expectedOld?: string): Promise<void> {
  await updateRefs(repo, [{ ref, newHash: null, expectedOld }]);
}

/** One ref change for {@link updateRefs}. */
export interface RefUpdate {
  /** Full ref name. */
  ref: string;
  /** New hash, or null to delete the ref. */
  newHash: string | null;
  /** Required current hash; null = must not exist; undefined = no check. */
  expectedOld?: string | null;
}

/**
 * Applies several ref changes atomically (`update-ref --stdin` with `start`/`prepare`/`commit`):
 * either all happen or none.
 *
 * @param repo absolute path of a bare repository.
 * @param updates the changes.
 * @throws RefUpdateConflict when some ref does not have its `expectedOld` (nothing changed).
 * @throws BadRequest for an invalid ref name or hash.
 * @throws GitError for other git failures (e.g. the new object does not exist).
 * @see docs/architecture.md#git-compare-and-swap (several refs at once)
 */
export async function updateRefs(repo: string, updates: readonly RefUpdate[]): Promise<void> {
  if (updates.length === 0) return;
  const lines = ['start'];
  for (const u of updates) {
    assertValidRefName(u.ref);
    if (u.newHash !== null) assertObjectId(u.newHash);
    if (u.expectedOld) assertObjectId(u.expectedOld);
    const old = u.expectedOld === undefined ? '' : ` ${u.expectedOld ?? ZERO_HASH}`;
    if (u.newHash === null) lines.push(`delete ${u.ref}${old}`);
    else lines.push(`update ${u.ref} ${u.newHash}${old}`);
  }
  lines.push('prepare', 'commit', '');
  const args = [gitDir(repo), 'update-ref', '--stdin'];
  const res = await runGit(args, { input: lines.join('\n'), okExitCodes: [0, 1, 128] });
  if (res.exitCode === 0 && res.stdout.toString('utf8').includes('commit: ok')) return;
  // Nothing changed: a ref that moved is a lost race; anything else is a server fault, raised
  // with this run's exit code and stderr.
  for (const u of updates) {
    if (u.expectedOld === undefined) continue;
    const current = await refHead(repo, u.ref);
    if (current !== (u.expectedOld ?? null)) throw new RefUpdateConflict(u.ref);
  }
  throw new GitError(args, res.exitCode, res.stderr, res.exitCode === 0 ? 'the transaction reported no commit' : `exited with ${res.exitCode}`);
}

/**
 * Copies a ref (and the objects it needs) from another local repository, e.g. the head of a
 * cross-repository pull request: `git fetch --no-tags <sourceRepo> +<sourceRef>:<targetRef>` run
 * in the target repository. The target ref is force-updated.
 *
 * @param targetRepo absolute path of the repository receiving the objects.
 * @param sourceRepo absolute path of the repository to fetch from.
 * @param sourceRef full ref name (or commit hash) in the source repository.
 * @param targetRef full ref name to set in the target repository.
 * @throws BadRequest for invalid ref names.
 * @throws GitError when the fetch fails (e.g. the source ref does not exist).
 */
export async function fetchCommits(targetRepo: string, sourceRepo: string, sourceRef: string, targetRef: string): Promise<void> {
  if (!/^[0-9a-f]{40}$/.test(sourceRef)) assertValidRefName(sourceRef);
  assertValidRefName(targetRef);
  gitDir(sourceRepo);
  await runGit([
    gitDir(targetRepo),
    'fetch',
    '--quiet',
    '--no-tags',
    '--no-write-fetch-head',
    '--end-of-options',
    value(sourceRepo),
    value(`+${sourceRef}:${targetRef}`),
  ]);
}
