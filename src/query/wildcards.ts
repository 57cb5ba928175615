/**
 * Wildcard helpers for compiling query values to SQL and to in-memory matchers.
 *
 * Two pattern families appear in the query languages:
 * - `*`-wildcards (`"Title" contains "fix*crash"`, `"Job" is "CI*"`): `*` is any run of
 *   characters, `/` included; everything else is literal. Compiled to LIKE exactly.
 * - Ant-style paths (`children of "acme/**"`, `"Target Project" is "g/*"`): `*` and `?`
 *   stay within one `/`-separated segment, `**` spans any number of segments (zero
 *   included). LIKE cannot express "within a segment", so these compile to a matcher
 *   (exact) and to a LIKE pattern that matches a superset (a SQL pre-filter).
 *
 * Patterns are user input (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input): the in-memory matchers never backtrack, and the LIKE
 * conversions refuse a pattern with wildcards longer than MAX_PATTERN_LENGTH (1,000)
 * characters with UserPatternError (400).
 *
 * All LIKE patterns are lowercased and escape `%`, `_` and `\` with `\`; use them as
 * `lower(column) LIKE :pattern ESCAPE '\'` for the case-insensitive matching OneDev
 * describes (SQLite's LIKE is case-insensitive for ASCII only, PostgreSQL's not at all).
 */

import { checkPatternLength } from './user-patterns.js';

/** The escape character of every LIKE pattern produced here: use `ESCAPE '\'`. */
export const LIKE_ESCAPE = '\\';

/**
 * Escapes LIKE metacharacters so `text` matches itself: `50%_off\` → `50\%\_off\\`.
 * Case is kept.
 */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => LIKE_ESCAPE + c);
}

function starsToLike(value: string): string {
  return value.toLowerCase().split('*').map(escapeLike).join('%');
}

/**
 * Converts a whole-value `*`-wildcard (`"Name" is "my*"`, `"Branch" is "release/*"`) to a
 * lowercase LIKE pattern: `My*_v1` → `my%\_v1`. `*` matches anything, `/` included; `%`
 * and `_` are literal (unlike OneDev, which let them act as LIKE wildcards).
 *
 * Implements the `is` matching of docs/compatibility.md#projects-query-language, docs/compatibility.md#pull-requests-query-language, docs/compatibility.md#builds-query-language.
 * @throws UserPatternError for a value longer than MAX_PATTERN_LENGTH.
 */
export function wildcardToLike(value: string): string {
  checkPatternLength(value);
  return starsToLike(value);
}

/**
 * Converts a `contains` value to a lowercase LIKE pattern matching it anywhere:
 * `fix*crash` → `%fix%crash%`. With `{ wildcard: false }` a `*` is literal
 * (`"Reply" contains`, `"Comment" contains`, fuzzy words).
 *
 * Implements `contains` of docs/compatibility.md#projects-query-language, docs/compatibility.md#pull-requests-query-language, docs/compatibility.md#code-comments-query-language.
 * @throws UserPatternError for a wildcard value longer than MAX_PATTERN_LENGTH.
 */
export function containsToLike(value: string, options: { wildcard?: boolean } = {}): string {
  if (options.wildcard !== false) checkPatternLength(value);
  const inner = options.wildcard === false ? escapeLike(value.toLowerCase()) : starsToLike(value);
  return `%${inner}%`;
}

/** A compiled pattern: whether a text matches it. */
export interface TextMatcher {
  test(text: string): boolean;
}

/**
 * `text` case-folded as a case-insensitive JavaScript RegExp compares (ECMAScript
 * Canonicalize, non-Unicode mode): each UTF-16 code unit in upper case, unless that takes more
 * than one unit or maps a non-ASCII character to ASCII. Positions are kept.
 */
function fold(text: string): string {
  if (/^[\x00-\x7f]*$/.test(text)) return text.toUpperCase();
  let folded = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    const upper = c.toUpperCase();
    folded += upper.length === 1 && !(c.charCodeAt(0) >= 128 && upper.charCodeAt(0) < 128) ? upper : c;
  }
  return folded;
}

