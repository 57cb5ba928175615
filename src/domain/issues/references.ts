import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { markdownText } from '../mentions.js';
import type { PullRequestChangeData } from '../pulls/index.js';
import { issuesAtPlaces, MAX_NUMBER, projectsByPath, type NumberInProject } from './fix-references.js';
import { recordPullRequestReferences } from './referencing-work.js';

/**
 * Plain references between issues, pull requests and builds (docs/compatibility.md#fixed-issue-references
 * "Separate mechanism"), and the "referenced from" change records they leave on the referenced
 * issue or pull request (docs/compatibility.md#pull-requests-sub-entities `PullRequestReferencedFrom…Data`, and the issue
 * equivalents `IssueReferencedFrom…Data` with the same fields).
 */

/** What a plain reference names: `#12`, `issue #12` → issue; `pr #5`, `pull request #5` → pull request; `build #3` → build. */
export type ReferenceKind = 'issue' | 'pullRequest' | 'build';

/** One plain reference found in a text. */
export interface EntityReference {
  kind: ReferenceKind;
  /** Lower-cased project path, or null for "the project of the text". */
  projectPath: string | null;
  number: number;
}

/**
 * One plain reference found by {@link scanReferences}: what the regular expression
 * `(?:^|[^\w&])(?:(?<kind>issue|pull\s*request|pr|build)\s+)?(?<project>\w(?:[\w\-/.]*\w)?)?#(?<number>\d+)(?=$|\W)`
 * (flags `gi`) matches, without its cost: that expression tries every `/`, `-` and `.` of a long
 * path-like run as a start and re-reads the rest of the run from each, so `a/a/a/…!` takes time
 * quadratic in its length (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input).
 */
export interface ReferenceMatch {
  /** Index of the match: the character before the reference, or the reference itself at the start of the text. */
  index: number;
  /** Index of the reference (its keyword, its project path or its `#`). */
  start: number;
  /** Index after the reference's number. */
  end: number;
  /** The keyword as written (`issue`, `Pull  Request`, `pr`, `build`), or undefined. */
  keyword: string | undefined;
  /** The project path as written, or undefined. */
  project: string | undefined;
  /** The digits after `#`. */
  number: string;
}

const SPACE = /\s/;
/** `\w`: an ASCII letter, digit or `_`. */
const isWord = (c: string | undefined): boolean => c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c === '_');
const isSpace = (c: string | undefined): boolean => c !== undefined && SPACE.test(c);
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
/** A character of a project path in a reference: `\w`, `-`, `/`, `.`. */
const isPathChar = (c: string | undefined): boolean => c === '-' || c === '/' || c === '.' || isWord(c);
/** A character that may stand before a reference: not `\w` (inside a word) and not `&` (an entity such as `&#39;`). */
const isBoundary = (c: string | undefined): boolean => c !== undefined && c !== '&' && !isWord(c);

/** Whether `text[at, at + word.length)` is `word` (lower-case ASCII) in any ASCII case. */
function asciiWordAt(text: string, at: number, word: string): boolean {
  if (at < 0 || at + word.length > text.length) return false;
  for (let i = 0; i < word.length; i++) {
    const c = text.charCodeAt(at + i);
    if ((c >= 65 && c <= 90 ? c + 32 : c) !== word.charCodeAt(i)) return false;
  }
  return true;
}

const KEYWORDS = ['issue', 'pr', 'build'];

/** Start of the keyword (`issue`, `pull\s*request`, `pr`, `build`) that ends at `end`, or -1. */
function keywordBefore(text: string, end: number): number {
  for (const word of KEYWORDS) if (asciiWordAt(text, end - word.length, word)) return end - word.length;
  if (!asciiWordAt(text, end - 7, 'request')) return -1;
  const pull = spaceBefore(text, end - 7);
  return asciiWordAt(text, pull - 4, 'pull') ? pull - 4 : -1;
}

/** A match found before its number is read. */
type ReferenceStart = Omit<ReferenceMatch, 'end' | 'number'>;

/**
 * The match of a reference that starts at `start`, when a match may begin there: at the text's
 * start (when scanning from it), else with a boundary character before it, not before `from`.
 */
function matchFrom(text: string, from: number, start: number, keyword: string | undefined, project: string | undefined): ReferenceStart | null {
  if (start === 0 && from === 0) return { index: 0, start, keyword, project };
  return start - 1 >= from && isBoundary(text[start - 1]) ? { index: start - 1, start, keyword, project } : null;
}

/** The start of the whitespace run that ends at `end`. */
function spaceBefore(text: string, end: number): number {
  let start = end;
  while (start > 0 && isSpace(text[start - 1])) start--;
  return start;
}

/**
 * The leftmost match, starting not before `from`, of a reference whose `#` is at `hash`: a
 * keyword (with the whitespace after it) and/or a project path before the `#`, and before them
 * the text's start or one boundary character.
 */
