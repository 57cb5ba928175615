/**
 * An agent killed with SIGKILL and started again (docs/compatibility.md#build-agents "Loss and
 * restarts"): a real `gitloom agent` process is killed mid-job and started again on its work dir;
 * it names the session of its previous connection, so the server ends that session at once —
 * its build ends as a lost agent's, here retried per its `retryCondition`, or FAILED without
 * one — and accepts the new connection without waiting for the old one to time out. The server
 * runs with leases of 60 s (three 20 s fallback polls), so that a slow restart on a busy machine
 * still comes before the old session's leases expire.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shellJob, startAgent, type AgentProcess } from '../helpers/agents.js';
import { eventually, givenRepo, removeWorkTrees, runJobOnCommit, type Repo } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const SPEC = `version: 25
jobs:
${shellJob('Retried', 'agents', ['echo started-@build_number@', 'sleep 8', 'echo finished-@build_number@'], ['  retryCondition: always', '  maxRetries: 1', '  retryDelay: 1'])}
${shellJob('Once', 'agents', ['echo once-started', 'sleep 600'])}
`;

describe('an agent killed with SIGKILL and started again', { timeout: 180_000 }, () => {
  let server: TestServer;
  let repo: Repo;
  let workDir: string;
  let token: string;
  let agent: AgentProcess;

  const build = async (id: number) => (await server.call('GET', `/builds/${id}`)).json;
  const log = async (id: number) => (await server.call('GET', `/builds/${id}/log`)).text;
  const run = async (jobName: string) => {
    const res = await runJobOnCommit(server, { projectId: repo.id, commitHash: await repo.head('main'), jobName });
    expect(res.status, res.text).toBe(200);
    return res.json as number;
  };
  const start = async () => {
    agent = startAgent(server.url, workDir, token, ['--name', 'phoenix', '--attribute', 'zone=r']);
    await eventually(async () => (agent.output().includes('Connected to') ? true : null), 60_000);
  };
  const kill = async () => {
    agent.child.kill('SIGKILL');
    await agent.exited;
  };

  beforeAll(async () => {
    server = await startTestServer({ GITLOOM_FALLBACK_POLL_MS: '20000' });
    repo = await givenRepo(server, 'restarted', { files: { '.onedev-buildspec.yml': SPEC } });
    const saved = await server.call('POST', '/settings/job-executors', {
      body: [{ '@type': 'RemoteShellExecutor', name: 'agents', agentQuery: '"zone" is "r"' }],
    });
    expect(saved.status, saved.text).toBe(200);
    const tokenId = (await server.call('POST', '/agent-tokens')).json;
    token = (await server.call('GET', `/agent-tokens/${tokenId}`)).json.value;
    workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-restart-'));
    await start();
  });
  afterAll(async () => {
    if (agent && agent.child.exitCode === null && agent.child.signalCode === null) await kill();
    await server?.close();
    await fs.rm(workDir, { recursive: true, force: true });
    await removeWorkTrees();
  });

  it('ends the previous session’s build at once, retried per its retry condition, and connects without waiting', async () => {
    const id = await run('Retried');
    const number = (await build(id)).number;
    const starts = async () => (await log(id)).split(`started-${number}`).length - 1;
    await eventually(async () => ((await starts()) === 1 ? true : null), 60_000);
    // killed within the first try's 8 s of sleep
    await kill();
    await start();
    // the new process connected at once: the server never answered it that the token's agent is connected
    expect(agent.output()).not.toContain('connected already');
    const text = await eventually(async () => {
      const t = await log(id);
      return t.includes('Job will be retried') ? t : null;
    }, 30_000);
    expect(text).toContain('Build interrupted: the agent running it was started again');
    expect(text).not.toContain('the agent running it stopped or lost its connection');
    // the retry runs on the agent started again
    await eventually(async () => ((await starts()) === 2 ? true : null), 60_000);
    const done = await eventually(async () => {
      const b = await build(id);
      return b.status === 'SUCCESSFUL' || b.status === 'FAILED' ? b : null;
    }, 60_000);
    expect(done.status, await log(id)).toBe('SUCCESSFUL');
    expect(await log(id)).toContain(`finished-${number}`);
  });

  it('fails the previous session’s build without a retry condition', async () => {
    const id = await run('Once');
    await eventually(async () => ((await log(id)).includes('once-started') ? true : null), 60_000);
    await kill();
    await start();
    const done = await eventually(async () => {
      const b = await build(id);
      return b.status === 'FAILED' ? b : null;
    }, 30_000);
    expect(done, await log(id)).toBeTruthy();
    const text = await log(id);
    expect(text).toContain('Build interrupted: the agent running it was started again');
    expect(agent.output()).not.toContain('connected already');
  });
});
