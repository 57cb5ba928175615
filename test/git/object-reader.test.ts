/**
 * The long-lived object reader (src/git/object-reader.ts) against git itself: what it answers,
 * objects written after it started, reads in parallel, a reader killed from outside, its bound on
 * processes and its end.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { GitError } from '../../src/git/command.js';
import { endObjectReaders, objectContents, objectInfo, openObjectReader } from '../../src/git/object-reader.js';
import { git, repositoryMaker, tempDir, writeCommit } from './helpers.js';

const tmp = tempDir('object-reader');
afterAll(() => {
  endObjectReaders();
  tmp.remove();
});

const newRepo = repositoryMaker(tmp.path);

/** Pids of the object readers running on `repo` (their command line names it). */
function readerPids(repo: string): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => line.includes(`--git-dir=${repo} cat-file --batch-command`))
    .map((line) => Number(line.trim().split(' ')[0]));
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  expect(condition()).toBe(true);
}

describe('object reader', () => {
  it('answers as git cat-file does: ids, types, sizes and bytes; peeled commits; null for what names no object', async () => {
    const repo = await newRepo();
    const big = 'x'.repeat(300_000) + '\n';
    const c1 = writeCommit(repo, { files: { 'a.txt': 'alpha\n', 'dir/big.txt': big, 'empty.txt': '' }, message: 'first\n\nbody ü\n' });
    const c2 = writeCommit(repo, { parents: [c1], files: { 'a.txt': 'beta\n' } });
    git(repo, ['tag', '-a', '-m', 'annotated', 'v1', c1]);
    const tag = git(repo, ['rev-parse', 'refs/tags/v1']);
    const tree = git(repo, ['rev-parse', `${c2}^{tree}`]);
    const blob = git(repo, ['rev-parse', `${c2}:a.txt`]);

    const names = [c2, tree, blob, tag, `${tag}^{commit}`, `${c1}:dir/big.txt`, `${c2}:empty.txt`];
    const contents = await objectContents(repo, names);
    for (const [i, name] of names.entries()) {
      const oid = git(repo, ['rev-parse', name]);
      const type = git(repo, ['cat-file', '-t', oid]);
      const bytes = execFileSync('git', [`--git-dir=${repo}`, 'cat-file', type, oid]);
      expect(contents[i]).toEqual({ oid, type, size: bytes.length, content: bytes });
    }
    expect(contents[4]!.oid).toBe(c1);
    expect(await objectInfo(repo, [c1, `${tag}^{commit}`, `${c1}:dir/big.txt`])).toEqual([
      { oid: c1, type: 'commit', size: contents[4]!.size },
      { oid: c1, type: 'commit', size: contents[4]!.size },
      { oid: contents[5]!.oid, type: 'blob', size: big.length },
    ]);

    const missing = '0123456789012345678901234567890123456789';
    const nothing = [missing, `${missing}^{commit}`, `${tree}^{commit}`, `${blob}^{commit}`, `${c2}:no/such/path`, 'not-a-name at all', c2.slice(0, 2)];
    expect(await objectInfo(repo, nothing)).toEqual(nothing.map(() => null));
    expect(await objectContents(repo, nothing)).toEqual(nothing.map(() => null));
    // a name the batch protocol cannot carry is refused before anything is written
    expect(() => objectInfo(repo, [`${c2}:a\nb`])).toThrow(/not readable in a batch/);
    expect(await objectInfo(repo, [])).toEqual([]);
  });

  it('answers many reads asked at once, each with its own object, in order', async () => {
    const repo = await newRepo();
    const commits: string[] = [];
    for (let i = 0; i < 40; i++) {
      const parents = commits.length ? [commits[commits.length - 1]] : [];
      commits.push(writeCommit(repo, { parents, files: { [`f${i}.txt`]: `${'line\n'.repeat(i * 2000)}${i}\n` } }));
    }
    const reads = commits.flatMap((commit, i) => [
      objectContents(repo, [commit]).then(([object]) => object!.oid === commit),
      objectContents(repo, [`${commit}:f${i}.txt`]).then(
        ([object]) => object!.content.toString('utf8').endsWith(`${i}\n`) && object!.size === i * 10_000 + `${i}\n`.length,
      ),
      objectInfo(repo, [`${commit}^{commit}`]).then(([object]) => object!.oid === commit),
    ]);
    expect(await Promise.all(reads)).toEqual(reads.map(() => true));
    expect(readerPids(repo)).toHaveLength(1);
  });

  it('finds objects written after the reader started, loose or in new packs, also after a repack removed the packs it had open', async () => {
    const repo = await newRepo();
    const c1 = writeCommit(repo, { files: { 'a.txt': 'one\n' } });
    git(repo, ['update-ref', 'refs/heads/main', c1]);
    git(repo, ['repack', '-a', '-d']);
    expect((await objectInfo(repo, [c1]))[0]?.type).toBe('commit');

    const c2 = writeCommit(repo, { parents: [c1], files: { 'a.txt': 'two\n' } });
    expect((await objectInfo(repo, [c2]))[0]?.oid).toBe(c2);
    git(repo, ['update-ref', 'refs/heads/main', c2]);
    git(repo, ['repack', '-a', '-d']);
    git(repo, ['prune-packed']);
    const c3 = writeCommit(repo, { parents: [c2], files: { 'b.txt': 'three\n' } });
    git(repo, ['update-ref', 'refs/heads/main', c3]);
    git(repo, ['repack', '-d']);
    git(repo, ['prune-packed']);
    const answers = await objectContents(repo, [c1, c2, c3, `${c3}:b.txt`]);
    expect(answers.map((a) => a?.oid)).toEqual([c1, c2, c3, git(repo, ['rev-parse', `${c3}:b.txt`])]);
    expect(answers[3]!.content.toString()).toBe('three\n');
  });

  it('fails the reads waiting on a reader killed from outside; the next read starts another', async () => {
    const repo = await newRepo();
    const commit = writeCommit(repo, { files: { 'a.txt': 'a\n' } });
    await objectInfo(repo, [commit]);
    const [pid] = readerPids(repo);
    process.kill(pid, 'SIGSTOP');
    const waiting = objectContents(repo, [commit]);
    process.kill(pid, 'SIGKILL');
    await expect(waiting).rejects.toBeInstanceOf(GitError);
    expect((await objectContents(repo, [commit]))[0]?.oid).toBe(commit);
    expect(readerPids(repo)).not.toContain(pid);
  });

  it("reads through a reader of the caller's own, ended by the caller, leaving the shared one alone", async () => {
    const repo = await newRepo();
    const commit = writeCommit(repo, { files: { 'a.txt': 'alpha\n', 'b.txt': 'x'.repeat(200_000) } });
    const names = [`${commit}:a.txt`, `${commit}:b.txt`, `${commit}:none.txt`, commit];
    const shared = await objectContents(repo, names);
    const [pid] = readerPids(repo);
    const own = openObjectReader(repo);
    const apart = await own.contents(names);
    expect(apart).toEqual(shared);
    expect(apart[1]?.content.length).toBe(200_000);
    expect(await own.info(names)).toEqual(await objectInfo(repo, names));
    expect(readerPids(repo)).toHaveLength(2);
    own.end();
    await until(() => readerPids(repo).length === 1);
    expect(readerPids(repo)).toEqual([pid]);
  });

  it('fails with GitError for a path that holds no repository', async () => {
    await expect(objectInfo(`${tmp.path}/no-such.git`, ['0123456789012345678901234567890123456789'])).rejects.toBeInstanceOf(GitError);
  });

  it('runs at most eight readers, ending the least recently used first, and ends them all on request', async () => {
    const repos: string[] = [];
    for (let i = 0; i < 10; i++) {
      const repo = await newRepo();
      repos.push(repo);
      await objectInfo(repo, [writeCommit(repo, { files: { 'a.txt': `${i}\n` } })]);
    }
    await until(() => repos.filter((repo) => readerPids(repo).length > 0).length === 8);
    expect(readerPids(repos[0])).toEqual([]);
    expect(readerPids(repos[1])).toEqual([]);
    endObjectReaders();
    await until(() => repos.every((repo) => readerPids(repo).length === 0));
  });
});