/**
 * Whether the fixed-length `part` (no `*`) matches `text` at `at`; with `anyChar`, `?` in the
 * part matches any one code unit.
 */
function partAt(part: string, text: string, at: number, anyChar: boolean): boolean {
  for (let k = 0; k < part.length; k++) {
    const c = part[k];
    if (c !== text[at + k] && !(anyChar && c === '?')) return false;
  }
  return true;
}

/** First index ≥ `from` where `part` matches and ends by `limit`, or -1. */
function findPart(part: string, text: string, from: number, limit: number, anyChar: boolean): number {
  if (!anyChar || !part.includes('?')) {
    const at = text.indexOf(part, from);
    return at >= 0 && at + part.length <= limit ? at : -1;
  }
  for (let at = from; at + part.length <= limit; at++) if (partAt(part, text, at, anyChar)) return at;
  return -1;
}

/**
 * Whether `text[start, end)` matches a glob split at its `*`s into `parts` (`*` matches any run
 * of code units, `?` one when `anyChar`). The first part must start the text, the last end it,
 * and the middle ones are taken leftmost-first, which finds a match whenever there is one
 * (each part has a fixed length). Time O(text × longest part with `?`), no backtracking.
 */
function globMatch(parts: readonly string[], text: string, start: number, end: number, anyChar: boolean): boolean {
  const first = parts[0];
  if (parts.length === 1) return end - start === first.length && partAt(first, text, start, anyChar);
  const last = parts[parts.length - 1];
  const limit = end - last.length;
  if (limit < start + first.length) return false;
  if (!partAt(first, text, start, anyChar) || !partAt(last, text, limit, anyChar)) return false;
  let at = start + first.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const part = parts[i];
    if (part.length === 0) continue;
    const found = findPart(part, text, at, limit, anyChar);
    if (found < 0) return false;
    at = found + part.length;
  }
  return true;
}

/**
 * Compiles a whole-value `*`-wildcard to a case-insensitive matcher of what `wildcardToLike`
 * matches in SQL: `*` is any run of characters, `/` included; everything else is literal.
 * `release/*.x` matches `Release/1.2.x` and `release/a/b.x`. Linear-time (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input); the
 * caller caps the value's length (`wildcardToLike` does).
 */
export function wildcardMatcher(value: string): TextMatcher {
  const parts = fold(value).split('*');
  return { test: (text) => globMatch(parts, fold(text), 0, text.length, false) };
}

/**
 * Compiles a code search path glob (docs/compatibility.md#code-search) to a matcher of what its
 * LIKE form matches: `*` (and `**`) any run of characters, `/` included; `?` one character; the
 * rest literal, case kept. `src/*.ts` matches `src/a/b.ts`. Linear-time, no backtracking; the
 * caller caps the glob's length.
 */
export function pathGlobMatcher(glob: string): TextMatcher {
  const parts = glob.split('*');
  return { test: (text) => globMatch(parts, text, 0, text.length, true) };
}

/** Pattern segments with runs of `**` collapsed (`**` / `**` matches what `**` matches). */
function antSegments(pattern: string): string[] {
  const segments: string[] = [];
  for (const segment of pattern.split('/')) {
    if (segment === '**' && segments[segments.length - 1] === '**') continue;
    segments.push(segment);
  }
  return segments;
}

/**
 * Compiles an Ant-style path pattern to a matcher, case-insensitive unless `options.ignoreCase`
 * is false (build spec and protection patterns, src/ci/patterns.ts): `*` = any characters
 * within a segment, `?` = one character other than `/`, a `**` segment = zero or more whole
 * segments. `acme/**` matches `acme`, `acme/a`, `acme/a/b`; `**\/app` matches `app` and
 * `x/y/app`; `acme/*` matches `acme/a` only.
 *
 * Matching goes segment by segment (as Ant's and OneDev's path matchers do): the segments
 * before the first `**` and after the last must match in place, each run of segments between
 * two `**` is taken at its leftmost position. No backtracking: time O(path × pattern) at
 * worst, linear for patterns without `?` (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input).
 *
 * The caller caps the pattern's length: `antPathToLike` does for queries, `parsePatternSet` of
 * src/ci/patterns.ts for build specs and protections.
 *
 * Implements the path patterns of docs/compatibility.md#projects-query-language (`children of`, `forks of`),
 * docs/compatibility.md#pull-requests-query-language (`Target Project`/`Source Project`) and docs/compatibility.md#builds-query-language (`Project`).
 */
