import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergeConflictDetails, parseMergeTreeOutput, writeResolvedTree } from '../../src/git/merge-conflicts.js';
import { readBlobs } from '../../src/git/blob-batches.js';
import { rmSync } from 'node:fs';
import { git, show, tempDir } from './helpers.js';

/** A commit of exactly `files` on `parents` (the helpers' writeCommit changes its first parent's tree, which cannot remove files in a bare repository). */
function commitOf(repo: string, parents: string[], files: Record<string, string>): string {
  const env = { GIT_INDEX_FILE: `${repo}/test-index` };
  try {
    git(repo, ['read-tree', '--empty'], { env });
    for (const [path, content] of Object.entries(files)) {
      git(repo, ['update-index', '--add', '--cacheinfo', `100644,${git(repo, ['hash-object', '-w', '--stdin'], { input: content })},${path}`], { env });
    }
    const tree = git(repo, ['write-tree'], { env });
    return git(repo, ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-m', 'commit']);
  } finally {
    rmSync(env.GIT_INDEX_FILE, { force: true });
  }
}

/** `git merge-tree --write-tree -z --messages` read into stages and messages, blobs read within bounds, a resolved tree written. */
describe('merge conflict details (docs/architecture.md#git-merge-conflicts)', () => {
  const dir = tempDir('merge-conflicts');
  const repo = `${dir.path}/r.git`;
  let source: string;
  let target: string;

  beforeAll(() => {
    git(dir.path, ['init', '-q', '--bare', repo]);
    const base = commitOf(repo, [], {
      'text.txt': 'one\ntwo\nthree\n',
      'md.txt': 'keep\n',
      'ren.txt': 'ren\nx\ny\n',
      'rr.txt': 'rr\n',
      'del.txt': 'a\n',
      'same.txt': 's\n',
    });
    source = commitOf(repo, [base], {
      'text.txt': 'one\nTWO-feature\nthree\n',
      'add.txt': 'feature\n',
      'md.txt': 'keep changed\n',
      'ren2.txt': 'ren\nx\ny\nz\n',
      'rr-feature.txt': 'rr\n',
      'same.txt': 'S\n',
    });
    target = commitOf(repo, [base], {
      'text.txt': 'one\nTWO-main\nthree\n',
      'add.txt': 'main\n',
      'rr-main.txt': 'rr\n',
      'del.txt': 'a changed\n',
      'same.txt': 's\n',
    });
  });
  afterAll(() => dir.remove());

  it('parses the tree, the stages of each conflicted path and the messages with their paths', () => {
    const out = Buffer.from(
      'tree0\x00' +
        '100644 aaa 1\tx y.txt\x00100644 bbb 2\tx y.txt\x00100755 ccc 3\tx y.txt\x00' +
        '\x00' +
        '1\x00x y.txt\x00Auto-merging\x00Auto-merging x y.txt\n\x00' +
        '2\x00new\x00old\x00CONFLICT (rename/delete)\x00CONFLICT (rename/delete): old renamed to new\n\x00',
    );
    expect(parseMergeTreeOutput(out, 1)).toEqual({
      tree: 'tree0',
      clean: false,
      paths: [{ path: 'x y.txt', base: { mode: '100644', oid: 'aaa' }, ours: { mode: '100644', oid: 'bbb' }, theirs: { mode: '100755', oid: 'ccc' } }],
      messages: [
        { paths: ['x y.txt'], type: 'Auto-merging', text: 'Auto-merging x y.txt' },
        { paths: ['new', 'old'], type: 'CONFLICT (rename/delete)', text: 'CONFLICT (rename/delete): old renamed to new' },
      ],
    });
    expect(parseMergeTreeOutput(Buffer.from('tree1\n\x00\x00'), 0)).toEqual({ tree: 'tree1', clean: true, paths: [], messages: [] });
  });

  it('reports content, add/add, modify/delete, rename/delete and rename/rename conflicts as git does', async () => {
    const details = await mergeConflictDetails(repo, source, target);
    expect(details.clean).toBe(false);
    const stages = Object.fromEntries(details.paths.map((p) => [p.path, [p.base, p.ours, p.theirs].map((s) => (s ? 1 : 0)).join('')]));
    expect(stages).toEqual({
      'add.txt': '011',
      'del.txt': '101',
      'md.txt': '110',
      'ren2.txt': '110',
      'rr-feature.txt': '010',
      'rr-main.txt': '001',
      'rr.txt': '100',
      'text.txt': '111',
    });
    const types = details.messages.filter((m) => m.type.startsWith('CONFLICT')).map((m) => [m.type, m.paths]);
    expect(types).toContainEqual(['CONFLICT (rename/delete)', ['ren2.txt', 'ren.txt']]);
    expect(types).toContainEqual(['CONFLICT (rename/rename)', ['rr.txt', 'rr-feature.txt', 'rr-main.txt']]);
    expect(types).toContainEqual(['CONFLICT (modify/delete)', ['md.txt']]);
    // the merged tree holds the clean merge of the rest
    expect(show(repo, details.tree, 'same.txt')).toBe('S');
    expect(await mergeConflictDetails(repo, source, source)).toMatchObject({ clean: true, paths: [] });
  });

  it('reads blobs within a per-blob and a total bound, sizing the rest', async () => {
    const details = await mergeConflictDetails(repo, source, target);
    const text = details.paths.find((p) => p.path === 'text.txt')!;
    const oids = [text.base!.oid, text.ours!.oid, text.theirs!.oid];
    const all = await readBlobs(repo, [...oids, oids[0]], 1024, 1024);
    expect([...all.values()].map((b) => b.content?.toString('utf8'))).toEqual(['one\ntwo\nthree\n', 'one\nTWO-feature\nthree\n', 'one\nTWO-main\nthree\n']);
    const bounded = await readBlobs(repo, oids, 15, 30);
    expect(bounded.get(oids[0])).toEqual({ size: 14, content: Buffer.from('one\ntwo\nthree\n') });
    expect(bounded.get(oids[1])).toEqual({ size: 22, content: null });
    expect(bounded.get(oids[2])).toEqual({ size: 19, content: null });
  });

  it('writes the merged tree with each path set to a version, new content, or removed', async () => {
    const details = await mergeConflictDetails(repo, source, target);
    const add = details.paths.find((p) => p.path === 'add.txt')!;
    const tree = await writeResolvedTree(repo, details.tree, [
      { path: 'add.txt', entry: add.theirs! },
      { path: 'text.txt', content: Buffer.from('one\nresolved\nthree\n'), mode: '100755' },
      { path: 'md.txt', removed: true },
      { path: 'rr.txt', removed: true },
    ]);
    expect(show(repo, tree, 'add.txt')).toBe('main');
    expect(show(repo, tree, 'text.txt')).toBe('one\nresolved\nthree');
    expect(git(repo, ['ls-tree', tree, '--', 'text.txt'])).toMatch(/^100755 /);
    expect(git(repo, ['ls-tree', '--name-only', tree]).split('\n')).not.toContain('md.txt');
    expect(show(repo, tree, 'same.txt')).toBe('S');
  });
});
