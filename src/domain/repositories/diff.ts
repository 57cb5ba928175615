/**
 * The difference of two commits of a project's repository, as files with hunks and numbered
 * lines, for the web UI's commit, compare and pull request pages. `git diff` output
 * (src/git/diff.ts) is parsed with `parse-diff`; big diffs are capped (bytes read from git,
 * lines per file, lines in total, files listed) and say so, so a page stays fast whatever was
 * pushed.
 */
import parseDiff from 'parse-diff';
import { NotFound } from '../../errors.js';
import { EMPTY_TREE_HASH, readDiff, type DiffStat, type PatchText } from '../../git/diff.js';
import { readBlobs } from '../../git/blob-batches.js';
import { parseLfsPointer } from '../../git/lfs-pointers.js';
import { resolveCommit } from '../../git/repository.js';
import type { Context } from '../context.js';
import { loadProjectWith } from '../projects/index.js';
import { objectRead } from '../object-reads.js';

/** One line of a hunk. */
export interface DiffLine {
  /** `context` (unchanged), `add` (only on the new side) or `delete` (only on the old side). */
  type: 'context' | 'add' | 'delete';
  /** 1-based line number on the old side; null for an added line. */
  oldLine: number | null;
  /** 1-based line number on the new side; null for a deleted line. */
  newLine: number | null;
  /** The line's text without the `+`/`-`/space prefix and without the newline. */
  text: string;
  /** Whether git reported `\ No newline at end of file` after this line. */
  noNewlineAtEnd: boolean;
}

/** A hunk: a run of changed lines with their context. */
export interface DiffHunk {
  /** The `@@ -a,b +c,d @@ section` header line as git wrote it. */
  header: string;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: DiffLine[];
}

/** One changed file. */
export interface FileDiff {
  /** Path on the old side; null for an added file. */
  oldPath: string | null;
  /** Path on the new side; null for a deleted file. */
  newPath: string | null;
  /** What happened to the file (`renamed` may also have changed lines). */
  status: 'added' | 'deleted' | 'modified' | 'renamed';
  /** Octal git modes when known (`100644`, `100755`, `120000`, …). */
  oldMode: string | null;
  newMode: string | null;
  /** Whether git treats the file as binary (no hunks). */
  binary: boolean;
  /** Added and deleted lines of the whole file (also when its hunks were capped); 0 for binaries. */
  additions: number;
  deletions: number;
  /** The hunks shown; fewer lines than the file's change when `truncated`. */
  hunks: DiffHunk[];
  /**
   * Why some or all hunks are left out: `file` (more than `maxFileLines` lines), `total` (the
   * diff's line or file budget was used up by earlier files) or `bytes` (git's output was cut);
   * null when the hunks are complete.
   */
  truncated: 'file' | 'total' | 'bytes' | null;
  /**
   * A Git LFS file (docs/compatibility.md#git-lfs): the sizes of the objects its pointers name
   * on each side (null where the side is absent or no pointer); its hunks, which would only
   * show pointer lines, are left out. Null for any other file.
   */
  lfs: { oldSize: number | null; newSize: number | null } | null;
  /** Full blob id on the old side; null for an added file. */
  oldBlob: string | null;
  /** Full blob id on the new side; null for a deleted file. */
  newBlob: string | null;
  /** A rename's similarity in percent (git's estimate); null for any other change. */
  similarity: number | null;
  /** Whether the path names a generated file (a lockfile, minified code): see {@link isGeneratedPath}. */
  generated: boolean;
}

/** Caps of {@link parseCommitDiff} and {@link diffCommits}. */
export interface DiffLimits {
  /** The most diff lines (context included) shown of one file; default 2,500. */
  maxFileLines: number;
  /** The most diff lines shown over all files; default 10,000. */
  maxTotalLines: number;
  /** The most files whose hunks are shown; default 300 (later files are listed without them, `total`). */
  maxFiles: number;
  /** The most bytes of `git diff` output read; default 8 MiB. */
  maxBytes: number;
  /** Unchanged lines around each change (git's `-U`); default 3. */
  contextLines: number;
  /**
   * The most files listed, in git's order; default 3,000 (GitHub's limit of files in a diff). The
   * others are counted, with their lines, but not listed: a compare of tags far apart changes tens
   * of thousands of files.
   */
  maxListedFiles: number;
}

/** The default caps: enough for a large review, small enough for a page under 100 ms. */
export const DEFAULT_DIFF_LIMITS: DiffLimits = {
  maxFileLines: 2_500,
  maxTotalLines: 10_000,
  maxFiles: 300,
  maxBytes: 8 * 1024 * 1024,
  contextLines: 3,
  maxListedFiles: 3_000,
};

