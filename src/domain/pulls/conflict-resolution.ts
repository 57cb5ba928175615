/**
 * Resolving the merge conflicts of a pull request in the browser
 * (docs/compatibility.md#pull-requests-resolving-conflicts): the conflicted files of the merge of
 * the target branch into the source branch as `git merge-tree` reports them, each text file
 * merged into regions (conflict-regions.ts), and the commit of a resolution — a merge of the
 * target head into the source head (parents: source head, target head) — moved onto the source
 * branch with the protections and reactions of a push, or onto a new branch of the target project.
 */
import { randomUUID } from 'node:crypto';
import type { PullRequestRow } from '../../db/schema.js';
import { BadRequest, Conflict } from '../../errors.js';
import { parseLfsPointer } from '../../git/lfs-pointers.js';
import { mergeConflictDetails, writeResolvedTree, type MergeConflictDetails, type PathResolution, type StageEntry } from '../../git/merge-conflicts.js';
import { readBlobs } from '../../git/blob-batches.js';
import { assertValidBranchName, branchHead, commitTree, deleteRef, fetchCommits, refHead, updateRef } from '../../git/repository.js';
import { deny, requireUser } from '../actor.js';
import type { Context } from '../context.js';
import { getProjectRow, loadProjectWith, projectPermissions } from '../projects/index.js';
import { MAX_VIEW_BYTES, moveRef } from '../repositories/index.js';
import { objectRead } from '../object-reads.js';
import { gitIdentity } from '../users/index.js';
import { checkPullRequest } from './check.js';
import {
  lineEndingOf,
  markerLines,
  markerSizeOf,
  mergeRegions,
  resolvedText,
  withLineEnding,
  type MarkerLabels,
  type MergeChunk,
  type RegionChoice,
} from './conflict-regions.js';
import { latestUpdate } from './pull-requests.js';

/** The most bytes of conflicted file versions read for text merging in one view (later files are resolved by choosing a side). */
export const MAX_CONFLICT_TEXT_BYTES = 16 * 1024 * 1024;

/**
 * How a path conflicts, by the sides that have it: both changed it (`both-modified`), both added
 * it (`both-added`), one deleted (or renamed away) what the other changed, one side alone has it
 * (a rename to different names, a file moved out of a directory's way), or both deleted it.
 * "Source" is stage 2 (ours), "target" stage 3 (theirs).
 */
export type ConflictKind =
  'both-modified' | 'both-added' | 'deleted-by-target' | 'deleted-by-source' | 'added-by-source' | 'added-by-target' | 'deleted-by-both';

/** One version of a conflicted path: its mode, object id and size (null for a submodule or symbolic link). */
export interface ConflictSide extends StageEntry {
  size: number | null;
}

/** A text file's merge: its regions and the text area's first value. */
export interface TextMerge {
  chunks: MergeChunk[];
  /** Number of conflict regions. */
  regions: number;
  /** Length of this file's markers (conflict-regions.ts markerSizeOf). */
  markerSize: number;
  eol: '\n' | '\r\n';
  /** The file with every conflict region between markers. */
  unresolved: string;
}

/** Why a file is resolved by choosing a side, not as text. */
export type SidesOnlyReason = 'one-side' | 'binary' | 'large' | 'encoding' | 'symlink' | 'submodule' | 'lfs';

/** A conflicted path of the merge. */
export interface ConflictFile {
  path: string;
  kind: ConflictKind;
  base: ConflictSide | null;
  /** The source branch's version (stage 2). */
  ours: ConflictSide | null;
  /** The target branch's version (stage 3). */
  theirs: ConflictSide | null;
  /** Git's conflict messages naming the path, commit ids replaced by the branch names. */
  messages: { type: string; text: string }[];
  /** The text merge; null when the file is resolved by choosing a side. */
  text: TextMerge | null;
  /** Why there is no text merge (null when there is one, or nothing to choose). */
  sidesOnly: SidesOnlyReason | null;
}

/** The conflicts page of a pull request. */
export interface PullRequestConflicts {
  /** The source head the conflicts are of (the request's latest update), '' when none is computed. */
  sourceHead: string;
  /** The target branch head, '' when none is computed. */
  targetHead: string;
  labels: MarkerLabels;
  /** The conflicted paths in git's order; empty when the merge is clean. */
  files: ConflictFile[];
  /** Why no resolution can be committed now (closed, target gone, source moved, rebase strategy); null when it can. */
  blocked: string | null;
  /** Where the caller's resolution goes: the source branch, a new branch of the target project, or nowhere (null: no write permission). */
  destination: 'source' | 'new-branch' | null;
  /** Whether the caller may commit the resolution to a new branch of the target project instead (write code there). */
  newBranchAllowed: boolean;
}

