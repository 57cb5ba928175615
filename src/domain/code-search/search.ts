/**
 * Code search (docs/compatibility.md#code-search): the lines of the indexed files (each project's
 * default branch) that contain a literal text (case-insensitive) or match a regular expression
 * (RE2 syntax, linear time: src/query/user-patterns.ts), in the projects whose code the actor can
 * read, optionally within one project, a path glob and a language.
 *
 * The trigram index narrows the files first: a literal is itself the substring every candidate
 * holds; a regular expression gives the literal runs every match must contain
 * ({@link requiredLiterals}). The candidates are then verified line by line. A regular expression
 * without such a run reads every file in scope, at most {@link MAX_SCANNED_BYTES} of them, and says
 * so when it stopped early.
 */
import { sql, type SqlBool } from 'kysely';
import { CODE_TEXT, dialectOf } from '../../db/dialect.js';
import { BadRequest } from '../../errors.js';
import { compileUserRegex, type UserRegex } from '../../query/user-patterns.js';
import { containsToLike, escapeLike } from '../../query/wildcards.js';
import type { Context } from '../context.js';
import { accessibleProjectsCondition, findProjectByPath, projectPathsByIds } from '../projects/index.js';

/** Files a search answers at most. */
export const MAX_RESULT_FILES = 50;
/** Matching lines shown per file. */
export const MAX_LINES_PER_FILE = 5;
/** Lines of context shown before and after each matching line. */
export const CONTEXT_LINES = 1;
/** Text a search reads at most when the index cannot narrow it (bytes of file text). */
export const MAX_SCANNED_BYTES = 64 * 1024 * 1024;
/** Characters of a matching line shown. */
const MAX_LINE_SHOWN = 400;
/** Candidate rows read per query. */
const CANDIDATE_PAGE = 200;

/** What to search for. */
export interface CodeSearchQuery {
  /** The text: a literal, or a regular expression when `regex`. */
  text: string;
  regex: boolean;
  /** A project path: only that project. */
  project?: string;
  /** A path glob (`src/**\/*.ts`; `*` and `**` match any characters, `?` one). */
  path?: string;
  /** A highlight.js language name (`typescript`). */
  language?: string;
  /** A branch, tag or commit of `project` to search instead of the index (ref-search.ts). */
  ref?: string;
}

/**
 * A line of a result: 1-based number, its text (cut to 400 characters) and the matched spans in
 * it — none for a line of context around a match ({@link CONTEXT_LINES}).
 */
export interface CodeLineMatch {
  line: number;
  text: string;
  spans: { start: number; end: number }[];
}

/** A file with matching lines. */
export interface CodeFileMatch {
  projectId: number;
  projectPath: string;
  path: string;
  /** The commit the file was indexed at (links point there, so line numbers hold). */
  commit: string;
  language: string | null;
  lines: CodeLineMatch[];
  /** Whether the file has more matching lines than shown. */
  moreLines: boolean;
}

/** What {@link searchCode} found. */
export interface CodeSearchResults {
  files: CodeFileMatch[];
  /** Whether more files match than shown, or the scan stopped at {@link MAX_SCANNED_BYTES}. */
  incomplete: boolean;
  /** Projects in scope whose index is not up to their default branch yet. */
  indexing: number;
  /** Files in scope the index holds no text of (binary, larger than 1 MiB, vendored). */
  skipped: number;
}

/**
 * Searches code for the actor of `ctx` (see the module comment).
 *
 * @throws BadRequest (empty or over-long text, a regular expression RE2 refuses, a bad glob).
 */
