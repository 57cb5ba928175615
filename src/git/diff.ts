/**
 * The textual difference of two commits of a bare repository (`git diff`), for the web UI's
 * commit, compare and pull request pages. The patch is read with a byte cap so a huge diff
 * never fills the server's memory; the per-file summary (`--numstat`) always covers every file.
 */
import { gitDir, spawnGit, value, type GitValue } from './command.js';
import { assertObjectId } from './names.js';

/** The hash of the empty tree (SHA-1), the "old" side of a root commit's diff. */
export const EMPTY_TREE_HASH = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** Options shared by the diff commands: rename detection, no colour, no external tools. */
const DIFF_OPTIONS = ['-c', 'core.quotePath=false', 'diff', '--no-color', '--no-ext-diff', '--no-textconv', '--find-renames'];

/** One file of {@link readDiff}. */
export interface DiffStat {
  /** Path on the old side (differs from `newPath` for a rename). */
  oldPath: string;
  /** Path on the new side. */
  newPath: string;
  /** Added lines; null for a binary file. */
  additions: number | null;
  /** Deleted lines; null for a binary file. */
  deletions: number | null;
  /** Mode on the old side (`100644`, `100755`, `120000`, `160000`); null where the file is absent (added). */
  oldMode: string | null;
  /** Mode on the new side; null where the file is absent (deleted). */
  newMode: string | null;
  /** Full blob id on the old side; null where the file is absent (added). */
  oldBlob: string | null;
  /** Full blob id on the new side; null where the file is absent (deleted). */
  newBlob: string | null;
  /** A rename's similarity in percent (git's `R<score>`); null for any other change. */
  similarity: number | null;
}

/** Pathspecs matching exactly `paths` (no wildcards or magic: git's `:(literal)`). */
function literal(paths: readonly string[]): GitValue[] {
  return paths.map((p) => value(`:(literal)${p}`));
}

/** The all-zero object id git's raw format writes for an absent side. */
const ABSENT = /^0+$/;

/** The patch text of a diff, possibly cut. */
export interface PatchText {
  /** The unified diff (`git diff` output), whole lines only. */
  text: string;
  /** Whether git wrote more than `maxBytes` and the rest was left out. */
  truncated: boolean;
  /** Whether reading stopped where the budget's first left-out file began: the text holds only the files before it. */
  budgetReached: boolean;
}

/** What of a patch is shown (parseCommitDiff's caps): reading stops at the first file they leave out. */
export interface PatchBudget {
  /** Files with hunks shown. */
  maxFiles: number;
  /** Hunk lines shown per file. */
  maxFileLines: number;
  /** Hunk lines shown in all. */
  maxTotalLines: number;
}

/** A diff as {@link readDiff} reads it. */
export interface DiffOutput {
  /** Every changed file, in git's order (the order of the patch). */
  stats: DiffStat[];
  patch: PatchText;
}

const DIFF_HEADER = Buffer.from('diff --git ');

/**
 * Follows a patch line by line as it streams, counting the hunk lines shown under a
 * {@link PatchBudget} as parseCommitDiff counts them (a file's context, added and deleted lines up
 * to the per-file cap, while the total lasts; a file counts once it has a hunk), and finds where
 * the first file begins that the budget leaves out.
 */
class PatchLines {
  /** The first bytes of the line being read (enough to tell a file header). */
  private head = Buffer.alloc(0);
  /** Offset in the patch of the line being read, and its bytes read so far. */
  private lineStart = 0;
  private lineLength = 0;
  private inHunks = false;
  private fileCounted = false;
  private shown = 0;
  private total: number;
  private filesLeft: number;

  constructor(private readonly budget: PatchBudget) {
    this.total = budget.maxTotalLines;
    this.filesLeft = budget.maxFiles;
  }