/** The difference of two commits. */
export interface CommitDiff {
  /** 40-hex old commit, or null when the new commit is compared with nothing (a root commit). */
  oldCommit: string | null;
  /** 40-hex new commit. */
  newCommit: string;
  /** The changed files in git's order (by path): all of them, or the first `maxListedFiles`. */
  files: FileDiff[];
  /** How many files changed, listed or not. */
  fileCount: number;
  /** Sums over all files, listed or not. */
  additions: number;
  deletions: number;
  /** Whether any file's hunks were capped. */
  truncated: boolean;
}

/**
 * File names of generated files, whose diffs are collapsed by default: lockfiles of the common
 * package managers, minified code and source maps, protobuf output (the names GitHub's linguist
 * treats as generated).
 */
const GENERATED =
  /(?:^|\/)(?:package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lockb|Cargo\.lock|Gemfile\.lock|composer\.lock|poetry\.lock|Pipfile\.lock|uv\.lock|go\.sum|flake\.lock|packages\.lock\.json)$|\.min\.(?:js|css|mjs)$|\.(?:js|css)\.map$|\.pb\.go$|_pb2\.pyi?$/;

/** Whether `path` names a generated file (lockfiles, `*.min.js`, source maps, protobuf output). */
export function isGeneratedPath(path: string): boolean {
  return GENERATED.test(path);
}

function fileStatus(file: Pick<FileDiff, 'oldPath' | 'newPath'>): FileDiff['status'] {
  if (file.oldPath === null) return 'added';
  if (file.newPath === null) return 'deleted';
  return file.oldPath === file.newPath ? 'modified' : 'renamed';
}

/**
 * A copy of `text` holding its own characters. V8 keeps alive the whole string a substring was cut
 * from: a line of a cached diff, cut from a patch of megabytes, would keep the patch in memory.
 */
function detached(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}

function toLines(chunk: parseDiff.Chunk): DiffLine[] {
  const lines: DiffLine[] = [];
  for (const change of chunk.changes) {
    // parse-diff repeats the previous change for `\ No newline at end of file`
    if (change.content.startsWith('\\')) {
      const last = lines.at(-1);
      if (last) last.noNewlineAtEnd = true;
      continue;
    }
    const text = change.content.slice(1);
    if (change.type === 'add') lines.push({ type: 'add', oldLine: null, newLine: change.ln, text, noNewlineAtEnd: false });
    else if (change.type === 'del') lines.push({ type: 'delete', oldLine: change.ln, newLine: null, text, noNewlineAtEnd: false });
    else lines.push({ type: 'context', oldLine: change.ln1, newLine: change.ln2, text, noNewlineAtEnd: false });
  }
  return lines;
}

/**
 * Parses `git diff` output into files and hunks (with `parse-diff`), joined with the numstat
 * summary of every file and capped by `limits` (see {@link FileDiff.truncated}).
 *
 * @param stats the changed files in git's order ({@link readDiff}); files past a byte cut
 *   of `patch` are listed from here with no hunks.
 * @param patch the unified diff text and whether it was cut.
 * @param limits the line caps (`maxBytes` was applied when the patch was read).
 * @returns a file for each of `stats`, in their order.
 */