export async function searchCode(ctx: Context, query: CodeSearchQuery): Promise<CodeSearchResults> {
  const { matcher, fragments } = compileSearch(query);
  const readable = await accessibleProjectsCondition(ctx, 'readCode');
  // a project that does not exist and one the actor cannot read answer alike: nothing
  const projectId = query.project ? ((await findProjectByPath(ctx.db, query.project))?.id ?? -1) : undefined;
  const dialect = dialectOf(ctx.db);
  let candidates = ctx.db
    .selectFrom('codeSearchFiles as f')
    .innerJoin('codeSearchProjects as s', 's.projectId', 'f.projectId')
    .select(['f.id', 'f.projectId', 'f.path', 'f.language', 'f.content', 's.indexedCommit'])
    .where('f.content', 'is not', null)
    .where('s.indexedCommit', 'is not', null);
  if (readable) candidates = candidates.where((eb) => readable(eb, 'f.projectId'));
  if (projectId !== undefined) candidates = candidates.where('f.projectId', '=', projectId);
  if (query.language) candidates = candidates.where('f.language', '=', query.language);
  if (query.path) candidates = candidates.where(sql<SqlBool>`${sql.ref('f.path')} like ${globToLike(query.path)} escape '\\'`);
  for (const fragment of fragments) {
    const pattern = containsToLike(fragment, { wildcard: false });
    candidates = candidates.where(sql<SqlBool>`${sql.ref('f.id')} in (${dialect.textMatches(CODE_TEXT, pattern)})`);
  }

  const files: Omit<CodeFileMatch, 'projectPath'>[] = [];
  let scanned = 0;
  let incomplete = false;
  let after = 0;
  read: for (;;) {
    const page = await candidates.where('f.id', '>', after).orderBy('f.id').limit(CANDIDATE_PAGE).execute();
    for (const row of page) {
      after = row.id;
      scanned += row.content!.length;
      const found = matchLines(row.content!, matcher);
      if (found.lines.length > 0) {
        if (files.length === MAX_RESULT_FILES) {
          incomplete = true;
          break read;
        }
        files.push({ projectId: row.projectId, path: row.path, language: row.language, commit: row.indexedCommit!, lines: found.lines, moreLines: found.more });
      }
      if (scanned > MAX_SCANNED_BYTES) {
        incomplete = true;
        break read;
      }
    }
    if (page.length < CANDIDATE_PAGE) break;
    // the verification is on this thread: let other requests in between pages
    await new Promise((resolve) => setImmediate(resolve));
  }
  const paths = await projectPathsByIds(
    ctx.db,
    files.map((file) => file.projectId),
  );
  return {
    files: files.map((file) => ({ ...file, projectPath: paths.get(file.projectId) ?? '' })),
    incomplete,
    indexing: await indexingCount(ctx, projectId, readable),
    skipped: await skippedCount(ctx, projectId, readable),
  };
}

/**
 * The line matcher of a search and the texts every matching file holds (case-insensitive): the
 * literal itself, or the required literal runs of a regular expression (maybe none).
 *
 * @throws BadRequest (empty or over-long text, a regular expression RE2 refuses).
 */
export function compileSearch(query: Pick<CodeSearchQuery, 'text' | 'regex'>): { matcher: LineMatcher; fragments: string[] } {
  const text = query.text;
  if (text.trim() === '') throw new BadRequest('Type something to search for');
  if (text.length > 1000) throw new BadRequest('The search text is longer than 1000 characters');
  const matcher = query.regex ? regexMatcher(compileUserRegex(text)) : literalMatcher(text);
  return { matcher, fragments: query.regex ? requiredLiterals(text) : [text] };
}

/** Finds the spans of a line that match (none: the line does not match). */
export type LineMatcher = (line: string) => { start: number; end: number }[];

function literalMatcher(text: string): LineMatcher {
  const needle = text.toLowerCase();
  return (line) => {
    const haystack = line.toLowerCase();
    const spans: { start: number; end: number }[] = [];
    for (let at = haystack.indexOf(needle); at >= 0 && spans.length < 20; at = haystack.indexOf(needle, at + needle.length)) {
      spans.push({ start: at, end: at + needle.length });
    }
    return spans;
  };
}

function regexMatcher(regex: UserRegex): LineMatcher {
  // lines longer than the pattern's text limit are not matched (minified code, data)
  return (line) => (line.length > regex.maxTextLength ? [] : regex.findAll(line, 20));
}

/**
 * The first {@link MAX_LINES_PER_FILE} matching lines of a text with {@link CONTEXT_LINES} lines
 * of context before and after each (a line shown once when contexts meet), in order, and whether
 * more lines match.
 */
export function matchLines(content: string, matcher: LineMatcher): { lines: CodeLineMatch[]; more: boolean } {
  const lines: CodeLineMatch[] = [];
  const shown = (number: number, text: string, spans: CodeLineMatch['spans'] = []): CodeLineMatch => ({
    line: number,
    text: text.slice(0, MAX_LINE_SHOWN),
    spans: spans.filter((s) => s.start < MAX_LINE_SHOWN),
  });
  /** The last lines read and not shown, for the context before the next match. */
  const before: { number: number; text: string }[] = [];
  let matches = 0;
  let after = 0;
  // a final newline ends the last line: no empty line follows it
  const last = content.endsWith('\n') ? content.length - 1 : content.length;
  let start = 0;
  for (let number = 1; start <= last; number++) {
    let end = content.indexOf('\n', start);
    if (end < 0) end = content.length;
    const line = content.slice(start, end).replace(/\r$/, '');
    start = end + 1;
    const spans = matcher(line);
    if (spans.length > 0) {
      if (matches === MAX_LINES_PER_FILE) return { lines, more: true };
      matches++;
      for (const context of before) lines.push(shown(context.number, context.text));
      before.length = 0;
      lines.push(shown(number, line, spans));
      after = CONTEXT_LINES;
    } else if (after > 0) {
      lines.push(shown(number, line));
      after--;
    } else if (matches < MAX_LINES_PER_FILE) {
      before.push({ number, text: line });
      if (before.length > CONTEXT_LINES) before.shift();
    }
  }
  return { lines, more: false };
}

