import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';
import { givenProject, runJobOnCommit } from '../helpers/fixtures.js';

const SPEC = 'version: 25\njobs:\n- name: Noop\n  steps: []\n';

describe('"Commit" is "<hash>" in the build query (docs/compatibility.md#builds-query-language)', () => {
  let server: TestServer;
  let work: string;
  let first: string;
  let second: string;
  const builds: Record<string, number> = {};

  beforeAll(async () => {
    server = await startTestServer();
    const projectId = await givenProject(server, { name: 'hashes' });
    work = await makeWorkTree({ '.onedev-buildspec.yml': SPEC });
    first = (await git(work, ['rev-parse', 'HEAD'])).trim();
    second = await commitFiles(work, { 'b.txt': 'b\n' }, 'second');
    await git(work, ['push', '-q', gitUrl(server, 'hashes', { name: 'admin', password: 'admin-secret' }), 'main']);
    for (const commitHash of [first, second]) {
      const res = await runJobOnCommit(server, { projectId, commitHash, jobName: 'Noop' });
      expect(res.status, res.text).toBe(200);
      builds[commitHash] = res.json as number;
    }
  });
  afterAll(async () => {
    await server.close();
    await fs.rm(work, { recursive: true, force: true });
  });

  const ids = async (query: string) => {
    const res = await server.call('GET', `/builds?query=${encodeURIComponent(query)}&count=100`);
    expect(res.status, res.text).toBe(200);
    return (res.json as { id: number }[]).map((b) => b.id);
  };

  it('a bare full hash matches that commit in any project', async () => {
    expect(await ids(`"Commit" is "${first}"`)).toEqual([builds[first]]);
    expect(await ids(`"Commit" is "${second.toUpperCase()}"`)).toEqual([builds[second]]);
  });

  it('an abbreviated hash matches by prefix; projectPath:revision still works', async () => {
    expect(await ids(`"Commit" is "${first.slice(0, 10)}"`)).toEqual([builds[first]]);
    expect(await ids(`"Commit" is "hashes:main"`)).toEqual([builds[second]]);
  });

  it('anything else is still a 400 naming both forms', async () => {
    const res = await server.call('GET', `/builds?query=${encodeURIComponent('"Commit" is "main"')}&count=100`);
    expect(res.status).toBe(400);
    expect(res.json.detail).toBe('Invalid commit: main (expected a commit hash or projectPath:revision)');
  });
});
