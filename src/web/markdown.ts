/**
 * Markdown to safe HTML (README, descriptions, comments): `marked` (GitHub-flavoured: tables,
 * task lists) renders, with math (KaTeX), mermaid blocks and footnotes added
 * (markdown-extensions.ts); `sanitize-html` keeps an allow-list of tags and attributes (no
 * script, no event handlers, no `javascript:` URLs, no style; KaTeX's MathML elements and
 * attributes). Results are cached by the text's digest.
 *
 * References and mentions are linked in text outside code spans, code blocks, links and raw
 * HTML, with the domain's grammar (src/domain/issues/references.ts, src/domain/mentions.ts):
 * `#12`, `issue #12` and `group/app#12` link to issues, `pr #5` / `pull request #5` to pull
 * requests and `build #3` to builds (`/<project>/~issues/12`, `…/~pulls/5`, `…/~builds/3`); a
 * reference without project path needs the project of the text. `@name` becomes
 * `<span class="mention">` (there is no user page to link to).
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { LRUCache } from 'lru-cache';
import { Marked, type Token, type Tokens } from 'marked';
import type SanitizeHtml from 'sanitize-html';
import { kindOf, scanReferences } from '../domain/issues/index.js';
import { MENTION, withoutTrailingDots } from '../domain/mentions.js';
import { escapeHtml, footnotes, mathAndDiagrams, withFootnotes } from './markdown-extensions.js';

/** Where the references of a text point: its project's path (null: only `path#N` references link). */
export interface MarkdownContext {
  projectPath: string | null;
  /**
   * For a file of a repository (a README): the URL directories relative links and images resolve
   * against, e.g. `{ files: '/app/~files/main/docs/', raw: '/app/~raw/main/docs/' }` — as a
   * repository's own Markdown means them. Without it relative URLs are left as written.
   */
  base?: { files: string; raw: string };
}

