/**
 * The diff view of the commit, compare and pull request pages: a tree of the changed files
 * (diff-tree.tsx), then one section per file (path, rename with similarity, additions/deletions),
 * its hunks as a table — unified (old and new line numbers, then the text) or split (old number
 * and text beside new number and text) — with the text syntax-highlighted and paired lines'
 * intra-line changes marked `<del>`/`<ins>` (diff-lines.ts); added and deleted lines are marked
 * by colour and a `+`/`-` sign, so not by colour alone. Unchanged lines between hunks are behind
 * a "Show N unchanged lines" link (`?expand=<key>.<gap>`; diff-view.js fetches that page and
 * inserts the lines in place); generated and large files are collapsed behind a "Load diff" link
 * (`?load=<key>`, likewise).
 *
 * Anchors: each file is `<section id="diff-<key>">` and each line `id="diff-<key>R<n>"` (a line
 * on the new side: added or unchanged, numbered as in the new file) or `id="diff-<key>L<n>"` (a
 * deleted line, numbered as in the old file) — on the row in the unified layout, on the line
 * number's cell in the split one — where `<key>` is {@link diffFileKey} of the file's path:
 * stable across commits, so links survive updates. The line numbers are links to those anchors,
 * labelled `Old line N` / `New line N`. For client modules (an inline comment form), file
 * sections carry `data-old-path`/`data-new-path` and line rows `data-old-line`/`data-new-line`
 * (absent on the side a line does not exist). Callers attach content under a line (inline code
 * comments) with `renderBelowLine`. Diffs come capped from the domain
 * (src/domain/repositories/diff.ts); a capped file shows a notice.
 */
import type { ComponentChildren } from 'preact';
import { renderToString } from 'preact-render-to-string';
import type { DiffLayout } from '../../domain/diff-views/index.js';
import type { CommitDiff, DiffHunk, DiffLine, FileDiff } from '../../domain/repositories/index.js';
import { diffFileKey, lineIdOfKey } from './diff-keys.js';
import { blobLineHtml, escapeHtml, fileLineHtml } from './diff-lines.js';
import { DiffFileTree } from './diff-tree.js';
import { formatBytes, formatCount } from './sizes.js';

export { diffFileKey, diffLineId } from './diff-keys.js';

/** Files with more changed lines than this are collapsed behind "Load diff" (as generated files are). */
export const LARGE_FILE_LINES = 1_000;

/** What the visitor chose of a diff's view (diff-state.ts reads it from the request). */
export interface DiffViewState {
  layout: DiffLayout;
  /** Blob id → text, for highlighting and the unchanged lines between hunks (`diffBlobTexts`). */
  texts: ReadonlyMap<string, string | null>;
  /** The gaps of unchanged lines shown: `<file key>.<gap index>`. */
  expanded: ReadonlySet<string>;
  /** The collapsed files (generated, large) and files left out of a large diff whose diff is shown anyway: file keys. */
  loaded: ReadonlySet<string>;
  /** The diffs of files the diff's budget left out ({@link isLeftOut}) read on their own because loaded, by file key. */
  loadedFiles: ReadonlyMap<string, FileDiff>;
  /** The page's URL with one more gap expanded or file loaded (other parameters kept). */
  href(change: { expand?: string; load?: string }): string;
}

export interface DiffViewProps {
  /** The diff to show (from `diffCommits`). */
  diff: CommitDiff;
  /** The layout and what is expanded; default unified, not highlighted, no expansion. */
  state?: DiffViewState;
  /**
   * Content shown in a full-width row under a line, or null/undefined for none — e.g. the code
   * comments on that line and a reply form. Called once per shown line, so keep it a lookup
   * (a Map by `diffLineId`), not a query.
   */
  renderBelowLine?: (file: FileDiff, line: DiffLine) => ComponentChildren | null | undefined;
  /**
   * Extra content in a file's header (e.g. a "View file" link or a comment count); null/undefined
   * for none.
   */
  renderFileActions?: (file: FileDiff) => ComponentChildren | null | undefined;
  /** Files shown collapsed (e.g. marked viewed), their diff behind a disclosure. */
  isCollapsed?: (file: FileDiff) => boolean;
  /** Files marked viewed (shown so in the file tree), with the count of viewed files; none by default. */
  isViewed?: (file: FileDiff) => boolean;
  /** The heading level of file names (default 3: under a page `h1` and a section `h2`). */
  headingLevel?: 2 | 3 | 4;
  /** Shown instead of the files when nothing changed; default "No changes.". */
  emptyMessage?: string;
}

