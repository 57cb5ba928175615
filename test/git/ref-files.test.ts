import { spawn } from 'node:child_process';
import { mkdirSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_LOOSE_REFS, readHead, readRef, readRefs } from '../../src/git/ref-files.js';
import { branchesAndTags, defaultBranchHead, getDefaultBranch, listRefs, refHead } from '../../src/git/repository.js';
import { GitError } from '../../src/git/command.js';
import { clientEnv, git, repositoryMaker, tempDir, writeCommit } from './helpers.js';

const tmp = tempDir('ref-files');
afterAll(() => tmp.remove());

const newRepo = repositoryMaker(tmp.path);

/** What `git for-each-ref` lists under the prefixes: name → id, in git's order. */
function forEachRef(repo: string, prefixes: string[]): [string, string][] {
  const out = git(repo, ['for-each-ref', '--format=%(refname) %(objectname)', ...prefixes]);
  return out === '' ? [] : out.split('\n').map((line) => line.split(' ') as [string, string]);
}

describe('refs read from the files backend', () => {
  it('lists loose and packed refs as for-each-ref does, a loose ref winning over its packed value', async () => {
    const repo = await newRepo();
    const a = writeCommit(repo, { files: { 'a.txt': 'a' } });
    const b = writeCommit(repo, { parents: [a], files: { 'a.txt': 'b' } });
    for (const name of ['main', 'feature/x', 'feature/y', 'zeta', 'Ärger', 'ｗide', '😀']) git(repo, ['update-ref', `refs/heads/${name}`, a]);
    git(repo, ['tag', 'v1', a]);
    git(repo, ['tag', '-a', '-m', 'annotated', 'v2', b]);
    git(repo, ['update-ref', 'refs/pulls/1/head', b]);
    git(repo, ['pack-refs', '--all']);
    // after packing: one ref moved (loose again), one created loose, one deleted from packed-refs
    git(repo, ['update-ref', 'refs/heads/main', b]);
    git(repo, ['update-ref', 'refs/heads/new', b]);
    git(repo, ['update-ref', '-d', 'refs/heads/zeta']);
    for (const prefixes of [['refs/heads/'], ['refs/heads/', 'refs/tags/'], ['refs/'], ['refs/pulls/1/'], ['refs/nothing/']]) {
      expect([...(await readRefs(repo, prefixes))!]).toEqual(forEachRef(repo, prefixes));
    }
    expect(await readRef(repo, 'refs/heads/main')).toBe(b);
    expect(await readRef(repo, 'refs/heads/feature/x')).toBe(a);
    expect(await readRef(repo, 'refs/tags/v2')).toBe(git(repo, ['rev-parse', 'refs/tags/v2']));
    expect(await readRef(repo, 'refs/heads/zeta')).toBeNull();
    expect(await readRef(repo, 'refs/heads/feature')).toBeNull();
    expect(await readRef(repo, 'refs/heads/main/below')).toBeNull();
    // a name too long for the file system names no ref, packed or loose
    const long = `refs/heads/${'x'.repeat(300)}`;
    expect(await readRef(repo, long)).toBeNull();
    expect(await refHead(repo, long)).toBeNull();
    expect([...(await readRefs(repo, [`${long}/`]))!]).toEqual([]);
  });

  it('reads HEAD: the branch it names, unborn or not, and null when detached', async () => {
    const repo = await newRepo();
    expect(await readHead(repo)).toBe('refs/heads/master');
    expect(await defaultBranchHead(repo)).toBeNull();
    expect(await getDefaultBranch(repo)).toBeNull();
    const a = writeCommit(repo, { files: { 'a.txt': 'a' } });
    git(repo, ['update-ref', 'refs/heads/master', a]);
    expect(await defaultBranchHead(repo)).toEqual({ branch: 'master', commitHash: a });
    expect(await branchesAndTags(repo)).toEqual({ refs: new Map([['refs/heads/master', a]]), head: 'master' });
    git(repo, ['update-ref', '--no-deref', 'HEAD', a]);
    expect(await readHead(repo)).toBeNull();
    expect(await defaultBranchHead(repo)).toBeNull();
    expect(await getDefaultBranch(repo)).toBeNull();
    expect((await branchesAndTags(repo)).head).toBeNull();
  });

  it('leaves to git what it is not sure to read as git does, and the answers stay right', async () => {
    const repo = await newRepo();
    const a = writeCommit(repo, { files: { 'a.txt': 'a' } });
    git(repo, ['update-ref', 'refs/heads/main', a]);
    // a symbolic ref below refs/
    git(repo, ['symbolic-ref', 'refs/heads/alias', 'refs/heads/main']);
    expect(await readRefs(repo, ['refs/heads/'])).toBeUndefined();
    expect(await readRef(repo, 'refs/heads/alias')).toBeUndefined();
    expect([...(await listRefs(repo, 'refs/heads/'))]).toEqual(forEachRef(repo, ['refs/heads/']));
    expect(await refHead(repo, 'refs/heads/alias')).toBe(a);
    unlinkSync(join(repo, 'refs/heads/alias'));
    // a symbolic link
    symlinkSync(join(repo, 'refs/heads/main'), join(repo, 'refs/heads/link'));
    expect(await readRefs(repo, ['refs/heads/'])).toBeUndefined();
    expect(await readRef(repo, 'refs/heads/link')).toBeUndefined();
    unlinkSync(join(repo, 'refs/heads/link'));
    // malformed content, and a name git refuses
    writeFileSync(join(repo, 'refs/heads/broken'), 'not an id\n');
    expect(await readRefs(repo, ['refs/heads/'])).toBeUndefined();
    expect([...(await listRefs(repo, 'refs/heads/'))]).toEqual(forEachRef(repo, ['refs/heads/']));
    unlinkSync(join(repo, 'refs/heads/broken'));
    writeFileSync(join(repo, 'refs/heads/bad..name'), `${a}\n`);
    expect(await readRefs(repo, ['refs/heads/'])).toBeUndefined();
    unlinkSync(join(repo, 'refs/heads/bad..name'));
    // a name git refuses names no ref, and the file it would reach is not read
    expect(await readRef(repo, 'refs/heads/../../HEAD')).toBeNull();
    expect(await refHead(repo, 'refs/heads/../../HEAD')).toBeNull();
    // lock files are not refs
    writeFileSync(join(repo, 'refs/heads/main.lock'), `${a}\n`);
    expect([...(await readRefs(repo, ['refs/heads/']))!]).toEqual([['refs/heads/main', a]]);
    // more loose refs than the reader walks
    mkdirSync(join(repo, 'refs/tags/many'));
    for (let i = 0; i <= MAX_LOOSE_REFS; i++) writeFileSync(join(repo, `refs/tags/many/t${i}`), `${a}\n`);
    expect(await readRefs(repo, ['refs/tags/'])).toBeUndefined();
    expect((await listRefs(repo, 'refs/tags/')).size).toBe(MAX_LOOSE_REFS + 1);
  });

  it('does not mistake a missing repository for one without refs', async () => {
    const missing = join(tmp.path, 'missing.git');
    expect(await readRefs(missing, ['refs/heads/'])).toBeUndefined();
    expect(await readRef(missing, 'refs/heads/main')).toBeUndefined();
    expect(await readHead(missing)).toBeUndefined();
    await expect(refHead(missing, 'refs/heads/main')).rejects.toBeInstanceOf(GitError);
    await expect(listRefs(missing, 'refs/heads/')).rejects.toBeInstanceOf(GitError);
  });

  it('never misses a ref while git packs and moves refs beside the reads', async () => {
    const repo = await newRepo();
    const a = writeCommit(repo, { files: { 'a.txt': 'a' } });
    const b = writeCommit(repo, { parents: [a], files: { 'a.txt': 'b' } });
    const names = Array.from({ length: 20 }, (_, i) => `refs/heads/b${i}`);
    for (const name of names) git(repo, ['update-ref', name, a]);
    // a shell loop that packs all refs and moves every branch between a and b, 30 times
    const script = `for i in $(seq 30); do git --git-dir="$1" pack-refs --all; for r in ${names.join(' ')}; do git --git-dir="$1" update-ref $r $([ $((i % 2)) = 0 ] && echo ${a} || echo ${b}); done; done`;
    const writer = spawn('sh', ['-c', script, 'sh', repo], { env: clientEnv('/nonexistent'), stdio: 'inherit' });
    const done = new Promise<void>((resolve, reject) => writer.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`writer: ${code}`)))));
    let running = true;
    void done.finally(() => (running = false));
    let reads = 0;
    while (running) {
      const refs = await readRefs(repo, ['refs/heads/']);
      expect([...refs!.keys()]).toEqual([...names].sort());
      for (const id of refs!.values()) expect([a, b]).toContain(id);
      expect([a, b]).toContain(await readRef(repo, names[reads % names.length]));
      reads++;
    }
    await done;
    expect(reads).toBeGreaterThan(10);
  }, 120_000);
});
