import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';
import { eventually, givenProject, runJobOnCommit } from '../helpers/fixtures.js';

const STEP = (command: string) => `  - !CommandStep
    name: run
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - ${command}
`;

const SPEC = `version: 25
jobs:
- name: Quick
  steps:
${STEP('echo quick')}- name: Shallow
  steps:
  - !CheckoutStep
    name: checkout
    cloneCredential: !DefaultCredential {}
    cloneDepth: 1
${STEP('test "$(git rev-list --count HEAD)" = 1 && test -f README.md && echo shallow-ok')}- name: Full
  steps:
  - !CheckoutStep
    name: checkout
    cloneCredential: !DefaultCredential {}
${STEP('echo "depth $(git rev-list --count HEAD)"')}- name: OnMerge
  steps:
${STEP('echo merged')}  triggers:
  - !PullRequestMergeTrigger
    branches: main
- name: OnDiscard
  steps:
${STEP('echo discarded')}  triggers:
  - !PullRequestDiscardTrigger
    branches: main
`;

describe('builds: invalid specs, PR merge/discard and schedule triggers, clone depth, labels, ranges, fixed issues', () => {
  let server: TestServer;
  let work: string;
  let projectId: number;
  const remote = (path = 'trig') => gitUrl(server, path, { name: 'admin', password: 'admin-secret' });
  const build = async (id: number) => (await server.call('GET', `/builds/${id}`)).json;
  const finished = (id: number) =>
    eventually(async () => {
      const b = await build(id);
      return ['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(b?.status) ? b : null;
    });
  const query = async (q: string) => (await server.call('GET', `/builds?query=${encodeURIComponent(q)}&offset=0&count=100`)).json as any[];
  const run = async (jobName: string, commitHash: string) => (await runJobOnCommit(server, { projectId, commitHash, jobName })).json as number;
  const head = async () => (await git(work, ['rev-parse', 'HEAD'])).trim();

  beforeAll(async () => {
    server = await startTestServer();
    projectId = await givenProject(server, { name: 'trig' });
    work = await makeWorkTree({ 'README.md': '# trig\n', '.onedev-buildspec.yml': SPEC });
    await commitFiles(work, { 'second.txt': 'two\n' }, 'second commit');
    await git(work, ['push', '-q', remote(), 'main']);
  });
  afterAll(async () => {
    await server?.close();
    await fs.rm(work, { recursive: true, force: true });
  });

  it('cloneDepth gives a shallow checkout; without it the history is complete', async () => {
    const commit = await head();
    const shallow = await finished(await run('Shallow', commit));
    expect(shallow.status).toBe('SUCCESSFUL');
    expect((await server.call('GET', `/builds/${shallow.id}/log`)).text).toContain('shallow-ok');
    const full = await finished(await run('Full', commit));
    expect(full.status).toBe('SUCCESSFUL');
    expect((await server.call('GET', `/builds/${full.id}/log`)).text).toContain('depth 2');
  });

  it('build labels: create, list, duplicate 409, unknown spec 400, delete, 404 after; anonymous 401', async () => {
    const buildId = await finished(await run('Quick', await head())).then((b) => b.id);
    const specId = (await server.call('POST', '/label-specs', { body: { name: 'nightly' } })).json;
    const created = await server.call('POST', '/build-labels', { body: { buildId, specId } });
    expect(created.status).toBe(200);
    expect((await server.call('GET', `/builds/${buildId}/labels`)).json).toEqual([{ id: created.json, buildId, specId }]);
    expect((await server.call('GET', `/builds?query=${encodeURIComponent('"Label" is "nightly"')}&offset=0&count=10`)).json.map((b: any) => b.id)).toEqual([
      buildId,
    ]);
    expect((await server.call('POST', '/build-labels', { body: { buildId, specId } })).status).toBe(409);
    expect((await server.call('POST', '/build-labels', { body: { buildId, specId: 9999 } })).status).toBe(400);
    expect((await server.call('POST', '/build-labels', { body: { buildId: 9999, specId } })).status).toBe(404);
    expect((await server.call('POST', '/build-labels', { body: { buildId, specId, id: 3 } })).status).toBe(400);
    expect((await server.call('POST', '/build-labels', { body: { buildId, specId }, auth: null })).status).toBe(401);
    const reader = await server.createUser('label-reader');
    expect((await server.call('DELETE', `/build-labels/${created.json}`, { auth: reader.auth })).status).toBe(404);
    expect((await server.call('DELETE', `/build-labels/${created.json}`)).status).toBe(200);
    expect((await server.call('GET', `/builds/${buildId}/labels`)).json).toEqual([]);
    expect((await server.call('DELETE', `/build-labels/${created.json}`)).status).toBe(404);
  });

  it('a 416 names the file length in Content-Range', async () => {
    const buildId = await finished(await run('Quick', await head())).then((b) => b.id);
    const up = await server.call('POST', `/artifacts/${buildId}/data/file.bin`, { text: 'hello', headers: { 'content-type': 'application/octet-stream' } });
    expect(up.status).toBe(200);
    const res = await server.call('GET', `/artifacts/${buildId}/contents/data/file.bin`, { headers: { range: 'bytes=50-' } });
    expect(res.status).toBe(416);
    expect(res.headers.get('content-range')).toBe('bytes */5');
    expect(res.headers.get('content-type')).toContain('application/problem+json');
  });

  it('fixed issue ids: issues fixed by commits since the previous successful build of the job', async () => {
    const first = await finished(await run('Quick', await head()));
    expect(first.status).toBe('SUCCESSFUL');
    expect((await server.call('GET', `/builds/${first.id}/fixed-issue-ids`)).json).toEqual([]);
    const issue = (await server.call('POST', '/issues', { body: { projectId, title: 'Crash on start' } })).json;
    const other = (await server.call('POST', '/issues', { body: { projectId, title: 'Unrelated' } })).json;
    const issueNumber = (await server.call('GET', `/issues/${issue}`)).json.number;
    await commitFiles(work, { 'fix.txt': 'fixed\n' }, `Fixes #${issueNumber}\n\nAlso mentions #999 without a keyword`);
    await git(work, ['push', '-q', remote(), 'main']);
    const second = await finished(await run('Quick', await head()));
    expect(second.status).toBe('SUCCESSFUL');
    expect((await server.call('GET', `/builds/${second.id}/fixed-issue-ids`)).json).toEqual([issue]);
    expect(other).not.toBe(issue);
    expect((await server.call('GET', '/builds/99999/fixed-issue-ids')).status).toBe(404);
  });

  it('PullRequestMergeTrigger and PullRequestDiscardTrigger run on merge and discard', async () => {
    await git(work, ['checkout', '-q', '-b', 'feature']);
    await commitFiles(work, { 'feature.txt': 'f\n' }, 'feature');
    await git(work, ['push', '-q', remote(), 'feature']);
    await git(work, ['checkout', '-q', '-b', 'dropped', 'main']);
    await commitFiles(work, { 'dropped.txt': 'd\n' }, 'dropped');
    await git(work, ['push', '-q', remote(), 'dropped']);
    await git(work, ['checkout', '-q', 'main']);
    const open = async (sourceBranch: string) =>
      (
        await server.call('POST', '/pulls', {
          body: { targetProjectId: projectId, sourceProjectId: projectId, targetBranch: 'main', sourceBranch, title: sourceBranch },
        })
      ).json as number;
    const merged = await open('feature');
    const discarded = await open('dropped');
    expect((await server.call('POST', `/pulls/${merged}/merge`, { text: '' })).status).toBe(200);
    expect((await server.call('POST', `/pulls/${discarded}/discard`, { text: '' })).status).toBe(200);

    const onMerge = await eventually(async () => (await query('"Job" is "OnMerge"'))[0]);
    expect(onMerge).toMatchObject({ requestId: merged, submitterId: -1, submitReason: 'Pull request is merged' });
    const pr = (await server.call('GET', `/pulls/${merged}`)).json;
    expect(onMerge.refName).toBe(`refs/pulls/${pr.number}/merge`);
    await git(work, ['fetch', '-q', remote(), 'main']);
    expect(onMerge.commitHash).toBe((await git(work, ['rev-parse', 'FETCH_HEAD'])).trim());
    expect((await finished(onMerge.id)).status).toBe('SUCCESSFUL');

    const onDiscard = await eventually(async () => (await query('"Job" is "OnDiscard"'))[0]);
    expect(onDiscard).toMatchObject({ requestId: discarded, submitReason: 'Pull request is discarded', commitHash: onMerge.commitHash });
    // Each closing event fires its own trigger only.
    expect(await query('"Job" is "OnMerge"')).toHaveLength(1);
    expect(await query('"Job" is "OnDiscard"')).toHaveLength(1);
  });

  it('ScheduleTrigger runs the job on the default branch head at its cron times', async () => {
    const sched = await givenProject(server, { name: 'sched' });
    const dir = await makeWorkTree({
      'README.md': '# sched\n',
      '.onedev-buildspec.yml': `version: 25\njobs:\n- name: Tick\n  steps:\n${STEP('echo tick')}  triggers:\n  - !ScheduleTrigger\n    cronExpression: '* * * * * ?'\n`,
    });
    try {
      await git(dir, ['push', '-q', remote('sched'), 'main']);
      const commit = (await git(dir, ['rev-parse', 'HEAD'])).trim();
      const tick = await eventually(async () => (await query('"Project" is "sched" and "Job" is "Tick"'))[0], 10_000);
      expect(tick).toMatchObject({ projectId: sched, refName: 'refs/heads/main', commitHash: commit, submitReason: 'Scheduled', submitterId: -1 });
      // Removing the trigger stops the schedule.
      await commitFiles(dir, { '.onedev-buildspec.yml': `version: 25\njobs:\n- name: Tick\n  steps:\n${STEP('echo tick')}` }, 'no schedule');
      await git(dir, ['push', '-q', remote('sched'), 'main']);
      await new Promise((r) => setTimeout(r, 1500));
      const count = (await query('"Project" is "sched"')).length;
      await new Promise((r) => setTimeout(r, 2500));
      expect((await query('"Project" is "sched"')).length).toBe(count);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('a bad cron expression is a spec validation error', async () => {
    const res = await server.call('GET', `/builds?query=${encodeURIComponent('"Project" is "nothing-here"')}&offset=0&count=1`);
    expect(res.json).toEqual([]);
    const bad = await givenProject(server, { name: 'badcron' });
    const dir = await makeWorkTree({
      'README.md': '# bad\n',
      '.onedev-buildspec.yml': `version: 25\njobs:\n- name: Tick\n  steps:\n${STEP('echo tick')}  triggers:\n  - !ScheduleTrigger\n    cronExpression: '0 0 12 ? * 9'\n  - !BranchUpdateTrigger {}\n`,
    });
    try {
      await git(dir, ['push', '-q', remote('badcron'), 'main']);
      const failed = await eventually(async () => (await query('"Project" is "badcron"'))[0]);
      expect(failed).toMatchObject({ projectId: bad, jobName: 'Tick', status: 'FAILED' });
      expect((await server.call('GET', `/builds/${failed.id}/log`)).text).toContain('day of week out of range');
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('a push with an invalid spec gives FAILED builds with the validation message: per matching job, or one for an unreadable spec', async () => {
    const broken = await givenProject(server, { name: 'broken' });
    const dir = await makeWorkTree({
      'README.md': '# broken\n',
      '.onedev-buildspec.yml': `version: 25\njobs:\n- name: CI\n  steps:\n  - !NoSuchStep\n    name: x\n  triggers:\n  - !BranchUpdateTrigger\n    branches: main\n- name: Other\n  triggers:\n  - !BranchUpdateTrigger\n    branches: release\n`,
    });
    try {
      await git(dir, ['push', '-q', remote('broken'), 'main']);
      const first = await eventually(async () => {
        const list = await query('"Project" is "broken"');
        return list.length > 0 ? list : null;
      });
      expect(first).toHaveLength(1);
      expect(first![0]).toMatchObject({
        projectId: broken,
        jobName: 'CI',
        status: 'FAILED',
        refName: 'refs/heads/main',
        submitReason: "Branch 'main' is updated",
        submitterId: -1,
      });
      expect(first![0].finishDate).not.toBeNull();
      const log = (await server.call('GET', `/builds/${first![0].id}/log`)).text;
      expect(log).toContain('Invalid build spec');
      expect(log).toContain('NoSuchStep');

      await commitFiles(dir, { '.onedev-buildspec.yml': 'version: 25\njobs: [unclosed\n' }, 'unparsable spec');
      await git(dir, ['push', '-q', remote('broken'), 'main']);
      const second = await eventually(async () => {
        const list = await query('"Project" is "broken"');
        return list.length > 1 ? list : null;
      });
      expect(second).toHaveLength(2);
      const unreadable = second!.find((b) => b.id !== first![0].id);
      expect(unreadable).toMatchObject({ jobName: '.onedev-buildspec.yml', status: 'FAILED', submitReason: "Branch 'main' is updated" });
      expect((await server.call('GET', `/builds/${unreadable.id}/log`)).text).toContain('Invalid build spec');

      // [skip ci] is honoured even for a broken spec; a tag gets no build without a tag trigger.
      await commitFiles(dir, { 'x.txt': 'x\n' }, 'docs [skip ci]');
      await git(dir, ['push', '-q', remote('broken'), 'main']);
      await git(dir, ['push', '-q', remote('broken'), 'main:refs/tags/v1']);
      await server.settled();
      const third = await query('"Project" is "broken"');
      expect(third.map((b) => b.refName)).toEqual(['refs/heads/main', 'refs/heads/main']);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
