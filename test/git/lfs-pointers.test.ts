/**
 * The Git LFS pointers a push adds and a commit holds, found among thousands of small blobs read a
 * chunk at a time.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { endObjectReaders } from '../../src/git/object-reader.js';
import { pointerFilesAt, pushedLfsPointers } from '../../src/git/lfs-pointers.js';
import { git, repositoryMaker, tempDir, writeCommit } from './helpers.js';

const tmp = tempDir('lfs-pointers');
afterAll(() => {
  endObjectReaders();
  tmp.remove();
});
const newRepo = repositoryMaker(tmp.path);

const pointer = (n: number) => `version https://git-lfs.github.com/spec/v1\noid sha256:${String(n).padStart(64, '0')}\nsize ${n}\n`;

describe('LFS pointers', () => {
  it('finds the pointers among the blobs commits bring that no ref reaches, and the pointer files of a commit', async () => {
    const repo = await newRepo();
    const old = writeCommit(repo, { files: { 'old.bin': pointer(1), 'a.txt': 'a\n' } });
    git(repo, ['update-ref', 'refs/heads/main', old]);
    // 2,500 small blobs (three chunks of reads), pointers among them, one too large to be a pointer
    const files: Record<string, string> = { 'old.bin': pointer(1), 'large.txt': 'x'.repeat(2000) };
    for (let i = 0; i < 2500; i++) files[`f/${i}.txt`] = i % 1000 === 999 ? pointer(i) : `small ${i}\n`;
    const pushed = writeCommit(repo, { parents: [old], files });

    const found = (await pushedLfsPointers(repo, [pushed], {})).sort((a, b) => a.size - b.size);
    expect(found).toEqual([
      { oid: `${'0'.repeat(61)}999`, size: 999 },
      { oid: `${'0'.repeat(60)}1999`, size: 1999 },
    ]);
    expect(await pushedLfsPointers(repo, [old], {})).toEqual([]);

    const atCommit = await pointerFilesAt(repo, pushed);
    expect(atCommit.map((p) => [p.path, p.size])).toEqual([
      ['f/1999.txt', 1999],
      ['f/999.txt', 999],
      ['old.bin', 1],
    ]);
  });
});
