/**
 * A build agent end to end (docs/compatibility.md#build-agents): a real server and `gitloom agent`
 * as a child process, a remote shell executor, and jobs that check out over the protocol, retrieve
 * their dependencies' artifacts, stream their log live, publish artifacts and report their end;
 * a cancel stops the job on the agent; SIGTERM ends the agent's job FAILED; a refused token ends
 * the agent with status 3.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../helpers/agents.js';
import { eventually, givenProject, runJobOnCommit } from '../helpers/fixtures.js';
import { waitGone } from '../helpers/processes.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import { git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';

const SPEC = `version: 25
jobs:
- name: CI
  steps:
  - !CheckoutStep
    name: checkout
    cloneCredential: !DefaultCredential {}
  - !CommandStep
    name: build
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo "building @commit_hash@ as @secret:token@"
      - mkdir -p dist && cat README.md > dist/out.txt && echo 1.2.@build_number@ > version.txt
  - !SetBuildVersionStep
    name: version
    buildVersion: '@file:version.txt@'
  - !PublishArtifactStep
    name: publish
    artifacts: 'dist/**'
- name: Release
  jobDependencies:
  - jobName: CI
    requireSuccessful: true
    artifacts: 'dist/**'
    destinationPath: deps
  steps:
  - !CommandStep
    name: release
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - cat deps/dist/out.txt
- name: Slow
  steps:
  - !CommandStep
    name: slow
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo started-slowly
      - sleep 3
      - echo awake
      - sleep 600 # agent-run-marker
- name: Outage
  steps:
  - !CommandStep
    name: outage
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo before-the-outage
      - sleep 4
      - echo during-the-outage
      - sleep 3
      - echo after-the-outage
`;

describe('gitloom agent', { timeout: 120_000 }, () => {
  let server: TestServer;
  let work: string;
  let workDir: string;
  let projectId: number;
  let head: string;
  let agent: AgentProcess;
  let tokenId: number;
  let token: string;

  const build = async (id: number) => (await server.call('GET', `/builds/${id}`)).json;
  const finished = (id: number) =>
    eventually(async () => {
      const b = await build(id);
      return ['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(b.status) ? b : null;
    }, 60_000);
  const log = async (id: number) => (await server.call('GET', `/builds/${id}/log`)).text;
  const run = async (jobName: string) => {
    const res = await runJobOnCommit(server, { projectId, commitHash: head, jobName });
    expect(res.status).toBe(200);
    return res.json as number;
  };

  beforeAll(async () => {
    server = await startTestServer();
    projectId = await givenProject(server, { name: 'remote' });
    work = await makeWorkTree({ 'README.md': '# remote\n', '.onedev-buildspec.yml': SPEC });
    head = (await git(work, ['rev-parse', 'HEAD'])).trim();
    await git(work, ['push', '-q', gitUrl(server, 'remote', { name: 'admin', password: 'admin-secret' }), 'main']);
    expect(
      (await server.call('POST', '/settings/job-executors', { body: [{ '@type': 'RemoteShellExecutor', name: 'agents', agentQuery: '"zone" is "b"' }] }))
        .status,
    ).toBe(200);
    const setting = (await server.call('GET', `/projects/${projectId}/setting`)).json;
    const jobSecrets = [{ name: 'token', value: 's3cr3t-value', authorizedBranches: null, authorization: null, archived: false }];
    const saved = await server.call('POST', `/projects/${projectId}/setting`, { body: { ...setting, buildSetting: { ...setting.buildSetting, jobSecrets } } });
    expect(saved.status, saved.text).toBe(200);
    // the token as Administration › Agents creates it
    tokenId = (await server.call('POST', '/agent-tokens')).json;
    token = (await server.call('GET', `/agent-tokens/${tokenId}`)).json.value;
    workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-agent-'));
    agent = startAgent(server.url, workDir, token, ['--name', 'runner-1', '--attribute', 'zone=b']);
    await eventually(async () => (agent.output().includes('Connected to') ? true : null), 60_000);
  });

  afterAll(async () => {
    if (agent && agent.child.exitCode === null) {
      agent.child.kill('SIGKILL');
      await agent.exited;
    }
    await server?.close();
    await fs.rm(work, { recursive: true, force: true });
    await fs.rm(workDir, { recursive: true, force: true });
  });

  it('registers the agent with what it is and its attributes, kept in its work dir; an administrator changes them', async () => {
    const found = (await server.call('GET', `/agent-tokens/${tokenId}/agent`)).json;
    expect(found).toMatchObject({
      tokenId,
      name: 'runner-1',
      osName: 'Linux',
      osArch: os.arch() === 'x64' ? 'amd64' : os.arch(),
      cpus: os.availableParallelism(),
    });
    expect((await server.call('GET', `/agents/${found.id}/attributes`)).json).toEqual({ zone: 'b' });
    expect(JSON.parse(await fs.readFile(path.join(workDir, 'attributes.json'), 'utf8'))).toEqual({ zone: 'b' });
    expect((await server.call('POST', `/agents/${found.id}/attributes`, { body: { zone: 'b', gpu: 'yes' } })).status).toBe(200);
    // the next heartbeat brings them; the work dir keeps them for a restart
    await eventually(async () => {
      const stored = JSON.parse(await fs.readFile(path.join(workDir, 'attributes.json'), 'utf8'));
      return stored.gpu === 'yes' ? stored : null;
    });
  });

  it('runs a job: checkout over the protocol, secrets masked, version, artifacts published, outcome reported', async () => {
    const b = await finished(await run('CI'));
    const text = await log(b.id);
    expect(b.status, text).toBe('SUCCESSFUL');
    expect(text).toContain('Executing job (executor: agents, agent: runner-1)...');
    expect(text).toContain('Job directory on the agent:');
    expect(text).toContain(`building ${head} as ******`);
    expect(text).not.toContain('s3cr3t-value');
    expect(b.version).toBe(`1.2.${b.number}`);
    expect((await server.call('GET', `/artifacts/${b.id}/contents/dist/out.txt`)).text).toBe('# remote\n');
    // the job directory went with the job
    expect(await fs.readdir(path.join(workDir, 'jobs'))).toEqual([]);
  });

  it("retrieves a dependency's artifacts into the workspace", async () => {
    const b = await finished(await run('Release'));
    const text = await log(b.id);
    expect(b.status, text).toBe('SUCCESSFUL');
    expect(text).toContain("Retrieved 1 artifact file(s) of dependency job 'CI'");
    expect(text).toContain('# remote');
  });

  it('streams the log while the job runs, and a cancel stops the job on the agent', async () => {
    const id = await run('Slow');
    // the first line is in the server's log while the build still runs
    await eventually(async () => ((await log(id)).includes('started-slowly') ? true : null), 30_000);
    expect((await build(id)).status).toBe('RUNNING');
    await eventually(async () => ((await log(id)).includes('awake') ? true : null), 30_000);
    expect((await server.call('DELETE', `/job-runs/${id}`)).status).toBe(200);
    expect((await finished(id)).status).toBe('CANCELLED');
    expect(await waitGone('agent-run-marker', 15_000)).toBe(true);
    await eventually(async () => (agent.output().includes(`Build ${id}: stopped, as the server asked`) ? true : null));
  });

  it('SIGTERM stops the running job, which ends FAILED saying why, and the agent exits 0', async () => {
    const id = await run('Slow');
    await eventually(async () => ((await log(id)).includes('started-slowly') ? true : null), 30_000);
    agent.child.kill('SIGTERM');
    expect(await agent.exited).toBe(0);
    const b = await build(id);
    expect(b.status).toBe('FAILED');
    expect(await log(id)).toContain('Agent stopped while the build was running');
    expect(await waitGone('agent-run-marker', 15_000)).toBe(true);
  });

  it('an agent started again after it stopped connects at once (it disconnected), with the attributes kept; a deleted token ends it with status 3', async () => {
    agent = startAgent(server.url, workDir, token, ['--name', 'runner-1', '--attribute', 'zone=b']);
    await eventually(async () => (agent.output().includes('Connected to') ? true : null), 60_000);
    const found = (await server.call('GET', `/agent-tokens/${tokenId}/agent`)).json;
    expect((await server.call('GET', `/agents/${found.id}/attributes`)).json).toEqual({ zone: 'b', gpu: 'yes' });
    expect((await server.call('DELETE', `/agent-tokens/${tokenId}`)).status).toBe(200);
    expect(await agent.exited).toBe(3);
    expect(agent.output()).toContain('The server refused the agent token');
  });

  it('ends with status 3 and says why when the server refuses its token', async () => {
    const refused = startAgent(server.url, workDir, 'not-a-token');
    expect(await refused.exited).toBe(3);
    expect(refused.output()).toContain('The server refused the agent token');
  });

  it('keeps a job going while the server is unreachable: its log lines and outcome arrive, in order, once it answers again', async () => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(server.url).port) });
    const newToken = (await server.call('GET', `/agent-tokens/${(await server.call('POST', '/agent-tokens')).json}`)).json.value;
    const cutOff = startAgent(`http://127.0.0.1:${proxy.port}`, workDir, newToken, ['--name', 'runner-1', '--attribute', 'zone=b']);
    try {
      await eventually(async () => (cutOff.output().includes('Connected to') ? true : null), 60_000);
      const id = await run('Outage');
      await eventually(async () => ((await log(id)).includes('before-the-outage') ? true : null), 30_000);
      proxy.cut();
      // within the lease (15 s): the server keeps the build RUNNING meanwhile
      await new Promise((r) => setTimeout(r, 8000));
      expect(await log(id)).not.toContain('during-the-outage');
      proxy.restore();
      const b = await finished(id);
      const text = await log(id);
      expect(b.status, text).toBe('SUCCESSFUL');
      const order = ['before-the-outage', 'during-the-outage', 'after-the-outage'].map((line) => text.indexOf(line));
      expect(order.every((at) => at >= 0)).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      expect(cutOff.output()).toContain('not sent yet');

      // a stopping agent gives up on a server that does not answer, within its bound
      const stuck = await run('Slow');
      await eventually(async () => ((await log(stuck)).includes('started-slowly') ? true : null), 30_000);
      proxy.cut();
      const stoppedAt = Date.now();
      cutOff.child.kill('SIGTERM');
      expect(await cutOff.exited).toBe(0);
      expect(Date.now() - stoppedAt).toBeLessThan(30_000);
      expect(cutOff.output()).toContain(`Build ${stuck}: outcome FAILED not reported`);
      expect(await waitGone('agent-run-marker', 15_000)).toBe(true);
    } finally {
      if (cutOff.child.exitCode === null) cutOff.child.kill('SIGKILL');
      await proxy.close();
    }
  });
});
