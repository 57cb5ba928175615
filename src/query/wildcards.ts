/**
 * Wildcard helpers for compiling query values to SQL and to in-memory matchers.
 *
 * Two pattern families appear in the query languages:
 * - `*`-wildcards (`"Title" contains "fix*crash"`, `"Job" is "CI*"`): `*` is any run of
 *   characters, `/` included; everything else is literal. Compiled to LIKE exactly.
 * - Ant-style paths (`children of "acme/**"`, `"Target Project" is "g/*"`): `*` and `?`
 *   stay within one `/`-separated segment, `**` spans any number of segments (zero
 *   included). LIKE cannot express "within a segment", so these compile to a RegExp
 *   (exact) and to a LIKE pattern that matches a superset (a SQL pre-filter).
 *
 * All LIKE patterns are lowercased and escape `%`, `_` and `\` with `\`; use them as
 * `lower(column) LIKE :pattern ESCAPE '\'` for the case-insensitive matching the reference
 * describes (SQLite's LIKE is case-insensitive for ASCII only, PostgreSQL's not at all).
 */

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
  return value
    .toLowerCase()
    .split('*')
    .map(escapeLike)
    .join('%');
}

/**
 * Converts a whole-value `*`-wildcard (`"Name" is "my*"`, `"Branch" is "release/*"`) to a
 * lowercase LIKE pattern: `My*_v1` → `my%\_v1`. `*` matches anything, `/` included; `%`
 * and `_` are literal (unlike OneDev, which let them act as LIKE wildcards).
 *
 * Implements the `is` matching of reference/projects.md §4, pulls.md §6, builds.md §7.
 */
export function wildcardToLike(value: string): string {
  return starsToLike(value);
}

/**
 * Converts a `contains` value to a lowercase LIKE pattern matching it anywhere:
 * `fix*crash` → `%fix%crash%`. With `{ wildcard: false }` a `*` is literal
 * (`"Reply" contains`, `"Comment" contains`, fuzzy words).
 *
 * Implements `contains` of reference/projects.md §4, pulls.md §6, comments-issues.md §1.3.
 */
export function containsToLike(value: string, options: { wildcard?: boolean } = {}): string {
  const inner = options.wildcard === false ? escapeLike(value.toLowerCase()) : starsToLike(value);
  return `%${inner}%`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/**
 * Converts a whole-value `*`-wildcard to an anchored, case-insensitive RegExp, for matching
 * in memory what `wildcardToLike` matches in SQL: `release/*` → `/^release\/.*$/i`.
 */
export function wildcardToRegExp(value: string): RegExp {
  return new RegExp(`^${value.split('*').map(escapeRegExp).join('.*')}$`, 'is');
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

function segmentToRegExp(segment: string): string {
  return Array.from(segment, (c) => (c === '*' ? '[^/]*' : c === '?' ? '[^/]' : escapeRegExp(c))).join('');
}

/**
 * Converts an Ant-style path pattern to an anchored RegExp (exact), case-insensitive unless
 * `options.ignoreCase` is false (build spec and protection patterns, src/ci/patterns.ts):
 * `*` = any characters within a segment, `?` = one character other than `/`, a `**`
 * segment = zero or more whole segments. `acme/**` matches `acme`, `acme/a`, `acme/a/b`;
 * `**\/app` matches `app` and `x/y/app`; `acme/*` matches `acme/a` only.
 *
 * Implements the path patterns of reference/projects.md §4 (`children of`, `forks of`),
 * pulls.md §6 (`Target Project`/`Source Project`) and builds.md §7 (`Project`).
 */
export function antPathToRegExp(pattern: string, options: { ignoreCase?: boolean } = {}): RegExp {
  const segments = antSegments(pattern);
  let source = '';
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    const separator = i > 0 && segments[i - 1] !== '**' ? '/' : '';
    if (segment !== '**') source += separator + segmentToRegExp(segment);
    else if (!last) source += `${separator}(?:.*/)?`;
    else source += i === 0 ? '.*' : '(?:/.*)?';
  });
  return new RegExp(`^${source}$`, options.ignoreCase === false ? 's' : 'is');
}

/**
 * Converts an Ant-style path pattern to a lowercase LIKE pattern for SQL. The pattern
 * matches a superset of `antPathToRegExp(pattern)` (`*` and `?` cannot be kept within a
 * segment in LIKE); `exact` is true when it matches exactly the same paths (no wildcard at
 * all, or `**` alone), otherwise filter the rows again with `antPathToRegExp`.
 * `acme/**` → `{ pattern: 'acme%', exact: false }`; `acme/app` → `{ pattern: 'acme/app', exact: true }`.
 */
export function antPathToLike(pattern: string): { pattern: string; exact: boolean } {
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
