/**
 * How user content (raw repository files, build artifacts) is served, by the API and by the web
 * pages alike (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input): never as active content of our origin. Safe types are shown
 * inline; every other type is an attachment; always with `X-Content-Type-Options: nosniff`, a
 * sandboxing Content-Security-Policy and `Cross-Origin-Resource-Policy: same-origin`.
 */
import contentDisposition from 'content-disposition';

/** Types a browser would run as active content of our origin (documents, scripts, styles). */
const ACTIVE =
  /^(text\/html|application\/xhtml\+xml|image\/svg\+xml|text\/xml|application\/xml|[a-z]+\/[-.\w]+\+xml|text\/javascript|application\/(x-)?javascript|text\/css|application\/wasm|text\/xsl|application\/xslt\+xml)$/;
/** Passive types a browser shows without running anything. */
const PASSIVE = /^(image\/(png|jpeg|gif|webp|avif|bmp|x-icon|vnd\.microsoft\.icon)|audio\/[-.\w]+|video\/[-.\w]+|application\/json)$/;

/** The Content-Security-Policy of user content: a sandbox with no script, frames or plugins. */
export const USER_CONTENT_CSP = "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'";

/** The media type without parameters, lower-case: `Text/HTML; charset=utf-8` → `text/html`. */
const essence = (type: string) => type.split(';')[0].trim().toLowerCase();

/** Whether a media type is active content (HTML, SVG, XML, JavaScript, CSS, WebAssembly, XSLT). */
export function isActiveType(type: string): boolean {
  return ACTIVE.test(essence(type));
}

/**
 * Whether a media type is safe to show inline: passive images, audio, video, JSON, or text that
 * is not active (`text/plain`, `text/markdown`, `text/csv`, …).
 */
export function isSafeType(type: string): boolean {
  const base = essence(type);
  return !ACTIVE.test(base) && (PASSIVE.test(base) || base.startsWith('text/'));
}

/**
 * The response headers of a user file sent as `contentType` (lower-case names):
 * `content-type`, `content-disposition` (`inline` for a safe type, see {@link isSafeType}, else
 * `attachment`; with the file name), `x-content-type-options: nosniff`,
 * `content-security-policy` ({@link USER_CONTENT_CSP}) and `cross-origin-resource-policy:
 * same-origin`.
 *
 * @example userContentHeaders('report.html', 'text/html')['content-disposition'] === 'attachment; filename="report.html"'
 */
export function userContentHeaders(fileName: string, contentType: string): Record<string, string> {
  return {
    'content-type': contentType,
    'content-disposition': contentDisposition(fileName || 'file', { type: isSafeType(contentType) ? 'inline' : 'attachment' }),
    'x-content-type-options': 'nosniff',
    'content-security-policy': USER_CONTENT_CSP,
    'cross-origin-resource-policy': 'same-origin',
  };
}