const DEFAULT_STATE: DiffViewState = { layout: 'unified', texts: new Map(), expanded: new Set(), loaded: new Set(), loadedFiles: new Map(), href: () => '' };

const TRUNCATION: Record<NonNullable<FileDiff['truncated']>, string> = {
  file: 'This file’s diff is too large: only its beginning is shown.',
  total: 'The diff is too large: the rest of this file is not shown.',
  bytes: 'The diff is too large: this file is not shown.',
};

function FileTitle({ file }: { file: FileDiff }) {
  if (file.status === 'renamed')
    return (
      <>
        {file.oldPath} → {file.newPath}
      </>
    );
  return <>{file.newPath ?? file.oldPath}</>;
}

const STATUS_LABEL: Record<FileDiff['status'], string> = { added: 'added', deleted: 'deleted', modified: 'modified', renamed: 'renamed' };
const SIGN: Record<DiffLine['type'], string> = { add: '+', delete: '-', context: '' };
const EOF_MARK = '<span class="diff-eof" title="No newline at end of file"> ⏎̸</span>';

/**
 * The code cell's HTML of a line: the sign of a changed line (hidden from screen readers: the
 * line numbers say it; an unchanged line's cell is indented by CSS instead, most rows being
 * unchanged), its text's HTML, the missing-newline mark.
 */
function codeHtml(line: DiffLine, html: string): string {
  const sign = line.type === 'context' ? '' : `<span class="diff-sign" aria-hidden="true">${SIGN[line.type]}</span>`;
  return `${sign}${html}${line.noNewlineAtEnd ? EOF_MARK : ''}`;
}

/** A line number's cell content: a link to the line's anchor, labelled with its side. */
function numberHtml(id: string, side: 'Old' | 'New', n: number | null): string {
  return n === null ? '' : `<a href="#${id}" aria-label="${side} line ${n}">${n}</a>`;
}

/** A full-width row under a line (code comments), or nothing. */
function belowHtml(columns: number, children: ComponentChildren | null | undefined): string {
  if (children === null || children === undefined || children === false || (Array.isArray(children) && children.length === 0)) return '';
  return `<tr class="diff-below"><td colspan="${columns}">${renderToString(<>{children}</>)}</td></tr>`;
}

interface RowsProps {
  file: FileDiff;
  lines: readonly DiffLine[];
  html: readonly string[];
  renderBelowLine?: DiffViewProps['renderBelowLine'];
}

/** `data-old-line`/`data-new-line` of a row. */
const lineData = (oldLine: number | null | undefined, newLine: number | null | undefined) =>
  `${oldLine != null ? ` data-old-line="${oldLine}"` : ''}${newLine != null ? ` data-new-line="${newLine}"` : ''}`;

/**
 * Lines in the unified layout: old number, new number, sign and text. Rows are written as HTML
 * strings (a 2,000-line diff is 10,000 elements: strings keep the page fast); every value in them
 * is a number, a hex key or HTML escaped by highlight.js / diff-lines.ts.
 */
function unifiedRows({ file, lines, html, renderBelowLine }: RowsProps): string {
  let out = '';
  const key = diffFileKey(file);
  lines.forEach((line, i) => {
    const id = lineIdOfKey(key, line);
    out +=
      `<tr id="${id}" class="diff-line diff-${line.type}"${lineData(line.oldLine, line.newLine)}>` +
      `<td class="diff-num">${numberHtml(id, 'Old', line.oldLine)}</td><td class="diff-num">${numberHtml(id, 'New', line.newLine)}</td>` +
      `<td class="diff-code">${codeHtml(line, html[i])}</td></tr>` +
      belowHtml(3, renderBelowLine?.(file, line));
  });
  return out;
}

/** One side of a split row: the number cell (a changed line's anchor) and the text cell; empty cells where the side has no line. */
function splitSide(key: string, line: DiffLine | null, html: string, side: 'Old' | 'New'): string {
  if (line === null) return '<td class="diff-num diff-none"></td><td class="diff-code diff-none"></td>';
  // a changed line's anchor is its cell; an unchanged line's is its row
  const anchor = lineIdOfKey(key, line);
  const id = line.type === 'context' ? '' : ` id="${anchor}"`;
  return (
    `<td class="diff-num diff-${line.type}"${id}>${numberHtml(anchor, side, side === 'Old' ? line.oldLine : line.newLine)}</td>` +
    `<td class="diff-code diff-${line.type}">${codeHtml(line, html)}</td>`
  );
}

