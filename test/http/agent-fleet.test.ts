/**
 * Several build agents at once (docs/compatibility.md#build-agents): a server and two `gitloom
 * agent` processes with different attributes run 20 jobs spread by the executors' agent queries;
 * `kill -9` of an agent in the middle of a job ends it and the other agent runs the retry; the
 * server restarted while the agents run jobs — each job runs exactly once.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shellJob, startAgent, type AgentProcess } from '../helpers/agents.js';
import { eventually, givenProject, runJobOnCommit } from '../helpers/fixtures.js';
import { freePort, git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';

/** A job on `executor` running `commands`, with a text param `n` so that each run is a build of its own. */
function job(name: string, executor: string, commands: string[], extra: string[] = []): string {
  return shellJob(name, executor, commands, [...extra, '  paramSpecs:', '  - !TextParam', '    name: n', '    allowEmpty: false']);
}

const SPEC = `version: 25
jobs:
${job('OnA', 'pool-a', ['echo ran @param:n@'])}
${job('OnB', 'pool-b', ['echo ran @param:n@'])}
${job('Long', 'either', ['echo long-started', 'sleep 6', 'echo long-done'], ['  retryCondition: always', '  maxRetries: 1', '  retryDelay: 1'])}
${job('Steady', 'either', ['echo steady-started', 'sleep 4', 'echo steady-done'])}
`;

describe('a fleet of agents', { timeout: 240_000 }, () => {
  let server: TestServer;
  let projectId: number;
  let head: string;
  const agents: Record<'a' | 'b', { process: AgentProcess; workDir: string; id: number }> = {} as never;

  const build = async (id: number) => (await server.call('GET', `/builds/${id}`)).json;
  const log = async (id: number) => (await server.call('GET', `/builds/${id}/log`)).text;
  const finished = (id: number, ms = 90_000) =>
    eventually(async () => {
      const b = await build(id);
      return ['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(b.status) ? b : null;
    }, ms);
  const run = async (jobName: string, n: number) => {
    const res = await runJobOnCommit(server, { projectId, commitHash: head, jobName, params: { n: [String(n)] } });
    expect(res.status, res.text).toBe(200);
    return res.json as number;
  };
  const connect = async (name: 'a' | 'b') => {
    const tokenId = (await server.call('POST', '/agent-tokens')).json;
    const token = (await server.call('GET', `/agent-tokens/${tokenId}`)).json.value;
    const workDir = await fs.mkdtemp(path.join(os.tmpdir(), `gitloom-fleet-${name}-`));
    const agent = startAgent(server.url, workDir, token, ['--name', `agent-${name}`, '--attribute', `pool=${name}`]);
    await eventually(async () => (agent.output().includes('Connected to') ? true : null), 60_000);
    const id = (await server.call('GET', `/agent-tokens/${tokenId}/agent`)).json.id as number;
    agents[name] = { process: agent, workDir, id };
  };

  beforeAll(async () => {
    // one port across the restart, as a real server keeps its address
    server = await startTestServer({}, { port: await freePort() });
    projectId = await givenProject(server, { name: 'fleet' });
    const work = await makeWorkTree({ '.onedev-buildspec.yml': SPEC });
    head = (await git(work, ['rev-parse', 'HEAD'])).trim();
    await git(work, ['push', '-q', gitUrl(server, 'fleet', { name: 'admin', password: 'admin-secret' }), 'main']);
    await fs.rm(work, { recursive: true, force: true });
    const executors = [
      { '@type': 'RemoteShellExecutor', name: 'pool-a', agentQuery: '"pool" is "a"' },
      { '@type': 'RemoteShellExecutor', name: 'pool-b', agentQuery: '"pool" is "b"' },
      { '@type': 'RemoteShellExecutor', name: 'either', agentQuery: 'has attribute "pool"' },
    ];
    expect((await server.call('POST', '/settings/job-executors', { body: executors })).status).toBe(200);
    await connect('a');
    await connect('b');
  });

  afterAll(async () => {
    for (const agent of Object.values(agents)) {
      if (agent.process.child.exitCode === null && agent.process.child.signalCode === null) {
        agent.process.child.kill('SIGTERM');
        await agent.process.exited;
      }
      await fs.rm(agent.workDir, { recursive: true, force: true });
    }
    await server?.close();
  });

  it('runs 20 jobs, each on an agent its executor selects', async () => {
    const ids = { a: [] as number[], b: [] as number[] };
    for (let n = 0; n < 10; n++) {
      ids.a.push(await run('OnA', n));
      ids.b.push(await run('OnB', n));
    }
    for (const pool of ['a', 'b'] as const) {
      for (const id of ids[pool]) {
        const b = await finished(id);
        expect(b.status, await log(id)).toBe('SUCCESSFUL');
        expect(b.agentId).toBe(agents[pool].id);
        expect(await log(id)).toContain(`agent: agent-${pool})...`);
      }
    }
    const ranOnA = (await server.call('GET', `/builds?query=${encodeURIComponent('ran on "agent-a"')}&count=100`)).json;
    expect(ranOnA.map((b: { id: number }) => b.id).sort((x: number, y: number) => x - y)).toEqual(ids.a);
  });

  it('ends the job of an agent killed with SIGKILL, and the other agent runs the retry', async () => {
    const id = await run('Long', 1);
    await eventually(async () => ((await log(id)).includes('long-started') ? true : null), 60_000);
    const victim = (await build(id)).agentId === agents.a.id ? 'a' : 'b';
    const survivor = victim === 'a' ? 'b' : 'a';
    agents[victim].process.child.kill('SIGKILL');
    await agents[victim].process.exited;
    // the lease expires (15 s), the build waits for its retry and the survivor takes it
    const retried = await eventually(async () => {
      const b = await build(id);
      return b.status === 'RUNNING' && b.agentId === agents[survivor].id ? b : null;
    }, 45_000);
    expect(retried, await log(id)).toBeTruthy();
    const b = await finished(id);
    const text = await log(id);
    expect(b.status, text).toBe('SUCCESSFUL');
    expect(text).toContain('Build interrupted: the agent running it stopped or lost its connection');
    expect(text).toContain('Job will be retried after 2 seconds (retry 1)');
    expect(text).toContain(`agent: agent-${survivor})...`);
  });

  it('keeps every job exactly once across a restart of the server', async () => {
    const survivor = (['a', 'b'] as const).find((name) => agents[name].process.child.exitCode === null && agents[name].process.child.signalCode === null)!;
    const ids: number[] = [];
    for (let n = 0; n < 3; n++) ids.push(await run('Steady', n));
    await eventually(async () => ((await log(ids[0])).includes('steady-started') ? true : null), 60_000);
    await server.restart();
    for (const id of ids) {
      const b = await finished(id);
      const text = await log(id);
      expect(b.status, text).toBe('SUCCESSFUL');
      expect(b.agentId).toBe(agents[survivor].id);
      expect(text.match(/Executing job \(executor: either/g)).toHaveLength(1);
      expect(text).not.toContain('Build interrupted');
      expect(text.match(/steady-done/g)).toHaveLength(1);
    }
  });
});
