import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, git, gitUrl, startTestServer, type TestServer } from '../helpers/server.js';
import { givenRepo, removeWorkTrees, type Repo } from '../helpers/fixtures.js';

/** Objects a clone knows of but does not have (`?<hash>` lines of `rev-list --missing=print`). */
async function missingObjects(dir: string): Promise<string[]> {
  const out = await git(dir, ['rev-list', '--objects', '--all', '--missing=print']);
  return out.split('\n').filter((l) => l.startsWith('?')).map((l) => l.slice(1));
}

describe('partial clone (uploadpack.allowFilter, uploadpack.allowAnySHA1InWant)', () => {
  let server: TestServer;
  let repo: Repo;
  let first: string;
  const dirs: string[] = [];

  beforeAll(async () => {
    server = await startTestServer();
    repo = await givenRepo(server, 'partial', { files: { 'a.txt': 'version 1\n', 'dir/b.txt': 'b 1\n' } });
    first = await repo.head('main');
    await repo.commitOn('main', { 'a.txt': 'version 2\n', 'dir/b.txt': 'b 2\n' }, 'second');
  });
  afterAll(async () => {
    await server.close();
    await removeWorkTrees();
    for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
  });

  async function partialClone(filter: string): Promise<string> {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-partial-'));
    dirs.push(dir);
    await git(dir, ['clone', '-q', `--filter=${filter}`, gitUrl(server, repo.path, ADMIN), '.']);
    return dir;
  }

  it('a blobless clone leaves old blobs on the server and fetches them lazily on checkout', async () => {
    const dir = await partialClone('blob:none');
    expect(await fs.readFile(path.join(dir, 'a.txt'), 'utf8')).toBe('version 2\n');
    expect((await git(dir, ['config', 'remote.origin.promisor'])).trim()).toBe('true');
    const oldBlob = (await git(dir, ['rev-parse', `${first}:a.txt`])).trim();
    expect(await missingObjects(dir)).toContain(oldBlob);

    await git(dir, ['-c', 'advice.detachedHead=false', 'checkout', '-q', first]);
    expect(await fs.readFile(path.join(dir, 'a.txt'), 'utf8')).toBe('version 1\n');
    expect(await missingObjects(dir)).not.toContain(oldBlob);
  });

  it('a treeless clone fetches trees and blobs of another commit lazily', async () => {
    const dir = await partialClone('tree:0');
    expect(await fs.readFile(path.join(dir, 'dir/b.txt'), 'utf8')).toBe('b 2\n');
    expect((await missingObjects(dir)).length).toBeGreaterThan(0);

    await git(dir, ['-c', 'advice.detachedHead=false', 'checkout', '-q', first]);
    expect(await fs.readFile(path.join(dir, 'dir/b.txt'), 'utf8')).toBe('b 1\n');
    expect(await git(dir, ['log', '--format=%s'])).toBe('initial commit\n');
  });
});
