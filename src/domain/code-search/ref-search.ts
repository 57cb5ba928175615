/**
 * Code search on a branch, tag or commit of one project (docs/compatibility.md#code-search): the
 * index holds default branches only, so the tree at `ref` is searched directly. `git grep` with
 * fixed strings (src/git/grep.ts) finds the files holding every text a match needs — the literal,
 * or the required literal runs of a regular expression — and those files' texts, read through
 * the bounded blob reader, are verified line by line by the matcher of the index search (RE2 for
 * regular expressions). A regular expression without required runs reads every file in scope.
 * The index's skips hold (binary, larger than {@link MAX_INDEXED_BYTES}, vendored), as do its
 * filters, its result shape and the bound of {@link MAX_SCANNED_BYTES} read.
 */
import { type BlobEntry, listBlobs, readBlobs } from '../../git/blob-batches.js';
import { filesContainingAll } from '../../git/grep.js';
import { isObjectId, isValidRefName } from '../../git/names.js';
import { resolveCommit } from '../../git/refs.js';
import { BadRequest } from '../../errors.js';
import { pathGlobMatcher } from '../../query/wildcards.js';
import type { Context } from '../context.js';
import { findProjectByPath, projectPermissions } from '../projects/index.js';
import { languageOf, revisionNames } from '../repositories/index.js';
import { MAX_INDEXED_BYTES, VENDORED } from './indexer.js';
import {
  checkGlobLength,
  compileSearch,
  type CodeFileMatch,
  type CodeSearchQuery,
  type CodeSearchResults,
  matchLines,
  MAX_RESULT_FILES,
  MAX_SCANNED_BYTES,
} from './search.js';

/** Blob bytes read per batch. */
const BATCH_BYTES = 8 * 1024 * 1024;
/** Bytes git looks at to tell binary from text (a NUL among them: binary, as git decides). */
const BINARY_PROBE = 8000;

const NOTHING: CodeSearchResults = { files: [], incomplete: false, indexing: 0, skipped: 0 };

/**
 * Searches the code of `query.project` at `query.ref` for the actor of `ctx` (see the module
 * comment). `ref` names a branch, else a tag, else a commit (a full or abbreviated hash). A
 * project that does not exist, one whose code the actor cannot read, and a ref that names nothing
 * all answer alike: nothing found. `skipped` counts the tree's vendored and too large files and
 * the binary ones among the files read.
 *
 * @throws BadRequest without a project; for a ref that is no valid branch or tag name nor a
 *   hash (`Invalid branch or tag name: <ref>`); as the index search does for the text and glob.
 */
export async function searchCodeAtRef(ctx: Context, query: CodeSearchQuery & { ref: string }): Promise<CodeSearchResults> {
  const { matcher, fragments } = compileSearch(query);
  if (!query.project) throw new BadRequest('Choose a project to search a branch or tag of');
  const ref = query.ref;
  if (ref === 'HEAD' || ref.startsWith('-') || !isValidRefName(`refs/heads/${ref}`)) throw new BadRequest(`Invalid branch or tag name: ${ref}`);
  if (query.path) checkGlobLength(query.path);
  const project = await findProjectByPath(ctx.db, query.project);
  if (!project || !(await projectPermissions(ctx, project)).readCode) return NOTHING;
  const repo = ctx.repoPath(project.id);
  const commit = await resolveRef(repo, ref);
  if (commit === null) return NOTHING;

  const glob = query.path ? pathGlobMatcher(query.path) : null;
  const texts = grepTexts(fragments);
  // the tree and the files holding the texts are read at once
  const [tree, grepped] = await Promise.all([listBlobs(repo, commit), texts.length === 0 ? null : filesContainingAll(repo, commit, texts)]);
  let skipped = 0;
  const inScope = new Map<string, BlobEntry>();
  for (const entry of tree) {
    if (VENDORED.test(entry.path) || entry.size > MAX_INDEXED_BYTES) skipped++;
    else if ((!glob || glob.test(entry.path)) && (!query.language || languageOf(entry.path) === query.language)) inScope.set(entry.path, entry);
  }
  const candidates = grepped === null ? [...inScope.values()] : grepped.flatMap((path) => inScope.get(path) ?? []);

  const files: CodeFileMatch[] = [];
  let scanned = 0;
  let incomplete = false;
  read: for (const batch of batches(candidates)) {
    const contents = await readBlobs(
      repo,
      batch.map((entry) => entry.blobId),
      MAX_INDEXED_BYTES,
    );
    for (const entry of batch) {
      const bytes = contents.get(entry.blobId)?.content;
      if (!bytes) continue;
      if (bytes.subarray(0, BINARY_PROBE).includes(0)) {
        skipped++;
        continue;
      }
      const content = bytes.toString('utf8');
      scanned += content.length;
      const found = matchLines(content, matcher);
      if (found.lines.length > 0) {
        if (files.length === MAX_RESULT_FILES) {
          incomplete = true;
          break read;
        }
        files.push({
          projectId: project.id,
          projectPath: project.path,
          path: entry.path,
          commit,
          language: languageOf(entry.path),
          lines: found.lines,
          moreLines: found.more,
        });
      }
      if (scanned > MAX_SCANNED_BYTES) {
        incomplete = true;
        break read;
      }
    }
    // the verification is on this thread: let other requests in between batches
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { files, incomplete, indexing: 0, skipped };
}

/**
 * The branches and tags a search of project `projectPath` may name, and its default branch (the
 * one the index holds) — for the page's branch and tag switcher; null when the project does not
 * exist or the actor cannot read its code.
 */
export async function refChoices(ctx: Context, projectPath: string): Promise<{ branches: string[]; tags: string[]; defaultBranch: string | null } | null> {
  const project = await findProjectByPath(ctx.db, projectPath);
  if (!project || !(await projectPermissions(ctx, project)).readCode) return null;
  return revisionNames(ctx, project);
}

/** The commit `ref` names in `repo`: the branch, else the tag, else a commit hash (4 to 64 hex digits); null when none. */
async function resolveRef(repo: string, ref: string): Promise<string | null> {
  for (const full of [`refs/heads/${ref}`, `refs/tags/${ref}`]) {
    const commit = await resolveCommit(repo, full);
    if (commit !== null) return commit;
  }
  if (!/^[0-9a-f]{4,64}$/.test(ref)) return null;
  const commit = await resolveCommit(repo, ref);
  return commit !== null && isObjectId(commit) ? commit : null;
}

/**
 * The texts `git grep` is given for the texts every match holds: the runs of printable ASCII of
 * each (git folds ASCII case only, as the lines compared by the matcher are lower-cased), without
 * leading `-` (a value never starts with one), so each is still a substring of every match.
 */
function grepTexts(fragments: readonly string[]): string[] {
  return fragments.flatMap((fragment) => fragment.split(/[^\x20-\x7e]+/).flatMap((run) => run.replace(/^-+/, '') || []));
}

/** Groups files into batches of at most {@link BATCH_BYTES} (each file at most {@link MAX_INDEXED_BYTES}). */
function* batches(entries: readonly BlobEntry[]): Generator<BlobEntry[]> {
  let batch: BlobEntry[] = [];
  let bytes = 0;
  for (const entry of entries) {
    if (batch.length > 0 && bytes + entry.size > BATCH_BYTES) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(entry);
    bytes += entry.size;
  }
  if (batch.length > 0) yield batch;
}
