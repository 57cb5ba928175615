/**
 * What the web UI's changes tab of a pull request (`/<project>/~pulls/<number>/changes`, issue
 * 12) reads: which two commits to compare (all changes, one update, or the range a code comment
 * was made on, as src/domain/code-comments gives it) and the whole-line range a new inline
 * comment marks. The request's code comments, and their creation, replies and resolution, are
 * the code comment area's (src/domain/code-comments).
 */
import type { PullRequestRow } from '../../db/schema.js';
import { BadRequest, NotFound } from '../../errors.js';
import { readBlob } from '../../git/files.js';
import { mergeBase } from '../../git/repository.js';
import type { PlanarRange } from '../code-comments/index.js';
import type { Context } from '../context.js';
import { loadProjectWith } from '../projects/index.js';
import { objectRead } from '../object-reads.js';

/** An update of a request as the changes tab offers it. */
export interface UpdateChoice {
  id: number;
  /** 1-based position among the request's updates. */
  index: number;
  headCommitHash: string;
  date: number;
}

/** The two commits the changes tab compares, and the choices it offers. */
export interface ChangesRange {
  oldCommitHash: string;
  newCommitHash: string;
  /** The chosen update's id, null for all changes (or a comment's range). */
  updateId: number | null;
  updates: UpdateChoice[];
}

/**
 * The range to show for a readable request (as from pullRequestByNumber): with `comment`, the
 * compare range a code comment of the request was made in (src/domain/code-comments
 * `requestCommentRange`); with `updateId`, that update's own commits (the previous update's
 * head, or the base for the first, to its head; 404 unless it is the request's); else all
 * changes — the merge base of the latest update's head and its target head (the request's base
 * when none) to that head.
 */
export async function changesRange(
  ctx: Context,
  pr: PullRequestRow,
  select: { updateId?: number; comment?: { oldCommitHash: string; newCommitHash: string } },
): Promise<ChangesRange> {
  const rows = await ctx.db
    .selectFrom('pullRequestUpdates')
    .select(['id', 'headCommitHash', 'targetHeadCommitHash', 'date'])
    .where('requestId', '=', pr.id)
    .orderBy('id')
    .execute();
  const updates = rows.map((u, i) => ({ id: u.id, index: i + 1, headCommitHash: u.headCommitHash, date: u.date }));
  if (select.comment !== undefined) return { ...select.comment, updateId: null, updates };
  if (select.updateId !== undefined) {
    const index = rows.findIndex((u) => u.id === select.updateId);
    if (index < 0) throw new NotFound(`Update not found: ${select.updateId}`);
    const old = index === 0 ? pr.baseCommitHash : rows[index - 1].headCommitHash;
    return { oldCommitHash: old, newCommitHash: rows[index].headCommitHash, updateId: rows[index].id, updates };
  }
  const latest = rows[rows.length - 1];
  const repo = ctx.repoPath(pr.targetProjectId);
  const heads = [latest.targetHeadCommitHash, latest.headCommitHash];
  const base = await objectRead(repo, 'merge-base', heads, () => mergeBase(repo, heads[0], heads[1]));
  return { oldCommitHash: base ?? pr.baseCommitHash, newCommitHash: latest.headCommitHash, updateId: null, updates };
}

/**
 * The mark range of a whole line (1-based `line`) of a file at a commit of a project (read code):
 * from its first column to its end. 400 `File not found at commit: X` or `Line N is outside of
 * file X` otherwise.
 */
export async function wholeLineRange(ctx: Context, projectId: number, commitHash: string, path: string, line: number): Promise<PlanarRange> {
  await loadProjectWith(ctx, projectId, 'readCode');
  const unsafe =
    !path || path.startsWith('/') || path.startsWith('-') || /[\0\n\r]/.test(path) || path.split('/').some((s) => s === '' || s === '.' || s === '..');
  const blob = unsafe || !/^[0-9a-f]{40}$/.test(commitHash) ? null : await readBlob(ctx.repoPath(projectId), commitHash, path);
  if (!blob) throw new BadRequest(`File not found at commit: ${path}`);
  const lines = blob.toString('utf8').split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  if (!Number.isInteger(line) || line < 1 || line > lines.length) throw new BadRequest(`Line ${line} is outside of file ${path} (${lines.length} lines)`);
  return { fromRow: line - 1, fromColumn: 0, toRow: line - 1, toColumn: lines[line - 1].length };
}
