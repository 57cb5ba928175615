/**
 * OneDev pattern sets: space-separated path wildcard patterns, a leading `-` excludes
 * (a trigger's `projects`, docs/compatibility.md#builds-triggers; a protection's `branches`,
 * docs/compatibility.md#projects-branch-protection).
 *
 * Pattern syntax (Ant-style path wildcards, as OneDev's `PathMatcher`):
 * - `?` matches one character other than `/`;
 * - `*` matches zero or more characters other than `/`;
 * - `**` as a whole segment matches zero or more path segments;
 * - a pattern ending in `/` means "everything below" (`dir/` = `dir/**`);
 * - a pattern may be double-quoted (to hold spaces or a leading `-`); `\` escapes the next character.
 * Matching is case-sensitive, in linear time, and a pattern is at most 1,000 characters
 * (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input).
 */
import { LRUCache } from 'lru-cache';
import { antPathMatcher, MAX_PATTERN_LENGTH, type TextMatcher } from '../query/index.js';

/** A parsed pattern set: `includes` and `excludes` (without the `-`). */
export interface PatternSet {
  readonly includes: readonly string[];
  readonly excludes: readonly string[];
}

/** Thrown by {@link parsePatternSet} for an unterminated quote, a dangling escape or a pattern too long. */
export class PatternSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PatternSyntaxError';
  }
}

/**
 * Parses a pattern-set string such as `main release/** -release/old "with space"`.
 *
 * @param text space-separated patterns (any whitespace separates); `-` prefix excludes.
 * @returns the includes and excludes, in order of appearance.
 * @throws PatternSyntaxError on an unterminated `"`, a trailing `\` or a pattern longer than
 *   1,000 characters.
 */
export function parsePatternSet(text: string): PatternSet {
  const includes: string[] = [];
  const excludes: string[] = [];
  let i = 0;
  while (i < text.length) {
    if (/\s/.test(text[i])) {
      i++;
      continue;
    }
    let excluded = false;
    if (text[i] === '-') {
      excluded = true;
      i++;
    }
    let value = '';
    if (text[i] === '"') {
      i++;
      let closed = false;
      while (i < text.length) {
        const c = text[i];
        if (c === '\\') {
          if (i + 1 >= text.length) throw new PatternSyntaxError(`Malformed pattern set: dangling escape in '${text}'`);
          value += text[i + 1];
          i += 2;
        } else if (c === '"') {
          i++;
          closed = true;
          break;
        } else {
          value += c;
          i++;
        }
      }
      if (!closed) throw new PatternSyntaxError(`Malformed pattern set: unterminated quote in '${text}'`);
    } else {
      while (i < text.length && !/\s/.test(text[i])) {
        const c = text[i];
        if (c === '\\') {
          if (i + 1 >= text.length) throw new PatternSyntaxError(`Malformed pattern set: dangling escape in '${text}'`);
          value += text[i + 1];
          i += 2;
        } else {
          value += c;
          i++;
        }
      }
    }
    if (value.length === 0) continue;
    if (value.length > MAX_PATTERN_LENGTH) {
      throw new PatternSyntaxError(`Malformed pattern set: a pattern is longer than ${MAX_PATTERN_LENGTH} characters (${value.length})`);
    }
    (excluded ? excludes : includes).push(value);
  }
  return { includes, excludes };
}

/**
 * Whether `value` matches the pattern set, with OneDev's rule: any matching exclude → false;
 * any matching include → true; otherwise true only when there are excludes but no includes
 * (so `-foo` alone means "everything but foo").
 *
 * @param set a parsed pattern set.
 * @param value a path such as `src/main.ts` or a branch name such as `release/1.0`.
 */
export function patternSetMatches(set: PatternSet, value: string): boolean {
  for (const exclude of set.excludes) if (matchPath(exclude, value)) return false;
  for (const include of set.includes) if (matchPath(include, value)) return true;
  return set.excludes.length > 0 && set.includes.length === 0;
}

/**
 * Convenience: parse then match. A `null`/`undefined` pattern string means "no filter" and
 * matches everything (the spec's "leave empty to match all").
 *
 * @throws PatternSyntaxError for a malformed pattern string.
 */
export function matchesPatterns(patterns: string | null | undefined, value: string): boolean {
  if (patterns == null) return true;
  return patternSetMatches(parsePatternSet(patterns), value);
}

/** Compiled patterns by pattern text: a few hundred distinct patterns serve a whole server. */
const compiled = new LRUCache<string, TextMatcher>({ max: 1000 });

/**
 * Ant-style path wildcard match of one pattern against one path (see the module comment), by
 * the matcher of the query languages ({@link antPathMatcher}) made case-sensitive. A leading
 * `/` must agree between pattern and path; empty segments are ignored.
 *
 * @example matchPath('src/**\/*.ts', 'src/a/b.ts') === true
 */
export function matchPath(pattern: string, path: string): boolean {
  if (pattern.startsWith('/') !== path.startsWith('/')) return false;
  let matcher = compiled.get(pattern);
  if (matcher === undefined) {
    matcher = antPathMatcher(segments(pattern.endsWith('/') ? `${pattern}**` : pattern), { ignoreCase: false });
    compiled.set(pattern, matcher);
  }
  return matcher.test(segments(path));
}

/** A path with its empty segments (leading, trailing, doubled `/`) dropped: `/a//b/` → `a/b`. */
function segments(path: string): string {
  return path
    .split('/')
    .filter((s) => s.length > 0)
    .join('/');
}
