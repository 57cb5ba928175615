/**
 * Builds leased by agents per second (docs/scaling.md; run on demand: `npx tsx bench/agent-leases.ts`,
 * on SQLite, or on PostgreSQL with `GITLOOM_BENCH_DATABASE_URL`): one server from dist/, a remote
 * shell executor; for 1, 2 and 4 agents in turn, `GITLOOM_BENCH_BUILDS` builds (default 200)
 * submitted and left PENDING, then the agents (each a loop in this process speaking the agent
 * protocol over HTTP, as `gitloom agent` does) lease and finish them as fast as they can: one
 * lease and one finish request per build, the server planning, claiming, making the job and its
 * token, and recording the end with its BUILD event. The limit beside it: the same loops making
 * two requests per build to a bare Fastify route (bench/bare-fastify.mjs) — HTTP and Node's own
 * cost, no work. Prints both rates and their ratio.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createPostgresDatabase } from '../test/helpers/server.js';
import { ADMIN_PASSWORD, build, git, startBenchServer, waitForAnswer } from './lib.js';

const BUILDS = Number(process.env.GITLOOM_BENCH_BUILDS ?? 200);
const AGENT_COUNTS = [1, 2, 4];
const PORT = 6630;
const BARE_PORT = 6631;
const basic = `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}`;

const SPEC = `version: 25
jobs:
- name: Work
  jobExecutor: agents
  paramSpecs:
  - !TextParam
    name: n
    allowEmpty: false
  steps:
  - !CommandStep
    name: run
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo @param:n@
`;

async function call(url: string, method: string, route: string, body?: unknown): Promise<{ status: number; text: string; json: any }> {
  const res = await fetch(`${url}/~api${route}`, {
    method,
    headers: { authorization: basic, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${route}: ${res.status} ${text}`);
  return { status: res.status, text, json: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined };
}

async function post(url: string, route: string, token: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

/** The server with a project whose job runs on agents; answers a function submitting `BUILDS` builds of it and waiting until they are PENDING. */
async function prepare(url: string): Promise<(round: number) => Promise<void>> {
  await call(url, 'POST', '/settings/job-executors', [{ '@type': 'RemoteShellExecutor', name: 'agents', concurrency: '100000' }]);
  const projectId = Number((await call(url, 'POST', '/projects', { name: 'bench' })).text);
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-bench-agents-'));
  await git(work, ['init', '-q', '-b', 'main']);
  await fs.writeFile(path.join(work, '.onedev-buildspec.yml'), SPEC);
  await git(work, ['add', '.']);
  await git(work, ['-c', 'user.name=bench', '-c', 'user.email=bench@example.com', 'commit', '-qm', 'spec']);
  await git(work, ['push', '-q', `${url.replace('http://', `http://admin:${ADMIN_PASSWORD}@`)}/bench`, 'main']);
  const commitHash = (await git(work, ['rev-parse', 'HEAD'])).trim();
  await fs.rm(work, { recursive: true, force: true });
  return (round) => submit(url, projectId, commitHash, round);
}

async function submit(url: string, projectId: number, commitHash: string, round: number): Promise<void> {
  for (let n = 0; n < BUILDS; n++) {
    await call(url, 'POST', '/job-runs', {
      '@type': 'JobRunOnCommit',
      projectId,
      commitHash,
      refName: 'refs/heads/main',
      jobName: 'Work',
      params: { n: [`${round}-${n}`] },
      reason: 'bench',
    });
  }
  // every build PENDING (none WAITING) before the agents start
  while ((await call(url, 'GET', `/builds?query=${encodeURIComponent('waiting')}&count=1`)).json.length > 0) await new Promise((r) => setTimeout(r, 100));
}

/** An agent connected with a new token. */
async function connect(url: string, name: string): Promise<{ token: string; session: string }> {
  const id = (await call(url, 'POST', '/agent-tokens')).text;
  const token = (await call(url, 'GET', `/agent-tokens/${id}`)).json.value as string;
  const report = { name, osName: 'Linux', osVersion: os.release(), osArch: 'amd64', cpus: 1, memory: os.totalmem(), engine: null, attributes: {} };
  const res = await post(url, '/~agent/connect', token, report);
  if (res.status !== 200) throw new Error(`connect: ${res.status} ${JSON.stringify(res.json)}`);
  return { token, session: res.json.session };
}

/** Builds per second: `count` agents leasing and finishing until no build is left. */
async function leaseAll(url: string, count: number): Promise<number> {
  const agents = await Promise.all(Array.from({ length: count }, () => connect(url, `bench-${crypto.randomUUID().slice(0, 8)}`)));
  let done = 0;
  const started = performance.now();
  await Promise.all(
    agents.map(async (agent) => {
      for (;;) {
        const leased = await post(url, '/~agent/lease', agent.token, { session: agent.session, waitMs: 0 });
        if (leased.status === 204) return;
        const finished = await post(url, '/~agent/job/finish', leased.json.jobToken, { status: 'SUCCESSFUL' });
        if (finished.status !== 200) throw new Error(`finish: ${finished.status} ${JSON.stringify(finished.json)}`);
        done++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  if (done !== BUILDS) throw new Error(`${done} builds leased of ${BUILDS}`);
  return done / seconds;
}

/** Request pairs per second of the same loops against a bare Fastify route. */
async function bareLimit(count: number): Promise<number> {
  const child = spawn(process.execPath, ['bench/bare-fastify.mjs'], {
    env: { ...process.env, BARE_PORT: String(BARE_PORT), BARE_ROUTES: JSON.stringify({ '/lease': { buildId: 1 }, '/finish': {} }) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    const base = `http://127.0.0.1:${BARE_PORT}`;
    await waitForAnswer(`${base}/lease`, () => child.exitCode !== null);
    let left = BUILDS;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: count }, async () => {
        while (left-- > 0) {
          await (await fetch(`${base}/lease`)).text();
          await (await fetch(`${base}/finish`)).text();
        }
      }),
    );
    return BUILDS / ((performance.now() - started) / 1000);
  } finally {
    child.kill();
  }
}

await build();
const databaseUrl = process.env.GITLOOM_BENCH_DATABASE_URL;
const database = databaseUrl ? await createPostgresDatabase(databaseUrl) : null;
const server = await startBenchServer(PORT, database ? { GITLOOM_DATABASE_URL: database.url } : {});
try {
  const submitBuilds = await prepare(server.url);
  for (const [round, count] of AGENT_COUNTS.entries()) {
    await submitBuilds(round);
    const gitloom = await leaseAll(server.url, count);
    const limit = await bareLimit(count);
    const engine = database ? 'PostgreSQL' : 'SQLite';
    console.log(
      `| builds leased and finished by ${count} agent(s) (${engine}) | ${gitloom.toFixed(1)}/s | ${limit.toFixed(0)}/s (bare Fastify, 2 requests each) | ${(gitloom / limit).toFixed(3)} |`,
    );
  }
} finally {
  await server.stop();
  await database?.drop();
}