/**
 * Lines in the split layout: unchanged lines on both sides; a run of deletions beside the run of
 * additions that follows it, paired in order. HTML strings, as {@link unifiedRows}.
 */
function splitRows({ file, lines, html, renderBelowLine }: RowsProps): string {
  let out = '';
  const key = diffFileKey(file);
  const row = (o: number | null, n: number | null) => {
    const oldLine = o === null ? null : lines[o];
    const newLine = n === null ? null : lines[n];
    const id = newLine?.type === 'context' ? ` id="${lineIdOfKey(key, newLine)}"` : '';
    out +=
      `<tr${id} class="diff-line diff-split"${lineData(oldLine?.oldLine, newLine?.newLine)}>` +
      `${splitSide(key, oldLine, o === null ? '' : html[o], 'Old')}${splitSide(key, newLine, n === null ? '' : html[n], 'New')}</tr>`;
    const below = [...(oldLine && o !== n ? [renderBelowLine?.(file, oldLine)] : []), ...(newLine ? [renderBelowLine?.(file, newLine)] : [])].filter(
      (b) => b !== null && b !== undefined && b !== false,
    );
    out += belowHtml(4, below);
  };
  for (let i = 0; i < lines.length;) {
    if (lines[i].type === 'context') {
      row(i, i);
      i++;
      continue;
    }
    const deleted: number[] = [];
    const added: number[] = [];
    while (i < lines.length && lines[i].type === 'delete') deleted.push(i++);
    while (i < lines.length && lines[i].type === 'add') added.push(i++);
    for (let k = 0; k < Math.max(deleted.length, added.length); k++) row(deleted[k] ?? null, added[k] ?? null);
  }
  return out;
}

/** One gap of unchanged lines: new lines `from..to` (1-based, inclusive), `delta` added to get the old line numbers. */
interface Gap {
  index: number;
  from: number;
  to: number;
  delta: number;
}

/** The first new and old line after a hunk (a hunk of no lines on a side starts after its start line). */
const nextLines = (hunk: DiffHunk) => ({
  oldNext: hunk.oldLines === 0 ? hunk.oldStart + 1 : hunk.oldStart + hunk.oldLines,
  newNext: hunk.newLines === 0 ? hunk.newStart + 1 : hunk.newStart + hunk.newLines,
});

/** The gaps of unchanged lines before, between and after the hunks of a file whose new side has `total` lines. */
function gapsOf(hunks: readonly DiffHunk[], total: number): Gap[] {
  const gaps: Gap[] = [];
  let newNext = 1;
  let delta = 0;
  hunks.forEach((hunk, index) => {
    const start = hunk.newLines === 0 ? hunk.newStart + 1 : hunk.newStart;
    if (start > newNext) gaps.push({ index, from: newNext, to: start - 1, delta });
    const next = nextLines(hunk);
    newNext = next.newNext;
    delta = next.oldNext - next.newNext;
  });
  if (total >= newNext) gaps.push({ index: hunks.length, from: newNext, to: total, delta });
  return gaps;
}

/** A gap of unchanged lines: its lines when expanded, else a link expanding it. */
function GapRows({ file, gap, lines, state, columns }: { file: FileDiff; gap: Gap; lines: readonly string[]; state: DiffViewState; columns: number }) {
  const key = diffFileKey(file);
  const id = `diff-${key}-gap${gap.index}`;
  const token = `${key}.${gap.index}`;
  if (!state.expanded.has(token)) {
    const n = gap.to - gap.from + 1;
    return (
      <tbody id={id} class="diff-gap">
        <tr class="diff-expand">
          <td colspan={columns}>
            <a href={`${state.href({ expand: token })}#${id}`} data-gap={id}>
              Show {formatCount(n, 'unchanged line', 'unchanged lines')}
            </a>
          </td>
        </tr>
      </tbody>
    );
  }
  const context: DiffLine[] = [];
  const html: string[] = [];
  for (let n = gap.from; n <= gap.to; n++) {
    context.push({ type: 'context', oldLine: n + gap.delta, newLine: n, text: '', noNewlineAtEnd: false });
    html.push(lines[n - 1] ?? '');
  }
  const rows = state.layout === 'split' ? splitRows : unifiedRows;
  return <tbody id={id} class="diff-gap diff-expanded" dangerouslySetInnerHTML={{ __html: rows({ file, lines: context, html }) }} />;
}