  /** Takes the patch's next bytes; returns the offset at which the first left-out file begins, or -1. */
  take(bytes: Buffer): number {
    let from = 0;
    while (from < bytes.length) {
      const eol = bytes.indexOf(0x0a, from);
      const end = eol < 0 ? bytes.length : eol;
      if (this.head.length < DIFF_HEADER.length) {
        this.head = Buffer.concat([this.head, bytes.subarray(from, Math.min(end, from + DIFF_HEADER.length - this.head.length))]);
      }
      this.lineLength += end - from;
      if (eol < 0) return -1;
      if (this.leavesOut()) return this.lineStart;
      this.lineStart += this.lineLength + 1;
      this.lineLength = 0;
      this.head = Buffer.alloc(0);
      from = eol + 1;
    }
    return -1;
  }

  /** Counts the line just read; true when it is the header of a file the budget leaves out. */
  private leavesOut(): boolean {
    const first = this.head[0];
    if (this.head.equals(DIFF_HEADER)) {
      if (this.total <= 0 || this.filesLeft <= 0) return true;
      this.inHunks = false;
      this.fileCounted = false;
      this.shown = 0;
    } else if (first === 0x40 && this.head[1] === 0x40) {
      this.inHunks = true;
      if (!this.fileCounted) this.filesLeft--;
      this.fileCounted = true;
    } else if (this.inHunks && (first === 0x20 || first === 0x2b || first === 0x2d) && this.shown < this.budget.maxFileLines && this.total > 0) {
      this.shown++;
      this.total--;
    }
    return false;
  }
}

/**
 * Splits the output of `git diff --raw --numstat --patch -z` where its summary ends, at the first
 * pair of NULs (no record of the summary is empty; the pair may span two chunks): the summary's
 * bytes are pushed to `summary`, the patch's are yielded as they come.
 *
 * @param output git's standard output.
 * @param summary receives the summary's bytes (its last NUL included, the pair's second not).
 */
export async function* afterSummary(output: AsyncIterable<Buffer>, summary: Buffer[]): AsyncGenerator<Buffer> {
  let inPatch = false;
  let endsWithNul = false;
  for await (const chunk of output) {
    if (inPatch) {
      yield chunk;
      continue;
    }
    const spanning = endsWithNul && chunk[0] === 0;
    // where the pair begins: -1 when its first NUL ended the previous chunk
    const pair = spanning ? -1 : chunk.indexOf('\0\0');
    endsWithNul = chunk[chunk.length - 1] === 0;
    if (!spanning && pair < 0) {
      summary.push(chunk);
      continue;
    }
    summary.push(chunk.subarray(0, pair + 1));
    inPatch = true;
    if (pair + 2 < chunk.length) yield chunk.subarray(pair + 2);
  }
}

/**
 * The difference of `oldTree..newTree` from one `git diff --find-renames --raw --numstat --patch
 * -z`: every changed file with its modes, line counts and blob ids, and the unified diff read up
 * to `maxBytes` bytes (past the cap git is stopped and the text ends at the last complete line)
 * or, with a `budget`, up to the first file it leaves out. Git writes the raw records, then the
 * numstat records, NUL-terminated, then one NUL, then the patch as text
 * (docs/architecture.md#git-one-diff-for-the-summary-and-the-patch).
 *
 * @param repo absolute path of a bare repository.
 * @param oldTree 40-hex commit (or {@link EMPTY_TREE_HASH}) of the old side.
 * @param newTree 40-hex commit of the new side.
 * @param maxBytes the most bytes of patch text read.
 * @param contextLines unchanged lines shown around each change (git's `-U`), default 3.
 * @param paths only these paths (matched literally, either side); default every file.
 * @param budget what of the patch is shown; default all of it (up to `maxBytes`).
 * @throws BadRequest for a malformed hash; GitError when an object is missing.
 */
