/**
 * Git LFS pointer files in a repository (docs/compatibility.md#git-lfs): parsing the pointer
 * text, and finding the pointers a push adds or a commit holds. Only blobs smaller than
 * {@link POINTER_MAX_BYTES} are read, so the work is bounded by what could be a pointer.
 */
import { gitDir, runGit, spawnGit, value } from './command.js';
import { assertObjectId } from './names.js';
import { openObjectReader } from './object-reader.js';

/** A pointer file is smaller than this (git-lfs's own bound). */
export const POINTER_MAX_BYTES = 1024;

/** Small blobs read at a time: at most ~1 MiB of pointer-sized content in memory at once. */
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
 * Reads blobs through an object reader of the call's own ({@link READ_CHUNK} at a time, as the ids
 * arrive) and returns the pointers among them, by blob id: only the pointers found are kept.
 *
 * @param ids 40-hex blob ids, each smaller than {@link POINTER_MAX_BYTES}; other objects are skipped.
 * @param env the git environment (a push's quarantine).
 */
async function readPointers(repo: string, ids: Iterable<string> | AsyncIterable<string>, env: Record<string, string>): Promise<Map<string, LfsPointer>> {
  const found = new Map<string, LfsPointer>();
  const reader = openObjectReader(repo, env);
  const read = async (chunk: string[]) => {
    for (const blob of await reader.contents(chunk)) {
      if (blob?.type !== 'blob') continue;
      const pointer = parseLfsPointer(blob.content);
      if (pointer) found.set(blob.oid, pointer);
    }
  };
  try {
    let chunk: string[] = [];
    for await (const id of ids) {
      if (id === '') continue;
      chunk.push(id);
      if (chunk.length < READ_CHUNK) continue;
      await read(chunk);
      chunk = [];
    }
    await read(chunk);
  } finally {
    reader.end();
  }
  return found;
}

/** The lines of a stream as they arrive, read no faster than the caller takes them. */
async function* lines(stream: AsyncIterable<Buffer>): AsyncGenerator<string> {
  let rest = '';
  for await (const chunk of stream) {
    const text = rest + chunk.toString('latin1');
    const parts = text.split('\n');
    rest = parts.pop() ?? '';
    yield* parts;
  }
  if (rest) yield rest;
}

/**
 * The pointers among the blobs that the commits `newCommits` bring and no existing ref reaches
 * (`git rev-list --objects --filter=combine:blob:limit=1024+object:type=blob <new…> --not --all`,
 * in the push's quarantine `env`): what a push adds. The ids stream from rev-list to the reads,
 * which take them {@link READ_CHUNK} at a time, so a push of a million small blobs holds one
 * chunk of them, not the list.
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
      `--filter=combine:blob:limit=${POINTER_MAX_BYTES}+object:type=blob`,
      ...newCommits.map((c) => value(assertObjectId(c))),
      '--not',
      '--all',
    ],
    { env },
  );
  listing.stdin.end();
  try {
    const pointers = await readPointers(repo, lines(listing.stdout as AsyncIterable<Buffer>), env);
    await listing.done;
    return [...pointers.values()];
  } finally {
    listing.kill();
  }
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
 * {@link POINTER_MAX_BYTES} read through an object reader).
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
