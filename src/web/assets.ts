/**
 * Static assets of the web UI (src/web/assets: one CSS file and the small client modules),
 * served at `/~assets/<name>.<hash>.<ext>` with a year-long immutable cache: the content hash
 * in the URL changes whenever the file does. Read once at start; `npm run build` copies the
 * directory next to the compiled code.
 *
 * Files of npm packages are served the same way ({@link VENDOR}: fuzzysort's ES module, KaTeX's
 * stylesheet, @simplewebauthn/browser's bundle) with KaTeX's fonts at `/~assets/fonts/<name>` (where its stylesheet points), and
 * mermaid's ES module build — loaded by the browser only on a page with a diagram, its chunks
 * importing each other by relative URL — at `/~assets/mermaid/<version>/…`, read from
 * node_modules when asked for.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** One asset in memory. */
interface Asset {
  url: string;
  body: Buffer;
  contentType: string;
}

const TYPES: Record<string, string> = {
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  woff2: 'font/woff2',
};
const directory = fileURLToPath(new URL('./assets/', import.meta.url));
const require = createRequire(import.meta.url);
/** The directory of an installed npm package (found as Node finds packages; some do not export their package.json). */
function packageDir(name: string): string {
  const found = (require.resolve.paths(name) ?? []).map((dir) => path.join(dir, name)).find((dir) => existsSync(path.join(dir, 'package.json')));
  if (!found) throw new Error(`Package ${name} is not installed`);
  return found;
}

/** Assets taken from npm packages: asset name → file under node_modules. */
const VENDOR: Record<string, string> = {
  'fuzzysort.js': path.join(packageDir('fuzzysort'), 'fuzzysort.min.js'),
  'katex.css': path.join(packageDir('katex'), 'dist', 'katex.min.css'),
  // sets globalThis.SimpleWebAuthnBrowser when imported (src/web/assets/two-factor.js)
  'webauthn.js': path.join(packageDir('@simplewebauthn/browser'), 'dist', 'bundle', 'index.umd.min.js'),
};

const byName = new Map<string, Asset>();
const byUrl = new Map<string, Asset>();
const files = [...readdirSync(directory).map((name) => [name, directory + name]), ...Object.entries(VENDOR)];
for (const [name, file] of files) {
  const dot = name.lastIndexOf('.');
  const ext = name.slice(dot + 1);
  if (!TYPES[ext]) continue;
  const body = readFileSync(file);
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  const asset = { url: `/~assets/${name.slice(0, dot)}.${hash}.${ext}`, body, contentType: TYPES[ext] };
  byName.set(name, asset);
  byUrl.set(asset.url, asset);
}
const fontDir = path.join(packageDir('katex'), 'dist', 'fonts');
for (const name of readdirSync(fontDir).filter((n) => n.endsWith('.woff2'))) {
  byUrl.set(`/~assets/fonts/${name}`, { url: `/~assets/fonts/${name}`, body: readFileSync(path.join(fontDir, name)), contentType: TYPES.woff2 });
}

const mermaidDir = path.join(packageDir('mermaid'), 'dist');
const mermaidVersion = (JSON.parse(readFileSync(path.join(mermaidDir, '..', 'package.json'), 'utf8')) as { version: string }).version;
const MERMAID_PREFIX = `/~assets/mermaid/${mermaidVersion}/`;
/** Files of mermaid's ES module build: the entry and its chunks. */
const MERMAID_FILE = /^(?:mermaid\.esm\.min\.mjs|chunks\/mermaid\.esm\.min\/[\w.-]+\.mjs)$/;

/** The URL of mermaid's ES module build (its chunks beside it). */
export const MERMAID_URL = `${MERMAID_PREFIX}mermaid.esm.min.mjs`;

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
  const asset = byUrl.get(url);
  if (asset || !url.startsWith(MERMAID_PREFIX)) return asset;
  const name = url.slice(MERMAID_PREFIX.length);
  const file = path.join(mermaidDir, name);
  if (!MERMAID_FILE.test(name) || !existsSync(file)) return undefined;
  return { url, body: readFileSync(file), contentType: TYPES.mjs };
}

/**
 * Bytes shipped to browsers, gzip-compressed, per kind: every client module (`*.js`) and the
 * stylesheet(s) (`*.css`). The JS budget is 60 KB gzipped in total: the pages are server-rendered and must stay light
 * (mermaid, loaded only by pages with a diagram, is not counted).
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
