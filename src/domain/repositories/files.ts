/**
 * Directories and files of a project's repository (OneDev 8.6 RepositoryResource, docs/compatibility.md#gitloom-differs-additions-to-the-interface): list a directory, read a file (capped), and commit a file change on a branch made with
 * plumbing — no work tree — moved by compare-and-swap with the protections and reactions of a
 * push (ref-updates.ts).
 */
import { BadRequest, Conflict, NotFound } from '../../errors.js';
import { assertValidBranchName, branchHead, commitTree, isObjectId, resolveCommit } from '../../git/repository.js';
import { assertRepositoryPath, listDirectory, pathEntry, readBlobHead, writeTreeWithChanges, type TreeEntry } from '../../git/trees.js';
import type { Context } from '../context.js';
import { objectRead } from '../object-reads.js';
import { loadProjectWith } from '../projects/index.js';
import { gitIdentity } from '../users/index.js';
import { moveRef } from './ref-updates.js';
import { resolveBranchAndPath, resolveRevisionAndPath } from './revisions.js';

/** The most bytes of a file {@link readFile} returns (1 MiB); longer files come back partial. */
export const MAX_FILE_CONTENT = 1024 * 1024;

/** One entry of a directory listing. */
export interface DirectoryEntry {
  /** Repository-relative path. */
  path: string;
  /** Whether it is a file (a blob, symbolic links included) rather than a directory or submodule. */
  isFile: boolean;
}

/** A file's content as read by {@link readFile}. */
export interface FileContent {
  /** Repository-relative path. */
  path: string;
  /** 40-hex blob id. */
  sha: string;
  /** The first {@link MAX_FILE_CONTENT} bytes (all of a smaller file). */
  content: Buffer;
  /** The whole file's size in bytes. */
  size: number;
  /** Whether `content` is only the start of the file. */
  isPartial: boolean;
}

/** A file change committed by {@link commitFile}. */
export type FileEditRequest = { kind: 'createOrUpdate'; commitMessage: string; content: Buffer } | { kind: 'delete'; commitMessage: string };

/**
 * The entry of `path` at commit `commitHash` (`git ls-tree`), null when there is none; kept by
 * object id ({@link objectRead}), so views of an unchanged path skip git.
 *
 * @param repo absolute path of a bare repository.
 * @throws BadRequest for a malformed hash or path; GitError when the commit is missing.
 */
export function pathEntryAt(repo: string, commitHash: string, path: string): Promise<TreeEntry | null> {
  return objectRead(repo, `path-entry:${path}`, [commitHash], () => pathEntry(repo, commitHash, path));
}

/**
 * GET `/repositories/{projectId}/directories/{revision}/{path}`: read code; the entries of a
 * directory at a revision (the revision may contain `/`; revisions.ts).
 *
 * @param revisionAndPath e.g. `feature/x/src` or `main` (the root).
 * @throws NotFound `Revision not found: X`, `Path not found: X`; BadRequest `Specified path is
 *   not a directory: X`.
 */
export async function listDirectoryAt(ctx: Context, projectId: number, revisionAndPath: string): Promise<DirectoryEntry[]> {
  const { project } = await loadProjectWith(ctx, projectId, 'readCode');
  const repo = ctx.repoPath(project.id);
  const at = await resolveRevisionAndPath(repo, revisionAndPath);
  const entries = await objectRead(
    repo,
    `directory:${at.path}`,
    [at.commitHash],
    () => listDirectory(repo, at.commitHash, at.path),
    (found) => 64 + 192 * (found?.length ?? 0),
  );
  if (entries === null) {
    if ((await pathEntryAt(repo, at.commitHash, at.path)) === null) throw new NotFound(`Path not found: ${at.path}`);
    throw new BadRequest(`Specified path is not a directory: ${at.path}`);
  }
  return entries.map((e) => ({ path: e.path, isFile: e.type === 'blob' }));
}

/**
 * GET `/repositories/{projectId}/files/{revision}/{path}`: read code; a file's id, size and
 * content, the content capped at {@link MAX_FILE_CONTENT} bytes (`isPartial` past the cap).
 *
 * @throws NotFound `Revision not found: X`, `Path not found: X`; BadRequest `Specified path is
 *   not a file: X`.
 */
