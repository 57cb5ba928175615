import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/database.js';
import type { CodeCommentRow, CompareContextColumns, ProjectRow } from '../../db/schema.js';
import { BadRequest } from '../../errors.js';
import { readBlob } from '../../git/files.js';
import { isObjectId, resolveCommit } from '../../git/repository.js';
import type { Context } from '../context.js';
import { loadRow, authorReassignment } from '../entities.js';
import { parseReferences, recordReferences } from '../issues/index.js';
import { recordMentionsOnCodeComment } from './code-comment-mentions.js';
import { findProjectRow, loadProjectWith, type ProjectPermissions } from '../projects/index.js';
import { findPullRequestRow, recordPullRequestMentions, touchCodeComments } from '../pulls/index.js';
import { deny, requireUser } from '../actor.js';
import { requireSelfOrAdmin } from '../users/index.js';

export const MAX_CONTENT = 100_000;
export const WHITESPACE_OPTIONS = ['DEFAULT', 'IGNORE_LEADING', 'IGNORE_CHANGE', 'IGNORE_ALL', 'DO_NOT_IGNORE'] as const;
const ZERO = '0'.repeat(40);

/** `mark.range` (docs/compatibility.md#code-comments): 0-based rows. */
export interface PlanarRange {
  fromRow: number;
  fromColumn: number;
  toRow: number;
  toColumn: number;
  tabWidth?: number;
}

/** `mark`: where in which file at which commit the comment is attached. */
export interface Mark {
  commitHash: string;
  path: string;
  range: PlanarRange;
}

/** `compareContext` (docs/compatibility.md#code-comments). */
export interface CompareContext {
  pullRequestId?: number | null;
  oldCommitHash: string;
  newCommitHash: string;
  pathFilter?: string | null;
  currentFile?: string | null;
  whitespaceOption?: string;
}

/** CodeComment input: create body, or the fields an update merges. */
export interface CodeCommentData {
  projectId: number;
  userId?: number;
  content: string;
  createDate?: number;
  mark: Mark;
  compareContext: CompareContext;
  resolved?: boolean;
  uuid?: string;
}

/** A code comment with its project and the caller's privileges there. */
export interface LoadedCodeComment {
  comment: CodeCommentRow;
  project: ProjectRow;
  permissions: ProjectPermissions;
}

/** Loads a code comment the caller may read: ReadCode on its project (404 when the project is invisible). */
export async function loadReadableCodeComment(ctx: Context, id: number): Promise<LoadedCodeComment> {
  const comment = await loadRow(ctx.db, 'codeComments', id, 'Code comment');
  const { project, permissions } = await loadProjectWith(ctx, comment.projectId, 'readCode');
  return { comment, project, permissions };
}

/** Checks markdown content: required, at most 100000 characters (400). */
export function checkContent(content: unknown): string {
  if (typeof content !== 'string' || content.trim() === '') throw new BadRequest('Content is required');
  if (content.length > MAX_CONTENT) throw new BadRequest(`Content should not exceed ${MAX_CONTENT} characters`);
  return content;
}

/**
 * Validates a compare context and turns it into columns: 40-hex hashes (40 zeros = none), a
 * known whitespace option (default `DEFAULT`), and a pull request, when given, that exists and
 * targets `projectId` (400 otherwise).
 */
export async function compareContextColumns(db: Db, projectId: number, context: CompareContext | undefined | null): Promise<CompareContextColumns> {
  if (!context) throw new BadRequest('compareContext is required');
  for (const field of ['oldCommitHash', 'newCommitHash'] as const) {
    if (typeof context[field] !== 'string' || !isObjectId(context[field].toLowerCase()))
      throw new BadRequest(`Invalid compareContext.${field}: ${context[field]}`);
  }
  const whitespace = context.whitespaceOption ?? 'DEFAULT';
  if (!(WHITESPACE_OPTIONS as readonly string[]).includes(whitespace)) throw new BadRequest(`Invalid compareContext.whitespaceOption: ${whitespace}`);
  const requestId = context.pullRequestId ?? null;
  if (requestId !== null) {
    const pr = await findPullRequestRow(db, requestId);
    if (!pr) throw new BadRequest(`Pull request not found: ${requestId}`);
    if (pr.targetProjectId !== projectId) throw new BadRequest('Specified pull request does not belong to specified project');
  }
  return {
    comparePullRequestId: requestId,
    compareOldCommitHash: context.oldCommitHash.toLowerCase(),
    compareNewCommitHash: context.newCommitHash.toLowerCase(),
    comparePathFilter: context.pathFilter ?? null,
    compareCurrentFile: context.currentFile ?? null,
    compareWhitespaceOption: whitespace,
  };
}

