/**
 * Symbol search and "go to definition" (docs/compatibility.md#code-search) over the symbols the
 * code index holds (Universal Ctags' definitions in each project's default branch, ctags.ts):
 * names equal to the query first, then names starting with it, case-insensitively — both range
 * scans of the bytewise `name_lower` indexes (migration 0026) — in the projects whose code the
 * actor can read.
 */
import { sql, type SqlBool } from 'kysely';
import { BadRequest } from '../../errors.js';
import type { Context } from '../context.js';
import { accessibleProjectsCondition, findProjectByPath, loadProjectWith, projectPathsByIds } from '../projects/index.js';
import { languageOf } from '../repositories/index.js';
import { locateCtags } from './ctags.js';
import { globToLike, indexingCount, skippedCount } from './search.js';

/** Symbols a search answers at most. */
export const MAX_SYMBOL_RESULTS = 100;
/** Definitions "go to definition" answers at most. */
export const MAX_DEFINITIONS = 50;
/** Above every character: `prefix + PAST_PREFIX` bounds the names starting with `prefix` (bytewise). */
const PAST_PREFIX = '\u{10FFFF}';

/** A definition of the index. */
export interface SymbolMatch {
  projectId: number;
  projectPath: string;
  path: string;
  /** The commit the file was indexed at (links point there, so the line holds). */
  commit: string;
  name: string;
  kind: string;
  line: number;
  scope: string | null;
  language: string | null;
}

/** What {@link searchSymbols} found. */
export interface SymbolSearchResults {
  symbols: SymbolMatch[];
  /** Whether more symbols match than shown. */
  incomplete: boolean;
  /** Projects in scope whose index is not up to their default branch yet. */
  indexing: number;
  /** Files in scope whose symbols are missing or cut (Universal Ctags failed, timed out, or found too many). */
  skipped: number;
}

/**
 * Whether the code index finds symbols on this server: a Universal Ctags binary is configured
 * or on PATH (ctags.ts `locateCtags`). Without it symbol search and "go to definition" answer
 * nothing and the pages say so.
 */
export async function symbolsAvailable(ctx: Pick<Context, 'config'>): Promise<boolean> {
  return (await locateCtags(ctx.config.ctags)) !== null;
}

/**
 * The symbols named `query.text` (exactly first, then by prefix; case-insensitive), with the
 * filters of code search (project path, path glob, language), in the projects whose code the
 * actor of `ctx` can read — at most {@link MAX_SYMBOL_RESULTS}, exact ones first, then by name.
 *
 * @throws BadRequest (empty or over-long text, a bad glob).
 */
export async function searchSymbols(ctx: Context, query: { text: string; project?: string; path?: string; language?: string }): Promise<SymbolSearchResults> {
  const text = query.text.trim();
  if (text === '') throw new BadRequest('Type something to search for');
  if (text.length > 200) throw new BadRequest('A symbol name is at most 200 characters');
  const lower = text.toLowerCase();
  const readable = await accessibleProjectsCondition(ctx, 'readCode');
  // a project that does not exist and one the actor cannot read answer alike: nothing
  const projectId = query.project ? ((await findProjectByPath(ctx.db, query.project))?.id ?? -1) : undefined;
  let scope = ctx.db
    .selectFrom('codeSearchSymbols as y')
    .innerJoin('codeSearchFiles as f', 'f.id', 'y.fileId')
    .innerJoin('codeSearchProjects as s', 's.projectId', 'y.projectId')
    .select(['y.projectId', 'f.path', 's.indexedCommit', 'y.name', 'y.kind', 'y.line', 'y.scope', 'y.language'])
    .where('s.indexedCommit', 'is not', null);
  if (readable) scope = scope.where((eb) => readable(eb, 'y.projectId'));
  if (projectId !== undefined) scope = scope.where('y.projectId', '=', projectId);
  if (query.language) scope = scope.where('f.language', '=', query.language);
  if (query.path) scope = scope.where(sql<SqlBool>`${sql.ref('f.path')} like ${globToLike(query.path)} escape '\\'`);
  const exact = await scope
    .where('y.nameLower', '=', lower)
    .orderBy('y.name')
    .orderBy('y.projectId')
    .orderBy('f.path')
    .orderBy('y.line')
    .limit(MAX_SYMBOL_RESULTS + 1)
    .execute();
  const prefixed =
    exact.length > MAX_SYMBOL_RESULTS
      ? []
      : await scope
          .where('y.nameLower', '>', lower)
          .where('y.nameLower', '<', lower + PAST_PREFIX)
          .orderBy('y.nameLower')
          .orderBy('y.name')
          .orderBy('y.projectId')
          .orderBy('f.path')
          .orderBy('y.line')
          .limit(MAX_SYMBOL_RESULTS + 1 - exact.length)
          .execute();
  const found = [...exact, ...prefixed];
  return {
    symbols: await withProjectPaths(ctx, found.slice(0, MAX_SYMBOL_RESULTS)),
    incomplete: found.length > MAX_SYMBOL_RESULTS,
    indexing: await indexingCount(ctx, projectId, readable),
    skipped: await skippedCount(ctx, projectId, readable, 'symbolsSkipped'),
  };
}

/**
 * "Go to definition": the definitions of `name` (case-sensitive) in project `projectId`'s index,
 * those of `language` (the language of the file the name was read in) first, then by path and
 * line — at most {@link MAX_DEFINITIONS}. `fromPath` is the path of that file (its language is
 * told by its name, as the index's), or null.
 *
 * @throws NotFound when the project does not exist or the actor cannot see it; Forbidden /
 *   Unauthorized when the actor cannot read its code; BadRequest for an empty or over-long name.
 */
export async function findDefinitions(ctx: Context, projectId: number, name: string, fromPath: string | null): Promise<SymbolMatch[]> {
  const language = fromPath === null ? null : languageOf(fromPath);
  if (name === '' || name.length > 200) throw new BadRequest('A symbol name is 1 to 200 characters');
  await loadProjectWith(ctx, projectId, 'readCode');
  const rows = await ctx.db
    .selectFrom('codeSearchSymbols as y')
    .innerJoin('codeSearchFiles as f', 'f.id', 'y.fileId')
    .innerJoin('codeSearchProjects as s', 's.projectId', 'y.projectId')
    .select(['y.projectId', 'f.path', 's.indexedCommit', 'y.name', 'y.kind', 'y.line', 'y.scope', 'y.language'])
    .where('s.indexedCommit', 'is not', null)
    .where('y.projectId', '=', projectId)
    .where('y.nameLower', '=', name.toLowerCase())
    .where('y.name', '=', name)
    .orderBy((eb) =>
      eb
        .case()
        .when('y.language', '=', language ?? '')
        .then(0)
        .else(1)
        .end(),
    )
    .orderBy('f.path')
    .orderBy('y.line')
    .limit(MAX_DEFINITIONS)
    .execute();
  return withProjectPaths(ctx, rows);
}

type SymbolRow = Omit<SymbolMatch, 'projectPath' | 'commit'> & { indexedCommit: string | null };

async function withProjectPaths(ctx: Context, rows: SymbolRow[]): Promise<SymbolMatch[]> {
  const paths = await projectPathsByIds(
    ctx.db,
    rows.map((row) => row.projectId),
  );
  return rows.map(({ indexedCommit, ...row }) => ({ ...row, commit: indexedCommit!, projectPath: paths.get(row.projectId) ?? '' }));
}
