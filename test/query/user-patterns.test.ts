import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import { BadRequest } from '../../src/errors.js';
import { MAX_MATCH_COST, MAX_PATTERN_LENGTH, MAX_PROGRAM_SIZE, UserPatternError, compileUserRegex } from '../../src/query/index.js';
import { estimateProgramSize } from '../../src/query/user-patterns.js';

/** The UserPatternError `fn` throws. */
function refusal(fn: () => unknown): UserPatternError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UserPatternError);
    return error as UserPatternError;
  }
  throw new Error('expected a UserPatternError');
}

describe('compileUserRegex: whole-text matching (Java matches())', () => {
  it.each([
    ['[0-9]+', '42', true],
    ['[0-9]+', 'v42', false],
    ['[0-9]+', '42x', false],
    ['a|ab', 'ab', true],
    ['b', 'abc', false],
    ['^(a+)+$', 'aaaa', true],
    ['(?i)release-\\d{1,3}', 'RELEASE-12', true],
    ['release-\\d{1,3}', 'RELEASE-12', false],
    ['\\Q1.0\\E', '1.0', true],
    ['\\Q1.0\\E', '1x0', false],
    ['(?P<major>\\d+)\\.(?<minor>\\d+)', '3.14', true],
    ['\\p{L}+', 'Grüße', true],
    ['Signed-off-by: .+ <.+@.+>', 'Signed-off-by: Ann <ann@example.com>', true],
    ['.+', 'two\nlines', false],
    ['(?s).+', 'two\nlines', true],
  ])('%s on %j → %s', (pattern, text, expected) => {
    expect(compileUserRegex(pattern).matches(text)).toBe(expected);
  });

  it('answers a catastrophic-backtracking pattern at once (linear time, docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input)', () => {
    // In a backtracking engine these take minutes; here each is one pass over the text.
    expect(compileUserRegex('^(a+)+$').matches(`${'a'.repeat(29)}!`)).toBe(false);
    expect(compileUserRegex('(a|a)*b').matches('a'.repeat(4000))).toBe(false);
    expect(compileUserRegex('(a|aa)+$').matches(`${'a'.repeat(4000)}!`)).toBe(false);
    // the controls: the same patterns match where they should
    expect(compileUserRegex('^(a+)+$').matches('a'.repeat(29))).toBe(true);
    expect(compileUserRegex('(a|a)*b').matches(`${'a'.repeat(4000)}b`)).toBe(true);
  });
});

describe('compileUserRegex: refusals', () => {
  it(`takes patterns of up to ${MAX_PATTERN_LENGTH} characters, refuses longer ones (400)`, () => {
    expect(compileUserRegex('x'.repeat(MAX_PATTERN_LENGTH)).matches('x'.repeat(40))).toBe(false);
    const error = refusal(() => compileUserRegex('x'.repeat(MAX_PATTERN_LENGTH + 1)));
    expect(error).toBeInstanceOf(BadRequest);
    expect(error).toMatchObject({ status: 400, code: 'GITLOOM_ERR_PATTERN', problem: 'too-long', message: 'Pattern is longer than 1000 characters (1001)' });
  });

  it("refuses invalid patterns with the engine's reason, and what RE2 does not support", () => {
    expect(refusal(() => compileUserRegex('v[0-9'))).toMatchObject({
      problem: 'invalid',
      reason: expect.stringMatching(/^is not a valid regular expression: missing closing \]/),
    });
    expect(refusal(() => compileUserRegex('('))).toMatchObject({
      problem: 'invalid',
      message: 'Pattern is not a valid regular expression: missing closing ): `(`',
    });
    // lookaround, backreferences and possessive quantifiers need a backtracking engine
    for (const pattern of ['(?=a)a', '(?!a)b', '(?<=a)b', '(a)\\1', 'a++']) {
      expect(refusal(() => compileUserRegex(pattern)).problem, pattern).toBe('invalid');
    }
  });

  it('refuses patterns that compile to too large a program: before compiling, and after', () => {
    // estimated far over the limit: refused without compiling
    const huge = refusal(() => compileUserRegex('a{0,999}'.repeat(100)));
    expect(huge.problem).toBe('too-complex');
    expect(huge.message).toMatch(/^Pattern is too complex: it compiles to about \d+ instructions, at most 2000/);
    // near the limit: compiled, then refused on its real size
    const near = refusal(() => compileUserRegex('\\w{0,999}\\w{0,999}'));
    expect(near.message).toMatch(/^Pattern is too complex: it compiles to 3\d{3} instructions, at most 2000 \(lower its repetition counts\)$/);
    // the control: the largest repetition allowed alone
    expect(compileUserRegex('\\w{0,999}').size).toBe(MAX_PROGRAM_SIZE);
  });

  it('refuses a text whose match would cost more than the budget, takes the longest within it', () => {
    const regex = compileUserRegex('a{0,99}b?');
    expect(regex.maxTextLength).toBe(Math.floor(MAX_MATCH_COST / regex.size) - 1);
    expect(regex.matches('a'.repeat(regex.maxTextLength))).toBe(false);
    const error = refusal(() => regex.matches('a'.repeat(regex.maxTextLength + 1)));
    expect(error).toMatchObject({
      problem: 'text-too-long',
      message: `Text of ${regex.maxTextLength + 1} characters is too long to match against this pattern (at most ${regex.maxTextLength})`,
    });
    // small patterns take long texts
    expect(compileUserRegex('(?s).*').matches('x'.repeat(4000))).toBe(true);
  });
});

describe('estimateProgramSize', () => {
  it('stays within a small factor of the compiled size', () => {
    const patterns = [
      String.raw`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`,
      '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}',
      'Signed-off-by: .+ <.+@.+>',
      '.{1,255}',
      '\\w{0,999}',
      'a{0,99}'.repeat(5),
      '((a{1,10}){1,10}){1,5}',
      '(?:(?:\\w{0,9}\\s{0,9}){0,9}x){0,9}',
      '(?:a|aa|aaa|b){0,200}c',
      '[[:alpha:]]{3,}',
      '\\Qa.b\\E{5}',
      '(?i)abc{10,}',
      '\\p{Greek}{10,20}',
      '(?:ab|cd|ef){0,100}',
      '[^\\]]{50}',
      '(?P<n>x{30}){30}',
      'x'.repeat(1000),
    ];
    for (const pattern of patterns) {
      const real = RE2JS.compile(pattern).programSize();
      const estimate = estimateProgramSize(pattern);
      expect(estimate, pattern).toBeGreaterThanOrEqual(real / 2);
      expect(estimate, pattern).toBeLessThanOrEqual(real * 3);
    }
  });
});
