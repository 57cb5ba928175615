/**
 * The HTML of a diff's lines: each line syntax-highlighted as part of its whole blob (so a block
 * comment or a multi-line string opened lines before a hunk still colours the hunk right), and
 * paired deleted/added lines marked with their intra-line changes (`<del>`/`<ins>`, computed by
 * the `diff` package's `diffWordsWithSpace`). Blobs come from `diffBlobTexts` (at most
 * `MAX_DIFF_BLOB_BYTES`, 256 KiB; a larger, binary or unread blob's lines are only escaped).
 * Highlighted lines are kept by blob id and file language, a file's line HTML by its two blobs,
 * both in bounded LRU caches.
 */
import { diffWordsWithSpace } from 'diff';
import { LRUCache } from 'lru-cache';
import type { DiffLine, FileDiff } from '../../domain/repositories/index.js';
import { highlightFile, languageOf } from '../highlight.js';

/** Highlighted lines of a blob by `<blob id>:<language>`. */
const blobLines = new LRUCache<string, string[]>({
  max: 4000,
  maxSize: 32 * 1024 * 1024,
  sizeCalculation: (lines) => lines.reduce((n, line) => n + 16 + line.length * 2, 64),
});

/** A file's line HTML ({@link fileLineHtml}) by its blobs, path and hunks' shape. */
const fileHtml = new LRUCache<string, string[][]>({
  max: 4000,
  maxSize: 16 * 1024 * 1024,
  sizeCalculation: (hunks) => hunks.reduce((n, lines) => lines.reduce((m, line) => m + 16 + line.length * 2, n), 64),
});

/** {@link languageOf} by file name (it scans highlight.js's languages): every file of every diff asks. */
const languages = new LRUCache<string, { language: string | null }>({ max: 2000 });

/** The highlight.js language of a path, remembered by its file name. */
function languageOfPath(path: string): string | null {
  const name = path.slice(path.lastIndexOf('/') + 1);
  let entry = languages.get(name);
  if (entry === undefined) {
    entry = { language: languageOf(name) };
    languages.set(name, entry);
  }
  return entry.language;
}

/** Lines longer than this (UTF-16 units) get no intra-line marks: a word diff of them costs more than it tells. */
const MAX_WORD_DIFF_LINE = 1000;

/** Escapes text for HTML (the same entities highlight.js writes). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const MARKUP = /<span class="[^"]*">|<\/span>|\n/g;

/**
 * Splits highlighted HTML (highlight.js output: text and `<span class>` only) into lines, each
 * with its spans closed at the end and reopened on the next line, so every line stands alone.
 */
export function splitHighlightedLines(html: string): string[] {
  const lines: string[] = [];
  const open: string[] = [];
  let line = '';
  let last = 0;
  for (const match of html.matchAll(MARKUP)) {
    line += html.slice(last, match.index);
    last = match.index + match[0].length;
    if (match[0] === '\n') {
      lines.push(line + '</span>'.repeat(open.length));
      line = open.join('');
    } else if (match[0] === '</span>') {
      open.pop();
      line += match[0];
    } else {
      open.push(match[0]);
      line += match[0];
    }
  }
  lines.push(line + html.slice(last));
  return lines;
}

/**
 * The highlighted lines of a blob (1-based line n at index n − 1); a final newline ends the last
 * line rather than starting an empty one.
 *
 * @param blobId the blob's id (cache key).
 * @param path the file's path (its language).
 * @param text the blob's text.
 */
export function highlightedBlobLines(blobId: string, path: string, text: string): string[] {
  const key = `${blobId}:${languageOfPath(path) ?? ''}`;
  let lines = blobLines.get(key);
  if (lines === undefined) {
    lines = splitHighlightedLines(highlightFile(blobId, path, text));
    if (text.endsWith('\n')) lines.pop();
    blobLines.set(key, lines);
  }
  return lines;
}

/**
 * The highlighted lines of a side of a file ({@link highlightedBlobLines}), or null when the
 * side is absent or its blob was not read (over the size cap, binary).
 */
export function blobLineHtml(blob: string | null, path: string, texts: ReadonlyMap<string, string | null>): string[] | null {
  const text = blob === null ? null : (texts.get(blob) ?? null);
  return blob !== null && text !== null ? highlightedBlobLines(blob, path, text) : null;
}

/**
 * Wraps the characters of `ranges` (offsets in the line's text, end exclusive, ascending) of a
 * line's HTML in `<tag>`: the mark is closed before every tag of the HTML and reopened after it,
 * so marks and highlight spans nest. An entity counts as one character.
 */