/** A file's resolution as submitted: `ours`, `theirs` or `merge` (the text), the text and the region choices by 0-based region index. */
export interface FileResolutionInput {
  path: string;
  choice: string;
  content: string | null;
  regions: Map<number, string>;
}

/** A submitted resolution. */
export interface ConflictResolutionInput {
  /** The heads the resolution was made on (the page's hidden fields). */
  sourceHead: string;
  targetHead: string;
  files: FileResolutionInput[];
  /** The commit message; empty for the default. */
  message: string;
  /** A new branch of the target project to commit to; empty for the source branch. */
  newBranch: string;
}

/** Where a resolution was committed. */
export interface ConflictResolutionResult {
  commitHash: string;
  projectId: number;
  branch: string;
  /** Whether `branch` was created (in the target project). */
  created: boolean;
}

const REGULAR_MODES = new Set(['100644', '100755']);
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function kindOf(p: { base: unknown; ours: unknown; theirs: unknown }): ConflictKind {
  if (p.ours && p.theirs) return p.base ? 'both-modified' : 'both-added';
  if (p.ours) return p.base ? 'deleted-by-target' : 'added-by-source';
  if (p.theirs) return p.base ? 'deleted-by-source' : 'added-by-target';
  return 'deleted-by-both';
}

function decode(bytes: Buffer): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

/** The marker labels of a request: the source branch is "ours", the target "theirs". */
function labelsOf(pr: PullRequestRow): MarkerLabels {
  return { ours: `${pr.sourceBranch} (source)`, base: 'base', theirs: `${pr.targetBranch} (target)` };
}

/**
 * The conflicted files of a merge of `targetHead` into `sourceHead` (in the target repository):
 * each path's versions and git's messages, and the text merge of every regular UTF-8 text file
 * both sides have — not binary (a NUL in its first 8,000 bytes), no Git LFS pointer, each
 * version at most {@link MAX_VIEW_BYTES}, all together at most {@link MAX_CONFLICT_TEXT_BYTES}.
 */
async function conflictFiles(
  repo: string,
  details: MergeConflictDetails,
  heads: { source: string; target: string },
  labels: MarkerLabels,
): Promise<ConflictFile[]> {
  // the versions of paths both sides have come first: the byte budget goes to what can merge as text
  const bothSides = details.paths.filter((p) => p.ours && p.theirs);
  const readable = [...bothSides, ...details.paths.filter((p) => !(p.ours && p.theirs))]
    .flatMap((p) => [p.base, p.ours, p.theirs])
    .filter((s): s is StageEntry => s !== null && REGULAR_MODES.has(s.mode));
  const blobs = await readBlobs(
    repo,
    readable.map((s) => s.oid),
    MAX_VIEW_BYTES,
    MAX_CONFLICT_TEXT_BYTES,
  );
  const named = (text: string) => text.replaceAll(heads.source, labels.ours).replaceAll(heads.target, labels.theirs);
  return details.paths.map((p) => {
    const side = (s: StageEntry | null): ConflictSide | null => s && { ...s, size: blobs.get(s.oid)?.size ?? null };
    const file: ConflictFile = {
      path: p.path,
      kind: kindOf(p),
      base: side(p.base),
      ours: side(p.ours),
      theirs: side(p.theirs),
      messages: details.messages.filter((m) => m.type.startsWith('CONFLICT') && m.paths.includes(p.path)).map((m) => ({ type: m.type, text: named(m.text) })),
      text: null,
      sidesOnly: null,
    };
    if (file.kind === 'deleted-by-both') return file;
    const versions = [p.base, p.ours, p.theirs].filter((s): s is StageEntry => s !== null);
    const reason = ((): SidesOnlyReason | null => {
      if (!p.ours || !p.theirs) return 'one-side';
      if (versions.some((s) => s.mode === '160000')) return 'submodule';
      if (versions.some((s) => s.mode === '120000')) return 'symlink';
      const bytes = versions.map((s) => blobs.get(s.oid)?.content ?? null);
      if (bytes.some((b) => b === null)) return 'large';
      if (bytes.some((b) => b!.subarray(0, 8000).includes(0))) return 'binary';
      if (bytes.some((b) => parseLfsPointer(b!) !== null)) return 'lfs';
      if (bytes.some((b) => decode(b!) === null)) return 'encoding';
      return null;
    })();
    if (reason) return { ...file, sidesOnly: reason };
    const [base, ours, theirs] = [p.base, p.ours, p.theirs].map((s) => (s ? decode(blobs.get(s.oid)!.content!)! : ''));
    const chunks = mergeRegions(base, ours, theirs);
    const markerSize = markerSizeOf([base, ours, theirs]);
    const eol = lineEndingOf([base, ours, theirs]);
    const regions = chunks.filter((c) => c.kind === 'conflict').length;
    return { ...file, text: { chunks, regions, markerSize, eol, unresolved: resolvedText(chunks, [], markerSize, labels, eol) } };
  });
}

