import { describe, expect, it } from 'vitest';
import { LIKE_ESCAPE, antPathMatcher, antPathToLike, containsToLike, escapeLike, wildcardMatcher, wildcardToLike } from '../../src/query/index.js';

describe('LIKE patterns', () => {
  it('escapes %, _ and the escape character itself', () => {
    expect(LIKE_ESCAPE).toBe('\\');
    expect(escapeLike('50%_off\\now')).toBe('50\\%\\_off\\\\now');
  });

  it('turns * into % and lowercases', () => {
    expect(wildcardToLike('My*_v1')).toBe('my%\\_v1');
    expect(wildcardToLike('release/*')).toBe('release/%');
    expect(wildcardToLike('100%')).toBe('100\\%');
    expect(wildcardToLike('**')).toBe('%%');
  });

  it('wraps contains values, with or without wildcards', () => {
    expect(containsToLike('Fix*Crash')).toBe('%fix%crash%');
    expect(containsToLike('a*b_c', { wildcard: false })).toBe('%a*b\\_c%');
  });
});

describe('wildcardMatcher', () => {
  it('matches whole values case-insensitively, * across slashes', () => {
    const re = wildcardMatcher('release/*.x');
    expect(re.test('Release/1.2.x')).toBe(true);
    expect(re.test('release/a/b.x')).toBe(true);
    expect(re.test('release/1.2.y')).toBe(false);
    expect(re.test('xrelease/1.x')).toBe(false);
    expect(wildcardMatcher('a+b(c)').test('A+B(C)')).toBe(true);
  });
});

describe('Ant path patterns', () => {
  it.each([
    ['acme', ['acme', 'ACME'], ['acme/app', 'acm', 'xacme']],
    ['acme/*', ['acme/app', 'acme/x.y'], ['acme', 'acme/a/b', 'other/app']],
    ['acme/**', ['acme', 'acme/a', 'acme/a/b'], ['acmeX', 'other/acme']],
    ['**/app', ['app', 'x/app', 'x/y/app'], ['xapp', 'app/x']],
    ['a/**/b', ['a/b', 'a/x/b', 'a/x/y/b'], ['a/xb', 'ab', 'a/b/c']],
    ['a/?', ['a/b'], ['a/bc', 'a//']],
    ['**', ['a', 'a/b/c'], []],
    ['**/**', ['a', 'a/b'], []],
    ['g.*/a+b', ['g.x/a+b', 'g./a+b'], ['gx/a+b', 'g.x/aab']],
  ])('%s', (pattern, matching, other) => {
    const re = antPathMatcher(pattern);
    for (const path of matching) expect(re.test(path), path).toBe(true);
    for (const path of other) expect(re.test(path), path).toBe(false);
  });

  it.each([
    ['acme/app', 'acme/app', true],
    ['Acme_1/app', 'acme\\_1/app', true],
    ['**', '%', true],
    ['acme/**', 'acme%', false],
    ['**/app', '%app', false],
    ['a/**/b', 'a/%b', false],
    ['acme/*', 'acme/%', false],
    ['a?c', 'a_c', false],
  ])('%s → LIKE %s (exact: %s)', (pattern, like, exact) => {
    expect(antPathToLike(pattern)).toEqual({ pattern: like, exact });
  });

  it('LIKE pre-filter matches a superset of the matcher', () => {
    const likeToRegExp = (like: string) =>
      new RegExp(
        `^${like.replace(/\\(.)|%|_|[.*+?^${}()|[\]/]/g, (m, escaped: string | undefined) =>
          escaped !== undefined ? `\\${escaped}` : m === '%' ? '.*' : m === '_' ? '.' : `\\${m}`,
        )}$`,
        's',
      );
    const paths = ['acme', 'acme/app', 'acme/a/b', 'x/app', 'app', 'a/b', 'a/x/b', 'acme_1/app'];
    for (const pattern of ['acme/**', '**/app', 'a/**/b', 'acme/*', 'a/?', '*/app', 'acme_1/*']) {
      const exact = antPathMatcher(pattern);
      const like = likeToRegExp(antPathToLike(pattern).pattern);
      for (const path of paths) if (exact.test(path)) expect(like.test(path), `${pattern} ${path}`).toBe(true);
    }
  });
});

