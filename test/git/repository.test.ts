import { afterAll, describe, expect, it } from 'vitest';
import { BadRequest, Conflict, NotFound } from '../../src/errors.js';
import { GitError } from '../../src/git/command.js';
import {
  assertValidBranchName,
  branchesAndTags,
  branchHead,
  commitTree,
  deleteRef,
  fetchCommits,
  getDefaultBranch,
  isAncestor,
  listBranches,
  listRefs,
  mergeBase,
  mergeTree,
  mergeTreeWithBase,
  pickDefaultBranch,
  readCommit,
  readCommits,
  rebaseCommits,
  RefUpdateConflict,
  resolveCommit,
  revList,
  setDefaultBranch,
  updateRef,
  updateRefs,
  ZERO_HASH,
} from '../../src/git/repository.js';
import { git, repositoryMaker, show, tempDir, writeCommit } from './helpers.js';

const tmp = tempDir('repo');
afterAll(() => tmp.remove());

const newRepo = repositoryMaker(tmp.path);

describe('initBareRepository and the default branch', () => {
  it('creates a bare repository with an unborn HEAD and the server config', async () => {
    const repo = await newRepo();
    expect(git(repo, ['rev-parse', '--is-bare-repository'])).toBe('true');
    expect(git(repo, ['config', 'uploadpack.allowReachableSHA1InWant'])).toBe('true');
    expect(git(repo, ['config', 'receive.denyNonFastForwards'])).toBe('false');
    expect(git(repo, ['config', 'core.logAllRefUpdates'])).toBe('false');
    expect(git(repo, ['config', 'diff.algorithm'])).toBe('histogram');
    expect(git(repo, ['config', 'http.receivepack'])).toBe('true');
    expect(await getDefaultBranch(repo)).toBeNull();
    expect(await listBranches(repo)).toEqual([]);
  });

  it('reports a default branch only when HEAD points at an existing branch', async () => {
    const repo = await newRepo();
    const c = writeCommit(repo, { files: { 'a.txt': 'a' } });
    await updateRef(repo, 'refs/heads/feature', c, null);
    expect(await getDefaultBranch(repo)).toBeNull();
    await setDefaultBranch(repo, 'feature');
    expect(await getDefaultBranch(repo)).toBe('feature');
    expect(git(repo, ['symbolic-ref', 'HEAD'])).toBe('refs/heads/feature');
    await expect(setDefaultBranch(repo, 'missing')).rejects.toThrow(new BadRequest('Branch not exist: missing'));
    await expect(setDefaultBranch(repo, 'bad..name')).rejects.toBeInstanceOf(BadRequest);
    await deleteRef(repo, 'refs/heads/feature');
    expect(await getDefaultBranch(repo)).toBeNull();
  });

  it('lists branches and tags with the branch HEAD names in one call', async () => {
    const repo = await newRepo();
    expect(await branchesAndTags(repo)).toEqual({ refs: new Map(), head: null });
    const c = writeCommit(repo, { files: { 'a.txt': 'a' } });
    await updateRefs(repo, [
      { ref: 'refs/heads/main', newHash: c },
      { ref: 'refs/heads/dev', newHash: c },
      // a tag named as the branch HEAD names is not the default branch
      { ref: 'refs/tags/main', newHash: c },
      { ref: 'refs/pulls/1/head', newHash: c },
    ]);
    await setDefaultBranch(repo, 'main');
    expect(await branchesAndTags(repo)).toEqual({
      refs: new Map([
        ['refs/heads/dev', c],
        ['refs/heads/main', c],
        ['refs/tags/main', c],
      ]),
      head: 'main',
    });
    // HEAD naming a branch that does not exist (dangling)
    await deleteRef(repo, 'refs/heads/main');
    expect((await branchesAndTags(repo)).head).toBeNull();
  });

  it('picks main, then master, then the alphabetically first branch', () => {
    expect(pickDefaultBranch(['zeta', 'master', 'main'])).toBe('main');
    expect(pickDefaultBranch(['zeta', 'master'])).toBe('master');
    expect(pickDefaultBranch(['zeta', 'alpha'])).toBe('alpha');
    expect(pickDefaultBranch([])).toBeNull();
  });

  it('validates branch names with git', async () => {
    expect(await assertValidBranchName('feature/x-1')).toBe('feature/x-1');
    for (const bad of ['a..b', '-x', 'HEAD', 'a b', 'x.lock', 'a@{1}', '', 'end/', 'a~1']) {
      await expect(assertValidBranchName(bad)).rejects.toBeInstanceOf(BadRequest);
    }
  });
});