/**
 * Validates a mark against the repository (Gitloom improvement over docs/compatibility.md#code-comments): the commit
 * exists in the project, the path is a file at that commit, and the 0-based range lies inside it
 * (rows within the file, columns within their lines, start not after end). 400 otherwise.
 */
async function markColumns(ctx: Context, projectId: number, mark: Mark | undefined | null) {
  if (!mark || typeof mark.commitHash !== 'string' || typeof mark.path !== 'string' || !mark.range) throw new BadRequest('mark is required');
  const repo = ctx.repoPath(projectId);
  const hash = mark.commitHash.toLowerCase();
  if (!isObjectId(hash) || hash === ZERO || (await resolveCommit(repo, hash)) !== hash) throw new BadRequest(`Commit not found: ${mark.commitHash}`);
  const path = mark.path;
  const unsafe = !path || path.startsWith('/') || /[\0\n\r]/.test(path) || path.split('/').some((s) => s === '' || s === '.' || s === '..');
  const blob = unsafe ? null : await readBlob(repo, hash, path);
  if (!blob) throw new BadRequest(`File not found at commit: ${mark.path}`);
  const lines = blob.toString('utf8').split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const { fromRow, fromColumn, toRow, toColumn } = mark.range;
  const tabWidth = mark.range.tabWidth ?? 1;
  const inside =
    fromRow >= 0 &&
    toRow >= fromRow &&
    toRow < lines.length &&
    fromColumn >= 0 &&
    toColumn >= 0 &&
    tabWidth >= 1 &&
    fromColumn <= lines[fromRow].length &&
    toColumn <= lines[toRow].length &&
    (fromRow < toRow || fromColumn <= toColumn);
  if (!inside) throw new BadRequest(`Range is outside of file ${mark.path} (${lines.length} lines)`);
  return {
    markCommitHash: hash,
    markPath: mark.path,
    markFromRow: fromRow,
    markFromColumn: fromColumn,
    markToRow: toRow,
    markToColumn: toColumn,
    markTabWidth: tabWidth,
  };
}

/** A code comment attached to a pull request changed: the request's `codeCommentsUpdateDate` moves (docs/compatibility.md#pull-requests-json). */
export async function touchPullRequest(db: Db, requestId: number | null, now: number): Promise<void> {
  if (requestId !== null) await touchCodeComments(db, requestId, now);
}

/** Records mentions of a code comment's text: on the pull request when attached to one, else on the comment (docs/compatibility.md#mentions-and-notifications). */
export async function recordCodeCommentMentions(db: Db, comment: Pick<CodeCommentRow, 'id' | 'comparePullRequestId'>, text: string): Promise<void> {
  if (comment.comparePullRequestId !== null) await recordPullRequestMentions(db, comment.comparePullRequestId, text);
  else await recordMentionsOnCodeComment(db, comment.id, text);
}

/**
 * Records the issue and pull request references of a code comment's or reply's text as
 * "referenced from code comment" changes (docs/compatibility.md#fixed-issue-references): a reference without
 * path means the comment's project; the pull request the comment is attached to is not counted.
 */
export async function recordCodeCommentReferences(
  db: Db,
  comment: Pick<CodeCommentRow, 'id' | 'projectId' | 'comparePullRequestId'>,
  userId: number,
  date: number,
  text: string,
): Promise<void> {
  await recordReferences(
    db,
    { kind: 'codeComment', commentId: comment.id, projectId: comment.projectId, requestId: comment.comparePullRequestId },
    userId,
    date,
    parseReferences(text, 'markdown'),
  );
}

/** Get (docs/compatibility.md#code-comments): ReadCode on the comment's project. */
export async function getCodeComment(ctx: Context, id: number): Promise<CodeCommentRow> {
  return (await loadReadableCodeComment(ctx, id)).comment;
}

/**
 * Create (docs/compatibility.md#code-comments): ReadCode on the project and (administrator or `userId` = caller;
 * `userId` defaults to the caller); content, mark and compare context validated (400);
 * lastActivity `added`; mentions recorded. Returns the id.
 */
