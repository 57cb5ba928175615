import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveRevision } from '../../src/domain/repositories/revisions.js';
import { initBareRepository, resolveCommit, updateRefs } from '../../src/git/repository.js';
import { git, tempDir, writeCommit } from '../git/helpers.js';

const tmp = tempDir('revisions');
afterAll(() => tmp.remove());

describe('resolveRevision', () => {
  it('resolves every revision as git does, a branch from the ref files when nothing takes precedence over it', async () => {
    const repo = join(tmp.path, 'r.git');
    await initBareRepository(repo);
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((content, i) => writeCommit(repo, { files: { 'f.txt': content }, message: `commit ${i}` }));
    await updateRefs(repo, [
      { ref: 'refs/heads/main', newHash: a },
      // a branch and a tag of one name: git takes the tag
      { ref: 'refs/heads/dup', newHash: a },
      { ref: 'refs/tags/dup', newHash: b },
      // a branch `heads/main`: git takes refs/heads/main for it
      { ref: 'refs/heads/heads/main', newHash: c },
      // a branch named as a pseudo ref
      { ref: 'refs/heads/ORIG_HEAD', newHash: d },
      { ref: 'refs/heads/feature/x', newHash: d },
      // a branch and a ref of one name outside heads and tags: git takes the ref
      { ref: 'refs/heads/pulls/1/head', newHash: a },
      { ref: 'refs/pulls/1/head', newHash: c },
    ]);
    git(repo, ['tag', '-a', '-m', 'annotated', 'v1', b]);
    git(repo, ['symbolic-ref', 'HEAD', 'refs/heads/main']);
    for (const revision of [
      'main',
      'dup',
      'heads/main',
      'ORIG_HEAD',
      'feature/x',
      'v1',
      'HEAD',
      a,
      a.slice(0, 10),
      'main~0',
      'nope',
      '-x',
      'tags/dup',
      'pulls/1/head',
      'main~1',
      'a..b',
    ]) {
      const expected = revision.startsWith('-') ? null : await resolveCommit(repo, revision);
      expect(await resolveRevision(repo, revision), revision).toBe(expected);
    }
    expect(await resolveRevision(repo, 'dup')).toBe(b);
    expect(await resolveRevision(repo, 'heads/main')).toBe(a);
    expect(await resolveRevision(repo, 'v1')).toBe(b);
    expect(await resolveRevision(repo, 'pulls/1/head')).toBe(c);
  });
});