export async function readFile(ctx: Context, projectId: number, revisionAndPath: string): Promise<FileContent> {
  const { project } = await loadProjectWith(ctx, projectId, 'readCode');
  const repo = ctx.repoPath(project.id);
  const at = await resolveRevisionAndPath(repo, revisionAndPath);
  const entry = await pathEntryAt(repo, at.commitHash, at.path);
  if (entry === null) throw new NotFound(`Path not found: ${at.path}`);
  if (entry.type !== 'blob' || entry.size === null) throw new BadRequest(`Specified path is not a file: ${at.path}`);
  const size = entry.size;
  const content = await objectRead(
    repo,
    `blob-head:${MAX_FILE_CONTENT}`,
    [entry.oid],
    () => readBlobHead(repo, entry.oid, size, MAX_FILE_CONTENT),
    (bytes) => bytes.length,
  );
  return { path: entry.path, sha: entry.oid, content, size, isPartial: size > content.length };
}

/** Refuses a write of `path` where a directory is, or below a file (`a.txt/b`). */
async function assertWritablePath(repo: string, head: string, path: string): Promise<void> {
  const segments = path.split('/');
  for (let i = 1; i < segments.length; i++) {
    const parent = segments.slice(0, i).join('/');
    const entry = await pathEntry(repo, head, parent);
    if (entry === null) return;
    if (entry.type !== 'tree') throw new BadRequest(`Specified path is not a directory: ${parent}`);
  }
  const entry = await pathEntry(repo, head, path);
  if (entry !== null && entry.type !== 'blob') throw new BadRequest(`Specified path is not a file: ${path}`);
}

/**
 * POST `/repositories/{projectId}/files/{branch}/{path}`: write code; commits one file created,
 * updated or deleted on a branch, through {@link commitFiles}. In a repository without branches
 * the commit creates the branch, which becomes the default branch.
 *
 * @param branchAndPath e.g. `feature/x/docs/a.md` (the longest prefix naming a branch).
 * @returns the new commit's hash.
 * @throws as {@link commitFiles}; BadRequest `Invalid path: a file path is required`.
 */
export async function commitFile(ctx: Context, projectId: number, branchAndPath: string, request: FileEditRequest): Promise<{ commitHash: string }> {
  const { project } = await loadProjectWith(ctx, projectId, 'writeCode');
  requireMessage(request.commitMessage);
  const target = await resolveBranchAndPath(ctx.repoPath(project.id), branchAndPath);
  if (target.path === '') throw new BadRequest('Invalid path: a file path is required');
  const change = { path: target.path, content: request.kind === 'delete' ? null : request.content };
  // an unchanged file still makes a commit, as it always has through the API
  return commitChanges(ctx, project.id, target, { commitMessage: request.commitMessage, changes: [change] }, true);
}

/**
 * Reads `<branch>[/<path>]` of a project the caller may write code in: the longest prefix naming
 * a branch, its head and the path after it (which need not exist), for the file editor's forms.
 *
 * @throws NotFound `Branch not found: X`; BadRequest `Invalid path: X`; Forbidden/Unauthorized
 *   without write code.
 */
export async function branchPathAt(ctx: Context, projectId: number, branchAndPath: string): Promise<{ branch: string; head: string; path: string }> {
  const { project } = await loadProjectWith(ctx, projectId, 'writeCode');
  const target = await resolveBranchAndPath(ctx.repoPath(project.id), branchAndPath);
  if (target.head === null) throw new NotFound(`Branch not found: ${target.branch}`);
  return { branch: target.branch, head: target.head, path: target.path };
}

/** One file of a {@link commitFiles} commit. */
export interface FileWrite {
  /** Repository-relative path. */
  path: string;
  /** The new content; null deletes the file (which must exist). */
  content: Buffer | null;
  /** Refuse when something exists at the path already (a new file, a rename's new path). */
  create?: boolean;
}

/** What {@link commitFiles} commits. */
export interface FilesCommitRequest {
  /** The branch changed (or, with `newBranch`, the branch the new one starts from). */
  branch: string;
  commitMessage: string;
  /** The files written and removed, in order (a rename: the old path removed, the new one created). */
  changes: FileWrite[];
  /**
   * The 40-hex commit the change was made against (the commit an edit form showed). When the
   * branch has moved since, the change goes on top of the new head as long as none of its paths
   * differs between the two commits; otherwise Conflict. Absent: the branch's head.
   */
  baseCommit?: string;
  /** Commit on this new branch, made from `branch`'s head, instead of on `branch`. */
  newBranch?: string;
}

