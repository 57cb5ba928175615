import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastCommitsOf } from '../../src/git/last-commits.js';
import { commitFiles, git } from '../helpers/server.js';

/**
 * The last commit of each tree entry from one walk, checked against `git log -1 -- <entry>`
 * run for each entry alone: renames, merges, entries never changed since the root commit.
 */
describe('last commits of a directory', () => {
  let work: string;
  let repo: string;
  const head = async () => (await git(work, ['rev-parse', 'HEAD'])).trim();
  const perEntry = async (commit: string, dir: string, names: string[]) =>
    new Map(
      await Promise.all(names.map(async (n) => [n, (await git(work, ['log', '-1', '--format=%H', commit, '--', dir ? `${dir}/${n}` : n])).trim()] as const)),
    );
  const hashes = (found: Map<string, { hash: string }>) => new Map([...found].map(([n, c]) => [n, c.hash]));

  beforeAll(async () => {
    work = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-last-'));
    repo = path.join(work, '.git');
    await git(work, ['init', '-q', '-b', 'main']);
    await commitFiles(work, { LICENSE: 'root only\n', 'src/a.ts': 'a\n', 'src/b.ts': 'b\n', 'src/deep/c.ts': 'c\n', 'docs/old.md': 'old\n' }, 'root');
    await commitFiles(work, { 'src/a.ts': 'a2\n' }, 'change a');
    await git(work, ['mv', 'docs/old.md', 'docs/new.md']);
    await git(work, ['commit', '-q', '-m', 'rename old to new']);
    await git(work, ['checkout', '-q', '-b', 'side']);
    await commitFiles(work, { 'src/deep/c.ts': 'c2\n' }, 'side: change deep c');
    await git(work, ['checkout', '-q', 'main']);
    await commitFiles(work, { 'src/b.ts': 'b2\n' }, 'main: change b');
    await git(work, ['merge', '-q', '--no-ff', '-m', 'merge side', 'side']);
  });
  afterAll(async () => {
    await fs.rm(work, { recursive: true, force: true });
  });

  it('names the commit that last changed each entry, as git log -1 does for each alone', async () => {
    const commit = await head();
    for (const [dir, names] of [
      ['', ['LICENSE', 'docs']],
      ['src', ['a.ts', 'b.ts', 'deep']],
      ['docs', ['new.md']],
    ] as const) {
      const found = await lastCommitsOf(repo, commit, dir, names);
      expect(hashes(found)).toEqual(await perEntry(commit, dir, [...names]));
    }
    // a directory both sides of a merge changed: the newest commit under it, not the merge
    const top = await lastCommitsOf(repo, commit, '', ['src']);
    expect(['main: change b', 'side: change deep c']).toContain(top.get('src')!.subject);
    const src = await lastCommitsOf(repo, commit, 'src', ['a.ts', 'b.ts', 'deep']);
    expect(src.get('deep')!.subject).toBe('side: change deep c');
    expect(src.get('b.ts')!.subject).toBe('main: change b');
    expect(src.get('a.ts')).toMatchObject({ subject: 'change a', authorName: 'Test Author' });
    expect(Math.abs(src.get('a.ts')!.authorDate - Date.now())).toBeLessThan(600_000);
  });

  it('credits a renamed file to its rename and an untouched file to the root commit', async () => {
    const commit = await head();
    const root = (await git(work, ['rev-list', '--max-parents=0', 'HEAD'])).trim();
    const top = await lastCommitsOf(repo, commit, '', ['LICENSE', 'docs']);
    expect(top.get('LICENSE')!.hash).toBe(root);
    expect(top.get('docs')!.subject).toBe('rename old to new');
  });

  it('stops early, and leaves out names the history never changed', async () => {
    const commit = await head();
    const found = await lastCommitsOf(repo, commit, 'src', ['b.ts', 'missing.ts']);
    expect([...found.keys()]).toEqual(['b.ts']);
    expect((await lastCommitsOf(repo, commit, 'src', [])).size).toBe(0);
    // a walk past its time limit answers what it found, without failing
    const limited = await lastCommitsOf(repo, commit, '', ['LICENSE', 'src', 'never'], 0);
    expect([...limited.keys()].every((name) => name === 'LICENSE' || name === 'src')).toBe(true);
  });
});