describe('refs', () => {
  it('resolves revisions to commits', async () => {
    const repo = await newRepo();
    const c = writeCommit(repo, { files: { 'a.txt': 'a' } });
    await updateRef(repo, 'refs/heads/main', c, null);
    expect(await resolveCommit(repo, 'main')).toBe(c);
    expect(await resolveCommit(repo, c.slice(0, 10))).toBe(c);
    expect(await resolveCommit(repo, 'nope')).toBeNull();
    expect(await resolveCommit(repo, `${c}:a.txt`)).toBeNull();
    await expect(resolveCommit(repo, '--all')).rejects.toBeInstanceOf(BadRequest);
    expect(await branchHead(repo, 'main')).toBe(c);
    expect(await branchHead(repo, 'other')).toBeNull();
  });

  it('updates refs with compare-and-swap and reports a lost race as a 409', async () => {
    const repo = await newRepo();
    const a = writeCommit(repo, { files: { 'a.txt': 'a' } });
    const b = writeCommit(repo, { parents: [a], files: { 'a.txt': 'b' } });
    await updateRef(repo, 'refs/heads/main', a, null);
    const lost = updateRef(repo, 'refs/heads/main', b, null);
    await expect(lost).rejects.toBeInstanceOf(RefUpdateConflict);
    await expect(lost).rejects.toBeInstanceOf(Conflict);
    await expect(lost).rejects.toThrow('Ref refs/heads/main has moved');
    await updateRef(repo, 'refs/heads/main', b, a);
    expect(await branchHead(repo, 'main')).toBe(b);
    const stale = updateRef(repo, 'refs/heads/main', a, a);
    await expect(stale).rejects.toMatchObject({ status: 409, ref: 'refs/heads/main' });
    expect(await branchHead(repo, 'main')).toBe(b);
    await expect(updateRef(repo, 'refs/heads/x..y', a, null)).rejects.toBeInstanceOf(BadRequest);
    await expect(updateRef(repo, 'refs/heads/x', 'abc', null)).rejects.toBeInstanceOf(BadRequest);
  });

  it('applies several updates atomically', async () => {
    const repo = await newRepo();
    const a = writeCommit(repo, { files: { 'a.txt': 'a' } });
    const b = writeCommit(repo, { parents: [a], files: { 'a.txt': 'b' } });
    await updateRefs(repo, [
      { ref: 'refs/heads/main', newHash: a, expectedOld: null },
      { ref: 'refs/pulls/1/head', newHash: b, expectedOld: null },
    ]);
    const before = await listRefs(repo);
    expect(before).toEqual(
      new Map([
        ['refs/heads/main', a],
        ['refs/pulls/1/head', b],
      ]),
    );
    await expect(
      updateRefs(repo, [
        { ref: 'refs/heads/main', newHash: b, expectedOld: a },
        { ref: 'refs/pulls/1/head', newHash: null, expectedOld: a },
      ]),
    ).rejects.toBeInstanceOf(RefUpdateConflict);
    expect(await listRefs(repo)).toEqual(before);
    await updateRefs(repo, [
      { ref: 'refs/heads/main', newHash: b, expectedOld: a },
      { ref: 'refs/pulls/1/head', newHash: null, expectedOld: b },
      { ref: 'refs/heads/new', newHash: a },
    ]);
    const after = await listRefs(repo);
    expect(after).toEqual(
      new Map([
        ['refs/heads/main', b],
        ['refs/heads/new', a],
      ]),
    );
    expect(await listBranches(repo)).toEqual([
      { name: 'main', commitHash: b },
      { name: 'new', commitHash: a },
    ]);
    await expect(deleteRef(repo, 'refs/heads/new', b)).rejects.toBeInstanceOf(RefUpdateConflict);
    await deleteRef(repo, 'refs/heads/new', a);
    await deleteRef(repo, 'refs/heads/never-existed');
    expect([...(await listRefs(repo)).keys()]).toEqual(['refs/heads/main']);
    // A failure that is no lost race (the new object does not exist) is the git fault itself.
    const missing = 'f'.repeat(40);
    const fault = updateRefs(repo, [{ ref: 'refs/heads/main', newHash: missing, expectedOld: b }]);
    await expect(fault).rejects.toBeInstanceOf(GitError);
    await expect(fault).rejects.toMatchObject({ exitCode: 128, args: expect.arrayContaining(['update-ref', '--stdin']) });
    await expect(fault).rejects.toThrow(missing);
    expect(await branchHead(repo, 'main')).toBe(b);
    expect(ZERO_HASH).toMatch(/^0{40}$/);
  });

  it('fetches a ref from another repository', async () => {
    const source = await newRepo();
    const target = await newRepo();
    const a = writeCommit(source, { files: { 'a.txt': 'a' } });
    const b = writeCommit(source, { parents: [a], files: { 'b.txt': 'b' } });
    await updateRef(source, 'refs/heads/feature', b, null);
    await fetchCommits(target, source, 'refs/heads/feature', 'refs/pulls/3/head');
    expect(await listRefs(target)).toEqual(new Map([['refs/pulls/3/head', b]]));
    expect(show(target, b, 'b.txt')).toBe('b');
    // forced update to an unrelated commit
    const c = writeCommit(source, { files: { 'c.txt': 'c' } });
    await updateRef(source, 'refs/heads/feature', c, b);
    await fetchCommits(target, source, 'refs/heads/feature', 'refs/pulls/3/head');
    expect((await listRefs(target)).get('refs/pulls/3/head')).toBe(c);
  });
});

