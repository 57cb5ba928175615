import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, git, gitFails, gitUrl, startTestServer, type TestServer } from '../helpers/server.js';
import { givenRepo, removeWorkTrees, type Repo } from '../helpers/fixtures.js';

/** Objects a clone knows of but does not have (`?<hash>` lines of `rev-list --missing=print`). */
async function missingObjects(dir: string): Promise<string[]> {
  const out = await git(dir, ['rev-list', '--objects', '--all', '--missing=print']);
  return out
    .split('\n')
    .filter((l) => l.startsWith('?'))
    .map((l) => l.slice(1));
}

describe('partial clone and fetch by id (uploadpack.allowFilter, uploadpack.allowReachableSHA1InWant)', () => {
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

  /** `git fetch <url> <hash>` into a new empty repository, with the given client protocol version. */
  async function fetchById(hash: string, protocol: '0' | '2'): Promise<{ dir: string; args: string[] }> {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-by-id-'));
    dirs.push(dir);
    await git(dir, ['init', '-q']);
    return { dir, args: ['-c', `protocol.version=${protocol}`, 'fetch', '-q', gitUrl(server, repo.path, ADMIN), hash] };
  }

  it('fetches a reachable commit by id but not one a force-push left unreachable, in protocol v0 and v2', async () => {
    const main = await repo.head('main');
    const gone = await repo.commitOn('main', { 'secret.txt': 'pushed by mistake\n' }, 'oops');
    await git(repo.work, ['push', '-q', '-f', repo.remote, `${main}:refs/heads/main`]);
    expect(await repo.head('main')).toBe(main);
    const bare = path.join(server.dataDir, 'repos', `${repo.id}.git`);
    expect((await git(bare, ['cat-file', '-t', gone])).trim()).toBe('commit');

    for (const protocol of ['2', '0'] as const) {
      const refused = await fetchById(gone, protocol);
      expect(await gitFails(refused.dir, refused.args)).toContain(`not our ref ${gone}`);
      expect(
        await git(refused.dir, ['cat-file', '-e', gone]).then(
          () => 'present',
          () => 'absent',
        ),
      ).toBe('absent');
      // control: the commit below the tip, reachable but not advertised, is served by id
      const allowed = await fetchById(first, protocol);
      await git(allowed.dir, allowed.args);
      expect((await git(allowed.dir, ['rev-parse', 'FETCH_HEAD'])).trim()).toBe(first);
    }
    // a missing object is refused the same way: git's own refusal (an ERR packet, then exit 128)
    // reaches the client, and the server goes on serving
    for (const protocol of ['2', '0'] as const) {
      const missing = await fetchById('1'.repeat(40), protocol);
      expect(await gitFails(missing.dir, missing.args)).toContain(`remote error: upload-pack: not our ref ${'1'.repeat(40)}`);
    }
    expect((await fetch(`${server.url}/~health/live`)).status).toBe(200);

    // a repository whose own config still allows any object is served by the same rule
    await git(bare, ['config', 'uploadpack.allowAnySHA1InWant', 'true']);
    for (const protocol of ['2', '0'] as const) {
      const refused = await fetchById(gone, protocol);
      expect(await gitFails(refused.dir, refused.args)).toContain(`not our ref ${gone}`);
    }
  });
});
