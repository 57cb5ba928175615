/**
 * File-extension → media type for artifact infos and downloads (docs/compatibility.md#builds-artifacts:
 * "mediaType is probed from the OS/extension, falling back to application/octet-stream").
 */

const TYPES: Record<string, string> = {
  txt: 'text/plain',
  log: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  js: 'text/javascript',
  mjs: 'text/javascript',
  json: 'application/json',
  xml: 'application/xml',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  pdf: 'application/pdf',
  zip: 'application/zip',
  gz: 'application/gzip',
  tgz: 'application/gzip',
  tar: 'application/x-tar',
  bz2: 'application/x-bzip2',
  xz: 'application/x-xz',
  '7z': 'application/x-7z-compressed',
  jar: 'application/java-archive',
  war: 'application/java-archive',
  deb: 'application/vnd.debian.binary-package',
  rpm: 'application/x-rpm',
  wasm: 'application/wasm',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  svg: 'image/svg+xml',
  webp: 'image/webp',
  ico: 'image/vnd.microsoft.icon',
  mp4: 'video/mp4',
  webm: 'video/webm',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
};

/** Fallback media type. */
export const OCTET_STREAM = 'application/octet-stream';

/**
 * Media type for a file name by its extension (case-insensitive).
 *
 * @example mediaTypeOf('dist/app.tar.gz') === 'application/gzip'
 * @returns the type, or `application/octet-stream` for unknown extensions.
 */
export function mediaTypeOf(fileName: string): string {
  const base = fileName.slice(fileName.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  if (dot <= 0) return OCTET_STREAM;
  return TYPES[base.slice(dot + 1).toLowerCase()] ?? OCTET_STREAM;
}