/** Where a caller's resolution of `pr` may go: the source branch when they write its project's code, else a new branch of a target they write, else nowhere. */
async function destinationOf(ctx: Context, pr: PullRequestRow, writesTarget: boolean): Promise<'source' | 'new-branch' | null> {
  if (ctx.actor.userId <= 0) return null;
  if (pr.sourceProjectId !== null && (await projectPermissions(ctx, await getProjectRow(ctx.db, pr.sourceProjectId))).writeCode) return 'source';
  return writesTarget ? 'new-branch' : null;
}

const SOURCE_GONE = 'Source branch no longer exists';

const REBASE_REFUSAL =
  'A resolution is a merge commit, which the rebase strategy leaves out: change the merge strategy of the pull request to resolve its conflicts here';

/** What {@link conflictState} reads: the page's view, the tree git's merge wrote, and whether the source branch is ahead of the request. */
interface ConflictState extends PullRequestConflicts {
  mergedTree: string;
  sourceMoved: boolean;
}

/** The merge of `targetHead` into `sourceHead`: git's tree and the conflicted files (none when clean). */
async function mergeOf(repo: string, heads: { source: string; target: string }, labels: MarkerLabels): Promise<{ tree: string; files: ConflictFile[] }> {
  const details = await mergeConflictDetails(repo, heads.source, heads.target);
  return { tree: details.tree, files: details.clean ? [] : await conflictFiles(repo, details, heads, labels) };
}

/**
 * The state of a request's conflicts for the caller. A page's read (`cached`) keeps the merge in
 * memory by its heads and labels ({@link objectRead}); a resolution merges afresh, so the tree it
 * builds on is one git has just written.
 */
async function conflictState(ctx: Context, pr: PullRequestRow, cached: boolean): Promise<ConflictState> {
  const { permissions } = await loadProjectWith(ctx, pr.targetProjectId, 'readCode');
  const labels = labelsOf(pr);
  const none = { sourceHead: '', targetHead: '', labels, files: [], destination: null, newBranchAllowed: false, mergedTree: '', sourceMoved: false };
  if (pr.status !== 'OPEN') return { ...none, blocked: 'Pull request already closed' };
  const repo = ctx.repoPath(pr.targetProjectId);
  const [update, targetHead, sourceBranchHead] = await Promise.all([
    latestUpdate(ctx.db, pr.id),
    branchHead(repo, pr.targetBranch),
    pr.sourceProjectId === null ? Promise.resolve(null) : branchHead(ctx.repoPath(pr.sourceProjectId), pr.sourceBranch),
  ]);
  if (!targetHead) return { ...none, blocked: 'Target branch no longer exists' };
  const sourceHead = update.headCommitHash;
  const heads = { source: sourceHead, target: targetHead };
  const { tree, files } = cached
    ? await objectRead(
        repo,
        `merge-conflicts\0${labels.ours}\0${labels.theirs}`,
        [sourceHead, targetHead],
        () => mergeOf(repo, heads, labels),
        (merge) => 1024 + merge.files.reduce((bytes, f) => bytes + 512 + (f.text ? f.text.unresolved.length * 4 : 0), 0),
      )
    : await mergeOf(repo, heads, labels);
  const sourceMoved = sourceBranchHead !== sourceHead;
  let blocked: string | null = null;
  if (sourceBranchHead === null) blocked = SOURCE_GONE;
  else if (sourceMoved) blocked = 'The source branch moved: the pull request is being updated, reload in a moment';
  else if (pr.mergeStrategy === 'REBASE_SOURCE_BRANCH_COMMITS') blocked = REBASE_REFUSAL;
  const destination = await destinationOf(ctx, pr, permissions.writeCode);
  const newBranchAllowed = ctx.actor.userId > 0 && permissions.writeCode;
  return { sourceHead, targetHead, labels, files, blocked, destination, newBranchAllowed, mergedTree: tree, sourceMoved };
}

