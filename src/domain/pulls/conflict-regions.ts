/**
 * The three-way merge of one text file into regions, for resolving its conflicts: clean runs and
 * conflict regions (ours / base / theirs), computed from the three versions themselves — never
 * parsed back from conflict markers, so CRLF line ends, a last line without newline and text that
 * looks like markers stay exact. The line matching of each side against the base is the `diff`
 * package's (Myers); the merge of the two matchings is diff3's (Khanna, Kunal and Pierce, "A
 * formal investigation of diff3", 2007), with git's rule that changes touching at one base
 * position conflict (xdiff/xmerge.c). docs/compatibility.md#pull-requests-resolving-conflicts.
 */
import { diffArrays } from 'diff';

/** One run of the merged file: lines both sides agree on, or a conflict region with each version's lines. */
export type MergeChunk = { kind: 'clean'; text: string } | { kind: 'conflict'; base: string; ours: string; theirs: string };

/** How a conflict region is resolved: our version, theirs, or ours followed by theirs. */
export type RegionChoice = 'ours' | 'theirs' | 'both';

/** The names written on the markers of a region: `<<<<<<< #1 <ours>`, `||||||| <base>`, `>>>>>>> #1 <theirs>`. */
export interface MarkerLabels {
  ours: string;
  base: string;
  theirs: string;
}

/** Milliseconds one side's line matching may take before the whole file becomes one region. */
const DIFF_TIMEOUT_MS = 2000;

/**
 * Splits text into lines that keep their terminator (`\n`, or `\r\n` as `…\r\n`); the last line
 * has none when the text does not end with a newline. `''` has no line.
 *
 * @example splitLines('a\r\nb') → ['a\r\n', 'b']
 */
export function splitLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
    lines.push(text.slice(start, nl + 1));
    start = nl + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

/** A changed run of one side against the base: base lines [baseStart, baseEnd) became side lines [sideStart, sideEnd). */
interface Hunk {
  baseStart: number;
  baseEnd: number;
  sideStart: number;
  sideEnd: number;
  side: 'ours' | 'theirs';
}

/** The hunks of `side` against `base`, or null when the matching took longer than {@link DIFF_TIMEOUT_MS}. */
function hunksOf(base: string[], side: string[], name: Hunk['side']): Hunk[] | null {
  const changes = diffArrays(base, side, { timeout: DIFF_TIMEOUT_MS });
  if (!changes) return null;
  const hunks: Hunk[] = [];
  let b = 0;
  let s = 0;
  let open: Hunk | null = null;
  for (const change of changes) {
    if (!change.added && !change.removed) {
      open = null;
      b += change.count;
      s += change.count;
      continue;
    }
    if (!open) hunks.push((open = { baseStart: b, baseEnd: b, sideStart: s, sideEnd: s, side: name }));
    if (change.removed) open.baseEnd = b += change.count;
    else open.sideEnd = s += change.count;
  }
  return hunks;
}

/** The lines of one side over base lines [start, end), given that side's hunks there (none: the base's lines). */
function sideSlice(base: string[], side: string[], hunks: Hunk[], start: number, end: number): string {
  if (hunks.length === 0) return base.slice(start, end).join('');
  const first = hunks[0];
  const last = hunks[hunks.length - 1];
  return side.slice(first.sideStart - (first.baseStart - start), last.sideEnd + (end - last.baseEnd)).join('');
}

/**
 * Three-way merges `ours` and `theirs` over `base`, line by line: a base run changed on one side
 * only takes that side; changes of both sides that overlap or touch form one region, clean when
 * both made the same change, else a conflict. Adjacent clean runs are joined. When a side's line
 * matching times out the whole file is one conflict (or clean, when the sides are equal).
 *
 * @param base the merge base's text ('' for an add/add conflict).
 * @returns the chunks in file order; concatenating each chunk's chosen text gives the file.
 * @example mergeRegions('a\nb\n', 'a\nB\n', 'a\nb2\n') → [{ kind: 'clean', text: 'a\n' }, { kind: 'conflict', base: 'b\n', ours: 'B\n', theirs: 'b2\n' }]
 */