export async function createCodeComment(ctx: Context, data: CodeCommentData): Promise<number> {
  const userId = data.userId ?? requireUser(ctx.actor);
  requireSelfOrAdmin(ctx, userId);
  if (!(await findProjectRow(ctx.db, data.projectId))) throw new BadRequest(`Project not found: ${data.projectId}`);
  await loadProjectWith(ctx, data.projectId, 'readCode');
  const content = checkContent(data.content);
  const compare = await compareContextColumns(ctx.db, data.projectId, data.compareContext);
  const mark = await markColumns(ctx, data.projectId, data.mark);
  const createDate = data.createDate ?? ctx.now();
  return ctx.db.transaction().execute(async (tx) => {
    const { id } = await tx
      .insertInto('codeComments')
      .values({
        projectId: data.projectId,
        userId,
        content,
        createDate,
        lastActivityUserId: userId,
        lastActivityDate: createDate,
        lastActivityDescription: 'added',
        replyCount: 0,
        ...mark,
        ...compare,
        resolved: data.resolved ? 1 : 0,
        uuid: data.uuid ?? randomUUID(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await recordCodeCommentMentions(tx, { id, comparePullRequestId: compare.comparePullRequestId }, content);
    await recordCodeCommentReferences(tx, { id, projectId: data.projectId, comparePullRequestId: compare.comparePullRequestId }, userId, ctx.now(), content);
    await touchPullRequest(tx, compare.comparePullRequestId, ctx.now());
    await ctx.events.dispatchInTransaction('activity', {
      db: tx,
      activity: { type: 'CODE_COMMENT', action: 'CREATED', commentId: id, actorId: userId, date: createDate, text: content },
    });
    return id;
  });
}

/**
 * Update (docs/compatibility.md#code-comments): partial merge of content, mark, compareContext, resolved and uuid;
 * administrator or the author (ManageCodeComments is not enough, as in OneDev);
 * `projectId`/`userId` can not move (400). lastActivity becomes `resolved`/`unresolved` when the
 * flag flipped, else `edited`; mentions in new content are recorded.
 */
export async function updateCodeComment(ctx: Context, id: number, patch: Partial<CodeCommentData>): Promise<void> {
  const { comment } = await loadReadableCodeComment(ctx, id);
  requireSelfOrAdmin(ctx, comment.userId);
  if (patch.projectId !== undefined && patch.projectId !== comment.projectId) throw new BadRequest("'projectId' can not be changed");
  if (patch.userId !== undefined && patch.userId !== comment.userId) throw new BadRequest("'userId' can not be changed");
  const content = patch.content === undefined ? comment.content : checkContent(patch.content);
  const compare: Partial<CompareContextColumns> =
    patch.compareContext === undefined ? {} : await compareContextColumns(ctx.db, comment.projectId, patch.compareContext);
  const mark = patch.mark === undefined ? {} : await markColumns(ctx, comment.projectId, patch.mark);
  const resolved = patch.resolved === undefined ? comment.resolved : patch.resolved ? 1 : 0;
  const description = resolved !== comment.resolved ? (resolved ? 'resolved' : 'unresolved') : 'edited';
  await ctx.db.transaction().execute(async (tx) => {
    await tx
      .updateTable('codeComments')
      .set({
        content,
        ...compare,
        ...mark,
        resolved,
        uuid: patch.uuid ?? comment.uuid,
        createDate: patch.createDate ?? comment.createDate,
        lastActivityUserId: ctx.actor.userId,
        lastActivityDate: ctx.now(),
        lastActivityDescription: description,
      })
      .where('id', '=', id)
      .execute();
    const requestId = compare.comparePullRequestId !== undefined ? compare.comparePullRequestId : comment.comparePullRequestId;
    if (patch.content !== undefined) {
      await recordCodeCommentMentions(tx, { id, comparePullRequestId: requestId }, content);
      await recordCodeCommentReferences(tx, { id, projectId: comment.projectId, comparePullRequestId: requestId }, ctx.actor.userId, ctx.now(), content);
    }
    await touchPullRequest(tx, requestId, ctx.now());
  });
}

/** Delete (docs/compatibility.md#code-comments): the author or ManageCodeComments; replies and mentions cascade. */
export async function deleteCodeComment(ctx: Context, id: number): Promise<void> {
  const { comment, permissions } = await loadReadableCodeComment(ctx, id);
  requireUser(ctx.actor);
  if (comment.userId !== ctx.actor.userId && !permissions.manageCodeComments) deny(ctx.actor);
  await ctx.db.transaction().execute(async (tx) => {
    await tx.deleteFrom('codeComments').where('id', '=', id).execute();
    await touchPullRequest(tx, comment.comparePullRequestId, ctx.now());
  });
}

/** A deleted user's code comments and their replies go to the unknown user (the `userDeleting` reaction, docs/compatibility.md#users-deletion). */
export const reassignCodeCommentAuthors = authorReassignment({ codeComments: ['userId', 'lastActivityUserId'], codeCommentReplies: ['userId'] });
