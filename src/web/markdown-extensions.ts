/**
 * What src/web/markdown.ts adds to `marked`'s GitHub-flavoured Markdown (tables and task lists
 * are marked's own), written with marked's extension API as GitHub writes them:
 *
 * - Math, rendered on the server by KaTeX as MathML (no inline styles, which the pages' CSP
 *   refuses; KaTeX's stylesheet and fonts are served as assets): `$…$` inline (no space inside
 *   the dollars, no digit after the closing one), `$$…$$` displayed, and ` ```math ` blocks.
 *   A formula KaTeX cannot read is shown as its source.
 * - Mermaid: a ` ```mermaid ` block becomes `<pre class="mermaid">` holding its source, drawn in
 *   the browser by mermaid.js (loaded only by pages that have one, components/markdown.tsx).
 * - Footnotes: `[^label]` references numbered in order of appearance, linked to their
 *   `[^label]: text` definitions (a definition's further lines indented), which are listed at
 *   the end with a link back; ids carry the `user-content-` prefix so that no text can clobber
 *   the page's own ids. A reference without definition stays text.
 */
import katex from 'katex';
import type { MarkedExtension, Tokens } from 'marked';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** An inline extension's `start`: where `marker` first occurs in the source, or undefined. */
const startAt =
  (marker: string) =>
  (src: string): number | undefined => {
    const at = src.indexOf(marker);
    return at < 0 ? undefined : at;
  };

/** Text escaped for HTML content and attribute values. */
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ENTITIES[c]);

/** A formula as KaTeX's MathML; its source (escaped, in `<code>`) when KaTeX refuses it. */
function renderMath(tex: string, display: boolean): string {
  try {
    const html = katex.renderToString(tex, { output: 'mathml', displayMode: display, throwOnError: true, trust: false, maxExpand: 1000 });
    // a wide formula scrolls: from the keyboard too
    return display ? `<div class="math-display" tabindex="0">${html}</div>` : html;
  } catch {
    return `<code class="math-error">${escapeHtml(tex)}</code>`;
  }
}

type MathToken = Tokens.Generic & { text: string; display: boolean };

/** Math: `$$…$$` blocks, `$…$` and `$$…$$` inline, ` ```math ` code blocks; mermaid code blocks. */
export const mathAndDiagrams: MarkedExtension = {
  extensions: [
    {
      name: 'blockMath',
      level: 'block',
      tokenizer(src) {
        const match = /^ {0,3}\$\$([\s\S]+?)\$\$[ \t]*(?:\n+|$)/.exec(src);
        return match ? { type: 'blockMath', raw: match[0], text: match[1].trim(), display: true } : undefined;
      },
      renderer: (token) => renderMath((token as MathToken).text, true),
    },
    {
      name: 'inlineMath',
      level: 'inline',
      start: startAt('$'),
      tokenizer(src) {
        const display = /^\$\$(?!\$)([^\n]+?)\$\$/.exec(src);
        if (display) return { type: 'inlineMath', raw: display[0], text: display[1].trim(), display: true };
        const inline = /^\$(?![\s$])((?:\\.|[^\\\n$])+?)(?<!\s)\$(?!\d)/.exec(src);
        return inline ? { type: 'inlineMath', raw: inline[0], text: inline[1], display: false } : undefined;
      },
      renderer: (token) => renderMath((token as MathToken).text, (token as MathToken).display),
    },
  ],
  renderer: {
    code(token) {
      const language = (token.lang ?? '').trim().split(/\s/, 1)[0];
      if (language === 'math') return renderMath(token.text, true);
      if (language === 'mermaid') return `<pre class="mermaid">${escapeHtml(token.text)}</pre>\n`;
      return false;
    },
  },
};

type DefinitionToken = Tokens.Generic & { label: string; tokens: Tokens.Generic[] };

/** The footnotes of the text being rendered: label → number, in order of first reference; null outside a rendering. */
let numbers: Map<string, number> | null = null;
/** The labels the text being rendered defines. */
let defined: Set<string> = new Set();
/** The definitions of the text being rendered: label → rendered content. */
let definitions: Map<string, string> = new Map();

/** A label as the part of an id after `user-content-fn-`. */
const idOf = (label: string) => encodeURIComponent(label.toLowerCase()).replace(/[^\w-]/g, '_');

/** Footnote references and definitions (see the module comment); wrap parsing in {@link withFootnotes}. */
export const footnotes: MarkedExtension = {
  extensions: [
    {
      name: 'footnoteDefinition',
      level: 'block',
      tokenizer(src) {
        const match = /^ {0,3}\[\^([^\]\s]+)\]:[ \t]*([^\n]*(?:\n(?:[ \t]+[^\n]*)?)*?)(?:\n(?![ \t])|$)/.exec(src);
        if (!match) return undefined;
        const text = match[2].replace(/\n[ \t]+/g, '\n').trim();
        return { type: 'footnoteDefinition', raw: match[0], label: match[1].toLowerCase(), tokens: this.lexer.inlineTokens(text) };
      },
      renderer(token) {
        const { label, tokens } = token as DefinitionToken;
        if (!definitions.has(label)) definitions.set(label, this.parser.parseInline(tokens));
        return '';
      },
    },
    {
      name: 'footnoteReference',
      level: 'inline',
      start: startAt('[^'),
      tokenizer(src) {
        const match = /^\[\^([^\]\s]+)\]/.exec(src);
        return match ? { type: 'footnoteReference', raw: match[0], label: match[1].toLowerCase() } : undefined;
      },
      renderer(token) {
        const { label, raw } = token as Tokens.Generic & { label: string };
        if (!numbers || !defined.has(label)) return escapeHtml(raw);
        const n = numbers.get(label) ?? numbers.size + 1;
        numbers.set(label, n);
        return `<sup><a href="#user-content-fn-${idOf(label)}" id="user-content-fnref-${idOf(label)}">${n}</a></sup>`;
      },
    },
  ],
};

/**
 * Runs `parse` (marked's parser over `tokens`, one text's tokens) collecting its footnotes, and
 * appends the list of those referenced, in order. A reference to a label no top-level definition
 * names stays text. Not reentrant: parsing is synchronous.
 */
export function withFootnotes(tokens: readonly { type: string }[], parse: () => string): string {
  numbers = new Map();
  defined = new Set(tokens.filter((t) => t.type === 'footnoteDefinition').map((t) => (t as DefinitionToken).label));
  definitions = new Map();
  try {
    const html = parse();
    if (numbers.size === 0) return html;
    const items = [...numbers].map(
      ([label, n]) =>
        `<li id="user-content-fn-${idOf(label)}"><p>${definitions.get(label) ?? ''} <a href="#user-content-fnref-${idOf(label)}" aria-label="Back to reference ${n}">↩</a></p></li>`,
    );
    return `${html}<section class="footnotes"><ol>${items.join('')}</ol></section>`;
  } finally {
    numbers = null;
    defined = new Set();
    definitions = new Map();
  }
}
