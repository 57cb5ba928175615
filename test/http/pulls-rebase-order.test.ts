import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git, startTestServer, type TestServer } from '../helpers/server.js';
import { freshClone, givenRepo, removeWorkTrees, type Repo } from '../helpers/fixtures.js';
import { openRequest } from './pulls-fixtures.js';

/** Every commit of the source branch gets the same author and committer time. */
const SAME_TIME = { GIT_AUTHOR_DATE: '@1700000000 +0000', GIT_COMMITTER_DATE: '@1700000000 +0000' };

describe('REBASE_SOURCE_BRANCH_COMMITS replays in topological order (docs/compatibility.md#pull-requests-merge-strategies-and-preview)', () => {
  let server: TestServer;
  let repo: Repo;

  beforeAll(async () => {
    server = await startTestServer();
    repo = await givenRepo(server, 'rebase-order', { files: { 'a.txt': '1\n2\n3\n' } });
  });
  afterAll(async () => {
    await server.close();
    await removeWorkTrees();
  });

  async function commit(dir: string, file: string, content: string, message: string): Promise<void> {
    await fs.writeFile(path.join(dir, file), content);
    await git(dir, ['add', '-A']);
    await git(dir, ['commit', '-q', '-m', message], SAME_TIME);
  }

  it('replays parents before children, skips the merge commit, and succeeds where git rebase does', async () => {
    const work = repo.work;
    await git(work, ['checkout', '-q', '-B', 'topic', 'main']);
    await commit(work, 'a.txt', 'x\n2\n3\n', 'P: line 1 becomes x');
    await git(work, ['checkout', '-q', '-b', 'side']);
    await commit(work, 'a.txt', 'y\n2\n3\n', 'Q: line 1 becomes y');
    await commit(work, 'r.txt', 'r\n', 'R: add r');
    await git(work, ['checkout', '-q', 'topic']);
    // M = merge(P, R): rev-list by date alone lists P before Q's and R's replay would need it
    await git(work, ['merge', '-q', '--no-ff', '-m', 'M: merge side', 'side'], SAME_TIME);
    await git(work, ['push', '-q', repo.remote, 'topic']);
    await repo.commitOn('main', { 'm.txt': 'm\n' }, 'main moves on');

    const opened = await openRequest(server, {
      targetProjectId: repo.id,
      sourceProjectId: repo.id,
      targetBranch: 'main',
      sourceBranch: 'topic',
      mergeStrategy: 'REBASE_SOURCE_BRANCH_COMMITS',
    });
    expect(opened.status, opened.text).toBe(200);
    const merged = await server.call('POST', `/pulls/${opened.json}/merge`, { text: '' });
    expect(merged.status, merged.text).toBe(200);

    const clone = await freshClone(server, repo.path);
    const subjects = (await git(clone, ['log', '--format=%s', 'origin/main'])).trim().split('\n');
    expect(subjects.slice(0, 4)).toEqual(['R: add r', 'Q: line 1 becomes y', 'P: line 1 becomes x', 'main moves on']);
    expect((await git(clone, ['rev-list', '--merges', 'origin/main'])).trim()).toBe('');
    expect(await fs.readFile(path.join(clone, 'a.txt'), 'utf8')).toBe('y\n2\n3\n');
    expect(await fs.readFile(path.join(clone, 'r.txt'), 'utf8')).toBe('r\n');
  });
});
