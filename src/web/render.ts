/**
 * Rendering JSX to HTML: preact-render-to-string escapes every interpolated value; raw HTML is
 * only ever inserted through `dangerouslySetInnerHTML` with the output of the sanitizing helpers
 * of src/web/markdown.ts and src/web/highlight.ts.
 */
import type { VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';

/** Content-Security-Policy of every page: our own scripts and styles only, no inline script. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: https:",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Renders a full page (a `<Layout>` element) to an HTML document string. */
export function renderDocument(page: VNode): string {
  return `<!doctype html>${renderToString(page)}`;
}
