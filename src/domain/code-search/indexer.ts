/**
 * Brings a project's code index up to its default branch (docs/compatibility.md#code-search):
 * from the commit indexed before, only the files that changed (`git diff-tree`); without one (or
 * when that commit is gone), the whole tree. Each file's text is stored unless it is skipped —
 * binary (a NUL byte in its first 8,000 bytes, as git decides), larger than
 * {@link MAX_INDEXED_BYTES}, or vendored ({@link VENDORED}) — and the skip is recorded instead, so
 * search results can say what they did not look at. Blobs are read in batches of at most
 * {@link BATCH_BYTES} and written in transactions of at most {@link WRITE_BYTES} of text or 100
 * files, the event loop free between them (a transaction of the index's text tables holds the
 * database, and on SQLite the thread, while it lasts); the indexed commit is written last, so an
 * interrupted run starts again from the same commit and converges (the writes are upserts).
 *
 * The symbols of each stored file (ctags.ts: Universal Ctags, when the server has it) are written
 * in the same transaction as its row, replacing those of its previous blob; a removed file's go
 * with its row. A file whose symbols are missing or cut records why (`symbolsSkipped`).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Insertable } from 'kysely';
import type { CodeSearchFileTable } from '../../db/schema.js';
import { diffBlobs, listBlobs, readBlobs, type BlobEntry } from '../../git/blob-batches.js';
import { gitDir, gitText } from '../../git/command.js';
import { getDefaultBranch } from '../../git/repository.js';
import type { Services } from '../context.js';
import { repositoryPath } from '../context.js';
import { languageOf } from '../repositories/index.js';
import { CtagsSession, locateCtags, type FileTags } from './ctags.js';

/** Files larger than this are not indexed (bytes). */
export const MAX_INDEXED_BYTES = 1024 * 1024;

/** Blob bytes read per batch. */
const BATCH_BYTES = 8 * 1024 * 1024;
/** Text bytes written per transaction: on SQLite a transaction holds the thread, and one of 8 MiB into the search tables held it for seconds. */
const WRITE_BYTES = 256 * 1024;
/** Files written per transaction. */
const WRITE_FILES = 100;

/** Paths of third-party or generated code: dependencies, minified files, lock files. */
export const VENDORED =
  /(^|\/)(node_modules|vendor|third_party|bower_components)\/|\.min\.(js|css)$|(^|\/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.lock|go\.sum)$/;

/** What one indexing run did. */
export interface IndexRun {
  /** The commit now indexed; null when the project has no default branch (nothing indexed). */
  commit: string | null;
  /** Files written (added or changed) and removed. */
  written: number;
  removed: number;
}

/**
 * Indexes project `projectId` at its default branch's head, starting from `indexedCommit` (null:
 * from nothing). Does not record the commit: the caller does, once this resolved.
 *
 * @throws GitError when git fails (the caller records it and retries later).
 */
