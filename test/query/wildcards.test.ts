import { describe, expect, it } from 'vitest';
import {
  LIKE_ESCAPE,
  antPathToLike,
  antPathToRegExp,
  containsToLike,
  escapeLike,
  wildcardToLike,
  wildcardToRegExp,
} from '../../src/query/index.js';

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

describe('wildcardToRegExp', () => {
  it('matches whole values case-insensitively, * across slashes', () => {
    const re = wildcardToRegExp('release/*.x');
    expect(re.test('Release/1.2.x')).toBe(true);
    expect(re.test('release/a/b.x')).toBe(true);
    expect(re.test('release/1.2.y')).toBe(false);
    expect(re.test('xrelease/1.x')).toBe(false);
    expect(wildcardToRegExp('a+b(c)').test('A+B(C)')).toBe(true);
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
    const re = antPathToRegExp(pattern);
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

  it('LIKE pre-filter matches a superset of the RegExp', () => {
    const likeToRegExp = (like: string) =>
      new RegExp(`^${like.replace(/\\(.)|%|_|[.*+?^${}()|[\]/]/g, (m, escaped: string | undefined) =>
        escaped !== undefined ? `\\${escaped}` : m === '%' ? '.*' : m === '_' ? '.' : `\\${m}`,
      )}$`, 's');
    const paths = ['acme', 'acme/app', 'acme/a/b', 'x/app', 'app', 'a/b', 'a/x/b', 'acme_1/app'];
    for (const pattern of ['acme/**', '**/app', 'a/**/b', 'acme/*', 'a/?', '*/app', 'acme_1/*']) {
      const exact = antPathToRegExp(pattern);
      const like = likeToRegExp(antPathToLike(pattern).pattern);
      for (const path of paths) if (exact.test(path)) expect(like.test(path), `${pattern} ${path}`).toBe(true);
    }
  });
});
