/**
 * What the web UI's project page (`/<project>`) reads from a repository: the default
 * branch, its top-level tree, its README and the branch/tag counts, for a project looked up by
 * path with the caller's permissions (src/domain/permissions.ts, the same rule as the API).
 * The code pages read through this module too: a directory or file at a revision (the revision
 * may contain `/`, revisions.ts), a file's blame, raw file bytes as a stream, the commit log of a revision with
 * the commit query, branches and tags with their head commits, and the comparison of two
 * revisions. Every function needs read code, the API's rule.
 */
import type { Readable } from 'node:stream';
import { BadRequest, NotFound } from '../../errors.js';
import type { ProjectRow } from '../../db/schema.js';
import { blameFile, type Blame } from '../../git/blame.js';
import { listTree, streamBlob, type TreeEntry } from '../../git/browse.js';
import { readCommits, revList, type Commit } from '../../git/commits.js';
import { readBlob } from '../../git/files.js';
import { POINTER_MAX_BYTES } from '../../git/lfs-pointers.js';
import { mergeBase } from '../../git/merge.js';
import { branchesAndTags, getDefaultBranch, listBranches, resolveCommit } from '../../git/refs.js';
import { listTags } from '../../git/tags.js';
import { readBlobHead, type TreeEntry as PathEntry } from '../../git/trees.js';
import { parseCommitQuery } from '../../query/commit-query.js';
import type { Context } from '../context.js';
import { findProjectByPath, projectPermissions, type ProjectPermissions, type ProjectPrivilege } from '../projects/index.js';
import { deny } from '../actor.js';
import { lfsContentOf } from '../lfs/index.js';
import { MAX_COMMITS, queryCommits } from './commit-query.js';
import { objectRead } from '../object-reads.js';
import { diffCommits, type CommitDiff } from './diff.js';
import { pathEntryAt } from './files.js';
import { resolveRevision, resolveRevisionAndPath, type RevisionAndPath } from './revisions.js';

export type { Blame, Commit, PathEntry, RevisionAndPath, TreeEntry };

/**
 * A project by path (case-insensitive) with the caller's permissions. A missing project or one
 * the caller cannot access is NotFound (existence is not leaked); lacking `need` is 401/403 as
 * in the API ({@link deny}).
 */
export async function projectByPath(
  ctx: Context,
  path: string,
  need: ProjectPrivilege = 'access',
): Promise<{ project: ProjectRow; permissions: ProjectPermissions }> {
  const project = await findProjectByPath(ctx.db, path);
  const permissions = project ? await projectPermissions(ctx, project) : null;
  if (!project || !permissions?.access) throw new NotFound(`Project not found: ${path}`);
  if (!permissions[need]) deny(ctx.actor);
  return { project, permissions };
}

/** The repository summary of a project page. */
export interface RepositoryOverview {
  /** The default branch, null for an empty repository (no branch yet). */
  defaultBranch: string | null;
  /** Head commit of the default branch (40 hex), null when empty. */
  commitHash: string | null;
  /** Top-level entries of the default branch (directories first); empty when empty. */
  entries: TreeEntry[];
  /** The README of the top level (first of README.md, README.markdown, README, README.txt, any case). */
  readme: { name: string; hash: string; text: string } | null;
  branchCount: number;
  tagCount: number;
}

const README = /^readme(\.(md|markdown|txt))?$/i;
/** READMEs larger than this are not rendered (bytes). */
const README_MAX_BYTES = 512 * 1024;

/**
 * Reads the overview of a project's repository (needs read code; 401/403 otherwise).
 * @throws NotFound/Forbidden/Unauthorized from {@link projectByPath}'s rules.
 */
export async function repositoryOverview(ctx: Context, project: ProjectRow): Promise<RepositoryOverview> {
  const repo = await readableRepository(ctx, project);
  const { refs, head: defaultBranch } = await branchesAndTags(repo);
  // the refs are branches and tags only
  const branchCount = [...refs.keys()].filter((ref) => ref.startsWith('refs/heads/')).length;
  const tagCount = refs.size - branchCount;
  if (defaultBranch === null) return { defaultBranch: null, commitHash: null, entries: [], readme: null, branchCount, tagCount };
  // branchesAndTags names a head only among the branches it lists
  const commitHash = refs.get(`refs/heads/${defaultBranch}`)!;
  const entries = await objectRead(
    repo,
    'tree',
    [commitHash],
    () => listTree(repo, commitHash),
    (e) => 128 * e.length,
  );
  const readme = await readmeOf(repo, commitHash, '', entries);
  return { defaultBranch, commitHash, entries, readme, branchCount, tagCount };
}