/** The sizes of a Git LFS file's objects on each side: `1.0 MiB → 2.0 MiB`, `added, 1.0 MiB`, `deleted, 1.0 MiB`. */
function lfsSizeChange(lfs: NonNullable<FileDiff['lfs']>): string {
  if (lfs.oldSize === null) return `added, ${formatBytes(lfs.newSize ?? 0)}`;
  if (lfs.newSize === null) return `deleted, ${formatBytes(lfs.oldSize)}`;
  return `${formatBytes(lfs.oldSize)} → ${formatBytes(lfs.newSize)}`;
}

/** Why a file's diff is collapsed until loaded (generated, large), or null. */
function collapsedReason(file: FileDiff, state: DiffViewState): string | null {
  if (file.hunks.length === 0 || state.loaded.has(diffFileKey(file))) return null;
  if (file.generated) return 'Generated file: its diff is not shown.';
  const changed = file.additions + file.deletions;
  if (changed > LARGE_FILE_LINES) return `Large diff (${formatCount(changed, 'changed line', 'changed lines')}): not shown.`;
  return null;
}

/** The table of a file's hunks, with the gaps of unchanged lines between them. */
function HunkTable({ file, state, renderBelowLine }: { file: FileDiff; state: DiffViewState; renderBelowLine?: DiffViewProps['renderBelowLine'] }) {
  const html = fileLineHtml(file, state.texts);
  const split = state.layout === 'split';
  const columns = split ? 4 : 3;
  const newLines = file.truncated === null && file.status !== 'added' ? blobLineHtml(file.newBlob, file.newPath ?? '', state.texts) : null;
  const gaps = newLines ? new Map(gapsOf(file.hunks, newLines.length).map((g) => [g.index, g])) : new Map<number, Gap>();
  const rows = split ? splitRows : unifiedRows;
  const gapAt = (index: number) => {
    const gap = gaps.get(index);
    return gap && newLines && <GapRows file={file} gap={gap} lines={newLines} state={state} columns={columns} />;
  };
  return (
    <div class="diff-scroll">
      <table class={split ? 'diff diff-split-table' : 'diff'}>
        {split && (
          <colgroup>
            <col class="diff-col-num" />
            <col />
            <col class="diff-col-num" />
            <col />
          </colgroup>
        )}
        <thead class="visually-hidden">
          {split ? (
            <tr>
              <th scope="col">Old line</th>
              <th scope="col">Old text</th>
              <th scope="col">New line</th>
              <th scope="col">New text</th>
            </tr>
          ) : (
            <tr>
              <th scope="col">Old line</th>
              <th scope="col">New line</th>
              <th scope="col">Text</th>
            </tr>
          )}
        </thead>
        {file.hunks.map((hunk, h) => (
          <>
            {gapAt(h)}
            <tbody
              key={h}
              dangerouslySetInnerHTML={{
                __html: `<tr class="diff-hunk"><td colspan="${columns}">${escapeHtml(hunk.header)}</td></tr>${rows({ file, lines: hunk.lines, html: html[h], renderBelowLine })}`,
              }}
            />
          </>
        ))}
        {gapAt(file.hunks.length)}
      </table>
    </div>
  );
}