/**
 * The conflicts page of a readable request (read code on the target project, 404/401/403): the
 * conflicted files of the merge of its target branch head into its latest update's head, with
 * why a resolution cannot be committed now and where the caller's would go. Reads only (git's
 * merge writes unreferenced objects).
 */
export async function pullRequestConflicts(ctx: Context, pr: PullRequestRow): Promise<PullRequestConflicts> {
  const { mergedTree: _tree, sourceMoved: _moved, ...view } = await conflictState(ctx, pr, true);
  return view;
}

const CHOICES: readonly RegionChoice[] = ['ours', 'theirs', 'both'];

/** The path's new content or entry under the submitted resolution; throws 400 with the reason it cannot be used. */
function resolutionOf(file: ConflictFile, input: FileResolutionInput | undefined, labels: MarkerLabels): PathResolution {
  const path = file.path;
  if (file.kind === 'deleted-by-both') return { path, removed: true };
  const choice = input?.choice ?? '';
  const sideOf = (s: ConflictSide | null): PathResolution => (s ? { path, entry: { mode: s.mode, oid: s.oid } } : { path, removed: true });
  if (choice === 'ours') return sideOf(file.ours);
  if (choice === 'theirs') return sideOf(file.theirs);
  if (choice === '') throw new BadRequest(`No resolution for ${path}`);
  if (choice !== 'merge') throw new BadRequest(`Invalid resolution for ${path}: ${choice}`);
  const text = file.text;
  if (!text) throw new BadRequest(`${path} cannot be merged as text: choose a side`);
  const choices: (RegionChoice | null)[] = Array.from({ length: text.regions }, () => null);
  for (const [index, value] of input!.regions) {
    if (!Number.isInteger(index) || index < 0 || index >= text.regions) throw new BadRequest(`${path} has no conflict ${index + 1}`);
    if (value === '') continue;
    if (!CHOICES.includes(value as RegionChoice)) throw new BadRequest(`Invalid choice for conflict ${index + 1} of ${path}: ${value}`);
    choices[index] = value as RegionChoice;
  }
  const chosen = resolvedText(text.chunks, choices, text.markerSize, labels, text.eol);
  const lf = (s: string) => s.replace(/\r\n/g, '\n');
  const submitted = input!.content === null ? null : lf(input!.content);
  // an untouched text area, or one the region buttons filled, is the exact text of the choices
  const result = submitted === null || submitted === lf(text.unresolved) || submitted === lf(chosen) ? chosen : withLineEnding(input!.content!, text.eol);
  const markers = markerLines(result, text.markerSize);
  if (markers.length > 0) {
    throw new BadRequest(`${path} still contains conflict markers (line${markers.length > 1 ? 's' : ''} ${markers.join(', ')}): resolve every conflict`);
  }
  const { base, ours, theirs } = file;
  const mode = base && ours!.mode === base.mode ? theirs!.mode : ours!.mode;
  return { path, content: Buffer.from(result, 'utf8'), mode };
}

/** The default message of a resolution commit, as `git merge` writes it, with the request. */
export function resolutionMessage(pr: Pick<PullRequestRow, 'number' | 'sourceBranch' | 'targetBranch'>): string {
  return `Merge branch '${pr.targetBranch}' into ${pr.sourceBranch}\n\nResolves the merge conflicts of pull request #${pr.number}.`;
}

/** Moves a ref of project `to` to a commit made in project `from`: the commit is fetched into `to` through staging refs first, which are removed afterwards. */
async function moveAcross(ctx: Context, from: number, to: number, move: { ref: string; oldHash: string; newHash: string }): Promise<void> {
  const staging = `refs/pulls-staging/resolve-${randomUUID()}`;
  const [fromRepo, toRepo] = [ctx.repoPath(from), ctx.repoPath(to)];
  await updateRef(fromRepo, staging, move.newHash, null);
  try {
    await fetchCommits(toRepo, fromRepo, staging, staging);
    await moveRef(ctx, to, move);
  } finally {
    await deleteRef(fromRepo, staging);
    if (await refHead(toRepo, staging)) await deleteRef(toRepo, staging);
  }
}

