/**
 * Branches and tags of a project's repository (OneDev 8.6 RepositoryResource, docs/compatibility.md#gitloom-differs-additions-to-the-interface):
 * list names, read one, create, delete. Reads need read code; writes need write code and pass
 * the branch and tag protection of pushes (ref-updates.ts).
 */
import { BadRequest, Conflict, NotFound } from '../../errors.js';
import { assertValidBranchName, getDefaultBranch, listBranches, refHead, resolveCommit } from '../../git/repository.js';
import { assertValidTagName, createTagObject, listTags } from '../../git/tags.js';
import type { Db } from '../../db/database.js';
import { recordAudit } from '../audit/index.js';
import type { Context } from '../context.js';
import { loadProjectWith } from '../projects/index.js';
import { gitIdentity } from '../users/index.js';
import { moveRef } from './ref-updates.js';

/** A ref and the commit it points to (OneDev's RefResponse). */
export interface RefInfo {
  /** Full ref name, e.g. `refs/heads/feature/x`. */
  refName: string;
  /** 40-hex hash of the commit (for an annotated tag: the tagged commit). */
  commitHash: string;
}

/** Input of {@link createBranch} (OneDev's BranchCreateRequest). */
export interface BranchCreateRequest {
  /** Short name of the new branch. */
  branchName: string;
  /** Where it starts: a branch, tag, hash or other revision. */
  revision: string;
}

/** Input of {@link createTag} (OneDev's TagCreateRequest). */
export interface TagCreateRequest {
  /** Short name of the new tag. */
  tagName: string;
  /** The message of an annotated tag; empty or absent = a lightweight tag. */
  tagMessage?: string | null;
  /** The tagged revision. */
  revision: string;
}

/** Branches and tags alike: where their refs live and how errors name them. */
const REF_KINDS = {
  branch: { prefix: 'refs/heads/', label: 'Branch' },
  tag: { prefix: 'refs/tags/', label: 'Tag' },
} as const;

/**
 * An existing branch or tag of a project the caller may read (`readCode`) or change
 * (`writeCode`): the repository, the full ref and the object it points to.
 *
 * @throws NotFound `Branch not found: X` / `Tag not found: X`, or for an invisible project.
 */
async function existingRef(ctx: Context, projectId: number, kind: keyof typeof REF_KINDS, name: string, need: 'readCode' | 'writeCode') {
  const { project } = await loadProjectWith(ctx, projectId, need);
  const repo = ctx.repoPath(project.id);
  const ref = `${REF_KINDS[kind].prefix}${name}`;
  const head = await refHead(repo, ref);
  if (!head) throw new NotFound(`${REF_KINDS[kind].label} not found: ${name}`);
  return { projectId: project.id, repo, ref, head };
}

async function revisionCommit(repo: string, revision: string): Promise<string> {
  const commit = revision.startsWith('-') ? null : await resolveCommit(repo, revision);
  if (!commit) throw new BadRequest(`Revision not found: ${revision}`);
  return commit;
}

/**
 * GET `/repositories/{projectId}/branches`: read code; the branch names, sorted.
 *
 * @returns e.g. `["feature/b", "main"]`.
 * @throws NotFound for a project the caller cannot see; Forbidden without read code.
 */
export async function listBranchNames(ctx: Context, projectId: number): Promise<string[]> {
  const { project } = await loadProjectWith(ctx, projectId, 'readCode');
  return (await listBranches(ctx.repoPath(project.id))).map((b) => b.name);
}

/**
 * GET `/repositories/{projectId}/branches/{name}`: read code; the branch's ref and head.
 *
 * @throws NotFound `Branch not found: X`.
 */
export async function getBranch(ctx: Context, projectId: number, name: string): Promise<RefInfo> {
  const { ref, head } = await existingRef(ctx, projectId, 'branch', name, 'readCode');
  return { refName: ref, commitHash: head };
}

/**
 * POST `/repositories/{projectId}/branches`: write code; creates a branch at a revision, as a
 * push creating it would (branch protection, push reactions; ref-updates.ts).
 *
 * @throws BadRequest `Invalid branch name: X`, `Revision not found: X`; Conflict `Branch already
 *   exists: X` or a protection refusal (`Can not create this branch`).
 */
