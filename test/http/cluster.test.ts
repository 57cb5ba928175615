import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent } from '../helpers/agents.js';
import { eventually } from '../helpers/fixtures.js';
import { startHaproxy, type Proxy } from '../helpers/haproxy.js';
import { startHttpReceiver } from '../helpers/receivers.js';
import { ADMIN, basic, commitFiles, freePort, git, givenInstallation, killChild, makeWorkTree, serveChild, type ChildServer } from '../helpers/server.js';

/** `ci` runs on every branch update (on the processes); `slow`, run by hand on the agent, writes a line, sleeps, writes another. */
const SPEC = `version: 25
jobs:
- name: ci
  steps:
  - !CommandStep
    name: run
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo built
  triggers:
  - !BranchUpdateTrigger
    branches: '**'
- name: slow
  jobExecutor: agents
  steps:
  - !CommandStep
    name: run
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo first line
      - sleep 3
      - echo last line
`;

const WORKERS = 3;
const ROUNDS = 4;

/**
 * A deployment as docs/deploy.md describes it, run for real: three server processes sharing one
 * PostgreSQL database and one data dir behind HAProxy, which routes by the readiness endpoint.
 * A workload of pushes, pull requests, merges and builds goes through the proxy while one process
 * is killed with SIGKILL and restarted; afterwards every request that was answered is reflected,
 * every push was announced (webhook) and built exactly once; a build agent connected through the
 * proxy runs a job whose log is followed through the proxy.
 */