export function parseCommitDiff(
  stats: readonly DiffStat[],
  patch: PatchText,
  limits: Pick<DiffLimits, 'maxFileLines' | 'maxTotalLines'> & Partial<Pick<DiffLimits, 'maxFiles'>>,
): FileDiff[] {
  const parsed = parseDiff(patch.text);
  let budget = limits.maxTotalLines;
  let filesLeft = limits.maxFiles ?? Infinity;
  return stats.map((stat, index): FileDiff => {
    const file = parsed[index] as parseDiff.File | undefined;
    // a file the patch does not hold (past a cut) is read from the summary alone
    const oldPath = (file ? file.new : stat.oldMode === null) ? null : stat.oldPath;
    const newPath = (file ? file.deleted : stat.newMode === null) ? null : stat.newPath;
    const base = {
      oldPath,
      newPath,
      status: fileStatus({ oldPath, newPath }),
      oldMode: file ? (file.oldMode ?? null) : stat.oldMode,
      newMode: file ? (file.newMode ?? null) : stat.newMode,
      binary: stat.additions === null,
      additions: stat.additions ?? 0,
      deletions: stat.deletions ?? 0,
      oldBlob: oldPath === null ? null : stat.oldBlob,
      newBlob: newPath === null ? null : stat.newBlob,
      similarity: stat.similarity,
      generated: isGeneratedPath(newPath ?? oldPath ?? ''),
    };
    // the last parsed file may be cut by the byte cap: treat it as missing
    const complete = file !== undefined && !(patch.truncated && index >= parsed.length - 1);
    if (!complete && patch.budgetReached) return { ...base, hunks: [], truncated: base.additions + base.deletions > 0 ? 'total' : null, lfs: null };
    if (!complete) return { ...base, hunks: [], truncated: patch.truncated ? 'bytes' : null, lfs: null };
    if ((budget <= 0 || filesLeft <= 0) && file.chunks.length > 0) return { ...base, hunks: [], truncated: 'total', lfs: null };
    if (file.chunks.length > 0) filesLeft--;
    const hunks: DiffHunk[] = [];
    let shown = 0;
    let truncated: FileDiff['truncated'] = null;
    for (const chunk of file.chunks) {
      const lines = toLines(chunk);
      const room = Math.min(limits.maxFileLines - shown, budget);
      if (room <= 0) {
        truncated = shown >= limits.maxFileLines ? 'file' : 'total';
        break;
      }
      const kept = lines.length > room ? lines.slice(0, room) : lines;
      for (const line of kept) line.text = detached(line.text);
      hunks.push({
        header: detached(chunk.content),
        oldStart: chunk.oldStart,
        oldLines: chunk.oldLines,
        newStart: chunk.newStart,
        newLines: chunk.newLines,
        lines: kept,
      });
      shown += kept.length;
      budget -= kept.length;
      if (kept.length < lines.length) {
        truncated = shown >= limits.maxFileLines ? 'file' : 'total';
        break;
      }
    }
    return withLfs({ ...base, hunks, truncated, lfs: null });
  });
}

/**
 * A file whose sides are Git LFS pointers (the hunks hold the whole of a pointer: it is three
 * lines, within the context git shows) says so with the objects' sizes instead of the pointer
 * lines; any other file is returned as it is.
 */
function withLfs(file: FileDiff): FileDiff {
  if (file.binary || file.truncated !== null || file.hunks.length !== 1) return file;
  const side = (keep: DiffLine['type']) =>
    file.hunks[0].lines
      .filter((l) => l.type === 'context' || l.type === keep)
      .map((l) => `${l.text}\n`)
      .join('');
  const oldPointer = file.oldPath === null ? null : parseLfsPointer(side('delete'));
  const newPointer = file.newPath === null ? null : parseLfsPointer(side('add'));
  // every side the file has is a pointer
  if ((file.oldPath !== null && !oldPointer) || (file.newPath !== null && !newPointer)) return file;
  return { ...file, hunks: [], additions: 0, deletions: 0, lfs: { oldSize: oldPointer?.size ?? null, newSize: newPointer?.size ?? null } };
}

/**
 * The difference of two commits of a project (read code), as files with numbered lines.
 *
 * @param projectId the project.
 * @param oldRevision the old side (hash, branch, tag or any revision git resolves); null compares
 *   `newRevision` with the empty tree (a root commit's changes).
 * @param newRevision the new side.
 * @param limits caps overriding {@link DEFAULT_DIFF_LIMITS}.
 * @param paths when given, only the files at these paths (either side; both paths of a rename to
 *   see it as one), matched literally: one file of a large diff, loaded on its own.
 * @throws NotFound for a project the caller cannot see or `Commit not found: X`; Forbidden
 *   (Unauthorized when anonymous) without read code; BadRequest for a revision starting with `-`.
 */
export async function diffCommits(
  ctx: Context,
  projectId: number,
  oldRevision: string | null,
  newRevision: string,
  limits: Partial<DiffLimits> = {},
  paths: readonly string[] = [],
): Promise<CommitDiff> {
  const { project } = await loadProjectWith(ctx, projectId, 'readCode');
  const repo = ctx.repoPath(project.id);
  const caps = { ...DEFAULT_DIFF_LIMITS, ...limits };
  // the diff of two commit hashes never changes: shown again, it costs no git process
  const kind = `diff:${caps.maxFileLines}:${caps.maxTotalLines}:${caps.maxFiles}:${caps.maxBytes}:${caps.contextLines}:${caps.maxListedFiles}:${paths.join('\0')}`;
  return objectRead(repo, kind, [oldRevision, newRevision], () => readCommitDiff(repo, oldRevision, newRevision, caps, paths), diffSize);
}

/** Estimated bytes of a diff in memory: V8's objects and strings (two bytes a character at most) as a heap snapshot counts them. */
function diffSize(diff: CommitDiff): number {
  let size = 256;
  for (const file of diff.files) {
    size += 512 + 2 * ((file.oldPath?.length ?? 0) + (file.newPath?.length ?? 0));
    for (const hunk of file.hunks) {
      size += 128 + 2 * hunk.header.length;
      for (const line of hunk.lines) size += 96 + 2 * line.text.length;
    }
  }
  return size;
}

