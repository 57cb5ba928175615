/**
 * Server-side syntax highlighting with highlight.js: the language from the file name (else
 * plain text, no guessing on large files), the result cached by blob hash. highlight.js escapes
 * the source text and emits only `<span class="hljs-…">`, styled by site.css.
 */
import { createRequire } from 'node:module';
import type { HLJSApi } from 'highlight.js';
import { LRUCache } from 'lru-cache';

const require = createRequire(import.meta.url);
let hljsApi: HLJSApi | undefined;

/** highlight.js, loaded on first use (≈ 15 MB and a quarter second that start-up does not need). */
function hljs(): HLJSApi {
  hljsApi ??= require('highlight.js') as HLJSApi;
  return hljsApi;
}

const cache = new LRUCache<string, string>({ max: 5000, maxSize: 64 * 1024 * 1024, sizeCalculation: (html) => html.length + 1 });

/** Files above this size are not highlighted, only escaped (bytes of text). */
const MAX_HIGHLIGHT = 512 * 1024;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The highlight.js language of a file name (`app.ts` → `typescript`), or null. */
export function languageOf(fileName: string): string | null {
  const base = fileName.split('/').pop() ?? fileName;
  const ext = base.includes('.') ? base.slice(base.lastIndexOf('.') + 1) : base;
  const language = hljs().getLanguage(ext.toLowerCase()) ?? hljs().getLanguage(base.toLowerCase());
  if (!language) return null;
  return (
    hljs()
      .listLanguages()
      .find((name) => hljs().getLanguage(name) === language) ?? null
  );
}

/**
 * Highlighted HTML of a file's text, safe to insert into a `<pre><code>` as is. Spans may cross
 * line ends: a view with per-line markup (line anchors) numbers lines beside the block.
 *
 * @param blobHash the git blob hash (cache key; the same blob always highlights the same way).
 * @param fileName the path, for the language.
 * @param text the file content as text.
 */
export function highlightFile(blobHash: string, fileName: string, text: string): string {
  const language = languageOf(fileName);
  const key = `${blobHash}:${language ?? ''}`;
  let html = cache.get(key);
  if (html === undefined) {
    html = language && text.length <= MAX_HIGHLIGHT ? hljs().highlight(text, { language, ignoreIllegals: true }).value : escapeHtml(text);
    cache.set(key, html);
  }
  return html;
}