/** The README among a directory's entries (see {@link RepositoryOverview.readme}), null when none or too large. */
async function readmeOf(repo: string, commitHash: string, dir: string, entries: TreeEntry[]): Promise<RepositoryOverview['readme']> {
  const order = ['readme.md', 'readme.markdown', 'readme', 'readme.txt'];
  const candidate = entries
    .filter((e) => e.type === 'blob' && README.test(e.name))
    .sort((a, b) => order.indexOf(a.name.toLowerCase()) - order.indexOf(b.name.toLowerCase()))[0];
  if (!candidate) return null;
  const path = dir ? `${dir}/${candidate.name}` : candidate.name;
  const bytes = await objectRead(
    repo,
    `file:${path}`,
    [commitHash],
    () => readBlob(repo, commitHash, path),
    (b) => b?.length ?? 1,
  );
  return bytes && bytes.length <= README_MAX_BYTES ? { name: candidate.name, hash: candidate.hash, text: bytes.toString('utf8') } : null;
}

/** The repository path of a project the caller may read code of (401/403 otherwise). */
export async function readableRepository(ctx: Context, project: ProjectRow): Promise<string> {
  const permissions = await projectPermissions(ctx, project);
  if (!permissions.readCode) deny(ctx.actor);
  return ctx.repoPath(project.id);
}

/** Files larger than this are not shown in the file view, only offered raw (bytes). */
export const MAX_VIEW_BYTES = 1024 * 1024;
/** The most lines of a file the file view shows. */
export const MAX_VIEW_LINES = 10_000;
/** Bytes git looks at to tell binary from text (a NUL among them means binary, as git does). */
const BINARY_PROBE = 8000;

const isBinary = (bytes: Buffer) => bytes.subarray(0, BINARY_PROBE).includes(0);

/** What a `<revision>/<path>` of the file pages names: a directory or a file, with the branch and tag names (for revision selectors). */
export type BrowseResult = { names: RevisionNames } & (
  | {
      kind: 'tree';
      at: RevisionAndPath;
      /** The directory's entries (names within it), directories first, then by name. */
      entries: TreeEntry[];
      /** The directory's README, as on the project page. */
      readme: RepositoryOverview['readme'];
    }
  | {
      kind: 'file';
      at: RevisionAndPath;
      entry: PathEntry;
      /** Size in bytes. */
      size: number;
      /** Whether the content looks binary (a NUL byte in its first 8,000 bytes). */
      binary: boolean;
      /** The text of a text file: its first {@link MAX_VIEW_LINES} lines; null for binary files and files over {@link MAX_VIEW_BYTES}. */
      text: string | null;
      /** Lines left out of `text` past {@link MAX_VIEW_LINES} (0 when complete). */
      omittedLines: number;
      /**
       * A Git LFS file: the object its pointer names (`stored`: the server holds it for the
       * project, and `size`, `binary` and `text` are the object's), else null.
       */
      lfs: { oid: string; stored: boolean } | null;
    }
);

/**
 * Reads what `<revision>[/<path>]` names in a project's repository (read code): the longest
 * prefix naming a branch or tag is the revision (revisions.ts), the rest a directory or file —
 * for a Git LFS pointer, the object it names (`lfs`).
 * A submodule entry is listed in its directory but cannot be opened. The branch and tag names
 * come from the same ref listing.
 *
 * @throws NotFound `Revision not found: X`, `Path not found: X`; BadRequest `Invalid path: X`;
 *   Forbidden/Unauthorized without read code.
 */