async function readCommitDiff(repo: string, oldRevision: string | null, newRevision: string, caps: DiffLimits, paths: readonly string[]): Promise<CommitDiff> {
  // both resolved at once; the new revision's error wins, as when resolved one after the other
  const [newResolved, oldResolved] = await Promise.allSettled([
    resolveCommit(repo, newRevision),
    oldRevision === null ? null : resolveCommit(repo, oldRevision),
  ]);
  const resolved = (revision: string, result: PromiseSettledResult<string | null>): string => {
    if (result.status === 'rejected') throw result.reason;
    if (!result.value) throw new NotFound(`Commit not found: ${revision}`);
    return result.value;
  };
  const newCommit = resolved(newRevision, newResolved);
  const oldCommit = oldRevision === null ? null : resolved(oldRevision, oldResolved);
  const oldTree = oldCommit ?? EMPTY_TREE_HASH;
  const { stats, patch } = await readDiff(repo, oldTree, newCommit, caps.maxBytes, caps.contextLines, paths, caps);
  return commitDiffOf(oldCommit, newCommit, stats, patch, caps);
}

/**
 * The diff of two commits from what {@link readDiff} read: the first `maxListedFiles` of `stats`
 * parsed with {@link parseCommitDiff}, the others counted.
 *
 * @param oldCommit, newCommit the commits compared (see {@link CommitDiff}).
 * @param stats every changed file in git's order.
 * @param patch the patch as read under `caps`.
 */
export function commitDiffOf(
  oldCommit: string | null,
  newCommit: string,
  stats: readonly DiffStat[],
  patch: PatchText,
  caps: Pick<DiffLimits, 'maxFileLines' | 'maxTotalLines' | 'maxFiles' | 'maxListedFiles'>,
): CommitDiff {
  const files = parseCommitDiff(stats.slice(0, caps.maxListedFiles), patch, caps);
  const unlisted = stats.slice(caps.maxListedFiles);
  return {
    oldCommit,
    newCommit,
    files,
    fileCount: stats.length,
    additions: files.reduce((n, f) => n + f.additions, 0) + unlisted.reduce((n, f) => n + (f.additions ?? 0), 0),
    deletions: files.reduce((n, f) => n + f.deletions, 0) + unlisted.reduce((n, f) => n + (f.deletions ?? 0), 0),
    truncated: unlisted.length > 0 || files.some((f) => f.truncated !== null),
  };
}

/** Blobs above this size (bytes) are not read for the diff view: their lines are neither highlighted nor expandable. */
export const MAX_DIFF_BLOB_BYTES = 256 * 1024;
/** The most bytes of blobs read for one diff (past it, the other blobs, in id order, are shown plain and not expandable). */
const MAX_DIFF_BLOBS_TOTAL = 16 * 1024 * 1024;

/**
 * The text of blobs of a project, for the diff view's highlighting and context lines: by id, the
 * UTF-8 text, or null for a blob over {@link MAX_DIFF_BLOB_BYTES}, past 16 MiB read for the diff,
 * binary (holding a NUL byte) or missing. The blobs of a call are read together, once (kept with the other object reads).
 *
 * @param projectId the project (read code).
 * @param ids full blob ids, e.g. the `oldBlob`/`newBlob` of a diff's files.
 * @throws NotFound/Forbidden (Unauthorized when anonymous) without read code; BadRequest for a malformed id.
 */
export async function diffBlobTexts(ctx: Context, projectId: number, ids: readonly string[]): Promise<Map<string, string | null>> {
  const { project } = await loadProjectWith(ctx, projectId, 'readCode');
  const repo = ctx.repoPath(project.id);
  const unique = [...new Set(ids)].sort();
  // one read (through the object reader, or a git process of its own past 1 MiB) for the blobs of a whole diff, kept as one result
  return objectRead(
    repo,
    `diff-blobs:${MAX_DIFF_BLOB_BYTES}:${MAX_DIFF_BLOBS_TOTAL}`,
    unique,
    async () => {
      const bytes = await readBlobs(repo, unique, MAX_DIFF_BLOB_BYTES, MAX_DIFF_BLOBS_TOTAL);
      return new Map(
        unique.map((id) => {
          const blob = bytes.get(id)?.content ?? null;
          return [id, blob === null || blob.includes(0) ? null : blob.toString('utf8')];
        }),
      );
    },
    (texts) => [...texts.values()].reduce((n, text) => n + 64 + (text?.length ?? 0) * 2, 256),
  );
}
