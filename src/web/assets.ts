/**
 * Static assets of the web UI (src/web/assets: one CSS file and the small client modules),
 * served at `/~assets/<name>.<hash>.<ext>` with a year-long immutable cache: the content hash
 * in the URL changes whenever the file does. Read once at start; `npm run build` copies the
 * directory next to the compiled code.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** One asset in memory. */
interface Asset {
  url: string;
  body: Buffer;
  contentType: string;
}

const TYPES: Record<string, string> = { css: 'text/css; charset=utf-8', js: 'text/javascript; charset=utf-8' };
const directory = fileURLToPath(new URL('./assets/', import.meta.url));

const byName = new Map<string, Asset>();
const byUrl = new Map<string, Asset>();
for (const name of readdirSync(directory)) {
  const dot = name.lastIndexOf('.');
  const ext = name.slice(dot + 1);
  if (!TYPES[ext]) continue;
  const body = readFileSync(directory + name);
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  const asset = { url: `/~assets/${name.slice(0, dot)}.${hash}.${ext}`, body, contentType: TYPES[ext] };
  byName.set(name, asset);
  byUrl.set(asset.url, asset);
}

/**
 * The hashed URL of an asset by file name (`site.css`, `copy.js`).
 * @throws Error for a name that is not in src/web/assets (a programming error).
 */
export function assetUrl(name: string): string {
  const asset = byName.get(name);
  if (!asset) throw new Error(`No asset ${name} in src/web/assets`);
  return asset.url;
}

/** The asset served at a URL path, or undefined. */
export function assetAt(url: string): Asset | undefined {
  return byUrl.get(url);
}

/**
 * Bytes shipped to browsers, gzip-compressed, per kind: every client module (`*.js`) and the
 * stylesheet(s) (`*.css`). The JS budget is 60 KB gzipped in total: the pages are server-rendered and must stay light.
 */
export function shippedBytes(): { js: number; css: number } {
  const total = { js: 0, css: 0 };
  for (const [name, asset] of byName) {
    const size = gzipSync(asset.body).length;
    if (name.endsWith('.js')) total.js += size;
    else if (name.endsWith('.css')) total.css += size;
  }
  return total;
}