describe('commits', () => {
  it('writes commits with the given identities and reads them back', async () => {
    const repo = await newRepo();
    const base = writeCommit(repo, { files: { 'a.txt': 'a' } });
    const tree = git(repo, ['rev-parse', `${base}^{tree}`]);
    const hash = await commitTree(repo, {
      tree,
      parents: [base],
      message: 'Subject line\n\nBody with ünïcode',
      author: { name: 'Ada <Lovelace>', email: 'ada@example.com', date: new Date('2024-05-01T12:34:56.789Z'), tzOffset: 120 },
      committer: { name: 'Grace', email: 'grace@example.com', date: new Date('2024-05-02T00:00:00Z'), tzOffset: -330 },
    });
    expect(git(repo, ['cat-file', 'commit', hash])).toContain('author Ada Lovelace <ada@example.com> 1714566896 +0200');
    expect(git(repo, ['cat-file', 'commit', hash])).toContain('committer Grace <grace@example.com> 1714608000 -0530');
    const commit = await readCommit(repo, hash);
    expect(commit).toEqual({
      hash,
      tree,
      parents: [base],
      author: { name: 'Ada Lovelace', email: 'ada@example.com', date: new Date('2024-05-01T12:34:56Z'), tzOffset: 120 },
      committer: { name: 'Grace', email: 'grace@example.com', date: new Date('2024-05-02T00:00:00Z'), tzOffset: -330 },
      message: 'Subject line\n\nBody with ünïcode\n',
    });
    const merge = await commitTree(repo, {
      tree,
      parents: [hash, base],
      message: 'merge\n',
      author: { name: 'A', email: 'a@x' },
      committer: { name: 'C', email: 'c@x' },
    });
    const [m, b, h] = await readCommits(repo, [merge, base, hash]);
    expect(m.parents).toEqual([hash, base]);
    expect(m.message).toBe('merge\n');
    expect(b.author.name).toBe('Ann Author');
    expect(b.committer).toEqual({ name: 'Carl Committer', email: 'carl@example.com', date: new Date(1700000100_000), tzOffset: 0 });
    expect(h.hash).toBe(hash);
    await expect(
      commitTree(repo, { tree, parents: [], message: 'x', author: { name: ' <> ', email: 'e' }, committer: { name: 'c', email: 'c' } }),
    ).rejects.toBeInstanceOf(BadRequest);
  });

  it('reports missing and malformed commits', async () => {
    const repo = await newRepo();
    const c = writeCommit(repo, { files: { 'a.txt': 'a' } });
    const tree = git(repo, ['rev-parse', `${c}^{tree}`]);
    await expect(readCommit(repo, 'f'.repeat(40))).rejects.toBeInstanceOf(NotFound);
    await expect(readCommit(repo, tree)).rejects.toBeInstanceOf(NotFound);
    await expect(readCommit(repo, 'HEAD')).rejects.toBeInstanceOf(BadRequest);
    expect(await readCommits(repo, [])).toEqual([]);
  });

  it('lists commits with include/exclude and options', async () => {
    const repo = await newRepo();
    const a = writeCommit(repo, { files: { 'a.txt': '1' } });
    const b = writeCommit(repo, { parents: [a], files: { 'a.txt': '2' } });
    const side = writeCommit(repo, { parents: [a], files: { 's.txt': 's' } });
    const m = writeCommit(repo, { parents: [b, side], files: { 's.txt': 's' } });
    const c = writeCommit(repo, { parents: [m], files: { 'a.txt': '3' } });
    expect(await revList(repo, [c], [a], { reverse: true, firstParent: true })).toEqual([b, m, c]);
    expect(new Set(await revList(repo, [c], [b]))).toEqual(new Set([side, m, c]));
    expect(await revList(repo, [c], [a], { noMerges: true, firstParent: true })).toEqual([c, b]);
    expect(await revList(repo, [c], [], { max: 2 })).toEqual([c, m]);
    expect(await revList(repo, [], [])).toEqual([]);
    await expect(revList(repo, ['--all'])).rejects.toBeInstanceOf(BadRequest);
  });
});

