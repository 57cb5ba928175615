/**
 * The diff view of the commit, compare and pull request pages: one section per changed file
 * (path, rename, additions/deletions), its hunks as a table of old/new line numbers and text,
 * added and deleted lines marked (colour and a `+`/`-` sign, so not by colour alone).
 *
 * Anchors: each file is `<section id="diff-<key>">` and each line `<tr id="diff-<key>R<n>">`
 * (a line on the new side: added or unchanged, numbered as in the new file) or
 * `id="diff-<key>L<n>"` (a deleted line, numbered as in the old file), where `<key>` is
 * {@link diffFileKey} of the file's path: stable across commits, so links survive updates.
 * The line numbers are links to those anchors. For client modules (an inline comment form),
 * file sections carry `data-old-path`/`data-new-path` and line rows `data-old-line`/`data-new-line`
 * (absent on the side a line does not exist). Callers attach content under a line (inline code
 * comments) with `renderBelowLine`. Diffs come capped from the domain
 * (src/domain/repositories/diff.ts); a capped file shows a notice.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { ComponentChildren } from 'preact';
import type { CommitDiff, DiffLine, FileDiff } from '../../domain/repositories/index.js';
import { formatBytes } from './sizes.js';

/** {@link diffFileKey} by path: every line's anchor needs its file's key. */
const fileKeys = new LRUCache<string, string>({ max: 10_000 });

/** The stable key of a file in anchors: 12 hex of SHA-256 of its new path (old path when deleted). */
export function diffFileKey(file: Pick<FileDiff, 'oldPath' | 'newPath'>): string {
  const path = file.newPath ?? file.oldPath ?? '';
  let key = fileKeys.get(path);
  if (key === undefined) {
    key = createHash('sha256').update(path).digest('hex').slice(0, 12);
    fileKeys.set(path, key);
  }
  return key;
}

/** The anchor id of a line of a file: `diff-<key>R<new line>`, or `diff-<key>L<old line>` for a deleted line. */
export function diffLineId(file: Pick<FileDiff, 'oldPath' | 'newPath'>, line: Pick<DiffLine, 'oldLine' | 'newLine'>): string {
  const key = diffFileKey(file);
  return line.newLine !== null ? `diff-${key}R${line.newLine}` : `diff-${key}L${line.oldLine}`;
}

export interface DiffViewProps {
  /** The diff to show (from `diffCommits`). */
  diff: CommitDiff;
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
  /** The heading level of file names (default 3: under a page `h1` and a section `h2`). */
  headingLevel?: 2 | 3 | 4;
  /** Shown instead of the files when nothing changed; default "No changes.". */
  emptyMessage?: string;
}

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

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

const STATUS_LABEL: Record<FileDiff['status'], string> = { added: 'added', deleted: 'deleted', modified: 'modified', renamed: 'renamed' };

function Line({ file, line, below }: { file: FileDiff; line: DiffLine; below: ComponentChildren | null | undefined }) {
  const id = diffLineId(file, line);
  const sign = line.type === 'add' ? '+' : line.type === 'delete' ? '-' : ' ';
  return (
    <>
      <tr id={id} class={`diff-line diff-${line.type}`} data-old-line={line.oldLine ?? undefined} data-new-line={line.newLine ?? undefined}>
        <td class="diff-num">
          {line.oldLine !== null && (
            <a href={`#${id}`} aria-label={`Old line ${line.oldLine}`}>
              {line.oldLine}
            </a>
          )}
        </td>
        <td class="diff-num">
          {line.newLine !== null && (
            <a href={`#${id}`} aria-label={`New line ${line.newLine}`}>
              {line.newLine}
            </a>
          )}
        </td>
        <td class="diff-code">
          <span class="diff-sign" aria-hidden="true">
            {sign}
          </span>
          {line.text}
          {line.noNewlineAtEnd && (
            <span class="diff-eof" title="No newline at end of file">
              {' '}
              ⏎̸
            </span>
          )}
        </td>
      </tr>
      {below !== null && below !== undefined && below !== false && (
        <tr class="diff-below">
          <td colspan={3}>{below}</td>
        </tr>
      )}
    </>
  );
}

/** The sizes of a Git LFS file's objects on each side: `1.0 MiB → 2.0 MiB`, `added, 1.0 MiB`, `deleted, 1.0 MiB`. */
function lfsSizeChange(lfs: NonNullable<FileDiff['lfs']>): string {
  if (lfs.oldSize === null) return `added, ${formatBytes(lfs.newSize ?? 0)}`;
  if (lfs.newSize === null) return `deleted, ${formatBytes(lfs.oldSize)}`;
  return `${formatBytes(lfs.oldSize)} → ${formatBytes(lfs.newSize)}`;
}

/** One file of a diff: header and hunks (or a notice for binary, unchanged-content or capped files). */
export function DiffFile({ file, renderBelowLine, renderFileActions, headingLevel = 3 }: Omit<DiffViewProps, 'diff' | 'emptyMessage'> & { file: FileDiff }) {
  const Heading = `h${headingLevel}` as 'h3';
  const key = diffFileKey(file);
  const actions = renderFileActions?.(file);
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
        <span class={`diff-status diff-status-${file.status}`}>{STATUS_LABEL[file.status]}</span>
        {!file.binary && !file.lfs && (
          <span class="diff-counts">
            <span class="diff-additions" aria-label={count(file.additions, 'addition', 'additions')}>
              +{file.additions}
            </span>{' '}
            <span class="diff-deletions" aria-label={count(file.deletions, 'deletion', 'deletions')}>
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
      {file.hunks.length > 0 && (
        <div class="diff-scroll">
          <table class="diff">
            <thead class="visually-hidden">
              <tr>
                <th scope="col">Old line</th>
                <th scope="col">New line</th>
                <th scope="col">Text</th>
              </tr>
            </thead>
            {file.hunks.map((hunk, h) => (
              <tbody key={h}>
                <tr class="diff-hunk">
                  <td colspan={3}>{hunk.header}</td>
                </tr>
                {hunk.lines.map((line, i) => (
                  <Line key={i} file={file} line={line} below={renderBelowLine?.(file, line)} />
                ))}
              </tbody>
            ))}
          </table>
        </div>
      )}
      {file.truncated !== null && (
        <p class="diff-notice" role="note">
          {TRUNCATION[file.truncated]}
        </p>
      )}
    </section>
  );
}

/**
 * A whole diff: a summary line (files changed, additions, deletions; a notice when capped), then
 * every file with {@link DiffFile}.
 */
export function DiffView({ diff, renderBelowLine, renderFileActions, headingLevel, emptyMessage = 'No changes.' }: DiffViewProps) {
  if (diff.files.length === 0) return <p class="diff-empty">{emptyMessage}</p>;
  return (
    <div class="diff-view">
      <p class="diff-summary">
        {count(diff.files.length, 'file', 'files')} changed, <span class="diff-additions">{count(diff.additions, 'addition', 'additions')}</span>,{' '}
        <span class="diff-deletions">{count(diff.deletions, 'deletion', 'deletions')}</span>
        {diff.truncated && <> — the diff is large: some lines are not shown.</>}
      </p>
      {diff.files.map((file) => (
        <DiffFile key={diffFileKey(file)} file={file} renderBelowLine={renderBelowLine} renderFileActions={renderFileActions} headingLevel={headingLevel} />
      ))}
    </div>
  );
}
