import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, commitFiles, git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';
import { givenProject } from '../helpers/fixtures.js';

const READABLE = `version: 25
jobs:
- name: CI
  steps: []
  triggers:
  - !BranchUpdateTrigger
    branches: main
`;

/** What a newer OneDev writes: unreadable for this server. */
const NEWER = `version: 53
jobs:
- name: CI
  steps:
  - type: CommandStep
    name: build
  triggers:
  - type: BranchUpdateTrigger
    branches: main
`;

describe('a push of many refs at a commit with an unreadable spec (docs/compatibility.md#builds-creating-builds)', () => {
  let server: TestServer;
  let work: string;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
    if (work) await fs.rm(work, { recursive: true, force: true });
  });

  const builds = async (project: string) => {
    await server.settled();
    const res = await server.call('GET', `/builds?query=${encodeURIComponent(`"Project" is "${project}"`)}&count=100`);
    return res.json as { refName: string; jobName: string; status: string; commitHash: string }[];
  };

  it('gives at most one FAILED build per commit, only for refs the last readable spec would build, never for tags', async () => {
    await givenProject(server, { name: 'mirror' });
    work = await makeWorkTree({ '.onedev-buildspec.yml': READABLE });
    const remote = gitUrl(server, 'mirror', ADMIN);
    await git(work, ['push', '-q', remote, 'main']);
    expect((await builds('mirror')).map((b) => b.jobName)).toEqual(['CI']);

    const head = await commitFiles(work, { '.onedev-buildspec.yml': NEWER }, 'spec of a newer OneDev');
    for (let i = 1; i <= 12; i++) await git(work, ['tag', `v${i}`]);
    await git(work, ['branch', 'develop']);
    await git(work, ['push', '-q', remote, 'main', 'develop', '--tags']);

    const after = (await builds('mirror')).filter((b) => b.commitHash === head);
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ refName: 'refs/heads/main', jobName: 'CI', status: 'FAILED' });
    const byCommit = (await server.call('GET', `/builds?query=${encodeURIComponent(`"Commit" is "${head}"`)}&count=10`)).json;
    expect(byCommit).toHaveLength(1);
  });

  it('with no readable spec in the history a branch still gets one FAILED build, a tag none', async () => {
    await givenProject(server, { name: 'fresh' });
    const dir = await makeWorkTree({ '.onedev-buildspec.yml': NEWER });
    try {
      const remote = gitUrl(server, 'fresh', ADMIN);
      await git(dir, ['tag', 'v1']);
      await git(dir, ['push', '-q', remote, 'main', '--tags']);
      const list = await builds('fresh');
      expect(list.map((b) => [b.refName, b.jobName, b.status])).toEqual([['refs/heads/main', '.onedev-buildspec.yml', 'FAILED']]);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
