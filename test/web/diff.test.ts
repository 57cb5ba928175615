import fs from 'node:fs/promises';
import path from 'node:path';
import { renderToString } from 'preact-render-to-string';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitDiffOf, parseCommitDiff, type CommitDiff, type FileDiff } from '../../src/domain/repositories/diff.js';
import { EMPTY_TREE_HASH, readDiff } from '../../src/git/diff.js';
import { DiffView, diffFileKey, diffLineId } from '../../src/web/components/diff.js';
import { markRanges, splitHighlightedLines, wordChanges } from '../../src/web/components/diff-lines.js';
import { commitFiles, git, makeWorkTree } from '../helpers/server.js';

/** The diff of two commits read from git, parsed, capped and rendered (the commit, compare and pull request pages). */
describe('commit diff', () => {
  let work: string;
  let repo: string;
  let first: string;
  let second: string;

  beforeAll(async () => {
    work = await makeWorkTree({ 'a.txt': 'one\ntwo\nthree\n', 'old name.txt': 'same\ncontent\nhere\nfor\nrename\n', 'bin.dat': 'x\0y' });
    first = (await git(work, ['rev-parse', 'HEAD'])).trim();
    await git(work, ['mv', 'old name.txt', 'new name.txt']);
    await fs.writeFile(path.join(work, 'bin.dat'), 'x\0z');
    second = await commitFiles(
      work,
      { 'a.txt': 'one\n2\nthree\nfour', 'big.txt': Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n') + '\n' },
      'change',
    );
    repo = path.join(work, '.git');
  }, 60_000);

  afterAll(async () => {
    await fs.rm(work, { recursive: true, force: true });
  });

  it('lists every file with line numbers, renames, binaries and the missing newline', async () => {
    const { stats, patch } = await readDiff(repo, first, second, 1024 * 1024);
    expect(patch.truncated).toBe(false);
    const files = parseCommitDiff(stats, patch, { maxFileLines: 1000, maxTotalLines: 1000 });
    const byPath = new Map(files.map((f) => [f.newPath ?? f.oldPath, f]));
    const a = byPath.get('a.txt')!;
    expect(a.status).toBe('modified');
    expect([a.additions, a.deletions]).toEqual([2, 1]);
    const lines = a.hunks[0].lines;
    expect(lines.map((l) => [l.type, l.oldLine, l.newLine, l.text])).toEqual([
      ['context', 1, 1, 'one'],
      ['delete', 2, null, 'two'],
      ['add', null, 2, '2'],
      ['context', 3, 3, 'three'],
      ['add', null, 4, 'four'],
    ]);
    expect(lines[4].noNewlineAtEnd).toBe(true);
    expect(byPath.get('new name.txt')).toMatchObject({ status: 'renamed', oldPath: 'old name.txt', hunks: [], additions: 0 });
    expect(byPath.get('bin.dat')).toMatchObject({ binary: true, hunks: [] });
    expect(byPath.get('big.txt')).toMatchObject({ status: 'added', oldPath: null, additions: 30 });

    const rootDiff = await readDiff(repo, EMPTY_TREE_HASH, first, 1024 * 1024);
    const root = parseCommitDiff(rootDiff.stats, rootDiff.patch, {
      maxFileLines: 1000,
      maxTotalLines: 1000,
    });
    expect(root.map((f) => f.status)).toEqual(['added', 'added', 'added']);
    expect(await readDiff(repo, second, second, 1024 * 1024)).toEqual({ stats: [], patch: { text: '', truncated: false, budgetReached: false } });
  });

  it('caps lines per file, lines in total and bytes read, and says so', async () => {
    const { stats, patch } = await readDiff(repo, first, second, 1024 * 1024);
    const perFile = parseCommitDiff(stats, patch, { maxFileLines: 10, maxTotalLines: 1000 });
    const big = perFile.find((f) => f.newPath === 'big.txt')!;
    expect(big.truncated).toBe('file');
    expect(big.hunks[0].lines).toHaveLength(10);
    expect(big.additions).toBe(30);

    const firstOnly = parseCommitDiff(stats, patch, { maxFileLines: 1000, maxTotalLines: 1000, maxFiles: 1 });
    expect(firstOnly.filter((f) => f.hunks.length > 0)).toHaveLength(1);
    expect(firstOnly.filter((f) => f.truncated === 'total' && f.hunks.length === 0).length).toBeGreaterThan(0);

    const total = parseCommitDiff(stats, patch, { maxFileLines: 1000, maxTotalLines: 5 });
    expect(total.find((f) => f.newPath === 'a.txt')!.truncated).toBeNull();
    expect(total.find((f) => f.newPath === 'big.txt')).toMatchObject({ truncated: 'total', hunks: [] });

    // read with the budget, git stops at the first file it leaves out, and the files are the same
    // (modes aside where both sides have the same one: only a change of mode is shown)
    const shown = (files: FileDiff[]) =>
      files.map((f) => ({ ...f, oldMode: f.oldMode === f.newMode ? null : f.oldMode, newMode: f.oldMode === f.newMode ? null : f.newMode }));
    for (const caps of [
      { maxFiles: 1, maxFileLines: 1000, maxTotalLines: 1000 },
      { maxFiles: 300, maxFileLines: 1000, maxTotalLines: 5 },
      { maxFiles: 300, maxFileLines: 10, maxTotalLines: 12 },
      { maxFiles: 300, maxFileLines: 1000, maxTotalLines: 1000 },
    ]) {
      const budgeted = await readDiff(repo, first, second, 1024 * 1024, 3, [], caps);
      expect(budgeted.stats).toEqual(stats);
      expect(shown(parseCommitDiff(budgeted.stats, budgeted.patch, caps))).toEqual(shown(parseCommitDiff(stats, patch, caps)));
      expect(budgeted.patch.budgetReached).toBe(caps.maxTotalLines < 1000 || caps.maxFiles === 1);
      expect(budgeted.patch.text.length < patch.text.length).toBe(budgeted.patch.budgetReached);
    }

    const { stats: cutStats, patch: cut } = await readDiff(repo, first, second, 200);
    expect(cutStats).toEqual(stats);
    expect(cut.truncated).toBe(true);
    expect(cut.text.length).toBeLessThanOrEqual(200);
    const files = parseCommitDiff(stats, cut, { maxFileLines: 1000, maxTotalLines: 1000 });
    expect(files).toHaveLength(stats.length);
    expect(files.at(-1)!.truncated).toBe('bytes');
  });

  it('renders hunks with line anchors and content under a chosen line', async () => {
    const { stats, patch } = await readDiff(repo, first, second, 1024 * 1024);
    const files = parseCommitDiff(stats, patch, { maxFileLines: 1000, maxTotalLines: 1000 });
    const diff: CommitDiff = { oldCommit: first, newCommit: second, files, fileCount: files.length, additions: 33, deletions: 1, truncated: false };
    const a = files.find((f) => f.newPath === 'a.txt')!;
    const added = a.hunks[0].lines[2];
    const html = renderToString(
      DiffView({
        diff,
        renderBelowLine: (file, line) => (file === a && line === added ? 'a <comment>' : null),
      }),
    );
    const id = diffLineId(a, added);
    expect(id).toMatch(/^diff-[0-9a-f]{12}R2$/);
    expect(html).toContain(`id="${id}"`);
    expect(html).toContain(`href="#${id}"`);
    expect(html).toContain(`id="${diffLineId(a, a.hunks[0].lines[1])}"`);
    expect(diffLineId(a, a.hunks[0].lines[1])).toMatch(/L2$/);
    expect(html).toContain('<tr class="diff-below"><td colspan="3">a &lt;comment></td></tr>');
    expect(html.match(/class="diff-below"/g)).toHaveLength(1);
    expect(html).toContain('old name.txt → new name.txt');
    expect(html).toContain('Binary file not shown.');
  });

  it('lists the first maxListedFiles files and counts the others with their lines; the summary and the tree say so', async () => {
    const { stats, patch } = await readDiff(repo, first, second, 1024 * 1024);
    const caps = { maxFileLines: 1000, maxTotalLines: 1000, maxFiles: 300, maxListedFiles: 1 };
    const diff = commitDiffOf(first, second, stats, patch, caps);
    expect(diff.files.map((f) => f.newPath)).toEqual(['a.txt']);
    expect(diff).toMatchObject({ fileCount: 4, additions: 32, deletions: 1, truncated: true });
    const whole = commitDiffOf(first, second, stats, patch, { ...caps, maxListedFiles: 3_000 });
    expect(whole).toMatchObject({ fileCount: 4, additions: 32, deletions: 1, truncated: false });
    expect(whole.files).toHaveLength(4);

    const html = renderToString(DiffView({ diff }));
    expect(html).toContain('4 files changed, <span class="diff-additions">32 additions</span>');
    expect(html.match(/<li class="diff-tree-file/g)).toHaveLength(1);
    expect(html).toContain('3 more changed files are not listed: a diff lists the first 1.');
    expect(html).toContain('3 more files are not shown: the diff is large.');
    const many = renderToString(DiffView({ diff: { ...diff, fileCount: 3_002 } }));
    expect(many).toContain('3,002 files changed');
    expect(many).toContain('3,001 more changed files are not listed: a diff lists the first 1.');
  });

  it('collapses a file of more than 1,000 changed lines behind "Load diff" until loaded', async () => {
    const { stats, patch } = await readDiff(repo, first, second, 1024 * 1024);
    const files = parseCommitDiff(stats, patch, { maxFileLines: 1000, maxTotalLines: 1000 });
    const big = { ...files.find((f) => f.newPath === 'big.txt')!, additions: 1001 };
    const diff: CommitDiff = { oldCommit: first, newCommit: second, files: [big], fileCount: 1, additions: 1001, deletions: 0, truncated: false };
    const state = {
      layout: 'unified' as const,
      texts: new Map(),
      expanded: new Set<string>(),
      loaded: new Set<string>(),
      loadedFiles: new Map(),
      href: () => '/x?load=k',
    };
    const collapsed = renderToString(DiffView({ diff, state }));
    expect(collapsed).toContain('Large diff (1,001 changed lines): not shown.');
    expect(collapsed).toContain('class="diff-load"');
    expect(collapsed).not.toContain('<table');
    const loaded = renderToString(DiffView({ diff, state: { ...state, loaded: new Set([diffFileKey(big)]) } }));
    expect(loaded).toContain('<table class="diff">');
  });
});

/** The line HTML of the diff view: highlighted lines that stand alone, and intra-line marks nested in them. */
describe('diff lines', () => {
  it('splits highlighted HTML into lines, closing and reopening spans', () => {
    expect(splitHighlightedLines('<span class="a">x\n<span class="b">y\nz</span></span>w')).toEqual([
      '<span class="a">x</span>',
      '<span class="a"><span class="b">y</span></span>',
      '<span class="a"><span class="b">z</span></span>w',
    ]);
  });

  it('marks ranges of the text through tags and entities', () => {
    expect(markRanges('a &lt;<span class="k">bc</span>d', [[1, 4]], 'ins')).toBe('a<ins> &lt;</ins><span class="k"><ins>b</ins>c</span>d');
    expect(markRanges('abc', [], 'del')).toBe('abc');
  });

  it('finds the words that changed, and none for a rewrite or an overlong line', () => {
    expect(wordChanges('return a + b;', 'return b + a;')).toEqual({
      removed: [
        [7, 8],
        [11, 12],
      ],
      added: [
        [7, 8],
        [11, 12],
      ],
    });
    expect(wordChanges('alpha', 'beta')).toBeNull();
    expect(wordChanges('x'.repeat(1001), 'x')).toBeNull();
  });
});
