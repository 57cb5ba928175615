/**
 * The blobs of a commit's tree, read in bulk — for the code index (docs/compatibility.md#code-search):
 * every blob of a commit with its size (`git ls-tree -r -l`), the blobs that changed between two
 * commits (`git diff-tree -r`), and many blobs' contents (through the object reader, or a reader of
 * their own for a bulk read).
 * Symbolic links and submodules are not blobs of files and are left out. One bounded reader of
 * many blobs serves the code index, the diff view and conflict resolution.
 */
import { gitDir, runGit, value } from './command.js';
import { assertObjectId } from './names.js';
import { objectContents, objectInfo, openObjectReader } from './object-reader.js';

/** A file of a tree: its path, blob id and size in bytes. */
export interface BlobEntry {
  path: string;
  blobId: string;
  size: number;
}

/** What changed between two trees: files added or modified (with their new blob) and paths removed. */
export interface BlobChanges {
  changed: BlobEntry[];
  removed: string[];
}

/** Regular files (`100644`, `100755`): not links (`120000`) nor submodules (`160000`). */
const FILE_MODE = /^100(644|755)$/;

/**
 * Every regular file of `commit`'s tree with its blob id and size.
 *
 * @param repo absolute path of a bare repository.
 * @param commit a full commit id.
 */
export async function listBlobs(repo: string, commit: string): Promise<BlobEntry[]> {
  const { stdout } = await runGit([gitDir(repo), 'ls-tree', '-r', '-z', '-l', '--full-tree', value(commit)]);
  const entries: BlobEntry[] = [];
  for (const record of stdout.toString('utf8').split('\0')) {
    // <mode> SP <type> SP <object> SP+ <size> TAB <path>
    const tab = record.indexOf('\t');
    if (tab < 0) continue;
    const [mode, type, blobId, size] = record.slice(0, tab).split(/ +/);
    if (type === 'blob' && FILE_MODE.test(mode)) entries.push({ path: record.slice(tab + 1), blobId, size: Number(size) });
  }
  return entries;
}

/**
 * The regular files added or modified from `from` to `to` (with their new blobs and sizes) and the
 * paths removed — a file that became a link or a submodule counts as removed. No rename detection.
 *
 * @param repo absolute path of a bare repository.
 * @param from, to full commit ids.
 */
export async function diffBlobs(repo: string, from: string, to: string): Promise<BlobChanges> {
  const { stdout } = await runGit([gitDir(repo), 'diff-tree', '-r', '-z', '--no-renames', '--no-commit-id', value(from), value(to)]);
  const fields = stdout.toString('utf8').split('\0');
  const changed: { path: string; blobId: string }[] = [];
  const removed: string[] = [];
  // records: `:<old mode> <new mode> <old blob> <new blob> <status>` NUL `<path>` NUL
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [, newMode, , newBlob, status] = fields[i].slice(1).split(' ');
    const path = fields[i + 1];
    if (status === 'D' || !FILE_MODE.test(newMode)) removed.push(path);
    else changed.push({ path, blobId: newBlob });
  }
  const sizes = await blobSizes(
    repo,
    changed.map((c) => c.blobId),
  );
  return { changed: changed.map((c, i) => ({ ...c, size: sizes[i] })), removed };
}

/** The sizes of blobs, in bytes, in the order asked. */
async function blobSizes(repo: string, blobIds: readonly string[]): Promise<number[]> {
  return (await objectInfo(repo, blobIds)).map((info) => info?.size ?? 0);
}

/** A blob read by {@link readBlobs}: its size, and its bytes when it is at most the limit. */
export interface BlobRead {
  size: number;
  /** The whole content; null when the blob is larger than the limit or past the total. */
  content: Buffer | null;
}

/**
 * Reads more bytes than this with a reader of its own rather than through the repository's
 * shared object reader, so that a bulk read (a batch of the code index) does not hold
 * up the small reads of pages queued behind it.
 */
const SHARED_READ_BYTES = 1024 * 1024;

/**
 * Reads blobs: all are sized first (through the object reader); a blob larger than `maxBytes`,
 * or one that would bring the bytes read past `maxTotalBytes` (in the order of `oids`), is only
 * sized, so memory stays bounded. The others are read through the object reader, or, past
 * {@link SHARED_READ_BYTES} in all, by a reader of their own.
 *
 * @param repo absolute path of a bare repository.
 * @param oids 40-hex blob ids (duplicates allowed).
 * @param maxBytes the largest blob whose content is read.
 * @param maxTotalBytes the most bytes read in all.
 * @returns each distinct id's size and content; an id the repository lacks, or that is no blob
 *   (a submodule's commit in a diff), is left out.
 * @throws BadRequest for a malformed id; GitError when git fails.
 */
export async function readBlobs(repo: string, oids: readonly string[], maxBytes: number, maxTotalBytes = Infinity): Promise<Map<string, BlobRead>> {
  const distinct = [...new Set(oids.map(assertObjectId))];
  const reads = new Map<string, BlobRead>();
  const small: string[] = [];
  let total = 0;
  for (const info of await objectInfo(repo, distinct)) {
    if (info?.type !== 'blob') continue;
    if (info.size <= maxBytes && total + info.size <= maxTotalBytes) {
      small.push(info.oid);
      total += info.size;
    } else reads.set(info.oid, { size: info.size, content: null });
  }
  const own = total > SHARED_READ_BYTES ? openObjectReader(repo) : null;
  try {
    for (const blob of await (own ? own.contents(small) : objectContents(repo, small)))
      if (blob) reads.set(blob.oid, { size: blob.size, content: blob.content });
  } finally {
    own?.end();
  }
  return reads;
}