export function antPathMatcher(pattern: string, options: { ignoreCase?: boolean } = {}): TextMatcher {
  const ignoreCase = options.ignoreCase !== false;
  const segments = antSegments(ignoreCase ? fold(pattern) : pattern).map((s) => (s === '**' ? null : s.split('*')));
  return {
    test(path: string): boolean {
      const text = ignoreCase ? fold(path) : path;
      const starts = [0];
      for (let i = 0; i < text.length; i++) if (text[i] === '/') starts.push(i + 1);
      const segmentMatches = (p: number, s: number) => globMatch(segments[p]!, text, starts[s], s + 1 < starts.length ? starts[s + 1] - 1 : text.length, true);
      return antMatch(segments, starts.length, segmentMatches);
    },
  };
}

/**
 * Ant's segment algorithm: pattern segments (`null` = `**`) against `count` path segments,
 * `matches(p, s)` telling whether pattern segment p matches path segment s.
 */
function antMatch(segments: readonly (readonly string[] | null)[], count: number, matches: (p: number, s: number) => boolean): boolean {
  let pStart = 0;
  let pEnd = segments.length - 1;
  let sStart = 0;
  let sEnd = count - 1;
  while (pStart <= pEnd && segments[pStart] !== null) {
    if (sStart > sEnd || !matches(pStart, sStart)) return false;
    pStart++;
    sStart++;
  }
  if (pStart > pEnd) return sStart > sEnd;
  while (segments[pEnd] !== null) {
    if (sStart > sEnd || !matches(pEnd, sEnd)) return false;
    pEnd--;
    sEnd--;
  }
  // segments[pStart] and segments[pEnd] are `**`: place each run between them leftmost.
  while (pStart < pEnd) {
    let next = pStart + 1;
    while (segments[next] !== null) next++;
    const run = next - pStart - 1;
    let found = -1;
    for (let s = sStart; s + run - 1 <= sEnd && found < 0; s++) {
      let k = 0;
      while (k < run && matches(pStart + 1 + k, s + k)) k++;
      if (k === run) found = s;
    }
    if (found < 0) return false;
    sStart = found + run;
    pStart = next;
  }
  return true;
}

/**
 * Converts an Ant-style path pattern to a lowercase LIKE pattern for SQL. The pattern
 * matches a superset of `antPathMatcher(pattern)` (`*` and `?` cannot be kept within a
 * segment in LIKE); `exact` is true when it matches exactly the same paths (no wildcard at
 * all, or `**` alone), otherwise filter the rows again with `antPathMatcher`.
 * `acme/**` → `{ pattern: 'acme%', exact: false }`; `acme/app` → `{ pattern: 'acme/app', exact: true }`.
 * @throws UserPatternError for a pattern longer than MAX_PATTERN_LENGTH.
 */
export function antPathToLike(pattern: string): { pattern: string; exact: boolean } {
  checkPatternLength(pattern);
  const segments = antSegments(pattern.toLowerCase());
  let like = '';
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    const separator = i > 0 && segments[i - 1] !== '**' ? '/' : '';
    if (segment !== '**') {
      like += separator + Array.from(segment, (c) => (c === '*' ? '%' : c === '?' ? '_' : escapeLike(c))).join('');
    } else {
      like += (last ? '' : separator) + '%';
    }
  });
  const exact = !/[*?]/.test(pattern) || segments.every((s) => s === '**');
  return { pattern: like, exact };
}
