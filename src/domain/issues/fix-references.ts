import type { Db } from '../../db/database.js';
import { findProjectRow, projectsByLowerPaths } from '../projects/index.js';

/** One issue reference found in a text: an optional project path and the issue number. */
export interface FixReference {
  /** Lower-cased project path (`group/app`), or null for "the project of the text". */
  projectPath: string | null;
  number: number;
}

/**
 * A project path in a reference (`PROJECT_PATH` of docs/compatibility.md#fixed-issue-references): the grammar
 * of the fix patterns here and of the plain references of ./references.ts (which scans for it
 * by hand).
 */
export const PROJECT_PATH = String.raw`\w(?:[\w\-/.]*\w)?`;

/** Largest issue or pull request number (an integer column): `#` followed by more names nothing. */
export const MAX_NUMBER = 2_147_483_647;

const KEYWORDS = 'fix|fixed|fixes|fixing|resolve|resolved|resolves|resolving|close|closed|closes|closing';
const REFERENCE = String.raw`(?:issue\s+)?(?<project>${PROJECT_PATH})?#(?<issue>\d+)`;

/**
 * The default "commit message fix patterns" (docs/compatibility.md#fixed-issue-references, docs/compatibility.md#pull-requests-fixed-issues):
 * a fixing keyword followed by `[\s:]+` and a reference; or a reference in parentheses ending
 * the line (`Add login page (#12)`, the squash-merge style).
 *
 * Both run in time linear in the line (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input), unlike a reference that may start at any
 * boundary (./references.ts): a match starts only at a keyword followed by whitespace or `:`, or
 * at `(`, and the path after it stops at the first character outside `[\w\-/.]`, so no path
 * character is read from two starts (a start inside a path would need whitespace, `:` or `(`).
 */
const PATTERNS: readonly RegExp[] = [
  new RegExp(String.raw`(?:^|\W)(?:${KEYWORDS})[\s:]+${REFERENCE}(?=$|\W)`, 'gi'),
  new RegExp(String.raw`\(\s*${REFERENCE}\s*\)\s*$`, 'gi'),
];

/**
 * Finds the issues a text (a commit message, a pull request title or description) declares
 * fixed. The text is lower-cased and split into trimmed lines; every match of every pattern on
 * every line counts; each number needs its own keyword (`fixes #1, #2` fixes only #1).
 * Duplicates are removed; order is first appearance.
 *
 * Implements docs/compatibility.md#fixed-issue-references and docs/compatibility.md#pull-requests-fixed-issues.
 * @example parseFixReferences('Closes: group/app#3\nfix #12') →
 *   [{ projectPath: 'group/app', number: 3 }, { projectPath: null, number: 12 }]
 */
