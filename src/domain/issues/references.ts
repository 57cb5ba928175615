import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { markdownText } from '../mentions.js';
import type { PullRequestChangeData } from '../pulls/changes.js';
import { MAX_NUMBER, PROJECT_PATH, projectsByPath, type NumberInProject } from './fix-references.js';

/**
 * Plain references between issues, pull requests and builds (reference/comments-issues.md §7
 * "Separate mechanism"), and the "referenced from" change records they leave on the referenced
 * issue or pull request (reference/pulls.md §5 `PullRequestReferencedFrom…Data`, and the issue
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
 * A reference: an optional keyword, an optional project path (the grammar the fix patterns use),
 * `#` and the number, standing on its own (not inside a word, not an HTML entity like `&#39;`).
 */
export const PLAIN_REFERENCE = new RegExp(
  String.raw`(?:^|[^\w&])(?:(?<kind>issue|pull\s*request|pr|build)\s+)?(?<project>${PROJECT_PATH})?#(?<number>\d+)(?=$|\W)`,
  'gi',
);

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
 * Implements reference/comments-issues.md §7 "Separate mechanism".
 * @example parseReferences('see pr #5 and Group/App#3, not `#4`', 'markdown') →
 *   [{ kind: 'pullRequest', projectPath: null, number: 5 }, { kind: 'issue', projectPath: 'group/app', number: 3 }]
 */
export function parseReferences(text: string | null | undefined, format: 'markdown' | 'plain'): EntityReference[] {
  if (!text || !/#\d/.test(text)) return [];
  const searched = format === 'markdown' ? markdownText(text) : text;
  const found = new Map<string, EntityReference>();
  for (const match of searched.matchAll(PLAIN_REFERENCE)) {
    const number = Number(match.groups!.number);
    if (!Number.isSafeInteger(number) || number <= 0 || number > MAX_NUMBER) continue;
    const reference: EntityReference = {
      kind: kindOf(match.groups!.kind), projectPath: match.groups!.project?.toLowerCase() ?? null, number,
    };
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
 * Prefixes of the change data that the partial unique indexes of migration 0008 cover: one
 * "referenced from" change per (referenced, referencing) pair. The text must stay identical to
 * the index predicates for the `on conflict` clauses to find them.
 */
const ISSUE_REFERENCE_PREDICATE = sql<boolean>`data like '{"@type":"IssueReferencedFrom%'`;
const PULL_REQUEST_REFERENCE_PREDICATE = sql<boolean>`data like '{"@type":"PullRequestReferencedFrom%'`;

function issueChangeData(from: ReferencingEntity): Record<string, unknown> {
  switch (from.kind) {
    case 'issue': return { '@type': 'IssueReferencedFromIssueData', issueId: from.issueId };
    case 'pullRequest': return { '@type': 'IssueReferencedFromPullRequestData', requestId: from.requestId };
    case 'codeComment': return { '@type': 'IssueReferencedFromCodeCommentData', commentId: from.commentId };
    case 'commit': return { '@type': 'IssueReferencedFromCommitData', projectId: from.projectId, commitHash: from.commitHash };
  }
}

function pullRequestChangeData(from: ReferencingEntity): PullRequestChangeData {
  switch (from.kind) {
    case 'issue': return { '@type': 'PullRequestReferencedFromIssueData', issueId: from.issueId };
    case 'pullRequest': return { '@type': 'PullRequestReferencedFromPullRequestData', requestId: from.requestId };
    case 'codeComment': return { '@type': 'PullRequestReferencedFromCodeCommentData', commentId: from.commentId };
    case 'commit': return { '@type': 'PullRequestReferencedFromCommitData', projectId: from.projectId, commitHash: from.commitHash };
  }
}

function placesCondition(places: readonly NumberInProject[], projectColumn: 'projectId' | 'targetProjectId') {
  return (eb: any) => eb.or(places.map((p) => eb.and([eb(projectColumn, '=', p.projectId), eb('number', '=', p.number)])));
}

/**
 * Records that `from` references the issues and pull requests named by `references`: a
 * reference without path means `from.projectId`; a path names any project (case-insensitive);
 * unknown projects, issues and requests are ignored, as are builds and an entity referencing
 * itself (a code comment attached to a pull request does not reference that request). Each
 * referenced entity gets one minor change (no last activity) per referencing entity, however
 * often the reference is repeated or re-saved: IssueReferencedFrom{Issue,PullRequest,CodeComment,
 * Commit}Data or PullRequestReferencedFrom…Data (reference/pulls.md §5). `userId` is the author
 * of the referencing text (null when unknown). Run it inside the transaction that stores the text.
 */
export async function recordReferences(
  db: Db, from: ReferencingEntity, userId: number | null, date: number, references: readonly EntityReference[],
): Promise<void> {
  const wanted = references.filter((r) => r.kind !== 'build');
  if (wanted.length === 0) return;
  const byPath = await projectsByPath(db, wanted.map((r) => r.projectPath).filter((p): p is string => p !== null));
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
  const requestPlaces = places('pullRequest');
  const issues = issuePlaces.length === 0 ? [] : await db.selectFrom('issues').select('id')
    .where(placesCondition(issuePlaces, 'projectId')).orderBy('id').execute();
  const requests = requestPlaces.length === 0 ? [] : await db.selectFrom('pullRequests').select('id')
    .where(placesCondition(requestPlaces, 'targetProjectId')).orderBy('id').execute();

  const issueIds = issues.map((i) => i.id).filter((id) => !(from.kind === 'issue' && id === from.issueId));
  const requestIds = requests.map((r) => r.id).filter((id) => !(
    (from.kind === 'pullRequest' && id === from.requestId) || (from.kind === 'codeComment' && id === from.requestId)));
  if (issueIds.length > 0) {
    const data = JSON.stringify(issueChangeData(from));
    await db.insertInto('issueChanges').values(issueIds.map((issueId) => ({ issueId, userId, date, data })))
      .onConflict((oc) => oc.columns(['issueId', 'data']).where(ISSUE_REFERENCE_PREDICATE).doNothing()).execute();
  }
  if (requestIds.length > 0) {
    const data = JSON.stringify(pullRequestChangeData(from));
    await db.insertInto('pullRequestChanges').values(requestIds.map((requestId) => ({ requestId, userId, date, data })))
      .onConflict((oc) => oc.columns(['requestId', 'data']).where(PULL_REQUEST_REFERENCE_PREDICATE).doNothing()).execute();
  }
}

/**
 * Records the references of pushed commits' full messages (plain text) as "referenced from
 * commit" changes (reference/comments-issues.md §7), the pushing user as author when known.
 * A commit seen again (pushed to another branch, merged) adds nothing new.
 */
export async function recordCommitReferences(
  db: Db, projectId: number, userId: number | null, date: number, commits: readonly { hash: string; message: string }[],
): Promise<void> {
  for (const commit of commits) {
    const references = parseReferences(commit.message, 'plain');
    if (references.length > 0) await recordReferences(db, { kind: 'commit', projectId, commitHash: commit.hash }, userId, date, references);
  }
}