/**
 * Commits file changes on a branch of a project (write code), as the caller (author and
 * committer, their verified git email), with plumbing from the branch head's tree. The branch
 * (or the new branch) moves by compare-and-swap under the branch protection of pushes — file
 * protections, review and build requirements, commit message rules — and the push reactions
 * follow (ref-updates.ts, {@link moveRef}). The web UI's file editor and suggested changes use
 * it, and the files API ({@link commitFile}) through the same steps.
 *
 * @returns the new commit's hash.
 * @throws BadRequest `Commit message is required`, `No file to change`, `Invalid path: X`,
 *   `Specified path is not a file: X`, `No change to commit`, `Invalid base commit: X`;
 *   NotFound `Branch not found: X`, `Path not found: X` (deleting a missing file); Conflict
 *   `A file already exists at X`, `Branch already exists: X`, `X changed on the branch since
 *   commit Y`, a protection refusal, a moved branch or a caller without verified email.
 */
export async function commitFiles(ctx: Context, projectId: number, request: FilesCommitRequest): Promise<{ commitHash: string }> {
  const { project } = await loadProjectWith(ctx, projectId, 'writeCode');
  requireMessage(request.commitMessage);
  const head = await branchHead(ctx.repoPath(project.id), request.branch);
  if (head === null) throw new NotFound(`Branch not found: ${request.branch}`);
  return commitChanges(ctx, project.id, { branch: request.branch, head }, request);
}

function requireMessage(message: string): void {
  if (!message.trim()) throw new BadRequest('Commit message is required');
}

/** The paths of `changes` whose entry differs between commits `base` and `head`. */
async function changedSince(repo: string, base: string, head: string, changes: readonly FileWrite[]): Promise<string[]> {
  const changed: string[] = [];
  for (const { path } of changes) {
    const [before, after] = await Promise.all([pathEntry(repo, base, path), pathEntry(repo, head, path)]);
    if (before?.oid !== after?.oid || before?.mode !== after?.mode) changed.push(path);
  }
  return changed;
}

/** Checks each change against the head it applies to (see {@link commitFiles}). */
async function checkChanges(repo: string, head: string, changes: readonly FileWrite[]): Promise<void> {
  if (changes.length === 0) throw new BadRequest('No file to change');
  const seen = new Set<string>();
  for (const change of changes) {
    if (change.path === '') throw new BadRequest('Invalid path: a file path is required');
    assertRepositoryPath(change.path);
    if (seen.has(change.path) && change.content === null) throw new BadRequest(`Invalid path: ${change.path} is removed twice`);
    seen.add(change.path);
    await assertWritablePath(repo, head, change.path);
    const exists = (await pathEntry(repo, head, change.path)) !== null;
    if (change.content === null && !exists) throw new NotFound(`Path not found: ${change.path}`);
    if (change.create && exists) throw new Conflict(`A file already exists at ${change.path}`);
  }
}

/** Commits `request` on `target` (see {@link commitFiles}); `allowEmpty` lets a commit change nothing. */
async function commitChanges(
  ctx: Context,
  projectId: number,
  target: { branch: string; head: string | null },
  request: Omit<FilesCommitRequest, 'branch'>,
  allowEmpty = false,
): Promise<{ commitHash: string }> {
  const repo = ctx.repoPath(projectId);
  const { head } = target;
  if (head !== null) {
    await checkChanges(repo, head, request.changes);
    if (request.baseCommit !== undefined && request.baseCommit !== head) {
      const base = isObjectId(request.baseCommit) ? await resolveCommit(repo, request.baseCommit) : null;
      if (base === null) throw new BadRequest(`Invalid base commit: ${request.baseCommit}`);
      const changed = await changedSince(repo, base, head, request.changes);
      if (changed.length > 0) {
        throw new Conflict(
          `${changed.join(', ')} changed on ${target.branch} since commit ${base.slice(0, 8)} (now at ${head.slice(0, 8)}): reload to see the new version`,
        );
      }
    }
  } else {
    await assertValidBranchName(target.branch);
    const removed = request.changes.find((change) => change.content === null);
    if (removed) throw new NotFound(`Path not found: ${removed.path}`);
  }
  const branch = request.newBranch ?? target.branch;
  if (request.newBranch !== undefined) {
    await assertValidBranchName(request.newBranch);
    if ((await branchHead(repo, request.newBranch)) !== null) throw new Conflict(`Branch already exists: ${request.newBranch}`);
  }
  const tree = await writeTreeWithChanges(repo, head, request.changes);
  if (!allowEmpty && head !== null && tree === (await pathEntry(repo, head, ''))?.oid) throw new BadRequest('No change to commit');
  const who = await gitIdentity(ctx.db, ctx.actor.userId, new Date(ctx.now()));
  const commitHash = await commitTree(repo, { tree, parents: head ? [head] : [], message: request.commitMessage, author: who, committer: who });
  const oldHash = request.newBranch !== undefined ? null : head;
  await moveRef(ctx, projectId, { ref: `refs/heads/${branch}`, oldHash, newHash: commitHash });
  return { commitHash };
}