export async function browseAt(ctx: Context, project: ProjectRow, revisionAndPath: string): Promise<BrowseResult> {
  const repo = await readableRepository(ctx, project);
  const { refs } = await branchesAndTags(repo);
  const names = namesOf(refs);
  const at = await resolveRevisionAndPath(repo, revisionAndPath, refs);
  const entry = await pathEntryAt(repo, at.commitHash, at.path);
  if (entry === null || entry.type === 'commit') throw new NotFound(`Path not found: ${at.path}`);
  if (entry.type === 'tree') {
    const entries = await objectRead(
      repo,
      'tree',
      [entry.oid],
      () => listTree(repo, entry.oid),
      (e) => 128 * e.length,
    );
    return { kind: 'tree', names, at, entries, readme: await readmeOf(repo, at.commitHash, at.path, entries) };
  }
  const read = (max: number): Promise<Buffer> =>
    max === MAX_VIEW_BYTES
      ? objectRead(
          repo,
          `blob-head:${MAX_VIEW_BYTES}`,
          [entry.oid],
          () => readBlobHead(repo, entry.oid, entry.size ?? 0, MAX_VIEW_BYTES),
          (b) => b.length,
        )
      : readBlobHead(repo, entry.oid, entry.size ?? 0, max);
  // a Git LFS pointer shows the object it names (docs/compatibility.md#git-lfs)
  const lfs = (entry.size ?? 0) < POINTER_MAX_BYTES ? await lfsContentOf(ctx, project.id, await read(MAX_VIEW_BYTES)) : null;
  if (lfs?.stored) return { kind: 'file', names, at, entry, lfs: { oid: lfs.oid, stored: true }, ...(await fileView(lfs.size, (max) => lfs.head(max))) };
  if (lfs) return { kind: 'file', names, at, entry, lfs: { oid: lfs.oid, stored: false }, size: lfs.size, binary: true, text: null, omittedLines: 0 };
  return { kind: 'file', names, at, entry, lfs: null, ...(await fileView(entry.size ?? 0, read)) };
}

/**
 * What the file view shows of content of `size` bytes read by `read(max)` (its first `max`
 * bytes): binary or not, and the text of a text file up to {@link MAX_VIEW_BYTES} and
 * {@link MAX_VIEW_LINES}.
 */
async function fileView(
  size: number,
  read: (max: number) => Promise<Buffer>,
): Promise<{ size: number; binary: boolean; text: string | null; omittedLines: number }> {
  if (size > MAX_VIEW_BYTES) return { size, binary: isBinary(await read(BINARY_PROBE)), text: null, omittedLines: 0 };
  const bytes = await read(MAX_VIEW_BYTES);
  if (isBinary(bytes)) return { size, binary: true, text: null, omittedLines: 0 };
  let text = bytes.toString('utf8');
  let omittedLines = 0;
  let end = -1;
  for (let n = 0; n < MAX_VIEW_LINES; n++) {
    end = text.indexOf('\n', end + 1);
    if (end < 0) break;
  }
  if (end >= 0 && end + 1 < text.length) {
    const rest = text.slice(end + 1);
    omittedLines = rest.split('\n').length - (rest.endsWith('\n') ? 1 : 0);
    text = text.slice(0, end + 1);
  }
  return { size, binary: false, text, omittedLines };
}

/** A file of `<revision>/<path>` with the commit that last changed each line it shows. */
export type BlameResult = Extract<BrowseResult, { kind: 'file' }> & {
  /** The shown lines' authorship; null when no text is shown (binary, too large or empty). */
  blame: Blame | null;
};

