/**
 * Suggested changes in code comments (as GitHub's, docs/compatibility.md#suggested-changes): a
 * comment whose content holds a fenced block opened by ```` ```suggestion ```` proposes its lines
 * in place of the lines the comment marks. Applying commits them on the pull request's source
 * branch through the repository area's {@link commitFiles} (write code, branch and file
 * protections, compare-and-swap), one commit for one or several suggestions, and marks the
 * comments resolved.
 */
import type { CodeCommentRow, PullRequestRow } from '../../db/schema.js';
import { BadRequest, Conflict, NotFound } from '../../errors.js';
import { readBlob } from '../../git/files.js';
import { branchHead } from '../../git/repository.js';
import type { Context } from '../context.js';
import { requireUser } from '../actor.js';
import { findProjectRow, projectPermissions } from '../projects/index.js';
import { loadReadablePullRequest } from '../pulls/index.js';
import { commitFiles } from '../repositories/index.js';
import { touchPullRequest } from './code-comments.js';

/** A part of a code comment's content: Markdown text, or a suggestion's lines. */
export type CommentPart = { kind: 'text'; text: string } | { kind: 'suggestion'; lines: string[] };

const FENCE_OPEN = /^ {0,3}```suggestion[ \t]*$/;
const FENCE_CLOSE = /^ {0,3}```[ \t]*$/;

/**
 * Splits a comment's content into Markdown text and suggestion blocks: a line ```` ```suggestion ````
 * opens a block, the next line of three backticks alone closes it (an unclosed block runs to the
 * end). Line ends are `\n` (a `\r` before it is dropped).
 *
 * @example splitSuggestions('Better:\n```suggestion\nreturn b + a;\n```\n') →
 *   [{ kind: 'text', text: 'Better:' }, { kind: 'suggestion', lines: ['return b + a;'] }]
 */
export function splitSuggestions(content: string): CommentPart[] {
  const parts: CommentPart[] = [];
  const lines = content.split('\n').map((line) => line.replace(/\r$/, ''));
  let text: string[] = [];
  const flushText = () => {
    if (text.join('\n').trim() !== '') parts.push({ kind: 'text', text: text.join('\n') });
    text = [];
  };
  for (let i = 0; i < lines.length; i++) {
    if (!FENCE_OPEN.test(lines[i])) {
      text.push(lines[i]);
      continue;
    }
    flushText();
    const block: string[] = [];
    for (i++; i < lines.length && !FENCE_CLOSE.test(lines[i]); i++) block.push(lines[i]);
    parts.push({ kind: 'suggestion', lines: block });
  }
  flushText();
  return parts;
}

/** The lines of the first suggestion of a comment's content, or null when it holds none. */
export function suggestionOf(content: string): string[] | null {
  const part = splitSuggestions(content).find((p) => p.kind === 'suggestion');
  return part?.kind === 'suggestion' ? part.lines : null;
}

/** A file's text split in lines, and its line end (`\r\n` when it uses it, else `\n`). */
function linesOf(content: Buffer): { lines: string[]; eol: string } {
  const text = content.toString('utf8');
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  return { lines: text.split(eol), eol };
}

/** The lines a comment marks (0-based rows, inclusive), or null when the file has fewer. */
function markedLines(lines: string[], comment: Pick<CodeCommentRow, 'markFromRow' | 'markToRow'>): string[] | null {
  if (comment.markToRow < comment.markFromRow || comment.markToRow >= lines.length) return null;
  return lines.slice(comment.markFromRow, comment.markToRow + 1);
}

/** A suggestion as the changes tab draws it. */
export interface SuggestionView {
  /** The lines the comment marks, at the commit it was made on. */
  oldLines: string[];
  /** The suggested lines. */
  newLines: string[];
}

/** What the changes tab shows of a request's suggestions. */
export interface RequestSuggestions {
  /** The suggestion of each comment holding one, by comment id. */
  views: Map<number, SuggestionView>;
  /** Whether the caller may apply them: the request is open and they can write its source project's code. */
  canApply: boolean;
}

/**
 * The suggestions among `comments` of a readable request `pr`: the marked lines beside the
 * suggested ones (one blob read per commented file and commit), and whether the caller may
 * apply them.
 */
export async function requestSuggestions(ctx: Context, pr: PullRequestRow, comments: readonly CodeCommentRow[]): Promise<RequestSuggestions> {
  const views = new Map<number, SuggestionView>();
  const files = new Map<string, Promise<Buffer | null>>();
  const repo = ctx.repoPath(pr.targetProjectId);
  for (const comment of comments) {
    const newLines = suggestionOf(comment.content);
    if (newLines === null) continue;
    const key = `${comment.markCommitHash}\0${comment.markPath}`;
    if (!files.has(key)) files.set(key, readBlob(repo, comment.markCommitHash, comment.markPath));
    const content = await files.get(key)!;
    const oldLines = content === null ? null : markedLines(linesOf(content).lines, comment);
    if (oldLines !== null) views.set(comment.id, { oldLines, newLines });
  }
  return { views, canApply: views.size > 0 && (await canWriteSource(ctx, pr)) };
}

/** Whether the caller may commit on the source branch of `pr`: open, source project present, write code there. */
async function canWriteSource(ctx: Context, pr: PullRequestRow): Promise<boolean> {
  if (pr.status !== 'OPEN' || pr.sourceProjectId === null || ctx.actor.userId <= 0) return false;
  const source = await findProjectRow(ctx.db, pr.sourceProjectId);
  return source !== undefined && (await projectPermissions(ctx, source)).writeCode;
}

