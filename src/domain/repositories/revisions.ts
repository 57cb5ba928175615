/**
 * Splitting `<revision>/<path>` of the repository API's URLs, where the revision may itself
 * contain `/` (a branch `feature/x`): the longest prefix naming a branch or tag wins, as OneDev
 * does; otherwise the first segment is read as a commit (a hash or any revision git resolves).
 */
import { NotFound } from '../../errors.js';
import { branchesAndTags, branchHead, listRefs, refHead, resolveCommit } from '../../git/repository.js';
import { assertRepositoryPath } from '../../git/trees.js';

/** A revision and a path read from one URL tail. */
export interface RevisionAndPath {
  /** The revision as written (`feature/x`, `v1.0`, a hash). */
  revision: string;
  /** The full ref when the revision names a branch or tag, else null. */
  ref: string | null;
  /** 40-hex hash of the commit the revision resolves to. */
  commitHash: string;
  /** Repository-relative path after the revision; empty = the root. */
  path: string;
}

/**
 * `text` without leading and trailing `/`, in linear time (`/^\/+|\/+$/g` re-reads a long run of
 * slashes from each of them: quadratic in a URL or form value of slashes).
 */
export function trimSlashes(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text[start] === '/') start++;
  while (end > start && text[end - 1] === '/') end--;
  return text.slice(start, end);
}

function splits(text: string): { head: string; rest: string }[] {
  const segments = text.split('/');
  const result: { head: string; rest: string }[] = [];
  for (let i = segments.length; i >= 1; i--) result.push({ head: segments.slice(0, i).join('/'), rest: segments.slice(i).join('/') });
  return result;
}

/**
 * Reads `<revision>[/<path>]`: the longest prefix that names a branch (then a tag), else the
 * first segment as a commit.
 *
 * @param repo absolute path of a bare repository.
 * @param text the URL tail, e.g. `feature/x/src/a.ts`.
 * @param refs the repository's branches and tags (`branchesAndTags(repo).refs`: not pull request or build refs) when the caller has them; read otherwise.
 * @throws NotFound `Revision not found: X` when nothing resolves; BadRequest `Invalid path: X`.
 */
export async function resolveRevisionAndPath(repo: string, text: string, refs?: Map<string, string>): Promise<RevisionAndPath> {
  const trimmed = trimSlashes(text);
  refs ??= (await branchesAndTags(repo)).refs;
  for (const { head, rest } of splits(trimmed)) {
    for (const ref of [`refs/heads/${head}`, `refs/tags/${head}`]) {
      if (!refs.has(ref)) continue;
      // a branch names its commit; a tag may name a tag object, peeled by git
      const commitHash = ref.startsWith('refs/heads/') ? refs.get(ref)! : await resolveCommit(repo, ref);
      if (commitHash) return { revision: head, ref, commitHash, path: assertRepositoryPath(rest) };
    }
  }
  const [first, ...rest] = trimmed.split('/');
  const commitHash = first ? await resolveCommit(repo, first) : null;
  if (!commitHash) throw new NotFound(`Revision not found: ${first ?? ''}`);
  return { revision: first, ref: null, commitHash, path: assertRepositoryPath(rest.join('/')) };
}

/**
 * The commit `revision` names, as `git rev-parse <revision>^{commit}` resolves it — a branch's
 * head read from the ref files without starting git when no other ref takes precedence over the
 * branch (git's order: `$GIT_DIR/<name>` for pseudo refs, `refs/<name>`, `refs/tags/<name>`, then
 * `refs/heads/<name>`); anything else (a tag, peeled; a hash; `main~2`) through git.
 *
 * @param repo absolute path of a bare repository.
 * @param revision a revision as a user wrote it.
 * @returns the 40-hex commit hash, or null when nothing resolves (or `revision` starts with `-`).
 * @throws GitError when the repository cannot be read.
 */
export async function resolveRevision(repo: string, revision: string): Promise<string | null> {
  if (revision.startsWith('-')) return null;
  const head = /^[A-Z_]+$/.test(revision) ? null : await branchHead(repo, revision);
  if (head !== null) {
    const [own, tag] = await Promise.all([refHead(repo, `refs/${revision}`), refHead(repo, `refs/tags/${revision}`)]);
    if (own === null && tag === null) return head;
  }
  return resolveCommit(repo, revision);
}

/** A branch (existing or, in a repository without branches, to be created) and a path. */
export interface BranchAndPath {
  /** Short branch name. */
  branch: string;
  /** Its head commit, or null when the branch is to be created in an empty repository. */
  head: string | null;
  /** Repository-relative path after the branch. */
  path: string;
}

/**
 * Reads `<branch>/<path>` for a file edit: the longest prefix naming an existing branch; in a
 * repository without any branch, the first segment names the branch to create.
 *
 * @param repo absolute path of a bare repository.
 * @param text the URL tail, e.g. `main/docs/a.md`.
 * @throws NotFound `Branch not found: X` when no prefix names a branch of a non-empty repository;
 *   BadRequest `Invalid path: X`.
 */
export async function resolveBranchAndPath(repo: string, text: string): Promise<BranchAndPath> {
  const trimmed = trimSlashes(text);
  const branches = await listRefs(repo, 'refs/heads/');
  for (const { head, rest } of splits(trimmed)) {
    const hash = branches.get(`refs/heads/${head}`);
    if (hash) return { branch: head, head: hash, path: assertRepositoryPath(rest) };
  }
  const [first, ...rest] = trimmed.split('/');
  if (branches.size > 0 || !first) throw new NotFound(`Branch not found: ${first ?? ''}`);
  return { branch: first, head: null, path: assertRepositoryPath(rest.join('/')) };
}