/** Lines in a text as the file view counts them (a final newline ends the last line). */
export function lineCount(text: string): number {
  return text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/**
 * The blame view of `<revision>/<path>` (read code): the file as {@link browseAt} reads it and
 * the commit that last changed each of its shown lines (the first {@link MAX_VIEW_LINES}).
 *
 * @throws BadRequest `Specified path is not a file: X` for a directory; otherwise as
 *   {@link browseAt}.
 */
export async function blameAt(ctx: Context, project: ProjectRow, revisionAndPath: string): Promise<BlameResult> {
  const result = await browseAt(ctx, project, revisionAndPath);
  if (result.kind === 'tree') throw new BadRequest(`Specified path is not a file: ${result.at.path}`);
  // git blames the pointer's lines, not the object's
  const lines = result.text === null || result.lfs ? 0 : lineCount(result.text);
  if (lines === 0) return { ...result, blame: null };
  const repo = ctx.repoPath(project.id);
  const { commitHash, path } = result.at;
  const blame = await objectRead(
    repo,
    `blame:${lines}:${path}`,
    [commitHash],
    () => blameFile(repo, commitHash, path, lines),
    (b) => 64 * b.ranges.length + 256 * b.commits.size,
  );
  return { ...result, blame };
}

/** A file's bytes for raw download: the start (to tell binary from text) and a stream of all of it. */
export interface RawFile {
  at: RevisionAndPath;
  /** Repository-relative path. */
  path: string;
  /** 40-hex blob id. */
  oid: string;
  /** Size in bytes. */
  size: number;
  /** Whether the content looks binary (a NUL byte in its first 8,000 bytes). */
  binary: boolean;
  /** Whether the file is a Git LFS pointer whose object is served instead (`size` and `binary` are the object's). */
  lfs: boolean;
  /** Starts streaming the whole content. */
  open(): Promise<Readable>;
}

/**
 * A file of `<revision>/<path>` for raw download (read code); a Git LFS pointer whose object
 * the project can read stands for that object (docs/compatibility.md#git-lfs).
 *
 * @throws NotFound `Revision not found: X`, `Path not found: X`; BadRequest `Specified path is
 *   not a file: X`, `Invalid path: X`; Forbidden/Unauthorized without read code.
 */
export async function rawFileAt(ctx: Context, project: ProjectRow, revisionAndPath: string): Promise<RawFile> {
  const repo = await readableRepository(ctx, project);
  const at = await resolveRevisionAndPath(repo, revisionAndPath);
  const entry = await pathEntryAt(repo, at.commitHash, at.path);
  if (entry === null) throw new NotFound(`Path not found: ${at.path}`);
  if (entry.type !== 'blob') throw new BadRequest(`Specified path is not a file: ${at.path}`);
  const start = await readBlobHead(repo, entry.oid, entry.size ?? 0, BINARY_PROBE);
  const lfs = (entry.size ?? 0) < POINTER_MAX_BYTES ? await lfsContentOf(ctx, project.id, start) : null;
  const file = { at, path: entry.path, oid: entry.oid };
  if (lfs?.stored) return { ...file, size: lfs.size, binary: isBinary(await lfs.head(BINARY_PROBE)), lfs: true, open: () => lfs.open() };
  return { ...file, size: entry.size ?? 0, binary: isBinary(start), lfs: false, open: async () => streamBlob(repo, entry.oid).stdout };
}

/** Short branch and tag names, in ref order. */
export interface RevisionNames {
  branches: string[];
  tags: string[];
}

function namesOf(refs: Map<string, string>): RevisionNames {
  const branches: string[] = [];
  const tags: string[] = [];
  for (const ref of refs.keys()) {
    if (ref.startsWith('refs/heads/')) branches.push(ref.slice('refs/heads/'.length));
    else if (ref.startsWith('refs/tags/')) tags.push(ref.slice('refs/tags/'.length));
  }
  return { branches, tags };
}

/** The branch and tag names of a repository, for revision selectors, and its default branch. */
export async function revisionNames(ctx: Context, project: ProjectRow): Promise<RevisionNames & { defaultBranch: string | null }> {
  const repo = await readableRepository(ctx, project);
  const { refs, head } = await branchesAndTags(repo);
  return { defaultBranch: head, ...namesOf(refs) };
}

/** A page of the commit log. */
export interface CommitLogPage {
  /** The commits of the page, newest first. */
  commits: Commit[];
  /** Whether a further page exists. */
  hasMore: boolean;
}

/**
 * A page of the commit log of a project (read code): the commits of `revision` selected by the
 * commit query (commit-query.ts). The revision scopes the query unless the query names its own
 * revisions (`branch(x)`, `tag(x)`, …, `since`/`until` included); with neither, every branch and
 * tag is searched.
 *
 * @param options.revision a branch, tag or commit; null = no scope.
 * @param options.query commit query text ('' = all).
 * @param options.page 1-based page number; pages past {@link MAX_COMMITS} commits are empty.
 * @param options.pageSize commits per page (1…500).
 * @throws QuerySyntaxError (400) for a malformed query or unknown revisions in it (columns of
 *   the query as written); NotFound `Revision not found: X`; BadRequest for a bad page.
 */
export async function commitLog(
  ctx: Context,
  project: ProjectRow,
  options: { revision: string | null; query: string; page: number; pageSize: number },
): Promise<CommitLogPage> {
  const repo = await readableRepository(ctx, project);
  const { revision, query, page, pageSize } = options;
  if (!Number.isInteger(page) || page < 1) throw new BadRequest(`Invalid page: ${page}`);
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 500) throw new BadRequest(`Invalid page size: ${pageSize}`);
  const namesRevision = parseCommitQuery(query).some((c) => c.type === 'revision');
  let scope: string | null = null;
  if (revision !== null && !namesRevision) {
    scope = await resolveRevision(repo, revision);
    if (!scope) throw new NotFound(`Revision not found: ${revision}`);
  }
  const wanted = Math.min(page * pageSize + 1, MAX_COMMITS);
  const skip = (page - 1) * pageSize;
  if (skip >= wanted) return { commits: [], hasMore: false };
  const read = async (): Promise<CommitLogPage> => {
    const hashes = await queryCommits(ctx, project.id, query, wanted, scope ?? undefined);
    const slice = hashes.slice(skip, skip + pageSize);
    return { commits: await readCommits(repo, slice), hasMore: hashes.length > skip + pageSize };
  };
  // a commit's history never changes: the page of a resolved commit without a query is kept
  if (scope === null || query.trim() !== '') return read();
  return objectRead(repo, `log-page:${page}:${pageSize}`, [scope], read, (log) => 512 + log.commits.reduce((n, c) => n + 256 + c.message.length * 2, 0));
}

