/**
 * Directories and files of a project's repository (OneDev 8.6 RepositoryResource, docs/compatibility.md#gitloom-differs-additions-to-the-interface): list a directory, read a file (capped), and commit a file change on a branch made with
 * plumbing — no work tree — moved by compare-and-swap with the protections and reactions of a
 * push (ref-updates.ts).
 */
import { BadRequest, NotFound } from '../../errors.js';
import { assertValidBranchName, commitTree } from '../../git/repository.js';
import { listDirectory, pathEntry, readBlobHead, writeTreeWithChange } from '../../git/trees.js';
import type { Context } from '../context.js';
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
  const entries = await listDirectory(repo, at.commitHash, at.path);
  if (entries === null) {
    if ((await pathEntry(repo, at.commitHash, at.path)) === null) throw new NotFound(`Path not found: ${at.path}`);
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
  const entry = await pathEntry(repo, at.commitHash, at.path);
  if (entry === null) throw new NotFound(`Path not found: ${at.path}`);
  if (entry.type !== 'blob' || entry.size === null) throw new BadRequest(`Specified path is not a file: ${at.path}`);
  const content = await readBlobHead(repo, entry.oid, MAX_FILE_CONTENT);
  return { path: entry.path, sha: entry.oid, content, size: entry.size, isPartial: entry.size > content.length };
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
 * updated or deleted on a branch, by the caller (author and committer, their verified git
 * email), made with plumbing from the branch head's tree. The branch moves by compare-and-swap
 * under the branch protection of pushes — file protections, review and build requirements,
 * commit message rules — and the push reactions follow (ref-updates.ts). In a repository
 * without branches the commit creates the branch, which becomes the default branch.
 *
 * @param branchAndPath e.g. `feature/x/docs/a.md` (the longest prefix naming a branch).
 * @returns the new commit's hash.
 * @throws BadRequest `Commit message is required`, `Invalid path: X`, `Specified path is not a
 *   file: X`; NotFound `Branch not found: X`, `Path not found: X` (deleting a missing file);
 *   Conflict for a protection refusal, a moved branch or a caller without verified email.
 */
export async function commitFile(ctx: Context, projectId: number, branchAndPath: string, request: FileEditRequest): Promise<{ commitHash: string }> {
  const { project } = await loadProjectWith(ctx, projectId, 'writeCode');
  const repo = ctx.repoPath(project.id);
  if (!request.commitMessage.trim()) throw new BadRequest('Commit message is required');
  const target = await resolveBranchAndPath(repo, branchAndPath);
  if (target.path === '') throw new BadRequest('Invalid path: a file path is required');
  if (target.head !== null) await assertWritablePath(repo, target.head, target.path);
  else await assertValidBranchName(target.branch);
  if (request.kind === 'delete' && (target.head === null || (await pathEntry(repo, target.head, target.path)) === null)) {
    throw new NotFound(`Path not found: ${target.path}`);
  }
  const tree = await writeTreeWithChange(repo, target.head, { path: target.path, content: request.kind === 'delete' ? null : request.content });
  const who = await gitIdentity(ctx.db, ctx.actor.userId, new Date(ctx.now()));
  const commitHash = await commitTree(repo, { tree, parents: target.head ? [target.head] : [], message: request.commitMessage, author: who, committer: who });
  await moveRef(ctx, project.id, { ref: `refs/heads/${target.branch}`, oldHash: target.head, newHash: commitHash });
  return { commitHash };
}