function referenceEndingAt(text: string, hash: number, from: number): ReferenceStart | null {
  if (hash === 0) return from === 0 ? { index: 0, start: 0, keyword: undefined, project: undefined } : null;
  const before = text[hash - 1];
  if (isWord(before)) {
    // a project path: a run of path characters starting and ending with \w
    let run = hash - 1;
    while (run > 0 && isPathChar(text[run - 1])) run--;
    // after a keyword and whitespace the path takes the whole run; that start comes first
    if (isWord(text[run]) && isSpace(text[run - 1])) {
      const space = spaceBefore(text, run - 1);
      const keyword = keywordBefore(text, space);
      const match = keyword < 0 ? null : matchFrom(text, from, keyword, text.slice(keyword, space), text.slice(run, hash));
      if (match) return match;
    }
    // or the path alone: it starts at the run's start or after a `/`, `-` or `.` in the run
    for (let start = Math.max(run, from); start < hash; start++) {
      const match = isWord(text[start]) ? matchFrom(text, from, start, undefined, text.slice(start, hash)) : null;
      if (match) return match;
    }
    return null;
  }
  if (isSpace(before)) {
    const space = spaceBefore(text, hash - 1);
    const keyword = keywordBefore(text, space);
    const match = keyword < 0 ? null : matchFrom(text, from, keyword, text.slice(keyword, space), undefined);
    if (match) return match;
  }
  return matchFrom(text, from, hash, undefined, undefined);
}

/**
 * Finds the plain references of a text in order, exactly where the regular expression of
 * {@link ReferenceMatch} would (the same matches, groups and positions, scanning on from the end
 * of each match), in time linear in the text's length: each `#` followed by digits is looked at
 * once, and the keyword, path and whitespace before it are read once, backwards, up to the
 * previous `#` at most.
 */
export function* scanReferences(text: string): Generator<ReferenceMatch> {
  let from = 0;
  let hash = text.indexOf('#');
  while (hash >= 0) {
    let end = hash + 1;
    while (isDigit(text[end])) end++;
    const found = end > hash + 1 && !isWord(text[end]) ? referenceEndingAt(text, hash, from) : null;
    if (found) {
      yield { index: found.index, start: found.start, end, keyword: found.keyword, project: found.project, number: text.slice(hash + 1, end) };
      from = end;
    }
    hash = text.indexOf('#', Math.max(end, hash + 1));
  }
}

/** The kind a reference's keyword (`issue`, `pr`, `pull request`, `build`, none) names. */
export function kindOf(keyword: string | undefined): ReferenceKind {
  if (!keyword) return 'issue';
  const lower = keyword.toLowerCase();
  if (lower === 'issue') return 'issue';
  if (lower === 'build') return 'build';
  return 'pullRequest';
}

/**
 * Finds the plain references of a text: `#12`, `group/app#12`, `issue #12` (issues), `pr #5`,
 * `pull request #5` (pull requests), `build #3` (builds). A bare `#N` always names an issue; pull
 * requests need their keyword. Markdown texts (descriptions, comments) are read without code
 * spans, code blocks, links and raw HTML; plain texts (titles, commit messages) as they are.
 * Duplicates are removed; order is first appearance.
 *
 * Implements docs/compatibility.md#fixed-issue-references "References".
 * @example parseReferences('see pr #5 and Group/App#3, not `#4`', 'markdown') →
 *   [{ kind: 'pullRequest', projectPath: null, number: 5 }, { kind: 'issue', projectPath: 'group/app', number: 3 }]
 */