/** A branch or tag with the commit it points to. */
export interface RefSummary {
  /** Short name. */
  name: string;
  /** The commit (peeled for annotated tags). */
  commit: Commit;
}

/**
 * The branches of a project with their head commits, the default branch first, then the most
 * recently committed (read code).
 */
export async function branchSummaries(ctx: Context, project: ProjectRow): Promise<{ defaultBranch: string | null; branches: RefSummary[] }> {
  const repo = await readableRepository(ctx, project);
  const [branches, defaultBranch] = await Promise.all([listBranches(repo), getDefaultBranch(repo)]);
  const commits = await readCommits(
    repo,
    branches.map((b) => b.commitHash),
  );
  const summaries = branches.map((b, i) => ({ name: b.name, commit: commits[i] }));
  summaries.sort(
    (a, b) => Number(b.name === defaultBranch) - Number(a.name === defaultBranch) || b.commit.committer.date.getTime() - a.commit.committer.date.getTime(),
  );
  return { defaultBranch, branches: summaries };
}

/** The tags of a project that tag commits, with those commits, the most recent first (read code). */
export async function tagSummaries(ctx: Context, project: ProjectRow): Promise<RefSummary[]> {
  const repo = await readableRepository(ctx, project);
  const tags = (await listTags(repo)).filter((t): t is typeof t & { commitHash: string } => t.commitHash !== null);
  const commits = await readCommits(
    repo,
    tags.map((t) => t.commitHash),
  );
  return tags
    .map((t, i) => ({ name: t.name, commit: commits[i] }))
    .sort((a, b) => b.commit.committer.date.getTime() - a.commit.committer.date.getTime() || (a.name < b.name ? -1 : 1));
}

/** The most commits {@link compareRevisions} lists. */
export const MAX_COMPARE_COMMITS = 500;

/** Two revisions compared. */
export interface Comparison {
  /** 40-hex commits of the two sides. */
  leftCommit: string;
  rightCommit: string;
  /** Their best common ancestor, null for unrelated histories. */
  mergeBase: string | null;
  /** Commits on the right not on the left (`left..right`), newest first, at most {@link MAX_COMPARE_COMMITS}. */
  commits: Commit[];
  /** Whether more commits exist than listed. */
  moreCommits: boolean;
  /** The changes the right side brings: from the merge base (else the left commit) to the right. */
  diff: CommitDiff;
}

/**
 * Compares two revisions of a project (read code), as a pull request from `right` into `left`
 * would: the commits of `left..right` and the diff from their merge base to `right`.
 *
 * @throws NotFound `Revision not found: X`; Forbidden/Unauthorized without read code.
 */
export async function compareRevisions(ctx: Context, project: ProjectRow, left: string, right: string): Promise<Comparison> {
  const repo = await readableRepository(ctx, project);
  const resolve = async (revision: string) => {
    const hash = revision.startsWith('-') ? null : await resolveCommit(repo, revision);
    if (!hash) throw new NotFound(`Revision not found: ${revision}`);
    return hash;
  };
  const [leftCommit, rightCommit] = await Promise.all([resolve(left), resolve(right)]);
  const [base, hashes] = await Promise.all([
    mergeBase(repo, leftCommit, rightCommit),
    revList(repo, [rightCommit], [leftCommit], { max: MAX_COMPARE_COMMITS + 1 }),
  ]);
  const [commits, diff] = await Promise.all([
    readCommits(repo, hashes.slice(0, MAX_COMPARE_COMMITS)),
    diffCommits(ctx, project.id, base ?? leftCommit, rightCommit),
  ]);
  return { leftCommit, rightCommit, mergeBase: base, commits, moreCommits: hashes.length > MAX_COMPARE_COMMITS, diff };
}
