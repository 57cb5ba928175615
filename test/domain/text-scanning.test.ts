import { describe, expect, it } from 'vitest';
import { parseReferences, scanReferences } from '../../src/domain/issues/references.js';
import { withoutTrailingDots } from '../../src/domain/mentions.js';
import { reviewRequirementItems, userMatchTokens } from '../../src/domain/projects/principal-expressions.js';
import { trimSlashes } from '../../src/domain/repositories/revisions.js';

/**
 * The hand-written scanners that replaced quadratic regular expressions (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input) find
 * exactly what those expressions found: each is compared with its expression over random texts
 * made of the characters and words that matter to it.
 */

/** A deterministic pseudo-random text generator. */
function texts(seed: number, pieces: readonly string[], count: number, maxPieces: number): string[] {
  let state = seed;
  const next = (n: number) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % n;
  };
  return Array.from({ length: count }, () => Array.from({ length: 1 + next(maxPieces) }, () => pieces[next(pieces.length)]).join(''));
}

const PLAIN_REFERENCE = /(?:^|[^\w&])(?:(?<kind>issue|pull\s*request|pr|build)\s+)?(?<project>\w(?:[\w\-/.]*\w)?)?#(?<number>\d+)(?=$|\W)/gi;

describe('scanReferences', () => {
  it('finds what the plain reference expression matched: the same matches, groups and positions', () => {
    const pieces = [
      'a',
      'B',
      '1',
      '23',
      '_',
      '/',
      '-',
      '.',
      '#',
      '##',
      '&',
      ' ',
      '  ',
      '\t',
      '\n',
      '\u00a0',
      'issue',
      'ISSUE',
      'tissue',
      'pr',
      'Pr',
      'pull',
      'Pull',
      'request',
      'pull request',
      'pullrequest',
      'build',
      'x',
      '!',
      '(',
      ')',
      '@',
      'é',
    ];
    for (const text of texts(1, pieces, 100_000, 20)) {
      const expected = [...text.matchAll(PLAIN_REFERENCE)].map((m) => {
        // the match starts at the reference itself only at the start of the text
        const atReference = /^\w/.test(m[0]) || /^#\d+$/.test(m[0]);
        return {
          index: m.index,
          start: m.index! + (atReference ? 0 : 1),
          end: m.index! + m[0].length,
          keyword: m.groups!.kind,
          project: m.groups!.project,
          number: m.groups!.number,
        };
      });
      expect([...scanReferences(text)], JSON.stringify(text)).toEqual(expected);
    }
  });

  it('reads a megabyte of path-like text at once', () => {
    const started = performance.now();
    expect(parseReferences(`${'a/'.repeat(500_000)}!`, 'plain')).toEqual([]);
    expect(parseReferences(`${'-a#1'.repeat(250_000)}`, 'plain')).toEqual([{ kind: 'issue', projectPath: 'a', number: 1 }]);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe('user match and review requirement readers', () => {
  const TOKENS = /[^\s()]+(?:\((?:\\.|[^)\\])*\))?/g;
  const ITEMS = /(?:(user|group)\(((?:\\.|[^)\\])*)\)|([^\s():]+))(?::(\d+))?/gi;
  const pieces = ['a', 'user', 'USER', 'group', 'Group', '(', ')', '\\', '\\)', ' ', '\n', '\r', '\u2028', ':', ':2', '12', '\u00a0', 'except', 'é', '\\\n'];

  it('split as the expressions did', () => {
    for (const text of texts(2, pieces, 50_000, 14)) {
      expect(userMatchTokens(text), JSON.stringify(text)).toEqual(text.match(TOKENS) ?? []);
      expect(reviewRequirementItems(text), JSON.stringify(text)).toEqual(
        [...text.matchAll(ITEMS)].map((m) => ({ kind: m[1], name: m[2] ?? m[3], count: m[4] })),
      );
    }
  });

  it('read a megabyte of unclosed parentheses at once', () => {
    const started = performance.now();
    expect(userMatchTokens('a('.repeat(500_000))).toHaveLength(500_000);
    expect(reviewRequirementItems('user('.repeat(200_000))).toHaveLength(200_000);
    expect(performance.now() - started).toBeLessThan(3000);
  });
});

describe('trimming', () => {
  it('trims as the expressions did, in linear time', () => {
    for (const text of texts(3, ['/', '//', 'a', '.', '..', ' '], 20_000, 10)) {
      expect(trimSlashes(text)).toBe(text.replace(/^\/+|\/+$/g, ''));
      expect(withoutTrailingDots(text)).toBe(text.replace(/\.+$/, ''));
    }
    const started = performance.now();
    expect(trimSlashes(`/${'/'.repeat(1_000_000)}a`)).toBe('a');
    expect(withoutTrailingDots(`a${'.'.repeat(1_000_000)}b`)).toBe(`a${'.'.repeat(1_000_000)}b`);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