describe('merges', () => {
  it('checks ancestry and merge bases', async () => {
    const repo = await newRepo();
    const a = writeCommit(repo, { files: { 'a.txt': '1' } });
    const b = writeCommit(repo, { parents: [a], files: { 'a.txt': '2' } });
    const c = writeCommit(repo, { parents: [a], files: { 'c.txt': '2' } });
    const unrelated = writeCommit(repo, { files: { 'u.txt': 'u' } });
    expect(await isAncestor(repo, a, b)).toBe(true);
    expect(await isAncestor(repo, b, a)).toBe(false);
    expect(await isAncestor(repo, b, b)).toBe(true);
    // an absent commit gets the `missing` answer; a missing repository is a fault, never an answer
    const absent = 'f'.repeat(40);
    expect(await isAncestor(repo, absent, b, { missing: false })).toBe(false);
    expect(await isAncestor(repo, a, absent, { missing: true })).toBe(true);
    await expect(isAncestor(repo, absent, b)).rejects.toThrow(GitError);
    await expect(isAncestor(`${repo}-gone`, a, b, { missing: false })).rejects.toThrow(GitError);
    expect(await mergeBase(repo, b, c)).toBe(a);
    expect(await mergeBase(repo, b, unrelated)).toBeNull();
  });

  it('merges trees cleanly or reports the conflicted paths', async () => {
    const repo = await newRepo();
    const base = writeCommit(repo, { files: { 'f.txt': 'base\n', 'g.txt': 'g\n' } });
    const ours = writeCommit(repo, { parents: [base], files: { 'f.txt': 'ours\n', 'o.txt': 'o\n' } });
    const theirs = writeCommit(repo, { parents: [base], files: { 'g.txt': 'theirs\n' } });
    const clash = writeCommit(repo, { parents: [base], files: { 'f.txt': 'clash\n', 'g.txt': 'theirs\n' } });

    const clean = await mergeTree(repo, ours, theirs);
    expect(clean.clean).toBe(true);
    expect(clean.conflicts).toEqual([]);
    expect(git(repo, ['cat-file', 'blob', `${clean.tree}:f.txt`])).toBe('ours');
    expect(git(repo, ['cat-file', 'blob', `${clean.tree}:g.txt`])).toBe('theirs');
    expect(git(repo, ['cat-file', 'blob', `${clean.tree}:o.txt`])).toBe('o');

    const conflict = await mergeTree(repo, ours, clash);
    expect(conflict.clean).toBe(false);
    expect(conflict.conflicts).toEqual(['f.txt']);
    expect(conflict.tree).toMatch(/^[0-9a-f]{40}$/);
  });

  it('cherry-picks with an explicit base (only the picked change is applied)', async () => {
    const lines = (changes: Record<number, string>): string => Array.from({ length: 12 }, (_, i) => changes[i] ?? `line ${i}`).join('\n') + '\n';
    const repo = await newRepo();
    const base = writeCommit(repo, { files: { 'f.txt': lines({}) } });
    const head = writeCommit(repo, { parents: [base], files: { 'f.txt': lines({ 0: 'head' }) } });
    const p = writeCommit(repo, { parents: [base], files: { 'f.txt': lines({ 5: 'p' }) } });
    const c = writeCommit(repo, { parents: [p], files: { 'f.txt': lines({ 5: 'p', 10: 'c' }), 'new.txt': 'n' } });
    const result = await mergeTreeWithBase(repo, p, head, c);
    expect(result.clean).toBe(true);
    expect(git(repo, ['cat-file', 'blob', `${result.tree}:f.txt`])).toBe(lines({ 0: 'head', 10: 'c' }).trim());
    expect(git(repo, ['cat-file', 'blob', `${result.tree}:new.txt`])).toBe('n');

    const root = await mergeTreeWithBase(repo, null, head, base);
    expect(root.clean).toBe(false); // adding f.txt over an existing, different f.txt
    expect(root.conflicts).toEqual(['f.txt']);
  });

  it('rebases commits, skipping merges, dropping empties, keeping authors', async () => {
    const repo = await newRepo();
    const base = writeCommit(repo, { files: { 'a.txt': 'a\n' } });
    const main = writeCommit(repo, { parents: [base], files: { 'a.txt': 'main\n' }, message: 'main change' });
    const f1 = writeCommit(repo, {
      parents: [base],
      files: { 'f1.txt': 'f1\n' },
      message: 'add f1\n\nbody',
      author: { name: 'Fay', email: 'fay@example.com', date: '@1600000000 +0100' },
    });
    const side = writeCommit(repo, { parents: [base], files: { 's.txt': 's\n' } });
    const merge = writeCommit(repo, { parents: [f1, side], files: { 's.txt': 's\n' }, message: 'merge side' });
    const f2 = writeCommit(repo, { parents: [merge], files: { 'f2.txt': 'f2\n' }, message: 'add f2' });
    const dup = writeCommit(repo, { parents: [f2], files: { 'a.txt': 'main\n' }, message: 'same as main' });
    const commits = await revList(repo, [dup], [main], { reverse: true });
    expect(commits).toContain(merge);

    const committer = { name: 'Merger', email: 'merger@example.com', date: new Date('2024-01-01T00:00:00Z') };
    const head = await rebaseCommits(repo, { onto: main, commits, committer });
    expect(head).not.toBeNull();
    const chain = await revList(repo, [head!], [main], { reverse: true });
    const rewritten = await readCommits(repo, chain);
    // side is replayed as its own commit; the merge and the now-empty duplicate are gone
    expect(rewritten.map((c) => c.message).sort()).toEqual(['add f1\n\nbody\n', 'add f2\n', 'commit\n']);
    expect(rewritten[2].message).toBe('add f2\n');
    expect(rewritten.every((c) => c.parents.length === 1)).toBe(true);
    expect(rewritten[0].parents).toEqual([main]);
    const f1Rewritten = rewritten.find((c) => c.message.startsWith('add f1'))!;
    expect(f1Rewritten.author).toEqual({ name: 'Fay', email: 'fay@example.com', date: new Date(1600000000_000), tzOffset: 60 });
    expect(f1Rewritten.committer).toMatchObject({ name: 'Merger', email: 'merger@example.com', date: committer.date });
    for (const [path, content] of [
      ['a.txt', 'main'],
      ['f1.txt', 'f1'],
      ['s.txt', 's'],
      ['f2.txt', 'f2'],
    ]) {
      expect(show(repo, head!, path)).toBe(content);
    }
  });

  it('reuses commits already on the running head and reports conflicts as null', async () => {
    const repo = await newRepo();
    const base = writeCommit(repo, { files: { 'a.txt': 'a\n' } });
    const f1 = writeCommit(repo, { parents: [base], files: { 'b.txt': 'b\n' } });
    const f2 = writeCommit(repo, { parents: [f1], files: { 'a.txt': 'feature\n' } });
    const committer = { name: 'M', email: 'm@example.com' };
    expect(await rebaseCommits(repo, { onto: base, commits: [f1, f2], committer })).toBe(f2);
    expect(await rebaseCommits(repo, { onto: base, commits: [], committer })).toBe(base);

    const main = writeCommit(repo, { parents: [base], files: { 'a.txt': 'main\n' } });
    expect(await rebaseCommits(repo, { onto: main, commits: [f1, f2], committer })).toBeNull();
  });
});
