/**
 * Several processes behind HAProxy (docs/deploy.md, docs/scaling.md; run on demand:
 * `GITLOOM_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/cluster.ts`):
 * three processes from dist/ on one fresh PostgreSQL database and one data dir, and HAProxy with
 * deploy/haproxy.cfg in front.
 * - `GET /~api/projects/{id}` (Bearer, 50 connections, autocannon in this process): one process
 *   reached directly, one process through HAProxy, three through HAProxy — requests/s, three
 *   alternating rounds, and the ratio of three processes to one behind the same proxy;
 * - pushes to one repository: one commit per push, one pusher and four pushers on branches of
 *   their own, through the proxy, beside the same pushes to a bare repository over `file://`
 *   (git's own work, the limit).
 * The load generator shares the machine with the servers: on a machine of two cores the three
 * processes compete with it and with each other for the same cores.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startHaproxy } from '../test/helpers/haproxy.js';
import { createPostgresDatabase } from '../test/helpers/server.js';
import { build, git, load, startBenchServer, time, type BenchServer } from './lib.js';

const ROUNDS = 3;
const SECONDS = 5;
const PUSHES = 20;
const PUSHERS = 4;

const base = process.env.GITLOOM_BENCH_DATABASE_URL;
if (!base) {
  console.error('GITLOOM_BENCH_DATABASE_URL must name a PostgreSQL server (the processes share one database)');
  process.exit(2);
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const rows: string[][] = [];
const add = (row: string[]) => {
  rows.push(row);
  console.error(`  ${row.join(' | ')}`);
};

/** Pushes `count` commits, one push each, from `dir` to `remote` on `branch`; pushes per second. */
async function pushes(dir: string, remote: string, branch: string, count: number): Promise<number> {
  await git(dir, ['checkout', '-q', '-B', branch]);
  const ms = await time(async () => {
    for (let i = 0; i < count; i++) {
      await fs.writeFile(path.join(dir, `${branch}.txt`), `${branch} ${i}\n`);
      await git(dir, ['add', '-A']);
      await git(dir, ['commit', '-q', '-m', `${branch} ${i}`]);
      await git(dir, ['push', '-q', remote, `${branch}:${branch}`]);
    }
  });
  return (count * 1000) / ms;
}

/** Pushes per second of `pushers` concurrent pushers, each on its own branch and clone of `remote`. */
async function concurrentPushes(work: string, remote: string, label: string, pushers: number): Promise<number> {
  const dirs: string[] = [];
  for (let p = 0; p < pushers; p++) {
    const dir = path.join(work, `${label}-${p}`);
    await git(work, ['clone', '-q', remote, dir]);
    dirs.push(dir);
  }
  const ms = await time(() => Promise.all(dirs.map((dir, p) => pushes(dir, remote, `${label}-${p}`, PUSHES))));
  return (pushers * PUSHES * 1000) / ms;
}

await build();
const database = await createPostgresDatabase(base);
const work = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-bench-cluster-'));
const dataDir = path.join(work, 'data');
const servers: BenchServer[] = [];
const proxies: Awaited<ReturnType<typeof startHaproxy>>[] = [];
try {
  const env = { GITLOOM_DATABASE_URL: database.url, GITLOOM_DATA_DIR: dataDir };
  servers.push(await startBenchServer(6761, env));
  for (const port of [6762, 6763]) servers.push(await startBenchServer(port, env));
  const one = await startHaproxy([servers[0].url.replace('http://', '')]);
  const three = await startHaproxy(servers.map((s) => s.url.replace('http://', '')));
  proxies.push(one, three);
  const headers = { authorization: `Bearer ${servers[0].token}` };
  const created = await fetch(`${servers[0].url}/~api/projects`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench' }),
  });
  const projectId = Number(await created.text());
  const route = `/~api/projects/${projectId}`;

  const targets = { direct: servers[0].url, 'one behind HAProxy': one.url, 'three behind HAProxy': three.url };
  const rates: Record<string, number[]> = {};
  for (const url of Object.values(targets)) await load(`${url}${route}`, headers, 50, 1);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [label, url] of Object.entries(targets)) (rates[label] ??= []).push((await load(`${url}${route}`, headers, 50, SECONDS)).requestsPerSecond);
  }
  for (const [label, values] of Object.entries(rates)) add([`GET ${route} (Bearer, 50 connections), ${label}`, `${mean(values).toFixed(0)} req/s`]);
  add(['three processes / one, both behind HAProxy', (mean(rates['three behind HAProxy']) / mean(rates['one behind HAProxy'])).toFixed(2)]);

  const remote = new URL(`${three.url}/bench`);
  remote.username = 'admin';
  remote.password = servers[0].token;
  const seed = path.join(work, 'seed');
  await fs.mkdir(seed);
  await git(seed, ['init', '-q', '-b', 'main']);
  await fs.writeFile(path.join(seed, 'README.md'), '# bench\n');
  await git(seed, ['add', '-A']);
  await git(seed, ['commit', '-q', '-m', 'seed']);
  await git(seed, ['push', '-q', remote.toString(), 'main']);
  const bare = path.join(work, 'bare.git');
  await git(work, ['clone', '-q', '--bare', seed, bare]);

  for (const pushers of [1, PUSHERS]) {
    const ours = await concurrentPushes(work, remote.toString(), `gitloom${pushers}`, pushers);
    const limit = await concurrentPushes(work, `file://${bare}`, `file${pushers}`, pushers);
    add([
      `pushes/s to one repository, ${pushers} pusher(s), through HAProxy to three processes`,
      `${ours.toFixed(1)} /s`,
      `${limit.toFixed(1)} /s to a bare repository over file://`,
      (ours / limit).toFixed(2),
    ]);
  }
} finally {
  for (const proxy of proxies) await proxy.close();
  for (const server of servers) await server.stop();
  await database.drop();
  await fs.rm(work, { recursive: true, force: true });
}

const cpu = os.cpus();
console.log(`\nMachine: ${cpu.length} × ${cpu[0]?.model.trim()}, Node ${process.version}; load average ${os.loadavg()[0].toFixed(1)} after.\n`);
for (const row of rows) console.log(`| ${row.join(' | ')} |`);
