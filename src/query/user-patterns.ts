/**
 * User-supplied regular expressions (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input): the one way to compile and match a pattern
 * that a user wrote — a build spec `!TextParam` `pattern` (docs/compatibility.md#builds-build-spec), a branch
 * protection's `commitMessageFooterPattern` (docs/compatibility.md#projects-settings) — so that no such pattern
 * runs in a backtracking engine or unbounded on the event loop.
 *
 * Patterns run in re2js, a port of RE2: time linear in the text, whatever the pattern. Linear
 * is not yet bounded (a pattern such as `\w{0,99}` repeated compiles to thousands of
 * instructions, and the engine may step each of them for every character), so three limits
 * hold as well:
 * - the pattern is at most {@link MAX_PATTERN_LENGTH} characters;
 * - it compiles to at most {@link MAX_PROGRAM_SIZE} instructions, estimated before compiling
 *   (compiling costs time in proportion too) and checked after;
 * - one match costs at most {@link MAX_MATCH_COST} instruction × character steps, so the longest
 *   text a pattern is matched against depends on its size (a 10-instruction pattern takes texts
 *   of up to 4,999 characters).
 *
 * The syntax is RE2's (https://github.com/google/re2/wiki/Syntax), which covers what OneDev's
 * Java patterns are written with (classes, `\d \w \s`, `{n,m}`, lazy quantifiers, `(?i)`,
 * `\Q…\E`, named groups, `\p{L}`) but not lookaround, backreferences, possessive quantifiers or
 * atomic groups: those are invalid patterns here.
 */
import { RE2JS } from 're2js';
import { BadRequest } from '../errors.js';

/** Longest user-supplied pattern (regular expression or wildcard), in UTF-16 code units. */
export const MAX_PATTERN_LENGTH = 1000;

/**
 * Largest compiled regular expression, in re2js program instructions: room for a pattern of
 * 1,000 literal characters (1,002), `.{1,255}` is 511, `\w{0,999}` 2,000.
 */
export const MAX_PROGRAM_SIZE = 2000;

/**
 * Largest cost of one match: program instructions × (text length + 1). Up to ~40 ms of one
 * busy core in the worst cases measured (the engine stepping every instruction at every
 * character, case-insensitive Unicode classes the slowest); typical patterns of 10–60
 * instructions match in well under a millisecond.
 */
export const MAX_MATCH_COST = 50_000;

/** Why a pattern or a text was refused. */
export type UserPatternProblem = 'invalid' | 'too-long' | 'too-complex' | 'text-too-long';

/**
 * A user-supplied pattern that cannot be used, or a text too long to match against it. A 400
 * (`GITLOOM_ERR_PATTERN`); callers that report in their own words (a build spec problem, a
 * settings field) use `problem` and `reason`.
 */
export class UserPatternError extends BadRequest {
  /**
   * @param problem what is wrong.
   * @param reason the predicate without a subject, e.g. `is longer than 1000 characters`; the
   *   message is `Pattern <reason>` (`Text <reason>` for `text-too-long`).
   */
  constructor(
    readonly problem: UserPatternProblem,
    readonly reason: string,
  ) {
    super(`${problem === 'text-too-long' ? 'Text' : 'Pattern'} ${reason}`, { code: 'GITLOOM_ERR_PATTERN' });
  }
}

/**
 * Refuses a pattern longer than {@link MAX_PATTERN_LENGTH}.
 *
 * @throws UserPatternError (`too-long`) `Pattern is longer than 1000 characters (1234)`.
 */
export function checkPatternLength(pattern: string): void {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw new UserPatternError('too-long', `is longer than ${MAX_PATTERN_LENGTH} characters (${pattern.length})`);
  }
}

/** A compiled user regular expression. */
export interface UserRegex {
  /** The pattern as written. */
  readonly source: string;
  /** Size of the compiled program, in instructions (at most {@link MAX_PROGRAM_SIZE}). */
  readonly size: number;
  /** Longest text {@link UserRegex.matches} accepts, in UTF-16 code units. */
  readonly maxTextLength: number;
  /**
   * Whether the pattern matches the whole text (Java's `Matcher.matches()`: `a|ab` matches
   * `ab`, `b` does not match `abc`).
   *
   * @throws UserPatternError (`text-too-long`) for a text longer than `maxTextLength`.
   */
  matches(text: string): boolean;
  /**
   * Where the pattern matches inside the text (Java's `Matcher.find()`: `b` is found in `abc`),
   * leftmost first, at most `limit` spans of UTF-16 offsets (an empty match is an empty span).
   *
   * @throws UserPatternError (`text-too-long`) for a text longer than `maxTextLength`.
   */
  findAll(text: string, limit: number): { start: number; end: number }[];
}

/**
 * Compiles a user-supplied regular expression for linear-time whole-text matching (see the
 * module comment for the syntax and limits). No flags: `(?i)`, `(?s)`, `(?m)` inside the
 * pattern set them, as in Java.
 *
 * Compile for one task (a job submission, one push's commits) and drop the result after: the
 * engine keeps the automaton states it builds while matching (up to 8 MB), so long-lived
 * compiled patterns would hold memory a user chooses. Compiling takes well under a millisecond
 * for ordinary patterns, tens of milliseconds near the size limit.
 *
 * @param pattern the pattern as the user wrote it.
 * @throws UserPatternError `too-long` (over {@link MAX_PATTERN_LENGTH} characters),
 *   `too-complex` (over {@link MAX_PROGRAM_SIZE} instructions), `invalid` (not RE2 syntax:
 *   `reason` is the engine's, e.g. `` is not a valid regular expression: missing closing ): `(` ``).
 * @example compileUserRegex('[0-9]+').matches('42') === true; compileUserRegex('[0-9]+').matches('v42') === false
 */