/**
 * Commits a resolution of a request's conflicts (docs/compatibility.md#pull-requests-resolving-conflicts):
 * a merge commit of the target head into the source head (parents in that order, by the caller,
 * message `Merge branch '<target>' into <source>` unless given), holding the merged tree with
 * each conflicted path as resolved — a side's version (`ours` = source, `theirs` = target; a side
 * without the path deletes it) or, for text files, the submitted text (brought back to the file's
 * line end) or the region choices (`ours`, `theirs`, `both`) when the text area is unchanged.
 * Without `newBranch` it moves the source branch by compare-and-swap under the source branch's
 * protection (write code on the source project), then checks the request — a new update and merge
 * preview; with `newBranch` it creates that branch in the target project (write code there).
 * Nothing is written before every rule passed.
 *
 * @throws Unauthorized anonymous; Forbidden without the write permission; Conflict (409) for a
 *   closed request, the rebase strategy, a head that moved since `sourceHead`/`targetHead`, a
 *   merge without conflicts, an existing branch, a protection refusal or a lost race; BadRequest
 *   (400) for an unknown or repeated path, a missing or invalid resolution, a text still holding
 *   conflict markers, an invalid branch name.
 */
export async function resolveConflicts(ctx: Context, pr: PullRequestRow, input: ConflictResolutionInput): Promise<ConflictResolutionResult> {
  const userId = requireUser(ctx.actor);
  const { permissions } = await loadProjectWith(ctx, pr.targetProjectId, 'readCode');
  if (pr.status !== 'OPEN') throw new Conflict('Pull request already closed');
  const newBranch = input.newBranch.trim();
  const destination = newBranch ? (permissions.writeCode ? 'new-branch' : null) : await destinationOf(ctx, pr, false);
  if (destination === null) {
    if (!newBranch && permissions.writeCode) throw new BadRequest('You cannot write the source branch: name a new branch for the resolution');
    deny(ctx.actor, 'Permission denied: resolving conflicts needs write permission on the code of the source or the target project');
  }
  if (pr.mergeStrategy === 'REBASE_SOURCE_BRANCH_COMMITS') throw new Conflict(REBASE_REFUSAL);
  if (newBranch) {
    await assertValidBranchName(newBranch);
    if (await branchHead(ctx.repoPath(pr.targetProjectId), newBranch)) throw new Conflict(`Branch already exists: ${newBranch}`);
  }
  const view = await conflictState(ctx, pr, false);
  if (view.targetHead === '') throw new Conflict(view.blocked ?? 'Target branch no longer exists');
  if (view.blocked === SOURCE_GONE) throw new Conflict(SOURCE_GONE);
  if (view.sourceHead !== input.sourceHead || view.sourceMoved) {
    throw new Conflict('The source branch moved since the conflicts were shown: they are shown again as they are now');
  }
  if (view.targetHead !== input.targetHead) throw new Conflict('The target branch moved since the conflicts were shown: they are shown again as they are now');
  if (view.files.length === 0) throw new Conflict('There are no merge conflicts to resolve');

  const conflicted = new Set(view.files.map((f) => f.path));
  const byPath = new Map<string, FileResolutionInput>();
  for (const file of input.files) {
    if (!conflicted.has(file.path)) throw new BadRequest(`Unknown conflicted file: ${file.path}`);
    if (byPath.has(file.path)) throw new BadRequest(`${file.path} is resolved twice`);
    byPath.set(file.path, file);
  }
  const resolutions = view.files.map((f) => resolutionOf(f, byPath.get(f.path), view.labels));

  const repo = ctx.repoPath(pr.targetProjectId);
  const tree = await writeResolvedTree(repo, view.mergedTree, resolutions);
  const who = await gitIdentity(ctx.db, userId, new Date(ctx.now()));
  const message = input.message.trim() ? input.message : resolutionMessage(pr);
  const commitHash = await commitTree(repo, { tree, parents: [view.sourceHead, view.targetHead], message, author: who, committer: who });
  if (newBranch) {
    await moveRef(ctx, pr.targetProjectId, { ref: `refs/heads/${newBranch}`, oldHash: null, newHash: commitHash });
    return { commitHash, projectId: pr.targetProjectId, branch: newBranch, created: true };
  }
  const sourceProjectId = pr.sourceProjectId!;
  const move = { ref: `refs/heads/${pr.sourceBranch}`, oldHash: view.sourceHead, newHash: commitHash };
  if (sourceProjectId === pr.targetProjectId) await moveRef(ctx, sourceProjectId, move);
  else await moveAcross(ctx, pr.targetProjectId, sourceProjectId, move);
  await checkPullRequest(ctx, pr.id);
  return { commitHash, projectId: sourceProjectId, branch: pr.sourceBranch, created: false };
}
