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
}

/** A diff as {@link readDiff} reads it. */
export interface DiffOutput {
  /** Every changed file, in git's order (the order of the patch). */
  stats: DiffStat[];
  patch: PatchText;
}

/**
 * The difference of `oldTree..newTree` from one `git diff --find-renames --raw --numstat --patch
 * -z`: every changed file with its line counts and blob ids, and the unified diff read up to
 * `maxBytes` bytes (past the cap git is stopped and the text ends at the last complete line).
 * Git writes the raw records, then the numstat records, NUL-terminated, then one NUL, then the
 * patch as text (docs/architecture.md#git-one-diff-for-the-summary-and-the-patch).
 *
 * @param repo absolute path of a bare repository.
 * @param oldTree 40-hex commit (or {@link EMPTY_TREE_HASH}) of the old side.
 * @param newTree 40-hex commit of the new side.
 * @param maxBytes the most bytes of patch text read.
 * @param contextLines unchanged lines shown around each change (git's `-U`), default 3.
 * @param paths only these paths (matched literally, either side); default every file.
 * @throws BadRequest for a malformed hash; GitError when an object is missing.
 */
export async function readDiff(
  repo: string,
  oldTree: string,
  newTree: string,
  maxBytes: number,
  contextLines = 3,
  paths: readonly string[] = [],
): Promise<DiffOutput> {
  assertObjectId(oldTree);
  assertObjectId(newTree);
  const context = `-U${Math.max(0, Math.floor(contextLines))}`;
  const git = spawnGit(
    [gitDir(repo), ...DIFF_OPTIONS, '--raw', '--numstat', '--patch', context, '-z', '--no-abbrev', oldTree, newTree, '--', ...literal(paths)],
    {
      timeoutMs: 120_000,
    },
  );
  git.stdin.end();
  const chunks: Buffer[] = [];
  let size = 0;
  /** Offset of the patch's first byte once the NUL after the summary was seen. */
  let patchStart = -1;
  let truncated = false;
  let previous = -1;
  for await (const chunk of git.stdout as AsyncIterable<Buffer>) {
    if (patchStart < 0) {
      // the summary ends at the first pair of NULs (no record is empty), maybe across chunks
      const at = previous === 0 && chunk[0] === 0 ? 0 : chunk.indexOf('\0\0');
      if (at === 0 && previous === 0) patchStart = size + 1;
      else if (at >= 0) patchStart = size + at + 2;
      previous = chunk[chunk.length - 1];
    }
    chunks.push(chunk);
    size += chunk.length;
    if (patchStart >= 0 && size - patchStart > maxBytes) {
      truncated = true;
      git.kill();
      break;
    }
  }
  if (!truncated) await git.done;
  const out = Buffer.concat(chunks);
  const summaryEnd = patchStart < 0 ? out.length : patchStart - 1;
  let patch = patchStart < 0 ? Buffer.alloc(0) : out.subarray(patchStart, patchStart + maxBytes);
  if (truncated) patch = patch.subarray(0, patch.lastIndexOf(0x0a) + 1);
  return { stats: parseSummary(out.toString('utf8', 0, summaryEnd)), patch: { text: patch.toString('utf8'), truncated } };
}

/**
 * Parses the raw records, then the numstat records, of `git diff --raw --numstat -z`:
 * `:<old mode> <new mode> <old blob> <new blob> <status>\0<path>\0` (two paths for a rename or
 * copy), then `<add>\t<del>\t<path>\0` or, for a rename, `<add>\t<del>\t\0<old>\0<new>\0`.
 */
function parseSummary(out: string): DiffStat[] {
  const fields = out.split('\0');
  const raws: { oldBlob: string | null; newBlob: string | null; similarity: number | null }[] = [];
  const stats: DiffStat[] = [];
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i];
    if (field === '') continue;
    if (field.startsWith(':')) {
      const [, , oldBlob, newBlob, status] = field.split(' ');
      const renamed = status.startsWith('R') || status.startsWith('C');
      raws.push({
        oldBlob: ABSENT.test(oldBlob) ? null : oldBlob,
        newBlob: ABSENT.test(newBlob) ? null : newBlob,
        similarity: status.startsWith('R') ? Number(status.slice(1)) : null,
      });
      i += renamed ? 2 : 1;
      continue;
    }
    const [add, del, path] = field.split('\t');
    const count = (n: string) => (n === '-' ? null : Number(n));
    const raw = raws[stats.length] ?? { oldBlob: null, newBlob: null, similarity: null };
    if (path === '') {
      stats.push({ oldPath: fields[i + 1], newPath: fields[i + 2], additions: count(add), deletions: count(del), ...raw });
      i += 2;
    } else {
      stats.push({ oldPath: path, newPath: path, additions: count(add), deletions: count(del), ...raw });
    }
  }
  return stats;
}
