/**
 * Git LFS pointer files in a repository (docs/compatibility.md#git-lfs): parsing the pointer
 * text, and finding the pointers a push adds or a commit holds. Only blobs smaller than
 * {@link POINTER_MAX_BYTES} are read, so the work is bounded by what could be a pointer.
 */
import { gitDir, runGit, value } from './command.js';
import { assertObjectId } from './names.js';

/** A pointer file is smaller than this (git-lfs's own bound). */
export const POINTER_MAX_BYTES = 1024;

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
 * Reads blobs (`git cat-file --batch`) and returns the pointers among them, by blob id.
 *
 * @param blobs 40-hex blob ids, each smaller than {@link POINTER_MAX_BYTES}.
 */
async function readPointers(repo: string, blobs: readonly string[], env: Record<string, string>): Promise<Map<string, LfsPointer>> {
  const found = new Map<string, LfsPointer>();
  if (blobs.length === 0) return found;
  const { stdout } = await runGit([gitDir(repo), 'cat-file', '--batch'], { env, input: blobs.map((b) => `${b}\n`).join('') });
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
  return found;
}

/**
 * The pointers among the blobs that the commits `newCommits` bring and no existing ref reaches
 * (`git rev-list --objects --filter=blob:limit=1024 <new…> --not --all`, in the push's
 * quarantine `env`): what a push adds.
 *
 * @param newCommits 40-hex commit ids the push moves refs to.
 */
export async function pushedLfsPointers(repo: string, newCommits: readonly string[], env: Record<string, string>): Promise<LfsPointer[]> {
  if (newCommits.length === 0) return [];
  const listed = await runGit(
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
  const ids = listed.stdout
    .toString('utf8')
    .split('\n')
    .filter((l) => l.length >= 40);
  const small = await smallBlobs(repo, ids, env);
  return [...(await readPointers(repo, small, env)).values()];
}

/** The blobs among `ids` (`git cat-file --batch-check`) smaller than a pointer's bound. */
async function smallBlobs(repo: string, ids: readonly string[], env: Record<string, string>): Promise<string[]> {
  if (ids.length === 0) return [];
  const { stdout } = await runGit([gitDir(repo), 'cat-file', '--batch-check=%(objecttype) %(objectsize) %(objectname)'], {
    env,
    input: ids.map((i) => `${i}\n`).join(''),
  });
  return stdout
    .toString('utf8')
    .split('\n')
    .map((line) => line.split(' '))
    .filter(([type, size]) => type === 'blob' && Number(size) < POINTER_MAX_BYTES)
    .map(([, , id]) => id);
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