/**
 * Applies the suggestions of code comments `commentIds` of pull request `requestId` in one commit
 * on its source branch, made with {@link commitFiles} (write code on the source project; branch
 * and file protections apply with their messages), then marks the comments resolved.
 * Each comment's marked lines must be, at the source branch's head, what they were at the commit
 * the comment was made on, at the same rows; suggestions of one file must not overlap.
 *
 * @param message the commit message; empty: `Apply suggestion from code comment #N` (or
 *   `Apply N suggestions from code comments`).
 * @returns the new commit's hash.
 * @throws BadRequest `Choose at least one suggestion`, `Code comment N holds no suggestion`,
 *   `Suggestions of code comments N and M overlap`, `The pull request is not open`;
 *   NotFound `Code comment not found: N` (not one of the request's); Conflict `Code comment N is
 *   resolved`, `Lines A–B of P changed since code comment N was made`, `Source branch not
 *   found: X`, and those of {@link commitFiles}.
 */
export async function applySuggestions(ctx: Context, requestId: number, commentIds: readonly number[], message = ''): Promise<{ commitHash: string }> {
  requireUser(ctx.actor);
  const pr = await loadReadablePullRequest(ctx, requestId);
  if (commentIds.length === 0) throw new BadRequest('Choose at least one suggestion');
  if (pr.status !== 'OPEN' || pr.sourceProjectId === null) throw new BadRequest('The pull request is not open');
  const rows = await ctx.db.selectFrom('codeComments').selectAll().where('id', 'in', commentIds).where('comparePullRequestId', '=', pr.id).execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  const comments = commentIds.map((id) => {
    const comment = byId.get(id);
    if (!comment) throw new NotFound(`Code comment not found: ${id}`);
    if (comment.resolved) throw new Conflict(`Code comment ${id} is resolved`);
    return comment;
  });
  const sourceRepo = ctx.repoPath(pr.sourceProjectId);
  const head = await branchHead(sourceRepo, pr.sourceBranch);
  if (head === null) throw new Conflict(`Source branch not found: ${pr.sourceBranch}`);
  const changes = [];
  for (const [path, ofFile] of groupByPath(comments)) {
    const current = await readBlob(sourceRepo, head, path);
    if (current === null) throw new Conflict(`${path} no longer exists on ${pr.sourceBranch}`);
    const { lines, eol } = linesOf(current);
    for (const comment of ofFile) await assertLinesUnchanged(ctx, pr, comment, lines);
    // bottom-up, so the rows of the suggestions above stay valid
    for (const comment of [...ofFile].reverse()) {
      lines.splice(comment.markFromRow, comment.markToRow - comment.markFromRow + 1, ...suggestionOf(comment.content)!);
    }
    changes.push({ path, content: Buffer.from(lines.join(eol), 'utf8') });
  }
  const commitMessage =
    message.trim() ||
    (comments.length === 1 ? `Apply suggestion from code comment #${comments[0].id}` : `Apply ${comments.length} suggestions from code comments`);
  const result = await commitFiles(ctx, pr.sourceProjectId, { branch: pr.sourceBranch, commitMessage, changes, baseCommit: head });
  await ctx.db.transaction().execute(async (tx) => {
    await tx
      .updateTable('codeComments')
      .set({ resolved: 1, lastActivityUserId: ctx.actor.userId, lastActivityDate: ctx.now(), lastActivityDescription: 'resolved' })
      .where('id', 'in', commentIds)
      .execute();
    await touchPullRequest(tx, pr.id, ctx.now());
  });
  return result;
}

/** The comments by marked path, each file's sorted by row; overlapping suggestions refused. */
function groupByPath(comments: CodeCommentRow[]): Map<string, CodeCommentRow[]> {
  const byPath = new Map<string, CodeCommentRow[]>();
  for (const comment of comments) {
    if (suggestionOf(comment.content) === null) throw new BadRequest(`Code comment ${comment.id} holds no suggestion`);
    byPath.set(comment.markPath, [...(byPath.get(comment.markPath) ?? []), comment]);
  }
  for (const list of byPath.values()) {
    list.sort((a, b) => a.markFromRow - b.markFromRow);
    for (let i = 1; i < list.length; i++) {
      if (list[i].markFromRow <= list[i - 1].markToRow) throw new BadRequest(`Suggestions of code comments ${list[i - 1].id} and ${list[i].id} overlap`);
    }
  }
  return byPath;
}

/** Refuses a comment whose marked lines differ between the commit it was made on and `current` (the head's lines). */
async function assertLinesUnchanged(ctx: Context, pr: PullRequestRow, comment: CodeCommentRow, current: string[]): Promise<void> {
  const atMark = await readBlob(ctx.repoPath(pr.targetProjectId), comment.markCommitHash, comment.markPath);
  const before = atMark === null ? null : markedLines(linesOf(atMark).lines, comment);
  const now = markedLines(current, comment);
  if (before === null || now === null || before.join('\n') !== now.join('\n')) {
    const rows = `${comment.markFromRow + 1}–${comment.markToRow + 1}`;
    throw new Conflict(`Lines ${rows} of ${comment.markPath} changed since code comment ${comment.id} was made: the suggestion can no longer be applied`);
  }
}