/**
 * The literal runs (at least three characters) that every match of a regular expression
 * contains, lower-cased — conservative: none when the pattern has a top-level alternation, and
 * groups, classes, escapes of classes and optional characters end a run. `foo\.bar(baz)?\d+qux`
 * gives `foo.bar` and `qux`.
 */
export function requiredLiterals(pattern: string): string[] {
  const runs: string[] = [];
  let run = '';
  const end = () => {
    if (run.length >= 3) runs.push(run.toLowerCase());
    run = '';
  };
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '|') return [];
    if (c === '(' || c === '[') {
      end();
      i = skipGroup(pattern, i);
      if (i < 0) return [];
      continue;
    }
    let literal: string | null = null;
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      i++;
      literal = /[^A-Za-z0-9]/.test(next) ? next : null;
    } else if (!'.^$*+?{}'.includes(c)) literal = c;
    else if (c === '*' || c === '?' || (c === '{' && /^\{0[,}]/.test(pattern.slice(i)))) {
      // the character before is optional
      run = run.slice(0, -1);
      end();
      if (c === '{') i = pattern.indexOf('}', i);
      if (i < 0) return runs;
      continue;
    } else {
      if (c === '{') i = pattern.indexOf('}', i);
      end();
      if (i < 0) return runs;
      continue;
    }
    if (literal === null) {
      end();
      continue;
    }
    // a character followed by `*`, `?` or `{0,…}` may be absent: it is dropped by the branch above
    run += literal;
  }
  end();
  return runs;
}

/** The index of the `)` or `]` closing the group or class opened at `open`, or -1. */
function skipGroup(pattern: string, open: number): number {
  let depth = 0;
  let inClass = false;
  for (let i = open; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') {
        inClass = false;
        if (depth === 0) return i;
      }
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return -1;
}

/**
 * Refuses a path glob longer than 500 characters.
 *
 * @throws BadRequest `The path glob is longer than 500 characters`.
 */
export function checkGlobLength(glob: string): void {
  if (glob.length > 500) throw new BadRequest('The path glob is longer than 500 characters');
}

/**
 * A path glob as a LIKE pattern escaped with `\`: `*` (and `**`) any characters, `?` one, the rest literal.
 *
 * @throws BadRequest when the glob is longer than 500 characters.
 */
export function globToLike(glob: string): string {
  checkGlobLength(glob);
  return glob
    .split(/(\*+|\?)/)
    .map((part) => (part.startsWith('*') ? '%' : part === '?' ? '_' : escapeLike(part)))
    .join('');
}

/** Projects in scope (one, or all the actor reads: `readable` of accessibleProjectsCondition) whose index is behind (stale or never built). */
export async function indexingCount(
  ctx: Context,
  projectId: number | undefined,
  readable: Awaited<ReturnType<typeof accessibleProjectsCondition>>,
): Promise<number> {
  let query = ctx.db
    .selectFrom('codeSearchProjects as s')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('s.staleDate', 'is not', null);
  if (readable) query = query.where((eb) => readable(eb, 's.projectId'));
  if (projectId !== undefined) query = query.where('s.projectId', '=', projectId);
  return Number((await query.executeTakeFirstOrThrow()).count);
}

/** Files in scope recorded without text (`skipped`), or with their symbols missing or cut (`symbolsSkipped`). */
export async function skippedCount(
  ctx: Context,
  projectId: number | undefined,
  readable: Awaited<ReturnType<typeof accessibleProjectsCondition>>,
  what: 'skipped' | 'symbolsSkipped' = 'skipped',
): Promise<number> {
  let query = ctx.db
    .selectFrom('codeSearchFiles as f')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where(`f.${what}`, 'is not', null);
  if (readable) query = query.where((eb) => readable(eb, 'f.projectId'));
  if (projectId !== undefined) query = query.where('f.projectId', '=', projectId);
  return Number((await query.executeTakeFirstOrThrow()).count);
}
