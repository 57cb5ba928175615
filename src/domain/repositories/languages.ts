/**
 * The programming language of a file, by its name, as highlight.js names languages — one answer
 * for the file view's highlighting and the code index's language filter
 * (docs/compatibility.md#code-search).
 */
import { createRequire } from 'node:module';
import type { HLJSApi } from 'highlight.js';

const require = createRequire(import.meta.url);
let hljsApi: HLJSApi | undefined;

/** highlight.js, loaded on first use (≈ 15 MB and a quarter second that start-up does not need). */
export function highlighter(): HLJSApi {
  hljsApi ??= require('highlight.js') as HLJSApi;
  return hljsApi;
}

/** The highlight.js language of a file name (`app.ts` → `typescript`), or null. */
export function languageOf(fileName: string): string | null {
  const base = fileName.split('/').pop() ?? fileName;
  const ext = base.includes('.') ? base.slice(base.lastIndexOf('.') + 1) : base;
  const hljs = highlighter();
  const language = hljs.getLanguage(ext.toLowerCase()) ?? hljs.getLanguage(base.toLowerCase());
  if (!language) return null;
  return hljs.listLanguages().find((name) => hljs.getLanguage(name) === language) ?? null;
}