describe.skipIf(!process.env.GITLOOM_TEST_DATABASE_URL)('a cluster of three processes behind HAProxy (docs/deploy.md)', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  let env: Record<string, string>;
  const ports: number[] = [];
  const servers: ChildServer[] = [];
  let proxy: Proxy;
  let receiver: Awaited<ReturnType<typeof startHttpReceiver>>;
  let projectId: number;
  const auth = basic(ADMIN.name, ADMIN.password);

  const api = async (
    method: string,
    route: string,
    body?: unknown,
    type = 'application/json',
    retries = 10,
  ): Promise<{ status: number; text: string; json: any }> => {
    const res = await fetch(`${proxy.url}/~api${route}`, {
      method,
      headers: { authorization: auth, ...(body !== undefined && { 'content-type': type }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    // reads are retried while the proxy has no ready process, as a client would
    if (method === 'GET' && (res.status === 502 || res.status === 503) && retries > 0) {
      await new Promise((r) => setTimeout(r, 300));
      return api(method, route, body, type, retries - 1);
    }
    return { status: res.status, text, json: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined };
  };
  const remote = () => {
    const url = new URL(`${proxy.url}/cluster`);
    url.username = ADMIN.name;
    url.password = ADMIN.password;
    return url.toString();
  };
  const start = async (i: number) => {
    servers[i] = await serveChild({ ...env, GITLOOM_PORT: String(ports[i]) });
  };

  beforeAll(async () => {
    receiver = await startHttpReceiver();
    cleanup.push(() => receiver.close());
    env = await givenInstallation(cleanup, { GITLOOM_WEBHOOK_ALLOW_PRIVATE: 'true', GITLOOM_OUTBOX_BACKOFF_MS: '50', GITLOOM_LOG_LEVEL: 'error' });
    for (let i = 0; i < 3; i++) ports.push(await freePort());
    // started together, as a service manager does: one migrates and creates the administrator, the others wait for it
    await Promise.all([0, 1, 2].map((i) => start(i)));
    cleanup.push(async () => {
      for (const server of servers) await killChild(server);
    });
    proxy = await startHaproxy(ports.map((port) => `127.0.0.1:${port}`));
    cleanup.push(() => proxy.close());
    const created = await api('POST', '/projects', { name: 'cluster' });
    expect(created.status, created.text).toBe(200);
    projectId = created.json;
    const setting = (await api('GET', `/projects/${projectId}/setting`)).json;
    const hooked = await api('POST', `/projects/${projectId}/setting`, {
      ...setting,
      webHooks: [{ postUrl: `${receiver.url}/push`, eventTypes: ['CODE_PUSH'] }],
    });
    expect(hooked.status, hooked.text).toBe(200);
    // branch builds on the processes, `slow` on the agent
    const executors = [
      { '@type': 'ServerShellExecutor', name: 'server' },
      { '@type': 'RemoteShellExecutor', name: 'agents' },
    ];
    expect((await api('POST', '/settings/job-executors', executors)).status).toBe(200);
    const tokenId = (await api('POST', '/agent-tokens')).json;
    const token = (await api('GET', `/agent-tokens/${tokenId}`)).json.value;
    const agentDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-cluster-agent-'));
    const agent = startAgent(proxy.url, agentDir, token, ['--name', 'cluster-agent']);
    cleanup.push(async () => {
      if (agent.child.exitCode === null && agent.child.signalCode === null) {
        agent.child.kill('SIGTERM');
        await agent.exited;
      }
      await fs.rm(agentDir, { recursive: true, force: true });
    });
    await eventually(async () => (agent.output().includes('Connected to') ? true : null), 60_000);
    const work = await makeWorkTree({ 'README.md': '# cluster\n', '.onedev-buildspec.yml': SPEC });
    cleanup.push(() => fs.rm(work, { recursive: true, force: true }));
    await git(work, ['push', '-q', remote(), 'main']);
  }, 120_000);

  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  it('answers through any process while one is killed and restarted: what was answered is kept, every push is announced and built once', async () => {
    const pushed: { branch: string; commit: string }[] = [];
    const merged: { id: number; head: string }[] = [];
    const opened: number[] = [];
    let killed = false;

    const worker = async (w: number) => {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-cluster-'));
      cleanup.push(() => fs.rm(dir, { recursive: true, force: true }));
      await git(dir, ['clone', '-q', remote(), '.']);
      for (let round = 0; round < ROUNDS; round++) {
        const branch = `w${w}-${round}`;
        await git(dir, ['checkout', '-q', '-B', branch, 'origin/main']);
        const commit = await commitFiles(dir, { [`${branch}.txt`]: `${branch}\n` }, `Add ${branch}`);
        // a push through the proxy may meet the killed process: retried as a user would
        let answered = false;
        for (let attempt = 0; attempt < 10 && !answered; attempt++) {
          answered = await git(dir, ['push', '-q', 'origin', branch]).then(
            () => true,
            () => new Promise<boolean>((r) => setTimeout(() => r(false), 300)),
          );
        }
        if (!answered) continue;
        pushed.push({ branch, commit });
        const pr = await api('POST', '/pulls', {
          targetProjectId: projectId,
          sourceProjectId: projectId,
          targetBranch: 'main',
          sourceBranch: branch,
          title: branch,
        }).catch(() => null);
        if (pr?.status !== 200) continue;
        opened.push(pr.json);
        const merge = await api('POST', `/pulls/${pr.json}/merge`, '', 'text/plain').catch(() => null);
        if (merge?.status === 200) merged.push({ id: pr.json, head: commit });
      }
    };
    const killer = async () => {
      await eventually(async () => pushed.length >= 3, 120_000);
      await killChild(servers[1]);
      killed = true;
      await new Promise((r) => setTimeout(r, 1000));
      await start(1);
    };

    await Promise.all([...Array.from({ length: WORKERS }, (_, w) => worker(w)), killer()]);
    expect(killed).toBe(true);
    expect(pushed.length).toBeGreaterThanOrEqual(WORKERS * ROUNDS - 1);
    expect(merged.length).toBeGreaterThan(0);

    // a log followed through the proxy after the restart, while the build runs on the agent, which reached whichever process
    const slow = await api('POST', '/job-runs', {
      '@type': 'JobRunOnCommit',
      projectId,
      commitHash: await mainHead(),
      refName: 'refs/heads/main',
      jobName: 'slow',
      params: {},
      reason: 'cluster',
    });
    expect(slow.status, slow.text).toBe(200);
    const follow = (async () => {
      const res = await fetch(`${proxy.url}/~api/builds/${slow.json}/log?follow=true`, { headers: { authorization: auth } });
      const seen: { text: string; at: number }[] = [];
      const decoder = new TextDecoder();
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) seen.push({ text: decoder.decode(chunk), at: Date.now() });
      return seen;
    })();

    // the followed log arrived line by line: the first line before the last was written
    const chunks = await follow;
    const all = chunks.map((c) => c.text).join('');
    expect(all).toContain('first line');
    expect(all).toContain('last line');
    const first = chunks.find((c) => c.text.includes('first line'))!;
    const last = chunks.find((c) => c.text.includes('last line'))!;
    expect(last.at - first.at).toBeGreaterThanOrEqual(2000);
    const slowBuild = (await api('GET', `/builds/${slow.json}`)).json;
    expect(slowBuild.status).toBe('SUCCESSFUL');
    expect(slowBuild.agentId).not.toBeNull();
    expect((await api('GET', `/builds/${slow.json}/log`)).text).toContain('Executing job (executor: agents, agent: cluster-agent)...');

    // every answered pull request exists; every answered merge is merged and in main
    for (const id of opened) expect((await api('GET', `/pulls/${id}`)).status).toBe(200);
    const check = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-cluster-check-'));
    cleanup.push(() => fs.rm(check, { recursive: true, force: true }));
    await git(check, ['clone', '-q', '--bare', remote(), '.']);
    for (const { id, head } of merged) {
      expect((await api('GET', `/pulls/${id}`)).json.status).toBe('MERGED');
      await git(check, ['merge-base', '--is-ancestor', head, 'main']);
    }

    // every answered push was announced and built exactly once (the ref journal lost nothing)
    await eventually(async () => pushed.every(({ commit }) => announced(commit)), 120_000);
    const builds = await eventually(async () => {
      const all = await listBuilds();
      const done = all.every((b) => ['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(b.status));
      const covered = pushed.every(({ commit }) => all.some((b) => b.commitHash === commit && b.jobName === 'ci'));
      return done && covered ? all : null;
    }, 180_000);
    expect(builds, 'every pushed commit built, every build finished').not.toBeNull();
    for (const { branch, commit } of pushed) {
      const runs = builds!.filter((b) => b.jobName === 'ci' && b.commitHash === commit && b.refName === `refs/heads/${branch}`);
      expect(runs, `${branch} ${commit}`).toHaveLength(1);
    }
  }, 600_000);

  const announced = (commit: string) =>
    receiver.received.some((r) => {
      const body = JSON.parse(r.body) as { newCommitId?: string };
      return body.newCommitId === commit;
    });
  const listBuilds = async () => {
    const res = await api('GET', `/builds?query=${encodeURIComponent('"Project" is "cluster"')}&offset=0&count=100`);
    expect(res.status, res.text).toBe(200);
    return res.json as { id: number; jobName: string; commitHash: string; refName: string; status: string }[];
  };
  const mainHead = async () => (await git(os.tmpdir(), ['ls-remote', remote(), 'refs/heads/main'])).split('\t')[0];
});