export async function createBranch(ctx: Context, projectId: number, request: BranchCreateRequest): Promise<void> {
  const { project } = await loadProjectWith(ctx, projectId, 'writeCode');
  const repo = ctx.repoPath(project.id);
  await assertValidBranchName(request.branchName);
  const ref = `refs/heads/${request.branchName}`;
  if (await refHead(repo, ref)) throw new Conflict(`Branch already exists: ${request.branchName}`);
  await moveRef(ctx, project.id, { ref, oldHash: null, newHash: await revisionCommit(repo, request.revision) });
}

/**
 * DELETE `/repositories/{projectId}/branches/{name}`: write code; deletes a branch other than the
 * default branch, as a push deleting it would.
 *
 * @throws NotFound `Branch not found: X`; Conflict `Can not delete default branch` or a
 *   protection refusal (`Can not delete this branch`).
 */
export async function deleteBranch(ctx: Context, projectId: number, name: string): Promise<void> {
  const { repo, ref, head } = await existingRef(ctx, projectId, 'branch', name, 'writeCode');
  if ((await getDefaultBranch(repo)) === name) throw new Conflict('Can not delete default branch');
  await moveRef(ctx, projectId, { ref, oldHash: head, newHash: null }, (tx) => auditRefDeletion(ctx, tx, projectId, 'branch', name, head));
}

/**
 * GET `/repositories/{projectId}/tags`: read code; the tag names, sorted.
 *
 * @throws NotFound for a project the caller cannot see; Forbidden without read code.
 */
export async function listTagNames(ctx: Context, projectId: number): Promise<string[]> {
  const { project } = await loadProjectWith(ctx, projectId, 'readCode');
  return (await listTags(ctx.repoPath(project.id))).map((t) => t.name);
}

/**
 * GET `/repositories/{projectId}/tags/{name}`: read code; the tag's ref and the commit it tags.
 *
 * @throws NotFound `Tag not found: X` (also for a tag of something other than a commit).
 */
export async function getTag(ctx: Context, projectId: number, name: string): Promise<RefInfo> {
  const { repo, ref } = await existingRef(ctx, projectId, 'tag', name, 'readCode');
  const commitHash = await resolveCommit(repo, ref);
  if (!commitHash) throw new NotFound(`Tag not found: ${name}`);
  return { refName: ref, commitHash };
}

/**
 * POST `/repositories/{projectId}/tags`: write code; creates a tag at a revision — annotated,
 * with the caller as tagger, when a message is given, else lightweight — as a push creating it
 * would (tag protection, push reactions).
 *
 * @throws BadRequest `Invalid tag name: X`, `Revision not found: X`; Conflict `Tag already
 *   exists: X`, `No verified email for git operations` (annotated tags), or a protection refusal
 *   (`Can not create this tag`).
 */
export async function createTag(ctx: Context, projectId: number, request: TagCreateRequest): Promise<void> {
  const { project } = await loadProjectWith(ctx, projectId, 'writeCode');
  const repo = ctx.repoPath(project.id);
  assertValidTagName(request.tagName);
  const ref = `refs/tags/${request.tagName}`;
  if (await refHead(repo, ref)) throw new Conflict(`Tag already exists: ${request.tagName}`);
  const commit = await revisionCommit(repo, request.revision);
  const message = request.tagMessage?.trim() ? request.tagMessage : null;
  const target =
    message === null
      ? commit
      : await createTagObject(repo, {
          name: request.tagName,
          commit,
          message,
          tagger: await gitIdentity(ctx.db, ctx.actor.userId, new Date(ctx.now())),
        });
  await moveRef(ctx, project.id, { ref, oldHash: null, newHash: target });
}

/**
 * DELETE `/repositories/{projectId}/tags/{name}`: write code; deletes a tag as a push would.
 *
 * @throws NotFound `Tag not found: X`; Conflict for a protection refusal (`Can not delete this tag`).
 */
export async function deleteTag(ctx: Context, projectId: number, name: string): Promise<void> {
  const { ref, head } = await existingRef(ctx, projectId, 'tag', name, 'writeCode');
  await moveRef(ctx, projectId, { ref, oldHash: head, newHash: null }, (tx) => auditRefDeletion(ctx, tx, projectId, 'tag', name, head));
}

/** The audit row of a branch or tag deleted through the API or the pages (`branch.delete`, `tag.delete`; docs/audit-log.md#actions), with the commit it pointed at. */
function auditRefDeletion(ctx: Context, tx: Db, projectId: number, kind: 'branch' | 'tag', name: string, head: string): Promise<void> {
  return recordAudit(ctx, tx, { action: `${kind}.delete`, targetType: kind, targetName: name, projectId, before: { commit: head } });
}
