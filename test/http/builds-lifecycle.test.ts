import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { commitFiles, git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';
import { eventually, givenProject, runJobOnCommit } from '../helpers/fixtures.js';

const SPEC = `version: 25
jobs:
- name: Quick
  steps:
  - !CommandStep
    name: quick
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo quick @build_number@
- name: PR
  steps:
  - !CheckoutStep
    name: checkout
    cloneCredential: !DefaultCredential {}
  - !CommandStep
    name: verify
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - test -f ok.txt
  triggers:
  - !PullRequestUpdateTrigger
    branches: main
`;

describe('build lifecycle: pull requests, required builds, restart, several servers, query, delete', () => {
  let server: TestServer;
  let work: string;
  let projectId: number;
  let head: string;
  const remote = () => gitUrl(server, 'life', { name: 'admin', password: 'admin-secret' });
  const build = async (id: number) => (await server.call('GET', `/builds/${id}`)).json;
  const finished = (id: number) =>
    eventually(async () => {
      const b = await build(id);
      return ['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(b?.status) ? b : null;
    });
  const runQuick = async () => (await runJobOnCommit(server, { projectId, commitHash: head, jobName: 'Quick', reason: 'quick' })).json as number;

  beforeAll(async () => {
    server = await startTestServer();
    projectId = await givenProject(server, { name: 'life' });
    work = await makeWorkTree({ 'README.md': '# life\n', '.onedev-buildspec.yml': SPEC });
    head = (await git(work, ['rev-parse', 'HEAD'])).trim();
    await git(work, ['push', '-q', remote(), 'main']);
  });
  afterAll(async () => {
    await server?.close();
    await fs.rm(work, { recursive: true, force: true });
  });

  it('builds a pull request on its merge preview and gates the merge on required builds', async () => {
    const setting = (await server.call('GET', `/projects/${projectId}/setting`)).json;
    const saved = await server.call('POST', `/projects/${projectId}/setting`, {
      body: { ...setting, branchProtections: [{ branches: 'main', jobNames: ['PR'], preventCreation: false }] },
    });
    expect(saved.status).toBe(200);
    await git(work, ['checkout', '-q', '-b', 'feature']);
    await commitFiles(work, { 'feature.txt': 'x\n' }, 'feature work');
    await git(work, ['push', '-q', remote(), 'feature']);
    const prId = (
      await server.call('POST', '/pulls', {
        body: { targetProjectId: projectId, sourceProjectId: projectId, targetBranch: 'main', sourceBranch: 'feature', title: 'Feature' },
      })
    ).json;
    const first = await eventually(async () => {
      const list = (await server.call('GET', `/pulls/${prId}/current-builds`)).json;
      return list?.length ? list : null;
    });
    expect(first).toHaveLength(1);
    expect(first[0].refName).toMatch(/^refs\/pulls\/\d+\/merge$/);
    expect(first[0].requestId).toBe(prId);
    const pr = (await server.call('GET', `/pulls/${prId}`)).json;
    expect(first[0].commitHash).toBe(pr.buildCommitHash);
    expect((await finished(first[0].id)).status).toBe('FAILED');
    const blocked = await server.call('POST', `/pulls/${prId}/merge`, { text: '' });
    expect(blocked.status).toBe(409);
    expect(blocked.json).toMatchObject({ detail: 'Some required builds not passed', code: 'GITLOOM_ERR_MERGE_BUILD_REQUIRED' });
    expect((await server.call('GET', '/pulls?query=' + encodeURIComponent('has failed builds') + '&offset=0&count=10')).json.map((p: any) => p.id)).toEqual([
      prId,
    ]);

    await commitFiles(work, { 'ok.txt': 'ok\n' }, 'make it pass');
    await git(work, ['push', '-q', remote(), 'feature']);
    const second = await eventually(async () => {
      const list = (await server.call('GET', `/pulls/${prId}/current-builds`)).json;
      return list?.length && list[0].id !== first[0].id ? list : null;
    });
    expect((await finished(second[0].id)).status).toBe('SUCCESSFUL');
    expect((await server.call('POST', `/pulls/${prId}/merge`, { text: '' })).status).toBe(200);
    await git(work, ['checkout', '-q', 'main']);
  });

  it('an interrupted RUNNING build ends FAILED with the reason in its log', async () => {
    const id = await runQuick();
    await finished(id);
    await server.server.services.db
      .updateTable('builds')
      .set({ status: 'RUNNING', finishDate: null, leaseOwner: 'dead-process', leaseExpires: Date.now() - 1 })
      .where('id', '=', id)
      .execute();
    const b = await finished(id);
    expect(b.status).toBe('FAILED');
    expect(await eventually(async () => (await server.call('GET', `/builds/${id}/log`)).text.includes('Build interrupted'))).toBe(true);
  });

  it('two servers on one database and data dir run each build exactly once', async () => {
    const config = server.server.services.config;
    const other: RunningServer = await startServer(
      loadConfig(
        {
          GITLOOM_HOST: '127.0.0.1',
          GITLOOM_SSH_PORT: '0',
          GITLOOM_JOB_CONCURRENCY: '2',
          GITLOOM_INITIAL_PASSWORD: 'admin-secret',
          ...(config.databaseUrl && { GITLOOM_DATABASE_URL: config.databaseUrl }),
        },
        { port: 0, dataDir: config.dataDir },
      ),
      { logger: false },
    );
    try {
      const ids: number[] = [];
      for (let i = 0; i < 6; i++) ids.push(await runQuick());
      // the auto-cancel rule cancels older runs of the same job on the same commit: only unfinished ones
      for (const id of ids) {
        const b = await finished(id);
        expect(['SUCCESSFUL', 'CANCELLED']).toContain(b.status);
        const log = (await server.call('GET', `/builds/${id}/log`)).text;
        expect(log.split('Executing job').length - 1).toBeLessThanOrEqual(1);
        if (b.status === 'SUCCESSFUL') expect(log.split('Job finished').length - 1).toBe(1);
      }
      expect((await build(ids[ids.length - 1])).status).toBe('SUCCESSFUL');
    } finally {
      await other.close();
    }
  });

  it('queries builds with the build query language and deletes them', async () => {
    const q = async (query: string) => {
      const res = await server.call('GET', '/builds?query=' + encodeURIComponent(query) + '&offset=0&count=100');
      return res;
    };
    const all = (await q('')).json;
    expect(all.length).toBeGreaterThan(3);
    expect(all.map((b: any) => b.number)).toEqual([...all.map((b: any) => b.number)].sort((a: number, b: number) => b - a));
    const ids = (query: string) =>
      q(query).then((r) => {
        expect(r.status).toBe(200);
        return r.json.map((b: any) => b.id).sort();
      });
    const byStatus = (s: string) =>
      all
        .filter((b: any) => b.status === s)
        .map((b: any) => b.id)
        .sort();
    expect(await ids('successful')).toEqual(byStatus('SUCCESSFUL'));
    expect(await ids('failed')).toEqual(byStatus('FAILED'));
    expect(await ids('cancelled or timed out')).toEqual([...byStatus('CANCELLED'), ...byStatus('TIMED_OUT')].sort());
    expect(await ids('finished')).toEqual(all.map((b: any) => b.id).sort());
    expect(await ids('waiting or pending or running')).toEqual([]);
    expect(await ids('"Job" is "quick"')).toEqual(
      all
        .filter((b: any) => b.jobName === 'Quick')
        .map((b: any) => b.id)
        .sort(),
    );
    expect(await ids('"Job" is "Q*"')).toEqual(
      all
        .filter((b: any) => b.jobName === 'Quick')
        .map((b: any) => b.id)
        .sort(),
    );
    expect(await ids('"Branch" is "main"')).toEqual(
      all
        .filter((b: any) => b.refName === 'refs/heads/main')
        .map((b: any) => b.id)
        .sort(),
    );
    expect(await ids('"Branch" is empty')).toEqual(
      all
        .filter((b: any) => b.refName !== 'refs/heads/main')
        .map((b: any) => b.id)
        .sort(),
    );
    expect(await ids('"Pull Request" is empty')).toEqual(
      all
        .filter((b: any) => b.requestId === null)
        .map((b: any) => b.id)
        .sort(),
    );
    expect(await ids('"Pull Request" is "life#1"')).toEqual(
      all
        .filter((b: any) => b.requestId !== null)
        .map((b: any) => b.id)
        .sort(),
    );
    expect(await ids('"Tag" is "v*"')).toEqual([]);
    expect(await ids('"Version" is empty')).toEqual(all.map((b: any) => b.id).sort());
    expect(await ids('"Project" is "li*"')).toEqual(all.map((b: any) => b.id).sort());
    expect(await ids('"Status" is "Successful"')).toEqual(byStatus('SUCCESSFUL'));
    const one = all[all.length - 1];
    expect(await ids(`"Number" is "life#${one.number}"`)).toEqual([one.id]);
    expect(await ids(`"Number" is greater than "life#${one.number}"`)).toEqual(
      all
        .filter((b: any) => b.number > one.number)
        .map((b: any) => b.id)
        .sort(),
    );
    expect(await ids(`"Number" is less than "life#${one.number + 1}"`)).toEqual([one.id]);
    expect(await ids(`#${one.number}`)).toEqual([one.id]);
    expect(await ids(`in pipeline of "life#${one.number}"`)).toEqual(
      all
        .filter((b: any) => b.pipeline === one.pipeline)
        .map((b: any) => b.id)
        .sort(),
    );
    expect(await ids(`depends on "life#${one.number}"`)).toEqual([]);
    expect(await ids(`dependencies of "life#${one.number}"`)).toEqual([]);
    expect(await ids(`"Commit" is "life:${head}"`)).toEqual(
      all
        .filter((b: any) => b.commitHash === head)
        .map((b: any) => b.id)
        .sort(),
    );
    expect(await ids('submitted by me')).toEqual(
      all
        .filter((b: any) => b.submitterId === 1)
        .map((b: any) => b.id)
        .sort(),
    );
    expect(await ids('submitted by "admin"')).toEqual(
      all
        .filter((b: any) => b.submitterId === 1)
        .map((b: any) => b.id)
        .sort(),
    );
    expect(await ids('cancelled by me')).toEqual(
      all
        .filter((b: any) => b.cancellerId === 1)
        .map((b: any) => b.id)
        .sort(),
    );
    expect(await ids('"Submit Date" is since "2000-01-01"')).toEqual(all.map((b: any) => b.id).sort());
    expect(await ids('"Finish Date" is until "2000-01-01"')).toEqual([]);
    expect(await ids('~quick~')).toEqual(
      all
        .filter((b: any) => b.jobName === 'Quick')
        .map((b: any) => b.id)
        .sort(),
    );
    expect(await ids('not(successful)')).toEqual(
      all
        .filter((b: any) => b.status !== 'SUCCESSFUL')
        .map((b: any) => b.id)
        .sort(),
    );
    const ordered = (await q('order by "Job" asc and "Number" asc')).json;
    expect(ordered[0].jobName).toBe('PR');
    expect((await q('"Status" is "bogus"')).status).toBe(400);
    expect((await q('"Number" is "5"')).status).toBe(400);
    expect((await q('ran on "agent"')).status).toBe(400);
    expect((await q('submitted by "nobody"')).status).toBe(400);
    expect((await q('"Nope" is "x"')).status).toBe(400);
    expect((await q('successful and')).status).toBe(400);
    expect((await server.call('GET', '/builds?offset=0&count=101')).status).toBe(400);
    expect((await server.call('GET', '/builds?query=submitted%20by%20me&offset=0&count=10', { auth: null })).status).toBe(401);

    const outsider = await server.createUser('outsider');
    expect((await server.call('GET', `/builds/${one.id}`, { auth: outsider.auth })).status).toBe(404);
    expect((await server.call('GET', '/builds?offset=0&count=100', { auth: outsider.auth })).json).toEqual([]);
    expect((await server.call('DELETE', `/builds/${one.id}`, { auth: outsider.auth })).status).toBe(404);
    expect((await server.call('DELETE', `/builds/${one.id}`)).status).toBe(200);
    expect((await server.call('GET', `/builds/${one.id}`)).status).toBe(404);
  });

  it('rebuilds a finished build in place and cancels a finished build as a no-op', async () => {
    const id = await runQuick();
    const before = await finished(id);
    expect((await server.call('DELETE', `/job-runs/${id}`)).status).toBe(200);
    expect((await build(id)).status).toBe('SUCCESSFUL');
    expect((await server.call('POST', '/job-runs/rebuild', { body: { buildId: id, reason: 'again' } })).status).toBe(200);
    const after = await eventually(async () => {
      const b = await build(id);
      return b.submitReason === 'again' && b.status === 'SUCCESSFUL' ? b : null;
    });
    expect(after.number).toBe(before.number);
    expect((await server.call('POST', '/job-runs/rebuild', { body: { buildId: 999999, reason: 'x' } })).status).toBe(404);
  });
});
