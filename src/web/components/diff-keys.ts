/**
 * The anchors of the diff view (diff.tsx): a file's stable key and its lines' ids.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { DiffLine, FileDiff } from '../../domain/repositories/index.js';

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
  return lineIdOfKey(diffFileKey(file), line);
}

/** {@link diffLineId} of a line of the file whose key is `key`, for callers that computed the key once per file. */
export function lineIdOfKey(key: string, line: Pick<DiffLine, 'oldLine' | 'newLine'>): string {
  return line.newLine !== null ? `diff-${key}R${line.newLine}` : `diff-${key}L${line.oldLine}`;
}