export function parseReferences(text: string | null | undefined, format: 'markdown' | 'plain'): EntityReference[] {
  if (!text || !/#\d/.test(text)) return [];
  const searched = format === 'markdown' ? markdownText(text) : text;
  const found = new Map<string, EntityReference>();
  for (const match of scanReferences(searched)) {
    const number = Number(match.number);
    if (!Number.isSafeInteger(number) || number <= 0 || number > MAX_NUMBER) continue;
    const reference: EntityReference = { kind: kindOf(match.keyword), projectPath: match.project?.toLowerCase() ?? null, number };
    const key = `${reference.kind}:${reference.projectPath ?? ''}#${number}`;
    if (!found.has(key)) found.set(key, reference);
  }
  return [...found.values()];
}

/** The entity whose text holds references; `projectId` is the project a reference without path means. */
export type ReferencingEntity =
  | { kind: 'issue'; issueId: number; projectId: number }
  | { kind: 'pullRequest'; requestId: number; projectId: number }
  | { kind: 'codeComment'; commentId: number; projectId: number; requestId: number | null }
  | { kind: 'commit'; projectId: number; commitHash: string };

/**
 * Prefix of the change data that the partial unique index of migration 0008 covers: one
 * "referenced from" change per (referenced, referencing) pair. The text must stay identical to
 * the index predicate for the `on conflict` clause to find it (pull requests have their own,
 * src/domain/pulls/changes.ts).
 */
const ISSUE_REFERENCE_PREDICATE = sql<boolean>`data like '{"@type":"IssueReferencedFrom%'`;

function issueChangeData(from: ReferencingEntity): Record<string, unknown> {
  switch (from.kind) {
    case 'issue':
      return { '@type': 'IssueReferencedFromIssueData', issueId: from.issueId };
    case 'pullRequest':
      return { '@type': 'IssueReferencedFromPullRequestData', requestId: from.requestId };
    case 'codeComment':
      return { '@type': 'IssueReferencedFromCodeCommentData', commentId: from.commentId };
    case 'commit':
      return { '@type': 'IssueReferencedFromCommitData', projectId: from.projectId, commitHash: from.commitHash };
  }
}

function pullRequestChangeData(from: ReferencingEntity): PullRequestChangeData {
  switch (from.kind) {
    case 'issue':
      return { '@type': 'PullRequestReferencedFromIssueData', issueId: from.issueId };
    case 'pullRequest':
      return { '@type': 'PullRequestReferencedFromPullRequestData', requestId: from.requestId };
    case 'codeComment':
      return { '@type': 'PullRequestReferencedFromCodeCommentData', commentId: from.commentId };
    case 'commit':
      return { '@type': 'PullRequestReferencedFromCommitData', projectId: from.projectId, commitHash: from.commitHash };
  }
}

/** Most change rows inserted by one statement. */
const ROWS_PER_INSERT = 500;

/**
 * Records that `from` references the issues and pull requests named by `references`: a
 * reference without path means `from.projectId`; a path names any project (case-insensitive);
 * unknown projects, issues and requests are ignored, as are builds and an entity referencing
 * itself (a code comment attached to a pull request does not reference that request). Each
 * referenced entity gets one minor change (no last activity) per referencing entity, however
 * often the reference is repeated or re-saved: IssueReferencedFrom{Issue,PullRequest,CodeComment,
 * Commit}Data or PullRequestReferencedFrom…Data (docs/compatibility.md#pull-requests-sub-entities). `userId` is the author
 * of the referencing text (null when unknown). Run it inside the transaction that stores the text.
 */
export async function recordReferences(
  db: Db,
  from: ReferencingEntity,
  userId: number | null,
  date: number,
  references: readonly EntityReference[],
): Promise<void> {
  const wanted = references.filter((r) => r.kind !== 'build');
  if (wanted.length === 0) return;
  const byPath = await projectsByPath(
    db,
    wanted.map((r) => r.projectPath).filter((p): p is string => p !== null),
  );
  const places = (kind: ReferenceKind): NumberInProject[] => {
    const out: NumberInProject[] = [];
    for (const ref of wanted) {
      if (ref.kind !== kind) continue;
      const projectId = ref.projectPath === null ? from.projectId : byPath.get(ref.projectPath)?.id;
      if (projectId !== undefined) out.push({ projectId, number: ref.number });
    }
    return out;
  };
  const issuePlaces = places('issue');
  const issueRows = issuePlaces.length === 0 ? [] : [...(await issuesAtPlaces(db, issuePlaces)).values()];
  const issueIds = issueRows
    .map((row) => row.id)
    .filter((id) => !(from.kind === 'issue' && id === from.issueId))
    .sort((a, b) => a - b);
  // in batches: a text may reference thousands of entities, more rows than one statement takes
  const issueData = JSON.stringify(issueChangeData(from));
  for (let i = 0; i < issueIds.length; i += ROWS_PER_INSERT) {
    await db
      .insertInto('issueChanges')
      .values(issueIds.slice(i, i + ROWS_PER_INSERT).map((issueId) => ({ issueId, userId, date, data: issueData })))
      .onConflict((oc) => oc.columns(['issueId', 'data']).where(ISSUE_REFERENCE_PREDICATE).doNothing())
      .execute();
  }
  const requestPlaces = places('pullRequest');
  if (requestPlaces.length > 0) {
    const exceptRequestId = from.kind === 'pullRequest' || from.kind === 'codeComment' ? from.requestId : null;
    await recordPullRequestReferences.ask(db, requestPlaces, exceptRequestId, userId, date, pullRequestChangeData(from));
  }
}

/**
 * Records the references of pushed commits' full messages (plain text) as "referenced from
 * commit" changes (docs/compatibility.md#fixed-issue-references), the pushing user as author when known.
 * A commit seen again (pushed to another branch, merged) adds nothing new.
 */
export async function recordCommitReferences(
  db: Db,
  projectId: number,
  userId: number | null,
  date: number,
  commits: readonly { hash: string; message: string }[],
): Promise<void> {
  for (const commit of commits) {
    const references = parseReferences(commit.message, 'plain');
    if (references.length > 0) await recordReferences(db, { kind: 'commit', projectId, commitHash: commit.hash }, userId, date, references);
  }
}
