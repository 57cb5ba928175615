import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setAgentPaused } from '../../src/domain/agents/index.js';
import { createContext, systemActor } from '../../src/domain/context.js';
import { shellJob } from '../helpers/agents.js';
import { eventually, givenRepo, removeWorkTrees, runJobOnCommit, type Repo } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const exec = promisify(execFile);

const SPEC = `version: 25
jobs:
${shellJob('OnA', 'pool-a', ['echo on a'])}
${shellJob('Any', 'anywhere', ['echo anywhere'])}
${shellJob('Any2', 'anywhere', ['echo anywhere too'])}
${shellJob('Docker', 'docker-agents', ['echo docker'])}
${shellJob('Retried', 'anywhere', ['sleep 600'], ['  retryCondition: always', '  maxRetries: 1', '  retryDelay: 1'])}
`;

/**
 * The agent protocol's server side (docs/compatibility.md#build-agents "The agent protocol"),
 * spoken over real HTTP as an agent speaks it: connecting, leasing by agent query, room and
 * engine, what a job token may and may not do, heartbeats, and an agent that goes away.
 */
describe('the agent protocol', () => {
  let server: TestServer;
  let repo: Repo;
  let other: Repo;
  let head: string;
  beforeAll(async () => {
    server = await startTestServer();
    repo = await givenRepo(server, 'agentic', { files: { '.onedev-buildspec.yml': SPEC } });
    other = await givenRepo(server, 'secretive', { files: { 'secret.txt': 'top secret\n' } });
    head = await repo.head('main');
    const executors = [
      { '@type': 'RemoteShellExecutor', name: 'pool-a', agentQuery: '"pool" is "a"' },
      { '@type': 'RemoteShellExecutor', name: 'anywhere', agentQuery: '"Os" is "Linux*"', concurrency: '1' },
      { '@type': 'RemoteDockerExecutor', name: 'docker-agents', agentQuery: null },
    ];
    const res = await server.call('POST', '/settings/job-executors', { body: executors });
    expect(res.status, res.text).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
    await removeWorkTrees();
  });

  /** An agent token, made through the API and read back as an administrator reads it. */
  const newToken = async (): Promise<string> => {
    const created = await server.call('POST', '/agent-tokens');
    expect(created.status, created.text).toBe(200);
    return (await server.call('GET', `/agent-tokens/${created.json}`)).json.value as string;
  };
  const post = async (route: string, token: string, body: unknown) => {
    const res = await fetch(`${server.url}${route}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, json: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined };
  };
  const report = (name: string, attributes: Record<string, string>, engine: string | null = null) => ({
    name,
    osName: 'Linux',
    osVersion: '6.1',
    osArch: 'amd64',
    cpus: 4,
    memory: 8 * 1024 ** 3,
    engine,
    attributes,
  });
  const connect = async (name: string, attributes: Record<string, string>, engine: string | null = null) => {
    const token = await newToken();
    const res = await post('/~agent/connect', token, report(name, attributes, engine));
    expect(res.status, res.text).toBe(200);
    return { token, session: res.json.session as string, agentId: res.json.agentId as number };
  };
  const lease = (agent: { token: string; session: string }, waitMs = 0) => post('/~agent/lease', agent.token, { session: agent.session, waitMs });
  const run = async (jobName: string) => {
    const res = await runJobOnCommit(server, { projectId: repo.id, commitHash: head, jobName });
    expect(res.status, res.text).toBe(200);
    return res.json as number;
  };
  const build = async (id: number) => (await server.call('GET', `/builds/${id}`)).json;
  const log = async (id: number) => (await server.call('GET', `/builds/${id}/log`)).text;
  const jobCall = (token: string, route: string, init: RequestInit = {}) =>
    fetch(`${server.url}/~agent/job${route}`, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) } });

  it('refuses an unknown token and a second connection of one token, but for the same agent started again', async () => {
    expect((await post('/~agent/connect', 'no-such-token', report('x', {}))).status).toBe(401);
    const agent = await connect('twin', {});
    const again = await post('/~agent/connect', agent.token, report('twin', {}));
    expect(again.status).toBe(409);
    expect(again.json.code).toBe('GITLOOM_ERR_AGENT_CONNECTED');
    // a stopping agent disconnects: its token connects again at once
    expect((await post('/~agent/disconnect', agent.token, { session: agent.session })).status).toBe(200);
    const reconnected = await post('/~agent/connect', agent.token, report('twin', {}));
    expect(reconnected.status, reconnected.text).toBe(200);
    expect((await post('/~agent/heartbeat', agent.token, { session: agent.session, running: [] })).json.code).toBe('GITLOOM_ERR_AGENT_SESSION');
    const wrong = await post('/~agent/heartbeat', agent.token, { session: 'not-mine', running: [] });
    expect(wrong.status).toBe(409);
    expect(wrong.json.code).toBe('GITLOOM_ERR_AGENT_SESSION');
    // the same agent started again names its previous session: it replaces it at once; another session name does not
    const current = reconnected.json.session as string;
    const stranger = await post('/~agent/connect', agent.token, { ...report('twin', {}), previousSession: 'not-mine' });
    expect([stranger.status, stranger.json.code]).toEqual([409, 'GITLOOM_ERR_AGENT_CONNECTED']);
    const restarted = await post('/~agent/connect', agent.token, { ...report('twin', {}), previousSession: current });
    expect(restarted.status, restarted.text).toBe(200);
    expect(restarted.json.session).not.toBe(current);
    expect((await post('/~agent/heartbeat', agent.token, { session: current, running: [] })).json.code).toBe('GITLOOM_ERR_AGENT_SESSION');
    expect((await post('/~agent/heartbeat', agent.token, { session: restarted.json.session, running: [] })).status).toBe(200);
    const malformed = await post('/~agent/connect', agent.token, { name: 'x' });
    expect(malformed.status).toBe(400);
    const badAttribute = await post('/~agent/connect', await newToken(), report('y', { '-bad': 'x' }));
    expect(badAttribute.status).toBe(400);
    expect(badAttribute.json.code).toBe('GITLOOM_ERR_AGENT_ATTRIBUTE');
  });

  it('leases a job only to an agent its executor selects, and the job token does what the job needs and no more', async () => {
    const b = await connect('agent-b', { pool: 'b' });
    const a = await connect('agent-a', { pool: 'a' });
    const id = await run('OnA');
    expect((await lease(b)).status).toBe(204);
    const leased = await lease(a, 5000);
    expect(leased.status, leased.text).toBe(200);
    const job = leased.json;
    expect(job).toMatchObject({ buildId: id, executorName: 'pool-a', executorKind: 'ServerShellExecutor', slots: 1, projectId: repo.id, commitHash: head });
    expect(job.steps[0].name).toBe('run');
    expect(job.variables).toMatchObject({ projectName: 'agentic', jobName: 'OnA', commitHash: head });
    expect(await build(id)).toMatchObject({ status: 'RUNNING', agentId: a.agentId });
    expect(await log(id)).toContain('Executing job (executor: pool-a, agent: agent-a)...');

    // fetch the commit over git smart HTTP with the job token, as the agent's checkout does
    const clone = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-agent-clone-'));
    const gitEnv = {
      ...process.env,
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.extraHeader',
      GIT_CONFIG_VALUE_0: `Authorization: Bearer ${job.jobToken}`,
    };
    await exec('git', ['init', '-q', clone]);
    await exec('git', ['-C', clone, 'fetch', '-q', `${server.url}/~agent/job/git`, head], { env: gitEnv });
    expect((await exec('git', ['-C', clone, 'cat-file', '-t', head])).stdout.trim()).toBe('commit');
    // never a push, never with the agent token, never another project
    expect((await jobCall(job.jobToken, '/git/info/refs?service=git-receive-pack')).status).toBe(403);
    expect((await jobCall(a.token, '/git/info/refs?service=git-upload-pack')).status).toBe(401);
    expect((await jobCall(job.jobToken, `/dependencies/${id}/x.txt`)).status).toBe(404);
    const otherHead = await other.head('main');
    await expect(exec('git', ['-C', clone, 'fetch', '-q', `${server.url}/~agent/job/git`, otherHead], { env: gitEnv })).rejects.toThrow();
    await fs.rm(clone, { recursive: true, force: true });

    // the log, streamed in order; an artifact; the end
    for (const line of ['10:00:00 first line\n', '10:00:01 second line\n']) {
      const res = await jobCall(job.jobToken, '/log', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: line });
      expect(res.status).toBe(200);
    }
    expect(await log(id)).toMatch(/first line\n.*second line/s);
    const published = await jobCall(job.jobToken, '/artifacts/out/result.txt', {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: 'result\n',
    });
    expect(published.status).toBe(200);
    expect((await jobCall(job.jobToken, '/artifacts//etc/escape.txt', { method: 'POST', body: 'x' })).status).toBe(400);
    const finish = await post('/~agent/job/finish', job.jobToken, { status: 'SUCCESSFUL', version: '1.2.3' });
    expect(finish.status, finish.text).toBe(200);
    expect(await build(id)).toMatchObject({ status: 'SUCCESSFUL', version: '1.2.3', agentId: a.agentId });
    expect((await server.call('GET', `/artifacts/${id}/contents/out/result.txt`)).text).toBe('result\n');
    // the token ended with its build
    expect((await jobCall(job.jobToken, '/log', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'late\n' })).status).toBe(401);
  });

  it('gives the jobs of a docker executor only to agents with a container engine, and respects concurrency per agent', async () => {
    const shellOnly = await connect('shell-only', {});
    const withEngine = await connect('with-engine', {}, 'podman 4.3.1');
    const id = await run('Docker');
    expect((await lease(shellOnly)).status).toBe(204);
    const leased = await lease(withEngine, 5000);
    expect(leased.status, leased.text).toBe(200);
    expect(leased.json).toMatchObject({ buildId: id, executorKind: 'ServerDockerExecutor' });
    expect((await post('/~agent/job/finish', leased.json.jobToken, { status: 'SUCCESSFUL' })).status).toBe(200);

    // `anywhere` runs one job at a time per agent
    const first = await run('Any');

    const second = await run('Any2');
    const one = await lease(withEngine, 5000);
    expect(one.json.buildId).toBe(first);
    expect((await lease(withEngine)).status).toBe(204);
    const elsewhere = await lease(shellOnly, 5000);
    expect(elsewhere.json.buildId).toBe(second);
    await post('/~agent/job/finish', one.json.jobToken, { status: 'SUCCESSFUL' });
    await post('/~agent/job/finish', elsewhere.json.jobToken, { status: 'FAILED' });
    expect((await build(second)).status).toBe('FAILED');
  });

  it('tells an agent to stop a cancelled build, and gives nothing to a paused agent', async () => {
    const agent = await connect('stoppable', {});
    const id = await run('Any');
    const leased = await lease(agent, 5000);
    expect(leased.json.buildId).toBe(id);
    expect((await post('/~agent/heartbeat', agent.token, { session: agent.session, running: [id] })).json).toMatchObject({ paused: false, stop: [] });
    expect((await server.call('DELETE', `/job-runs/${id}`)).status).toBe(200);
    expect((await post('/~agent/heartbeat', agent.token, { session: agent.session, running: [id] })).json.stop).toEqual([id]);
    expect((await post('/~agent/job/finish', leased.json.jobToken, { status: 'CANCELLED' })).status).toBe(401);

    await setAgentPaused(createContext(server.server.services, systemActor), agent.agentId, true);
    const waiting = await run('Any2');
    expect((await lease(agent, 1500)).status).toBe(204);
    expect((await post('/~agent/heartbeat', agent.token, { session: agent.session, running: [] })).json.paused).toBe(true);
    await setAgentPaused(createContext(server.server.services, systemActor), agent.agentId, false);
    const resumed = await lease(agent, 5000);
    expect(resumed.json.buildId).toBe(waiting);
    await post('/~agent/job/finish', resumed.json.jobToken, { status: 'SUCCESSFUL' });
  });

  it('ends the builds of an agent that stopped renewing them, and retries them on another agent', async () => {
    const lost = await connect('lost', {});
    const id = await run('Retried');
    const leased = await lease(lost, 5000);
    expect(leased.json.buildId).toBe(id);
    // the agent says nothing more: its lease expires (15 s) and the build is retried
    const rescuer = await connect('rescuer', {});
    const retried = await eventually(async () => {
      const res = await lease(rescuer, 2000);
      return res.status === 200 ? res.json : null;
    }, 40_000);
    expect(retried?.buildId).toBe(id);
    expect(await log(id)).toContain('Build interrupted: the agent running it stopped or lost its connection');
    expect(await build(id)).toMatchObject({ status: 'RUNNING', agentId: rescuer.agentId });
    // the lost agent's token for the build ended; the rescuer finishes it
    expect((await jobCall(leased.json.jobToken, '/log', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x\n' })).status).toBe(401);
    await post('/~agent/job/finish', retried.jobToken, { status: 'SUCCESSFUL' });
    expect((await build(id)).status).toBe('SUCCESSFUL');
  }, 60_000);
});
