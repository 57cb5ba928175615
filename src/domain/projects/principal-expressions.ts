/**
 * Reading the expressions of branch and tag protections that name users and groups — user
 * matches (`anyone`, `user(alice) group(devs) except user(bob)`) and review requirements
 * (`user(alice) group(devs):2`), docs/compatibility.md#projects-settings — in time linear in their length
 * (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input). They are stored settings, read on every push and merge check.
 *
 * The readers split exactly as the regular expressions
 * `[^\s()]+(?:\((?:\\.|[^)\\])*\))?` (user match tokens) and
 * `(?:(user|group)\(((?:\\.|[^)\\])*)\)|([^\s():]+))(?::(\d+))?` (review requirement items,
 * case-insensitive) did; those scan from every `(` to the end of the text when no `)` closes it,
 * quadratic in a text of `a(a(a(…`.
 */

/** Characters `.` does not match in a JavaScript regular expression without the `s` flag. */
const isLineBreak = (c: string) => c === '\n' || c === '\r' || c === '\u2028' || c === '\u2029';
const SPACE = /\s/;

/**
 * Finds the `)` closing parenthesized names of one text: inside, `\` escapes the next character
 * (not a line break). A scan that found no `)` remembers where it stopped — the end of the text
 * or an escape before a line break — and every later `(` before that point fails at once: its
 * scan would walk the same characters, in step, to the same stop.
 */
class Parentheses {
  private failedBefore = -1;

  constructor(private readonly text: string) {}

  /** Index after the `)` closing the `(` at `open`, or -1. */
  close(open: number): number {
    if (open < this.failedBefore) return -1;
    const text = this.text;
    let i = open + 1;
    while (i < text.length) {
      const c = text[i];
      if (c === ')') return i + 1;
      if (c === '\\') {
        if (i + 1 >= text.length || isLineBreak(text[i + 1])) break;
        i += 2;
      } else {
        i++;
      }
    }
    this.failedBefore = i;
    return -1;
  }
}

/**
 * The tokens of a user match expression: runs of characters other than whitespace and
 * parentheses, each with the parenthesized part that directly follows it when a `)` closes it
 * (`user(a\) b)` is one token).
 *
 * @example userMatchTokens('user(alice) except group(a b)') → ['user(alice)', 'except', 'group(a b)']
 */
export function userMatchTokens(expression: string): string[] {
  const tokens: string[] = [];
  const parentheses = new Parentheses(expression);
  const isTokenChar = (c: string | undefined) => c !== undefined && c !== '(' && c !== ')' && !SPACE.test(c);
  let i = 0;
  while (i < expression.length) {
    if (!isTokenChar(expression[i])) {
      i++;
      continue;
    }
    let end = i;
    while (isTokenChar(expression[end])) end++;
    if (expression[end] === '(') {
      const close = parentheses.close(end);
      if (close >= 0) end = close;
    }
    tokens.push(expression.slice(i, end));
    i = end;
  }
  return tokens;
}

/** One item of a review requirement, as written (names still escaped). */
export interface ReviewRequirementItem {
  /** `user` or `group` as written (any case) before a parenthesized name; undefined for a bare word. */
  kind: string | undefined;
  /** The name: inside the parentheses, or the bare word. */
  name: string;
  /** The digits after `:`, or undefined. */
  count: string | undefined;
}

/** Whether `text` has `word` (lower-case ASCII) at `at`, in any ASCII case. */
function asciiWordAt(text: string, at: number, word: string): boolean {
  if (at + word.length > text.length) return false;
  for (let i = 0; i < word.length; i++) {
    const c = text.charCodeAt(at + i);
    if ((c >= 65 && c <= 90 ? c + 32 : c) !== word.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * The items of a review requirement: `user(<name>)` or `group(<name>)` (closed by `)`, `\`
 * escaping), else a bare word of characters other than whitespace, parentheses and `:`; each
 * with an optional `:<digits>`.
 *
 * @example reviewRequirementItems('user(alice) group(devs):2 bob') →
 *   [{kind: 'user', name: 'alice'}, {kind: 'group', name: 'devs', count: '2'}, {name: 'bob'}]
 */
export function reviewRequirementItems(text: string): ReviewRequirementItem[] {
  const items: ReviewRequirementItem[] = [];
  const parentheses = new Parentheses(text);
  const isWordChar = (c: string | undefined) => c !== undefined && c !== '(' && c !== ')' && c !== ':' && !SPACE.test(c);
  const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
  let i = 0;
  while (i < text.length) {
    let item: ReviewRequirementItem | null = null;
    let end = i;
    for (const kind of ['user', 'group']) {
      if (!asciiWordAt(text, i, kind) || text[i + kind.length] !== '(') continue;
      const close = parentheses.close(i + kind.length);
      if (close < 0) continue;
      item = { kind: text.slice(i, i + kind.length), name: text.slice(i + kind.length + 1, close - 1), count: undefined };
      end = close;
    }
    if (!item) {
      while (isWordChar(text[end])) end++;
      if (end === i) {
        i++;
        continue;
      }
      item = { kind: undefined, name: text.slice(i, end), count: undefined };
    }
    if (text[end] === ':' && isDigit(text[end + 1])) {
      let digits = end + 1;
      while (isDigit(text[digits])) digits++;
      item.count = text.slice(end + 1, digits);
      end = digits;
    }
    items.push(item);
    i = end;
  }
  return items;
}
