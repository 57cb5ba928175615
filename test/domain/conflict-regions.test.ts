import { describe, expect, it } from 'vitest';
import {
  lineEndingOf,
  markerLines,
  markerSizeOf,
  mergeRegions,
  resolvedText,
  splitLines,
  withLineEnding,
  type MergeChunk,
} from '../../src/domain/pulls/conflict-regions.js';

const LABELS = { ours: 'feature (source)', base: 'base', theirs: 'main (target)' };
const conflicts = (chunks: MergeChunk[]) => chunks.filter((c) => c.kind === 'conflict');
const text = (chunks: MergeChunk[], choices: ('ours' | 'theirs' | 'both' | null)[], eol: '\n' | '\r\n' = '\n', size = 7) =>
  resolvedText(chunks, choices, size, LABELS, eol);

describe('conflict regions of a three-way text merge (docs/compatibility.md#pull-requests-resolving-conflicts)', () => {
  it('splits lines keeping their terminators, CRLF and a last line without newline', () => {
    expect(splitLines('')).toEqual([]);
    expect(splitLines('a\nb\n')).toEqual(['a\n', 'b\n']);
    expect(splitLines('a\r\nb')).toEqual(['a\r\n', 'b']);
    expect(splitLines('\n\n')).toEqual(['\n', '\n']);
  });

  it('takes changes of one side, and the same change made by both, without a conflict', () => {
    expect(mergeRegions('a\nb\nc\n', 'A\nb\nc\n', 'a\nb\nC\n')).toEqual([{ kind: 'clean', text: 'A\nb\nC\n' }]);
    expect(mergeRegions('a\nb\n', 'a\nB\n', 'a\nB\n')).toEqual([{ kind: 'clean', text: 'a\nB\n' }]);
    expect(mergeRegions('a\n', 'a\n', 'a\n')).toEqual([{ kind: 'clean', text: 'a\n' }]);
  });

  it('makes a conflict region of changes to the same lines, with each version', () => {
    const chunks = mergeRegions('one\ntwo\nthree\n', 'one\nTWO-feature\nthree\n', 'one\nTWO-main\nthree\n');
    expect(chunks).toEqual([
      { kind: 'clean', text: 'one\n' },
      { kind: 'conflict', base: 'two\n', ours: 'TWO-feature\n', theirs: 'TWO-main\n' },
      { kind: 'clean', text: 'three\n' },
    ]);
    expect(text(chunks, ['ours'])).toBe('one\nTWO-feature\nthree\n');
    expect(text(chunks, ['theirs'])).toBe('one\nTWO-main\nthree\n');
    expect(text(chunks, ['both'])).toBe('one\nTWO-feature\nTWO-main\nthree\n');
    expect(text(chunks, [null])).toBe(
      'one\n<<<<<<< #1 feature (source)\nTWO-feature\n||||||| base\ntwo\n======= \nTWO-main\n>>>>>>> #1 main (target)\nthree\n'.replace(
        '======= \n',
        '=======\n',
      ),
    );
  });

  it('keeps separate regions apart and numbers their markers', () => {
    const chunks = mergeRegions('1\n2\n3\n4\n5\n', 'x\n2\n3\n4\ny\n', 'X\n2\n3\n4\nY\n');
    expect(conflicts(chunks)).toHaveLength(2);
    const marked = text(chunks, [null, 'theirs']);
    expect(marked).toContain('<<<<<<< #1 feature (source)\nx\n');
    expect(marked.endsWith('3\n4\nY\n')).toBe(true);
  });

  it('makes changes touching at one base position conflict, as git does', () => {
    // ours changes line 2, theirs inserts after it: adjacent
    const chunks = mergeRegions('a\nb\nc\n', 'a\nB\nc\n', 'a\nb\nnew\nc\n');
    expect(conflicts(chunks)).toEqual([{ kind: 'conflict', base: 'b\n', ours: 'B\n', theirs: 'b\nnew\n' }]);
    // insertions at the same place
    expect(conflicts(mergeRegions('a\nz\n', 'a\nours\nz\n', 'a\ntheirs\nz\n'))).toEqual([{ kind: 'conflict', base: '', ours: 'ours\n', theirs: 'theirs\n' }]);
  });

  it('merges an add/add conflict over an empty base', () => {
    const chunks = mergeRegions('', 'feature\n', 'main\n');
    expect(chunks).toEqual([{ kind: 'conflict', base: '', ours: 'feature\n', theirs: 'main\n' }]);
    expect(text(chunks, ['both'])).toBe('feature\nmain\n');
  });

  it('keeps CRLF line ends exact and writes markers with them', () => {
    const chunks = mergeRegions('a\r\nb\r\nc\r\n', 'a\r\nB1\r\nc\r\n', 'a\r\nB2\r\nc\r\n');
    expect(text(chunks, ['ours'], '\r\n')).toBe('a\r\nB1\r\nc\r\n');
    expect(lineEndingOf(['a\r\nb\r\n', 'x\r\n'])).toBe('\r\n');
    expect(lineEndingOf(['a\r\nb\n'])).toBe('\n');
    expect(lineEndingOf(['no newline'])).toBe('\n');
    const marked = text(chunks, [null], '\r\n');
    expect(marked).toBe('a\r\n<<<<<<< #1 feature (source)\r\nB1\r\n||||||| base\r\nb\r\n=======\r\nB2\r\n>>>>>>> #1 main (target)\r\nc\r\n');
    // a line-end-only change is a change
    expect(conflicts(mergeRegions('a\n', 'a\r\n', 'b\n'))).toHaveLength(1);
  });

  it('keeps a last line without newline exact, and terminates it only between markers and for both', () => {
    const chunks = mergeRegions('a\nend', 'a\nend-feature', 'a\nend-main');
    expect(conflicts(chunks)).toEqual([{ kind: 'conflict', base: 'end', ours: 'end-feature', theirs: 'end-main' }]);
    expect(text(chunks, ['ours'])).toBe('a\nend-feature');
    expect(text(chunks, ['theirs'])).toBe('a\nend-main');
    expect(text(chunks, ['both'])).toBe('a\nend-feature\nend-main');
    expect(text(chunks, [null])).toBe('a\n<<<<<<< #1 feature (source)\nend-feature\n||||||| base\nend\n=======\nend-main\n>>>>>>> #1 main (target)\n');
    // one side adds the missing newline, the other changes the line
    expect(conflicts(mergeRegions('x', 'x\n', 'y'))).toEqual([{ kind: 'conflict', base: 'x', ours: 'x\n', theirs: 'y' }]);
  });

  it('takes text that looks like markers for content: markers get longer than any run in the file', () => {
    const ours = 'intro\n<<<<<<< HEAD\nfrom a doc\n=======\nother\n>>>>>>> branch\nend ours\n';
    const theirs = 'intro\n<<<<<<< HEAD\nfrom a doc\n=======\nother\n>>>>>>> branch\nend theirs\n';
    const base = 'intro\n<<<<<<< HEAD\nfrom a doc\n=======\nother\n>>>>>>> branch\nend\n';
    expect(markerSizeOf([base, ours, theirs])).toBe(8);
    expect(markerSizeOf(['plain\n'])).toBe(7);
    expect(markerSizeOf(['<<<<<<<<<<<< twelve'])).toBe(13);
    const chunks = mergeRegions(base, ours, theirs);
    expect(conflicts(chunks)).toEqual([{ kind: 'conflict', base: 'end\n', ours: 'end ours\n', theirs: 'end theirs\n' }]);
    // the file's own marker-like lines are no markers of its size; ours are
    expect(markerLines(text(chunks, ['ours'], '\n', 8), 8)).toEqual([]);
    expect(markerLines(text(chunks, [null], '\n', 8), 8)).toEqual([7, 9, 11, 13]);
  });

  it('finds leftover markers by line, CRLF ones too, and not marker characters inside a line', () => {
    expect(markerLines('a\n<<<<<<< x\nb\n=======\nc\n>>>>>>>\n', 7)).toEqual([2, 4, 6]);
    expect(markerLines('a\r\n|||||||\r\n', 7)).toEqual([2]);
    expect(markerLines('x <<<<<<< y\n<<<<<<<x\n======== \n', 7)).toEqual([3]);
    expect(markerLines('<<<<<<<', 8)).toEqual([]);
  });

  it('brings a submitted text (CRLF from the browser) back to the file line end', () => {
    expect(withLineEnding('a\r\nb\r\n', '\n')).toBe('a\nb\n');
    expect(withLineEnding('a\r\nb\n', '\r\n')).toBe('a\r\nb\r\n');
  });

  it('merges many scattered changes: each side alone is taken, touching changes conflict, choices rebuild the file', () => {
    const base = Array.from({ length: 300 }, (_, i) => `line ${i}\n`).join('');
    const ours = Array.from({ length: 300 }, (_, i) => (i % 10 === 0 || i === 151 ? `ours ${i}\n` : `line ${i}\n`)).join('');
    const theirs = Array.from({ length: 300 }, (_, i) => (i % 10 === 5 || i === 150 ? `theirs ${i}\n` : `line ${i}\n`)).join('');
    const chunks = mergeRegions(base, ours, theirs);
    // 150 (theirs) and 151 (ours) touch: one region; every other change is one side's
    expect(conflicts(chunks)).toEqual([{ kind: 'conflict', base: 'line 150\nline 151\n', ours: 'ours 150\nours 151\n', theirs: 'theirs 150\nline 151\n' }]);
    const merged = text(chunks, ['ours']);
    expect(merged).toContain('theirs 5\nline 6\n');
    expect(merged).toContain('line 9\nours 10\n');
    expect(splitLines(merged)).toHaveLength(300);
  });
});