export function compileUserRegex(pattern: string): UserRegex {
  checkPatternLength(pattern);
  const estimate = estimateProgramSize(pattern);
  // The estimate is within a small factor of the real size; it only has to stop blow-ups
  // (`a{0,999}` repeated) before they cost seconds to compile.
  if (estimate > 2 * MAX_PROGRAM_SIZE) throw tooComplex(`about ${estimate}`);
  let program: RE2JS;
  try {
    program = RE2JS.compile(pattern);
  } catch (error) {
    const detail = error instanceof Error ? error.message.replace(/^error parsing regexp: /, '') : String(error);
    throw new UserPatternError('invalid', `is not a valid regular expression: ${detail}`);
  }
  const size = program.programSize();
  if (size > MAX_PROGRAM_SIZE) throw tooComplex(String(size));
  const maxTextLength = Math.floor(MAX_MATCH_COST / size) - 1;
  return {
    source: pattern,
    size,
    maxTextLength,
    matches(text: string): boolean {
      if (text.length > maxTextLength) {
        throw new UserPatternError('text-too-long', `of ${text.length} characters is too long to match against this pattern (at most ${maxTextLength})`);
      }
      return program.matches(text);
    },
    findAll(text: string, limit: number) {
      if (text.length > maxTextLength) {
        throw new UserPatternError('text-too-long', `of ${text.length} characters is too long to match against this pattern (at most ${maxTextLength})`);
      }
      const spans: { start: number; end: number }[] = [];
      const matcher = program.matcher(text);
      while (spans.length < limit && matcher.find()) spans.push({ start: matcher.start(), end: matcher.end() });
      return spans;
    },
  };
}

function tooComplex(size: string): UserPatternError {
  return new UserPatternError('too-complex', `is too complex: it compiles to ${size} instructions, at most ${MAX_PROGRAM_SIZE} (lower its repetition counts)`);
}

/** A repetition `{n}`, `{n,}` or `{n,m}` at the start of the text. */
const REPEAT = /^\{(\d{1,7})(,(\d{0,7}))?\}/;

/**
 * An estimate of the program size RE2 compiles `pattern` to, in one linear pass: one
 * instruction per literal, class or escape, one per alternative, operator and group, and a
 * repetition `{n,m}` copies what it repeats max(n, m) times (as RE2 expands it). Invalid
 * syntax is estimated anyway; the compiler reports it.
 */
export function estimateProgramSize(pattern: string): number {
  const frames = [{ total: 0, last: 0 }];
  let top = frames[0];
  const atom = (size: number) => {
    top.total += size;
    top.last = size;
  };
  const close = () => {
    const inner = frames.pop()!;
    top = frames[frames.length - 1];
    atom(inner.total + 2);
  };
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        const stop = end < 0 ? pattern.length : end;
        top.total += stop - (i + 2);
        top.last = 1;
        i = end < 0 ? stop : end + 2;
      } else if ((next === 'p' || next === 'P' || next === 'x') && pattern[i + 2] === '{') {
        const end = pattern.indexOf('}', i + 3);
        i = end < 0 ? pattern.length : end + 1;
        atom(1);
      } else {
        i += 2;
        atom(1);
      }
    } else if (c === '[') {
      i = classEnd(pattern, i);
      atom(1);
    } else if (c === '(') {
      const flags = /^\(\?[a-zA-Z-]*\)/.exec(pattern.slice(i, i + 16));
      if (flags) {
        i += flags[0].length;
        continue;
      }
      frames.push((top = { total: 0, last: 0 }));
      i++;
    } else if (c === ')') {
      if (frames.length > 1) close();
      i++;
    } else if (c === '|') {
      top.total += 1;
      top.last = 0;
      i++;
    } else if (c === '*' || c === '+' || c === '?') {
      top.total += 1;
      top.last += 1;
      i++;
    } else if (c === '{' && REPEAT.test(pattern.slice(i, i + 18))) {
      const m = REPEAT.exec(pattern.slice(i, i + 18))!;
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] === '' ? min + 1 : Number(m[3]);
      const count = Math.max(min, max, 1);
      const repeated = top.last * count + count;
      top.total += repeated - top.last;
      top.last = repeated;
      i += m[0].length;
    } else {
      atom(1);
      i++;
    }
  }
  while (frames.length > 1) close();
  return top.total;
}

/** Index after the character class opening at `start` (`[`…`]`, `[^]…]`, `[[:alpha:]]`, escapes). */
function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '^') i++;
  if (pattern[i] === ']') i++;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === ']') return i + 1;
    if (c === '\\') {
      const next = pattern[i + 1];
      if ((next === 'p' || next === 'P' || next === 'x') && pattern[i + 2] === '{') {
        const end = pattern.indexOf('}', i + 3);
        i = end < 0 ? pattern.length : end + 1;
      } else {
        i += 2;
      }
    } else if (c === '[' && pattern[i + 1] === ':') {
      const end = pattern.indexOf(':]', i + 2);
      i = end < 0 ? i + 1 : end + 2;
    } else {
      i++;
    }
  }
  return i;
}
