/**
 * The tree of a diff's changed files: directories nested (a directory holding only one directory
 * is shown as one `a/b` node), each file with its +/- counts linking to its section of the diff
 * view (or where the caller says), marked when viewed, and the count of files viewed when the
 * page tracks it.
 */
import type { FileDiff } from '../../domain/repositories/index.js';
import { diffFileKey } from './diff-keys.js';
import { escapeHtml } from './diff-lines.js';

interface TreeDir {
  name: string;
  dirs: Map<string, TreeDir>;
  files: FileDiff[];
}

/** The files as a tree of directories by their new path (old path when deleted). */
function buildTree(files: readonly FileDiff[]): TreeDir {
  const root: TreeDir = { name: '', dirs: new Map(), files: [] };
  for (const file of files) {
    const parts = (file.newPath ?? file.oldPath ?? '').split('/');
    let dir = root;
    for (const part of parts.slice(0, -1)) {
      let next = dir.dirs.get(part);
      if (!next) {
        next = { name: part, dirs: new Map(), files: [] };
        dir.dirs.set(part, next);
      }
      dir = next;
    }
    dir.files.push(file);
  }
  return root;
}

/** A directory with its single subdirectory merged into one `a/b` node, repeatedly. */
function merged(dir: TreeDir): TreeDir {
  let node = dir;
  while (node.files.length === 0 && node.dirs.size === 1) {
    const [only] = node.dirs.values();
    node = { ...only, name: `${node.name}/${only.name}` };
  }
  return node;
}

const baseName = (file: FileDiff) => (file.newPath ?? file.oldPath ?? '').split('/').pop() ?? '';

/** Where a file's entry links to, given the file and its key. */
type HrefOf = (file: FileDiff, key: string) => string;

/**
 * The list of a directory as HTML, written as a string: a large diff's tree has thousands of
 * entries, and this is its cost (names are escaped here, as the JSX renderer would).
 */
function treeItemsHtml(dir: TreeDir, isViewed: ((file: FileDiff) => boolean) | undefined, hrefOf: HrefOf): string {
  let html = '<ul>';
  for (const child of dir.dirs.values()) {
    const node = merged(child);
    html += `<li class="diff-tree-dir"><span class="diff-tree-dir-name">${escapeHtml(node.name)}/</span>${treeItemsHtml(node, isViewed, hrefOf)}</li>`;
  }
  for (const file of dir.files) {
    const viewed = isViewed?.(file) ?? false;
    const key = diffFileKey(file);
    const counts =
      file.binary || file.lfs
        ? ''
        : ` <span class="diff-counts"><span class="diff-additions">+${file.additions}</span> <span class="diff-deletions">−${file.deletions}</span></span>`;
    html +=
      `<li class="${viewed ? 'diff-tree-file diff-tree-viewed' : 'diff-tree-file'}" data-file="diff-${key}">` +
      `<a href="${escapeHtml(hrefOf(file, key))}">${escapeHtml(baseName(file))}</a><span class="diff-tree-mark">${viewed ? ' ✓ viewed' : ''}</span>${counts}</li>`;
  }
  return `${html}</ul>`;
}

/**
 * The navigation of a diff's files: the files the diff lists, and a note counting the others
 * (a diff lists at most its `maxListedFiles`, docs/compatibility.md#diff-view, "Large diffs").
 *
 * @param fileCount how many files changed, listed or not.
 * @param isViewed whether a file is marked viewed; when given, the tree says "N of M files viewed".
 * @param hrefOf where a file's entry links to; default its section (`#diff-<key>`).
 */
export function DiffFileTree({
  files,
  fileCount,
  isViewed,
  hrefOf = (_file, key) => `#diff-${key}`,
}: {
  files: readonly FileDiff[];
  fileCount: number;
  isViewed?: (file: FileDiff) => boolean;
  hrefOf?: HrefOf;
}) {
  const root = buildTree(files);
  const unlisted = fileCount - files.length;
  return (
    <nav class="diff-tree" aria-label="Changed files">
      {isViewed && (
        <p class="diff-viewed-count" aria-live="polite">
          <span class="diff-viewed-n">{files.filter(isViewed).length}</span> of {fileCount.toLocaleString('en-US')} files viewed
        </p>
      )}
      <div class="diff-tree-items" dangerouslySetInnerHTML={{ __html: treeItemsHtml(root, isViewed, hrefOf) }} />
      {unlisted > 0 && (
        <p class="diff-notice" role="note">
          {unlisted === 1 ? '1 more changed file is' : `${unlisted.toLocaleString('en-US')} more changed files are`} not listed: a diff lists the first{' '}
          {files.length.toLocaleString('en-US')}.
        </p>
      )}
    </nav>
  );
}
