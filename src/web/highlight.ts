/**
 * Server-side syntax highlighting with highlight.js: the language from the file name (else
 * plain text, no guessing on large files), the result cached by blob hash. highlight.js escapes
 * the source text and emits only `<span class="hljs-…">`, styled by site.css.
 */
import { LRUCache } from 'lru-cache';
import { highlighter as hljs, languageOf } from '../domain/repositories/index.js';

export { languageOf };

const cache = new LRUCache<string, string>({ max: 5000, maxSize: 16 * 1024 * 1024, sizeCalculation: (html) => html.length + 1 });

/** Files above this size are not highlighted, only escaped (bytes of text). */
const MAX_HIGHLIGHT = 512 * 1024;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

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