describe('matchers agree with the regular expressions they replace', () => {
  // The backtracking RegExps the matchers were before (fine here: short, test-only inputs).
  const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const oldWildcard = (value: string) => new RegExp(`^${value.split('*').map(escapeRegExp).join('.*')}$`, 'is');
  const oldAntPath = (pattern: string, ignoreCase: boolean) => {
    const segments: string[] = [];
    for (const segment of pattern.split('/')) {
      if (segment === '**' && segments[segments.length - 1] === '**') continue;
      segments.push(segment);
    }
    let source = '';
    segments.forEach((segment, i) => {
      const last = i === segments.length - 1;
      const separator = i > 0 && segments[i - 1] !== '**' ? '/' : '';
      if (segment !== '**') source += separator + Array.from(segment, (c) => (c === '*' ? '[^/]*' : c === '?' ? '[^/]' : escapeRegExp(c))).join('');
      else if (!last) source += `${separator}(?:.*/)?`;
      else source += i === 0 ? '.*' : '(?:/.*)?';
    });
    return new RegExp(`^${source}$`, ignoreCase ? 'is' : 's');
  };
  // a small deterministic generator (mulberry32)
  let seed = 0x5eed;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
  const text = (pieces: readonly string[], max: number) => Array.from({ length: Math.floor(random() * max) }, () => pick(pieces)).join('');

  it('on random patterns and paths (case, empty segments, `?`, `**` included)', () => {
    const patternPieces = ['a', 'b', 'A', 'é', 'É', '/', '*', '**', '?', '**/', '/**', '.'];
    const pathPieces = ['a', 'b', 'A', 'B', 'é', 'É', '/', '.', 'ab'];
    let matched = 0;
    const disagreements: string[] = [];
    for (let n = 0; n < 1000; n++) {
      const pattern = text(patternPieces, 7);
      const paths = Array.from({ length: 8 }, () => text(pathPieces, 8));
      for (const ignoreCase of [true, false]) {
        const ours = antPathMatcher(pattern, { ignoreCase });
        const theirs = oldAntPath(pattern, ignoreCase);
        for (const path of paths) {
          const expected = theirs.test(path);
          if (expected) matched++;
          if (ours.test(path) !== expected) disagreements.push(`antPathMatcher(${pattern}, ignoreCase ${ignoreCase}) on ${path}`);
        }
      }
      const wildcard = wildcardMatcher(pattern);
      const old = oldWildcard(pattern);
      for (const path of paths) if (wildcard.test(path) !== old.test(path)) disagreements.push(`wildcardMatcher(${pattern}) on ${path}`);
    }
    expect(disagreements.slice(0, 10)).toEqual([]);
    // not vacuous: a fair share of the cases match
    expect(matched).toBeGreaterThan(700);
  });
});

describe('hostile globs (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input)', () => {
  it('match in one pass where a backtracking RegExp took seconds', () => {
    const path = `${'a'.repeat(5000)}/${'a'.repeat(5000)}`;
    const stars = '*a'.repeat(10);
    expect(antPathMatcher(stars).test(path)).toBe(false);
    expect(antPathMatcher(`**/${stars}`).test(`${path}b`)).toBe(false);
    expect(wildcardMatcher(`${stars}b`).test(path)).toBe(false);
    expect(antPathMatcher(`${'?a*'.repeat(300)}b`).test('a'.repeat(10000))).toBe(false);
    // the controls: the same globs match where they should
    expect(antPathMatcher(`**/${stars}`).test(path)).toBe(true);
    expect(wildcardMatcher(`${stars}b`).test(`${path}b`)).toBe(true);
    expect(antPathMatcher(`${'?a*'.repeat(300)}b`).test(`${'a'.repeat(900)}b`)).toBe(true);
  });

  it('are refused over 1,000 characters where they become LIKE patterns (400)', () => {
    const long = 'a*'.repeat(500);
    expect(wildcardToLike(long)).toBe('a%'.repeat(500));
    expect(antPathToLike(long).pattern).toBe('a%'.repeat(500));
    for (const convert of [() => wildcardToLike(`${long}b`), () => antPathToLike(`${long}b`), () => containsToLike(`${long}b`)]) {
      expect(convert).toThrow(expect.objectContaining({ status: 400, code: 'GITLOOM_ERR_PATTERN', message: 'Pattern is longer than 1000 characters (1001)' }));
    }
    // a literal `contains` (no wildcard) is no pattern: not capped
    expect(containsToLike(`${long}b`, { wildcard: false })).toHaveLength(1003);
  });
});