export function mergeRegions(base: string, ours: string, theirs: string): MergeChunk[] {
  const [b, o, t] = [splitLines(base), splitLines(ours), splitLines(theirs)];
  const oursHunks = hunksOf(b, o, 'ours');
  const theirsHunks = oursHunks && hunksOf(b, t, 'theirs');
  if (!oursHunks || !theirsHunks) return ours === theirs ? [{ kind: 'clean', text: ours }] : [{ kind: 'conflict', base, ours, theirs }];
  const all = [...oursHunks, ...theirsHunks].sort((x, y) => x.baseStart - y.baseStart || (x.side === 'ours' ? -1 : 1));
  const chunks: MergeChunk[] = [];
  const clean = (text: string) => {
    if (text === '') return;
    const last = chunks[chunks.length - 1];
    if (last?.kind === 'clean') last.text += text;
    else chunks.push({ kind: 'clean', text });
  };
  let cursor = 0;
  for (let i = 0; i < all.length;) {
    const start = all[i].baseStart;
    let end = all[i].baseEnd;
    const group = [all[i++]];
    while (i < all.length && all[i].baseStart <= end) {
      end = Math.max(end, all[i].baseEnd);
      group.push(all[i++]);
    }
    clean(b.slice(cursor, start).join(''));
    cursor = end;
    const mine = group.filter((h) => h.side === 'ours');
    const other = group.filter((h) => h.side === 'theirs');
    const oursText = sideSlice(b, o, mine, start, end);
    const theirsText = sideSlice(b, t, other, start, end);
    if (other.length === 0 || oursText === theirsText) clean(oursText);
    else if (mine.length === 0) clean(theirsText);
    else chunks.push({ kind: 'conflict', base: b.slice(start, end).join(''), ours: oursText, theirs: theirsText });
  }
  clean(b.slice(cursor).join(''));
  return chunks;
}

/**
 * The line end a file's versions use: `\r\n` when they hold CRLF and no bare LF, else `\n`.
 * Markers are written with it, and a submitted edit (browsers send CRLF) is brought back to it.
 */
export function lineEndingOf(texts: readonly string[]): '\n' | '\r\n' {
  const crlf = texts.some((t) => t.includes('\r\n'));
  const bare = texts.some((t) => /(^|[^\r])\n/.test(t));
  return crlf && !bare ? '\r\n' : '\n';
}

const MARKER_CHARS = ['<', '|', '=', '>'] as const;

/**
 * The length of this file's conflict markers: one more than the longest run of a marker
 * character (`<`, `|`, `=`, `>`) starting a line of any version, and at least git's 7 — so no
 * line of the file itself can be taken for a marker.
 */
export function markerSizeOf(texts: readonly string[]): number {
  let longest = 0;
  for (const text of texts) {
    for (const match of text.matchAll(/^(<+|\|+|=+|>+)/gm)) longest = Math.max(longest, match[1].length);
  }
  return Math.max(7, longest + 1);
}

/** `text` ending with a line end (added when it has none and is not empty), so a marker can follow. */
function terminated(text: string, eol: string): string {
  return text === '' || text.endsWith('\n') ? text : text + eol;
}

/**
 * The file with each region resolved as chosen, and the regions without a choice (null) written
 * diff3-style between markers of `size` characters numbered from 1:
 * `<<<<<<< #n ours` ours `||||||| base` base `=======` theirs `>>>>>>> #n theirs`.
 *
 * @param chunks from {@link mergeRegions}.
 * @param choices one per conflict region, in order (missing = null).
 */
export function resolvedText(
  chunks: readonly MergeChunk[],
  choices: readonly (RegionChoice | null | undefined)[],
  size: number,
  labels: MarkerLabels,
  eol: '\n' | '\r\n',
): string {
  let out = '';
  let n = 0;
  for (const chunk of chunks) {
    if (chunk.kind === 'clean') {
      out += chunk.text;
      continue;
    }
    const choice = choices[n++];
    if (choice === 'ours') out += chunk.ours;
    else if (choice === 'theirs') out += chunk.theirs;
    else if (choice === 'both') out += terminated(chunk.ours, eol) + chunk.theirs;
    else {
      const [lt, bar, eq, gt] = MARKER_CHARS.map((c) => c.repeat(size));
      out = terminated(out, eol);
      out += `${lt} #${n} ${labels.ours}${eol}${terminated(chunk.ours, eol)}`;
      out += `${bar} ${labels.base}${eol}${terminated(chunk.base, eol)}`;
      out += `${eq}${eol}${terminated(chunk.theirs, eol)}${gt} #${n} ${labels.theirs}${eol}`;
    }
  }
  return out;
}

/**
 * The 1-based numbers of the lines of `text` that are conflict markers of `size` characters or
 * more (a run of `<`, `|`, `=` or `>` starting the line, then a space or the line's end).
 */
export function markerLines(text: string, size: number): number[] {
  const marker = new RegExp(`^(?:<{${size},}|\\|{${size},}|={${size},}|>{${size},})(?: |\\r?$)`);
  return splitLines(text)
    .map((line, i) => (marker.test(line.replace(/\n$/, '')) ? i + 1 : 0))
    .filter((n) => n > 0);
}

/**
 * A text submitted from a form (browsers send every line end as CRLF) with the file's line end.
 */
export function withLineEnding(text: string, eol: '\n' | '\r\n'): string {
  return eol === '\r\n' ? text.replace(/\r?\n/g, '\r\n') : text.replace(/\r\n/g, '\n');
}