export async function readDiff(
  repo: string,
  oldTree: string,
  newTree: string,
  maxBytes: number,
  contextLines = 3,
  paths: readonly string[] = [],
  budget: PatchBudget = { maxFiles: Infinity, maxFileLines: Infinity, maxTotalLines: Infinity },
): Promise<DiffOutput> {
  assertObjectId(oldTree);
  assertObjectId(newTree);
  const context = `-U${Math.max(0, Math.floor(contextLines))}`;
  const args = [gitDir(repo), ...DIFF_OPTIONS, '--raw', '--numstat', '--patch', context, '-z', '--no-abbrev', oldTree, newTree, '--', ...literal(paths)];
  const git = spawnGit(args, { timeoutMs: 120_000 });
  git.stdin.end();
  const summary: Buffer[] = [];
  const patch: Buffer[] = [];
  let patchSize = 0;
  /** Where the patch is cut (bytes), when it is. */
  let cut = -1;
  let truncated = false;
  const lines = new PatchLines(budget);
  for await (const bytes of afterSummary(git.stdout as AsyncIterable<Buffer>, summary)) {
    const stop = lines.take(bytes);
    patch.push(bytes);
    patchSize += bytes.length;
    if (stop >= 0 && stop <= maxBytes) cut = stop;
    else if (patchSize > maxBytes) {
      truncated = true;
      cut = maxBytes;
    }
    if (cut >= 0) {
      git.kill();
      break;
    }
  }
  if (cut < 0) await git.done;
  let text = Buffer.concat(patch);
  if (cut >= 0) text = text.subarray(0, cut);
  if (truncated) text = text.subarray(0, text.lastIndexOf(0x0a) + 1);
  const patchText = { text: text.toString('utf8'), truncated, budgetReached: cut >= 0 && !truncated };
  return { stats: parseSummary(Buffer.concat(summary)), patch: patchText };
}

/**
 * Parses the raw records, then the numstat records, of `git diff --raw --numstat -z`:
 * `:<old mode> <new mode> <old blob> <new blob> <status>\0<path>\0` (two paths for a rename or
 * copy), then `<add>\t<del>\t<path>\0` or, for a rename, `<add>\t<del>\t\0<old>\0<new>\0`.
 * Each value is decoded from its own bytes: a path kept in a cached diff must not be a substring
 * of a larger string, which V8 would keep alive whole.
 */
function parseSummary(out: Buffer): DiffStat[] {
  let pos = 0;
  /** The text from `pos` up to the next byte `stop` (or NUL), decoded on its own; `pos` moves past that byte. */
  const take = (stop = 0): string => {
    const nul = out.indexOf(0, pos);
    const found = stop === 0 ? nul : out.indexOf(stop, pos);
    const end = found < 0 || (nul >= 0 && nul < found) ? (nul < 0 ? out.length : nul) : found;
    const text = out.toString('utf8', pos, end);
    pos = end + 1;
    return text;
  };
  const raws: Pick<DiffStat, 'oldMode' | 'newMode' | 'oldBlob' | 'newBlob' | 'similarity'>[] = [];
  const stats: DiffStat[] = [];
  while (pos < out.length) {
    if (out[pos] === 0) {
      pos++;
      continue;
    }
    if (out[pos] === 0x3a) {
      pos++;
      const [oldMode, newMode, oldBlob, newBlob, status] = [take(0x20), take(0x20), take(0x20), take(0x20), take()];
      raws.push({
        oldMode: ABSENT.test(oldMode) ? null : oldMode,
        newMode: ABSENT.test(newMode) ? null : newMode,
        oldBlob: ABSENT.test(oldBlob) ? null : oldBlob,
        newBlob: ABSENT.test(newBlob) ? null : newBlob,
        similarity: status.startsWith('R') ? Number(status.slice(1)) : null,
      });
      // the path, or the two paths of a rename or copy
      take();
      if (status.startsWith('R') || status.startsWith('C')) take();
      continue;
    }
    const count = (n: string) => (n === '-' ? null : Number(n));
    const [additions, deletions] = [count(take(0x09)), count(take(0x09))];
    const raw = raws[stats.length] ?? { oldMode: null, newMode: null, oldBlob: null, newBlob: null, similarity: null };
    const path = take();
    if (path === '') {
      const oldPath = take();
      stats.push({ oldPath, newPath: take(), additions, deletions, ...raw });
    } else {
      stats.push({ oldPath: path, newPath: path, additions, deletions, ...raw });
    }
  }
  return stats;
}
