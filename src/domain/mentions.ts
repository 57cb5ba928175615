import { marked, type Token } from 'marked';

/** Tokens whose text is never searched for mentions: code and links (docs/compatibility.md#mentions-and-notifications). */
const SKIPPED = new Set(['code', 'codespan', 'link', 'html', 'image']);
/**
 * A `@name` mention and the character before it (group 1: the name; see {@link parseMentions}).
 * Linear: a match needs a character that is not `\w@/.-` then `@`, and the name's run never fails.
 */
export const MENTION = /(?:^|[^\w@/.-])@(\w[\w.-]*)/g;

/**
 * A mentioned name without its trailing dots (`alice..` → `alice`), read backwards: `/\.+$/`
 * would re-read a long run of dots from each of them, in quadratic time.
 */
export function withoutTrailingDots(name: string): string {
  let end = name.length;
  while (end > 0 && name[end - 1] === '.') end--;
  return name.slice(0, end);
}

function collectText(tokens: readonly Token[], out: string[]): void {
  for (const token of tokens) {
    if (SKIPPED.has(token.type)) {
      out.push(' ');
      continue;
    }
    const nested = (token as { tokens?: Token[] }).tokens;
    const items = (token as { items?: Token[] }).items;
    if (nested && nested.length > 0) collectText(nested, out);
    else if (items && items.length > 0) collectText(items, out);
    else if (token.type === 'text' || token.type === 'escape') out.push((token as { text: string }).text);
    else out.push(' ');
    if (token.type === 'table') {
      const table = token as unknown as { header: { tokens: Token[] }[]; rows: { tokens: Token[] }[][] };
      for (const cell of [...table.header, ...table.rows.flat()]) collectText(cell.tokens, out);
    }
    out.push(' ');
  }
}

/**
 * Replaces raw HTML elements (`<a …>…</a>`) of the given names, content included, by one space
 * each, in linear time: after an opening tag, the next closing tag of that name ends the element;
 * without one, the rest is kept.
 */
function blankElements(text: string, names: readonly string[]): string {
  let result = text;
  for (const name of names) {
    if (!result.includes('<')) break;
    // `[^<>]*` stops at the next `<`, so scans never overlap and the whole pass stays linear.
    const opener = new RegExp(`<${name}(?=[\\s>/])[^<>]*>`, 'gi');
    const closer = new RegExp(`</${name}[^<>]*>`, 'gi');
    const kept: string[] = [];
    let from = 0;
    for (let open = opener.exec(result); open; open = opener.exec(result)) {
      closer.lastIndex = opener.lastIndex;
      if (!closer.exec(result)) break;
      kept.push(result.slice(from, open.index), ' ');
      from = opener.lastIndex = closer.lastIndex;
    }
    if (from > 0) result = kept.join('') + result.slice(from);
  }
  return result;
}

/**
 * The tokens of a markdown text, or null when `marked` cannot read it: its parser recurses once
 * per nesting level, so a text nested thousands of levels deep (`>>>>…`) overflows the stack.
 */
function lexMarkdown(markdown: string): Token[] | null {
  try {
    return marked.lexer(markdown);
  } catch (error) {
    if (error instanceof RangeError) return null;
    throw error;
  }
}

/**
 * The searchable text of a markdown document: its text with code spans, code blocks, links,
 * images, raw HTML and the content of raw `<a>` and `<code>` elements left out (each replaced by
 * a space), as `#` references see it (docs/compatibility.md#fixed-issue-references). A text `marked` cannot
 * read (see {@link lexMarkdown}) is searched as it is.
 */
export function markdownText(markdown: string): string {
  const blanked = blankElements(markdown, ['a', 'code']);
  const tokens = lexMarkdown(blanked);
  if (tokens === null) return blanked;
  const parts: string[] = [];
  collectText(tokens, parts);
  return parts.join('');
}

/**
 * The login names mentioned in a markdown text, lower-cased and without duplicates:
 * `@name` preceded by the start of text, whitespace or punctuation, outside code spans, code
 * blocks, links and raw HTML. Trailing dots are not part of a name (`@alice.` → `alice`), so
 * mentions followed by punctuation work; `a@b.com` is not a mention.
 *
 * Implements the parsing of docs/compatibility.md#mentions-and-notifications (MentionParser), with the markdown
 * read by `marked` instead of rendered HTML (a text it cannot read is searched as it is).
 * @example parseMentions('thanks @Bob, see `@carol`') → ['bob']
 */
export function parseMentions(markdown: string | null | undefined): string[] {
  if (!markdown || !markdown.includes('@')) return [];
  const tokens = lexMarkdown(markdown);
  const parts: string[] = [];
  if (tokens === null) parts.push(markdown);
  else collectText(tokens, parts);
  const text = parts.join('');
  const names = new Set<string>();
  for (const match of text.matchAll(MENTION)) names.add(withoutTrailingDots(match[1]).toLowerCase());
  names.delete('');
  return [...names];
}