/** One file of a diff: header and hunks (or a notice for binary, LFS, unchanged-content, collapsed or capped files). */
export function DiffFile({
  file,
  state = DEFAULT_STATE,
  renderBelowLine,
  renderFileActions,
  isCollapsed,
  headingLevel = 3,
}: Omit<DiffViewProps, 'diff' | 'emptyMessage' | 'isViewed'> & { file: FileDiff }) {
  const Heading = `h${headingLevel}` as 'h3';
  const key = diffFileKey(file);
  const actions = renderFileActions?.(file);
  const reason = collapsedReason(file, state);
  const body = file.hunks.length > 0 && reason === null && <HunkTable file={file} state={state} renderBelowLine={renderBelowLine} />;
  return (
    <section
      class="diff-file"
      id={`diff-${key}`}
      aria-labelledby={`diff-${key}-title`}
      data-old-path={file.oldPath ?? undefined}
      data-new-path={file.newPath ?? undefined}
    >
      <header class="diff-file-header">
        <Heading id={`diff-${key}-title`} class="diff-file-name">
          <a href={`#diff-${key}`}>
            <FileTitle file={file} />
          </a>
        </Heading>
        <span class={`diff-status diff-status-${file.status}`}>
          {STATUS_LABEL[file.status]}
          {file.similarity !== null && file.status === 'renamed' && `, ${file.similarity}% similar`}
        </span>
        {!file.binary && !file.lfs && (
          <span class="diff-counts">
            <span class="diff-additions" aria-label={formatCount(file.additions, 'addition', 'additions')}>
              +{file.additions}
            </span>{' '}
            <span class="diff-deletions" aria-label={formatCount(file.deletions, 'deletion', 'deletions')}>
              −{file.deletions}
            </span>
          </span>
        )}
        {file.oldMode && file.newMode && file.oldMode !== file.newMode && (
          <span class="diff-mode">
            mode {file.oldMode} → {file.newMode}
          </span>
        )}
        {actions}
      </header>
      {file.binary && <p class="diff-notice">Binary file not shown.</p>}
      {file.lfs && <p class="diff-notice">Stored with Git LFS: {lfsSizeChange(file.lfs)}.</p>}
      {!file.binary && !file.lfs && file.hunks.length === 0 && file.truncated === null && <p class="diff-notice">No content changes.</p>}
      {reason !== null && (
        <p class="diff-notice diff-collapsed">
          {reason}{' '}
          <a href={`${state.href({ load: key })}#diff-${key}`} class="diff-load" data-file={`diff-${key}`}>
            Load diff
          </a>
        </p>
      )}
      {body &&
        (isCollapsed?.(file) ? (
          <details class="diff-body">
            <summary>Viewed: show the diff</summary>
            {body}
          </details>
        ) : (
          <div class="diff-body">{body}</div>
        ))}
      {file.truncated !== null && (
        <p class="diff-notice" role="note">
          {TRUNCATION[file.truncated]}
        </p>
      )}
    </section>
  );
}

/** Whether the diff's budget (lines, files or bytes) left out all of a file's hunks: it is then only in the tree, its diff loaded on demand. */
export function isLeftOut(file: FileDiff): boolean {
  return (file.truncated === 'total' || file.truncated === 'bytes') && file.hunks.length === 0;
}

/**
 * A whole diff: a summary line (files changed, additions, deletions; a notice when capped), the
 * tree of changed files, then every file with {@link DiffFile} — except the files a large diff's
 * budget left out: they are only in the tree, each linking to the page with its diff loaded
 * (`?load=<key>`), with a count of them after the files shown.
 */
export function DiffView({ diff, state = DEFAULT_STATE, isViewed, emptyMessage = 'No changes.', ...fileProps }: DiffViewProps) {
  if (diff.fileCount === 0) return <p class="diff-empty">{emptyMessage}</p>;
  const files = state.loadedFiles.size === 0 ? diff.files : diff.files.map((file) => state.loadedFiles.get(diffFileKey(file)) ?? file);
  // the files the budget left out, and those the diff does not list
  const leftOut = files.filter(isLeftOut).length + diff.fileCount - diff.files.length;
  return (
    <div class={`diff-view diff-view-${state.layout}`}>
      <p class="diff-summary">
        {formatCount(diff.fileCount, 'file', 'files')} changed, <span class="diff-additions">{formatCount(diff.additions, 'addition', 'additions')}</span>,{' '}
        <span class="diff-deletions">{formatCount(diff.deletions, 'deletion', 'deletions')}</span>
        {diff.truncated && <> — the diff is large: some lines are not shown.</>}
      </p>
      <div class="diff-layout">
        <DiffFileTree
          files={files}
          fileCount={diff.fileCount}
          isViewed={isViewed}
          hrefOf={(file, key) => (isLeftOut(file) ? `${state.href({ load: key })}#diff-${key}` : `#diff-${key}`)}
        />
        <div class="diff-files">
          {files.map((file) => !isLeftOut(file) && <DiffFile key={diffFileKey(file)} file={file} state={state} {...fileProps} />)}
          {leftOut > 0 && (
            <p class="diff-notice diff-left-out" role="note">
              {leftOut === 1 ? '1 more file is' : `${leftOut.toLocaleString('en')} more files are`} not shown: the diff is large. Choose a file in the tree to
              load its diff.
            </p>
          )}
        </div>
      </div>
    </div>
  );
}