export async function indexProject(services: Pick<Services, 'db' | 'config'>, projectId: number, indexedCommit: string | null): Promise<IndexRun> {
  const repo = repositoryPath(services.config, projectId);
  const branch = await getDefaultBranch(repo);
  const head =
    branch === null
      ? null
      : (await gitText([gitDir(repo), 'rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], { okExitCodes: [0, 1] })).trim() || null;
  if (head === null) {
    const removed = await services.db.deleteFrom('codeSearchFiles').where('projectId', '=', projectId).executeTakeFirst();
    return { commit: null, written: 0, removed: Number(removed.numDeletedRows) };
  }
  if (head === indexedCommit) return { commit: head, written: 0, removed: 0 };
  const base = indexedCommit && (await commitExists(repo, indexedCommit)) ? indexedCommit : null;
  let changed: BlobEntry[];
  let removed: string[];
  if (base) ({ changed, removed } = await diffBlobs(repo, base, head));
  else {
    changed = await listBlobs(repo, head);
    const kept = new Set(changed.map((entry) => entry.path));
    const indexed = await services.db.selectFrom('codeSearchFiles').select('path').where('projectId', '=', projectId).execute();
    removed = indexed.map((row) => row.path).filter((path) => !kept.has(path));
  }
  for (let i = 0; i < removed.length; i += 500) {
    await services.db
      .deleteFrom('codeSearchFiles')
      .where('projectId', '=', projectId)
      .where('path', 'in', removed.slice(i, i + 500))
      .execute();
  }
  const ctagsBinary = await locateCtags(services.config.ctags);
  const ctags = ctagsBinary === null ? null : new CtagsSession(ctagsBinary);
  try {
    for (const batch of runs(changed, (entry) => (skipOf(entry) === null ? entry.size : 0), BATCH_BYTES))
      await writeBatch(services, repo, projectId, batch, ctags);
  } finally {
    ctags?.close();
  }
  return { commit: head, written: changed.length, removed: removed.length };
}

async function commitExists(repo: string, commit: string): Promise<boolean> {
  return (await gitText([gitDir(repo), 'cat-file', '-t', commit], { okExitCodes: [0, 128] })).trim() === 'commit';
}

/** Consecutive runs of `items` of at most `maxCount` items and `maxBytes` by `sizeOf` (a larger item alone). */
function* runs<T>(items: readonly T[], sizeOf: (item: T) => number, maxBytes: number, maxCount = Infinity): Generator<T[]> {
  let run: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = sizeOf(item);
    if (run.length > 0 && (run.length >= maxCount || bytes + size > maxBytes)) {
      yield run;
      run = [];
      bytes = 0;
    }
    run.push(item);
    bytes += size;
  }
  if (run.length > 0) yield run;
}

/** Why a file is not indexed before its content is read, or null. */
function skipOf(entry: BlobEntry): string | null {
  if (VENDORED.test(entry.path)) return 'vendored';
  if (entry.size > MAX_INDEXED_BYTES) return 'too large';
  return null;
}

/** Reads the texts of a batch, finds their symbols (when `ctags`), and upserts the rows of both, a file's rows and symbols in one transaction. */
async function writeBatch(services: Pick<Services, 'db'>, repo: string, projectId: number, batch: BlobEntry[], ctags: CtagsSession | null): Promise<void> {
  const toRead = batch.filter((entry) => skipOf(entry) === null);
  const contents = await readBlobs(
    repo,
    toRead.map((entry) => entry.blobId),
    MAX_INDEXED_BYTES,
  );
  const texts = new Map(toRead.map((entry) => [entry.path, contents.get(entry.blobId)?.content ?? null]));
  const symbols = new Map<string, FileTags>();
  const rows: Insertable<CodeSearchFileTable>[] = [];
  for (const entry of batch) {
    const bytes = texts.get(entry.path);
    let skipped = skipOf(entry);
    if (bytes && bytes.subarray(0, 8000).includes(0)) skipped = 'binary';
    const stored = skipped === null && bytes;
    const tags = stored && ctags ? await ctags.tagsOf(entry.path, bytes) : null;
    if (tags) symbols.set(entry.path, tags);
    rows.push({
      projectId,
      path: entry.path,
      blobId: entry.blobId,
      language: languageOf(entry.path),
      size: entry.size,
      skipped,
      content: stored ? bytes.toString('utf8') : null,
      symbolsSkipped: tags?.skipped ?? null,
    });
  }
  for (const chunk of runs(rows, (row) => row.content?.length ?? 0, WRITE_BYTES, WRITE_FILES)) {
    // other requests run between transactions
    await nextTurn();
    await services.db.transaction().execute(async (tx) => {
      const written = await tx
        .insertInto('codeSearchFiles')
        .values(chunk)
        .onConflict((oc) =>
          oc.columns(['projectId', 'path']).doUpdateSet((eb) => ({
            blobId: eb.ref('excluded.blobId'),
            language: eb.ref('excluded.language'),
            size: eb.ref('excluded.size'),
            skipped: eb.ref('excluded.skipped'),
            content: eb.ref('excluded.content'),
            symbolsSkipped: eb.ref('excluded.symbolsSkipped'),
          })),
        )
        .returning(['id', 'path', 'language'])
        .execute();
      await tx
        .deleteFrom('codeSearchSymbols')
        .where(
          'fileId',
          'in',
          written.map((file) => file.id),
        )
        .execute();
      const symbolRows = written.flatMap((file) =>
        (symbols.get(file.path)?.tags ?? []).map((tag) => ({
          fileId: file.id,
          projectId,
          name: tag.name,
          nameLower: tag.name.toLowerCase(),
          kind: tag.kind,
          line: tag.line,
          scope: tag.scope,
          language: file.language ?? tag.language?.toLowerCase() ?? null,
        })),
      );
      for (let j = 0; j < symbolRows.length; j += 500)
        await tx
          .insertInto('codeSearchSymbols')
          .values(symbolRows.slice(j, j + 500))
          .execute();
    });
  }
}