export function parseFixReferences(text: string | null | undefined): FixReference[] {
  if (!text || !/#\d/.test(text)) return [];
  const found = new Map<string, FixReference>();
  for (const line of text.toLowerCase().split(/\r?\n|\r/)) {
    const trimmed = line.trim();
    if (!/#\d/.test(trimmed)) continue;
    for (const pattern of PATTERNS) {
      for (const match of trimmed.matchAll(pattern)) {
        const number = Number(match.groups!.issue);
        if (!Number.isSafeInteger(number) || number <= 0 || number > MAX_NUMBER) continue;
        const projectPath = match.groups!.project ?? null;
        const key = `${projectPath ?? ''}#${number}`;
        if (!found.has(key)) found.set(key, { projectPath, number });
      }
    }
  }
  return [...found.values()];
}

/**
 * Whether a reference to `referencedPath` made from project `projectPath` counts: the same
 * project, an ancestor or a descendant (docs/compatibility.md#fixed-issue-references "Resolution").
 */
export function isRelatedProject(projectPath: string, referencedPath: string): boolean {
  const a = projectPath.toLowerCase();
  const b = referencedPath.toLowerCase();
  return a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

/** A referenced entity's place: the project and the number inside it. */
export interface NumberInProject {
  projectId: number;
  number: number;
}

/**
 * The projects named by lower-cased reference paths (case-insensitive lookup), by lower-cased
 * path. Unknown paths are absent.
 */
export async function projectsByPath(db: Db, paths: Iterable<string>): Promise<Map<string, { id: number; path: string }>> {
  return projectsByLowerPaths(db, paths);
}

/**
 * Resolves fix references made from project `projectId` to (project, number) places: no path
 * means that project; a path (case-insensitive) counts only for that project, an ancestor or a
 * descendant (docs/compatibility.md#fixed-issue-references "Resolution"). Unknown projects are ignored;
 * whether the issue exists is not checked. Distinct places, in reference order.
 */
export async function resolveFixPlaces(db: Db, projectId: number, references: readonly FixReference[]): Promise<NumberInProject[]> {
  if (references.length === 0) return [];
  const project = await findProjectRow(db, projectId);
  if (!project) return [];
  const byPath = await projectsByPath(
    db,
    references.map((r) => r.projectPath).filter((p): p is string => p !== null),
  );
  const places = new Map<string, NumberInProject>();
  for (const ref of references) {
    const target: { id: number; path: string } | undefined = ref.projectPath === null ? project : byPath.get(ref.projectPath);
    if (!target || (target !== project && !isRelatedProject(project.path, target.path))) continue;
    const key = `${target.id}#${ref.number}`;
    if (!places.has(key)) places.set(key, { projectId: target.id, number: ref.number });
  }
  return [...places.values()];
}

/** Most numbers looked up in one query (a text may name thousands of places). */
const NUMBERS_PER_QUERY = 500;

/**
 * The rows at `places` that `rowsOf` reads (issues, or pull requests by target project), asked
 * project by project in batches of numbers: one condition per place would make an SQL expression
 * too deep for the database when a text names thousands of them.
 *
 * @param rowsOf the rows numbered `numbers` in project `projectId` (at most {@link NUMBERS_PER_QUERY} numbers).
 * @returns the rows found, by `<projectId>#<number>`.
 */
export async function rowsAtPlaces(
  places: readonly NumberInProject[],
  rowsOf: (projectId: number, numbers: number[]) => Promise<{ id: number; number: number }[]>,
): Promise<Map<string, { id: number; projectId: number; number: number }>> {
  const byProject = new Map<number, Set<number>>();
  for (const place of places) {
    let numbers = byProject.get(place.projectId);
    if (!numbers) byProject.set(place.projectId, (numbers = new Set()));
    numbers.add(place.number);
  }
  const found = new Map<string, { id: number; projectId: number; number: number }>();
  for (const [projectId, set] of byProject) {
    const numbers = [...set];
    for (let i = 0; i < numbers.length; i += NUMBERS_PER_QUERY) {
      const rows = await rowsOf(projectId, numbers.slice(i, i + NUMBERS_PER_QUERY));
      for (const row of rows) found.set(`${projectId}#${row.number}`, { id: row.id, projectId, number: row.number });
    }
  }
  return found;
}

/** The issues at `places` (see {@link rowsAtPlaces}), by `<projectId>#<number>`. */
export function issuesAtPlaces(db: Db, places: readonly NumberInProject[]): Promise<Map<string, { id: number; projectId: number; number: number }>> {
  return rowsAtPlaces(places, (projectId, numbers) =>
    db.selectFrom('issues').select(['id', 'number']).where('projectId', '=', projectId).where('number', 'in', numbers).execute(),
  );
}

/**
 * Resolves references made from project `projectId` to issue ids: no path means that project;
 * a path (case-insensitive) counts only for that project, an ancestor or a descendant; the issue
 * must exist in the referenced project with that number. Unknown references are ignored.
 * Returns distinct ids, in reference order.
 */
export async function resolveFixReferences(db: Db, projectId: number, references: readonly FixReference[]): Promise<number[]> {
  const wanted = await resolveFixPlaces(db, projectId, references);
  if (wanted.length === 0) return [];
  const rows = await issuesAtPlaces(db, wanted);
  const ids = new Set<number>();
  for (const w of wanted) {
    const row = rows.get(`${w.projectId}#${w.number}`);
    if (row) ids.add(row.id);
  }
  return [...ids];
}