export function markRanges(html: string, ranges: readonly (readonly [number, number])[], tag: 'del' | 'ins'): string {
  if (ranges.length === 0) return html;
  let out = '';
  let pos = 0;
  let r = 0;
  let open = false;
  for (let i = 0; i < html.length;) {
    if (html[i] === '<') {
      const end = html.indexOf('>', i) + 1;
      if (open) out += `</${tag}>`;
      open = false;
      out += html.slice(i, end);
      i = end;
      continue;
    }
    while (r < ranges.length && pos >= ranges[r][1]) r++;
    const inside = r < ranges.length && pos >= ranges[r][0];
    if (inside !== open) out += inside ? `<${tag}>` : `</${tag}>`;
    open = inside;
    const length = html[i] === '&' ? html.indexOf(';', i) + 1 - i : 1;
    out += html.slice(i, i + length);
    i += length;
    pos++;
  }
  return open ? `${out}</${tag}>` : out;
}

/**
 * The changed ranges of a deleted line and the added line paired with it (`diffWordsWithSpace`),
 * or null when the two share less than half of the longer line's text (a rewrite, marked as a
 * whole by the line's colour and sign: marking most of it would tell nothing) or a line is too long.
 */
export function wordChanges(oldText: string, newText: string): { removed: [number, number][]; added: [number, number][] } | null {
  if (oldText.length > MAX_WORD_DIFF_LINE || newText.length > MAX_WORD_DIFF_LINE) return null;
  const removed: [number, number][] = [];
  const added: [number, number][] = [];
  let oldPos = 0;
  let newPos = 0;
  let common = 0;
  for (const change of diffWordsWithSpace(oldText, newText)) {
    const length = change.value.length;
    if (change.removed) {
      removed.push([oldPos, oldPos + length]);
      oldPos += length;
    } else if (change.added) {
      added.push([newPos, newPos + length]);
      newPos += length;
    } else {
      common += change.value.length;
      oldPos += length;
      newPos += length;
    }
  }
  return common * 2 >= Math.max(oldText.length, newText.length) && (removed.length > 0 || added.length > 0) ? { removed, added } : null;
}

/** Per hunk, the index pairs (deleted line, added line) of each run of deletions followed by additions, paired in order. */
function pairedLines(lines: readonly DiffLine[]): [number, number][] {
  const pairs: [number, number][] = [];
  for (let i = 0; i < lines.length;) {
    if (lines[i].type !== 'delete') {
      i++;
      continue;
    }
    const start = i;
    while (i < lines.length && lines[i].type === 'delete') i++;
    const middle = i;
    while (i < lines.length && lines[i].type === 'add') i++;
    for (let k = 0; k < Math.min(middle - start, i - middle); k++) pairs.push([start + k, middle + k]);
  }
  return pairs;
}

/**
 * The HTML of every shown line of `file`, per hunk and line (highlighted from the whole blobs
 * when `texts` holds them, else escaped from the diff), with intra-line marks on paired lines.
 *
 * @param texts blob id → text, from `diffBlobTexts` (null or absent: not highlighted).
 */
export function fileLineHtml(file: FileDiff, texts: ReadonlyMap<string, string | null>): string[][] {
  const path = file.newPath ?? file.oldPath ?? '';
  const key = `${file.oldBlob}:${file.newBlob}:${path}:${file.hunks.map((h) => `${h.oldStart},${h.newStart},${h.lines.length}`).join(';')}`;
  const cached = fileHtml.get(key);
  if (cached) return cached;
  const oldLines = blobLineHtml(file.oldBlob, path, texts);
  const newLines = blobLineHtml(file.newBlob, path, texts);
  const html = file.hunks.map((hunk) => {
    const lines = hunk.lines.map((line) => {
      const highlighted = line.newLine !== null ? newLines?.[line.newLine - 1] : oldLines?.[(line.oldLine ?? 0) - 1];
      return highlighted ?? escapeHtml(line.text);
    });
    for (const [d, a] of pairedLines(hunk.lines)) {
      const changes = wordChanges(hunk.lines[d].text, hunk.lines[a].text);
      if (!changes) continue;
      lines[d] = markRanges(lines[d], changes.removed, 'del');
      lines[a] = markRanges(lines[a], changes.added, 'ins');
    }
    return lines;
  });
  fileHtml.set(key, html);
  return html;
}
