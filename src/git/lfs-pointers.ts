/**
 * Git LFS pointer files in a repository (docs/compatibility.md#git-lfs): parsing the pointer
 * text, and finding the pointers a push adds or a commit holds. Only blobs smaller than
 * {@link POINTER_MAX_BYTES} are read, so the work is bounded by what could be a pointer.
 */
import { createInterface } from 'node:readline';
import { gitDir, runGit, spawnGit, value } from './command.js';
import { assertObjectId } from './names.js';

/** A pointer file is smaller than this (git-lfs's own bound). */
export const POINTER_MAX_BYTES = 1024;

/** Small blobs read per `cat-file --batch` run: at most ~1 MiB of pointer-sized content in memory at once. */
const READ_CHUNK = 1000;

/** What a pointer names. */
export interface LfsPointer {
  /** SHA-256 of the content, lower-case hex. */
  oid: string;
  /** Size of the content, bytes. */
  size: number;
}

const VERSION = /^version https:\/\/(?:git-lfs|hawser\.git-lfs)\.github\.com\/spec\/v1\n/;
const OID_LINE = /^oid sha256:([0-9a-f]{64})$/m;
const SIZE_LINE = /^size (\d{1,16})$/m;

/**
 * The object a blob's text points to when it is a Git LFS pointer (the specification's pointer
 * format: `version …/spec/v1`, `oid sha256:<hex>`, `size <bytes>`, one key per line), or null.
 */
export function parseLfsPointer(content: Buffer | string): LfsPointer | null {
  if (content.length >= POINTER_MAX_BYTES) return null;
  const text = typeof content === 'string' ? content : content.toString('utf8');
  if (!VERSION.test(text)) return null;
  const oid = OID_LINE.exec(text);
  const size = SIZE_LINE.exec(text);
  if (!oid || !size || !Number.isSafeInteger(Number(size[1]))) return null;
  return { oid: oid[1], size: Number(size[1]) };
}

/**
 * Reads blobs (`git cat-file --batch`, {@link READ_CHUNK} at a time) and returns the pointers
 * among them, by blob id.
 *
 * @param blobs 40-hex blob ids, each smaller than {@link POINTER_MAX_BYTES}.
 */
async function readPointers(repo: string, blobs: readonly string[], env: Record<string, string>): Promise<Map<string, LfsPointer>> {
  const found = new Map<string, LfsPointer>();
  for (let i = 0; i < blobs.length; i += READ_CHUNK) {
    const input = blobs
      .slice(i, i + READ_CHUNK)
      .map((b) => `${b}\n`)
      .join('');
    const { stdout } = await runGit([gitDir(repo), 'cat-file', '--batch'], { env, input });
    let at = 0;
    while (at < stdout.length) {
      const eol = stdout.indexOf(10, at);
      const [id, type, size] = stdout.subarray(at, eol).toString('utf8').split(' ');
      if (type === undefined || type === 'missing') {
        at = eol + 1;
        continue;
      }
      const length = Number(size);
      const pointer = type === 'blob' ? parseLfsPointer(stdout.subarray(eol + 1, eol + 1 + length)) : null;
      if (pointer) found.set(id, pointer);
      at = eol + 1 + length + 1;
    }
  }
  return found;
}

/**
 * The pointers among the blobs that the commits `newCommits` bring and no existing ref reaches
 * (`git rev-list --objects --filter=blob:limit=1024 <new…> --not --all`, in the push's
 * quarantine `env`): what a push adds. The object list streams through `cat-file
 * --batch-check`, so only the ids of pointer-sized blobs are kept, and those are read a chunk
 * at a time.
 *
 * @param newCommits 40-hex commit ids the push moves refs to.
 */
export async function pushedLfsPointers(repo: string, newCommits: readonly string[], env: Record<string, string>): Promise<LfsPointer[]> {
  if (newCommits.length === 0) return [];
  const listing = spawnGit(
    [
      gitDir(repo),
      'rev-list',
      '--objects',
      '--no-object-names',
      `--filter=blob:limit=${POINTER_MAX_BYTES}`,
      ...newCommits.map((c) => value(assertObjectId(c))),
      '--not',
      '--all',
    ],
    { env },
  );
  listing.stdin.end();
  const check = spawnGit([gitDir(repo), 'cat-file', '--batch-check=%(objecttype) %(objectsize) %(objectname)'], { env });
  listing.stdout.pipe(check.stdin);
  const small: string[] = [];
  try {
    for await (const line of createInterface({ input: check.stdout, crlfDelay: Infinity })) {
      const [type, size, id] = line.split(' ');
      if (type === 'blob' && Number(size) < POINTER_MAX_BYTES) small.push(id);
    }
    await Promise.all([listing.done, check.done]);
  } finally {
    listing.kill();
    check.kill();
  }
  return [...(await readPointers(repo, small, env)).values()];
}

/** A pointer file of a commit. */
export interface PointerFile extends LfsPointer {
  /** Repository-relative path. */
  path: string;
  /** git file mode (`100644`, `100755`). */
  mode: string;
}

/**
 * The Git LFS pointer files of a commit (`git ls-tree -r -l -z`, regular files smaller than
 * {@link POINTER_MAX_BYTES} read with `cat-file --batch`).
 *
 * @param commit 40-hex commit id.
 */
export async function pointerFilesAt(repo: string, commit: string): Promise<PointerFile[]> {
  const { stdout } = await runGit([gitDir(repo), 'ls-tree', '-r', '-l', '-z', '--end-of-options', value(assertObjectId(commit))]);
  const candidates: { path: string; mode: string; blob: string }[] = [];
  for (const entry of stdout.toString('utf8').split('\0')) {
    const tab = entry.indexOf('\t');
    if (tab < 0) continue;
    const [mode, type, blob, size] = entry.slice(0, tab).split(/ +/);
    if (type !== 'blob' || (mode !== '100644' && mode !== '100755') || Number(size) >= POINTER_MAX_BYTES) continue;
    candidates.push({ path: entry.slice(tab + 1), mode, blob });
  }
  const pointers = await readPointers(repo, [...new Set(candidates.map((c) => c.blob))], {});
  return candidates.flatMap((c) => {
    const pointer = pointers.get(c.blob);
    return pointer ? [{ path: c.path, mode: c.mode, ...pointer }] : [];
  });
}