/** A URL with a scheme (`https:`, `mailto:`), protocol-relative, absolute or fragment/query only. */
const NOT_RELATIVE = /^(?:[a-z][a-z0-9+.-]*:|\/|#|\?)/i;

/** Resolves a relative URL against a base directory path (`docs/a.md` against `/app/~files/main/` → `/app/~files/main/docs/a.md`). */
function resolveAgainst(href: string, base: string): string {
  const url = new URL(href, `http://base${base}`);
  return `${url.pathname}${url.search}${url.hash}`;
}

/** A text token marked for linking by {@link markLinkableText}. */
type LinkableText = Tokens.Text & { linkIn?: MarkdownContext };

const SECTIONS = { issue: '~issues', pullRequest: '~pulls', build: '~builds' } as const;

/** Links references and mentions in HTML-escaped plain text. */
function linkReferences(html: string, context: MarkdownContext): string {
  const parts: string[] = [];
  let copied = 0;
  for (const match of scanReferences(html)) {
    const path = match.project ?? context.projectPath;
    if (!path) continue;
    const href = `/${path}/${SECTIONS[kindOf(match.keyword)]}/${match.number}`;
    parts.push(html.slice(copied, match.start), `<a class="reference" href="${escapeHtml(href)}">${html.slice(match.start, match.end)}</a>`);
    copied = match.end;
  }
  parts.push(html.slice(copied));
  const referenced = parts.join('');
  return referenced.includes('@')
    ? referenced.replace(MENTION, (whole: string, name: string) => {
        const login = withoutTrailingDots(name);
        const at = whole.indexOf('@');
        return `${whole.slice(0, at)}<span class="mention">@${login}</span>${name.slice(login.length)}`;
      })
    : referenced;
}

/**
 * Marks the text tokens outside links, images and raw `<a>`/`<code>` elements for linking (code
 * spans, code blocks and raw HTML are other token types), as the domain's `markdownText` reads.
 */
function markLinkableText(tokens: Token[], context: MarkdownContext): void {
  const skipped = new Set<Token>();
  let inRawElement = false;
  marked.walkTokens(tokens, (token) => {
    if (token.type === 'html') {
      if (/^<(a|code)(?=[\s>/])/i.test(token.raw)) inRawElement = true;
      else if (/^<\/(a|code)\b/i.test(token.raw)) inRawElement = false;
      return;
    }
    if (inRawElement) return;
    if (skipped.has(token)) {
      const children = (token as { tokens?: Token[] }).tokens;
      children?.forEach((child) => skipped.add(child));
      return;
    }
    if (token.type === 'link' || token.type === 'image') {
      (token.tokens ?? []).forEach((child) => skipped.add(child));
      if (context.base && !NOT_RELATIVE.test(token.href))
        token.href = resolveAgainst(token.href, token.type === 'link' ? context.base.files : context.base.raw);
    } else if (token.type === 'text' && !(token as Tokens.Text).tokens && !(token as Tokens.Text).escaped) (token as LinkableText).linkIn = context;
  });
}

const marked = new Marked(
  { gfm: true, breaks: false, async: false },
  {
    renderer: {
      text(token) {
        const { linkIn } = token as LinkableText;
        if (!linkIn || token.type !== 'text') return false;
        return linkReferences(escapeHtml(token.text), linkIn);
      },
    },
  },
  mathAndDiagrams,
  footnotes,
);

const require = createRequire(import.meta.url);
let sanitizer: ((html: string) => string) | undefined;

/**
 * The allow-list sanitizer, built on first use: sanitize-html (with its HTML and CSS parsers)
 * is large and start-up does not need it.
 */
function sanitize(html: string): string {
  sanitizer ??= allowListSanitizer(require('sanitize-html') as typeof SanitizeHtml);
  return sanitizer(html);
}

/** The MathML elements of KaTeX's output (`output: 'mathml'`) and the attributes it writes on them. */
const MATHML_TAGS = [
  'math',
  'semantics',
  'annotation',
  'mrow',
  'mi',
  'mn',
  'mo',
  'ms',
  'mtext',
  'mspace',
  'mfrac',
  'msqrt',
  'mroot',
  'msup',
  'msub',
  'msubsup',
  'mover',
  'munder',
  'munderover',
  'mtable',
  'mtr',
  'mtd',
  'mstyle',
  'mpadded',
  'mphantom',
  'menclose',
  'merror',
  'mmultiscripts',
  'mprescripts',
  'none',
];
const MATHML_ATTRIBUTES = [
  'xmlns',
  'display',
  'displaystyle',
  'scriptlevel',
  'mathvariant',
  'mathcolor',
  'mathbackground',
  'encoding',
  'stretchy',
  'fence',
  'separator',
  'accent',
  'accentunder',
  'lspace',
  'rspace',
  'minsize',
  'maxsize',
  'movablelimits',
  'largeop',
  'symmetric',
  'linethickness',
  'width',
  'height',
  'depth',
  'voffset',
  'notation',
  'columnalign',
  'columnspacing',
  'columnlines',
  'rowspacing',
  'rowlines',
  'rowalign',
  'frame',
  'framespacing',
  'side',
];

/** Footnote ids (markdown-extensions.ts) keep their prefix; any other id is dropped. */
const keepUserContentId = (attribs: Record<string, string>) => {
  const { id, ...rest } = attribs;
  return id?.startsWith('user-content-') ? { ...rest, id } : rest;
};

function allowListSanitizer(sanitizeHtml: typeof SanitizeHtml): (html: string) => string {
  const options: SanitizeHtml.IOptions = {
    allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'del', 'ins', 'sup', 'sub', 'details', 'summary', 'input', 'section', ...MATHML_TAGS],
    allowedAttributes: {
      ...Object.fromEntries(MATHML_TAGS.map((tag) => [tag, MATHML_ATTRIBUTES])),
      a: ['href', 'title', 'name', 'rel', 'id', 'aria-label'],
      li: ['id'],
      div: ['tabindex'],
      img: ['src', 'alt', 'title', 'width', 'height'],
      code: ['class'],
      th: ['align'],
      td: ['align'],
      input: ['type', 'checked', 'disabled', 'aria-label'],
      ol: ['start'],
    },
    allowedSchemes: ['http', 'https', 'mailto'],
    allowedSchemesByTag: { img: ['http', 'https', 'data'] },
    allowedClasses: {
      code: [/^language-[\w-]+$/, 'math-error'],
      a: ['reference'],
      span: ['mention', 'katex'],
      div: ['math-display'],
      pre: ['mermaid'],
      section: ['footnotes'],
    },
    transformTags: {
      a: (tagName, attribs) => ({ tagName, attribs: { ...keepUserContentId(attribs), rel: 'nofollow noopener' } }),
      li: (tagName, attribs) => ({ tagName, attribs: keepUserContentId(attribs) }),
      // only a displayed formula is focusable, for scrolling (markdown-extensions.ts)
      div: (tagName, attribs) => {
        const { tabindex, ...rest } = attribs;
        return { tagName, attribs: tabindex !== undefined && rest.class === 'math-display' ? { ...rest, tabindex: '0' } : rest };
      },
      // a task list item's checkbox: read-only, named by its state for screen readers
      input: (tagName, attribs) => ({
        tagName,
        attribs: attribs.type === 'checkbox' ? { ...attribs, disabled: '', 'aria-label': 'checked' in attribs ? 'Done' : 'Not done' } : {},
      }),
    },
  };
  return (html) => sanitizeHtml(html, options);
}

const cache = new LRUCache<string, string>({ max: 2000, maxSize: 8 * 1024 * 1024, sizeCalculation: (html) => html.length + 1 });

/**
 * Sanitized HTML of a text: its Markdown rendering, or the text as preformatted plain text when
 * `marked` cannot read it — its lexer and parser recurse once per nesting level, so a text nested
 * thousands of levels deep (`>>>>…`) overflows the stack.
 */
function renderTokens(text: string, context: MarkdownContext): string {
  try {
    const tokens = marked.lexer(text);
    markLinkableText(tokens, context);
    return sanitize(withFootnotes(tokens, () => marked.parser(tokens)));
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return `<pre>${escapeHtml(text)}</pre>`;
  }
}

/**
 * Renders Markdown to sanitized HTML, safe to insert into a page as is.
 * @param text Markdown source (any size; the caller limits what it reads).
 * @param context the project references without path point to, and the base of relative URLs (default: none).
 * @returns HTML with only allow-listed tags, attributes and URL schemes.
 */
export function renderMarkdown(text: string, context: MarkdownContext = { projectPath: null }): string {
  const key = createHash('sha256')
    .update(context.projectPath ?? '')
    .update('\0')
    .update(context.base?.files ?? '')
    .update('\0')
    .update(context.base?.raw ?? '')
    .update('\0')
    .update(text)
    .digest('base64');
  let html = cache.get(key);
  if (html === undefined) {
    html = renderTokens(text, context);
    cache.set(key, html);
  }
  return html;
}
