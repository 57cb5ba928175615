/**
 * `npm run bench`: one table, each row measuring Gitloom and the limit beside it in the same run:
 * - `GET /~api/projects/{id}` and `GET /~api/users/me` with a Bearer token, requests/s at 50
 *   connections (autocannon in this process) against a bare Fastify process returning the same
 *   JSON (bench/bare-fastify.mjs); three alternating rounds each, averaged, with each server's
 *   CPU time per request;
 * - a merge (merge commit) through the API in a repository of 3,000 commits, with the preview
 *   settled and with the target branch pushed to just before, against `rev-parse` +
 *   `git merge-tree --write-tree` + `commit-tree` + `update-ref` run directly on a copy of it
 *   (p50 of 10 each);
 * - idle RSS 2 s after start (the bare Fastify process beside it);
 * - `npm start` (dist/ already built) to the first `/~health/live` answer, against
 *   `node dist/cli.js serve` (median of 3 each, fresh data directory each time);
 * - a push returned → the pull request's new update visible through the API (p50 of 10);
 * - `git clone` over SSH and over HTTP beside `git clone --no-local`, on the bench repository and
 *   on 64 MiB of incompressible files (bench/ssh.ts);
 * - a Git LFS object of BENCH_LFS_BYTES (default 1 GiB) uploaded and downloaded through the batch
 *   API's hrefs against `cp` of the file, with the server's peak RSS meanwhile (bench/lfs.ts).
 * The server runs from dist/ as its own process at the default log level (info, to /dev/null).
 * Pass `--markdown` for the README's form.
 *
 * `npm run bench -- <name> [options]` runs one of {@link NAMED} instead: `big-repo`
 * (bench/big-repo.ts: the views of a large repository beside the git commands they need), `load`
 * (bench/load.ts: page views, API reads, clones, fetches and pushes of 200 users at once, the
 * clones beside `git http-backend`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { build, cpuMs, git, load, rssMiB, startBenchServer, startScript, time, waitForAnswer, type BenchServer } from './lib.js';
import { cloneRows } from './ssh.js';
import { LFS_BENCH_BYTES, lfsTransfers, rate } from './lfs.js';

/** Benches run by name, with the command line's arguments after the name. */
const NAMED: Record<string, () => Promise<(args: string[]) => Promise<void>>> = {
  'big-repo': async () => (await import('./big-repo.js')).bigRepoBench,
  load: async () => (await import('./load.js')).loadBench,
};
const named = NAMED[process.argv[2] ?? ''];
if (named) {
  await (
    await named()
  )(process.argv.slice(3));
  process.exit(0);
}

const COMMITS = 3000;
const ROUNDS = 3;
const SECONDS = 5;

interface Row {
  measure: string;
  gitloom: string;
  limit: string;
  ratio: string;
  target: string;
}
const rows: Row[] = [];
const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ms = (value: number) => `${value.toFixed(value < 100 ? 1 : 0)} ms`;

/** Prints a row as soon as it is measured (the table is printed again at the end). */
function add(row: Row): void {
  rows.push(row);
  console.error(`  ${row.measure}: ${row.gitloom} | ${row.limit} | ${row.ratio}`);
}

/** Starts the bare Fastify limit serving `routes` (url → JSON body) on `port`. */
async function startBare(port: number, routes: Record<string, unknown>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['bench/bare-fastify.mjs'], {
    env: { ...process.env, BARE_PORT: String(port), BARE_ROUTES: JSON.stringify(routes) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitForAnswer(`http://127.0.0.1:${port}${Object.keys(routes)[0]}`, () => child.exitCode !== null);
  return child;
}

/**
 * Requests/s of Gitloom and of the limit on one URL path, alternating rounds after a warm-up,
 * with each server's CPU time per request (user + system, all its threads) beside them: the
 * load generator shares the machine, so the CPU figures are the steadier comparison.
 */
async function throughput(
  measure: string,
  target: number,
  gitloom: { url: string; pid: number },
  limit: { url: string; pid: number },
  headers: Record<string, string>,
): Promise<void> {
  await load(gitloom.url, headers, 50, 1);
  await load(limit.url, {}, 50, 1);
  const ours = { rate: [] as number[], cpu: [] as number[] };
  const theirs = { rate: [] as number[], cpu: [] as number[] };
  const round = async (side: typeof ours, target: { url: string; pid: number }, sent: Record<string, string>) => {
    const before = await cpuMs(target.pid);
    const { requestsPerSecond } = await load(target.url, sent, 50, SECONDS);
    side.rate.push(requestsPerSecond);
    side.cpu.push((((await cpuMs(target.pid)) - before) * 1000) / (requestsPerSecond * SECONDS));
  };
  for (let i = 0; i < ROUNDS; i++) {
    await round(ours, gitloom, headers);
    await round(theirs, limit, {});
  }
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  add({
    measure,
    gitloom: `${mean(ours.rate).toFixed(0)} req/s (${mean(ours.cpu).toFixed(1)} µs CPU each)`,
    limit: `${mean(theirs.rate).toFixed(0)} req/s (${mean(theirs.cpu).toFixed(1)} µs CPU each, bare Fastify)`,
    ratio: (mean(ours.rate) / mean(theirs.rate)).toFixed(2),
    target: `≥ ${target}`,
  });
}

/** A fast-import stream of `count` commits on refs/heads/main, each touching one of 200 files. */
function history(count: number): string {
  const parts: string[] = [];
  for (let i = 1; i <= count; i++) {
    const content = `line ${i}`;
    const message = `commit ${i}`;
    parts.push(
      'commit refs/heads/main',
      `mark :${i}`,
      `committer Bench <bench@example.com> ${1_700_000_000 + i} +0000`,
      `data ${message.length}`,
      message,
      ...(i > 1 ? [`from :${i - 1}`] : []),
      `M 100644 inline src/file${i % 200}.txt`,
      `data ${content.length}`,
      content,
      '',
    );
  }
  return `${parts.join('\n')}\n`;
}

/** Runs git in a bare repository with `input` on stdin. */
function gitWithInput(repo: string, args: string[], input: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', [`--git-dir=${repo}`, ...args], { stdio: ['pipe', 'ignore', 'inherit'] });
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`git ${args[0]} exited ${code}`))));
    child.stdin.end(input);
  });
}

/** A branch `name` of two commits on top of `main~5` in a work tree cloned from `remote`. */
async function branchOffMain(work: string, name: string): Promise<void> {
  await git(work, ['checkout', '-q', '-B', name, 'origin/main~5']);
  for (const n of [1, 2]) {
    await fs.writeFile(path.join(work, `feature-${name}.txt`), `${name} ${n}\n`);
    await git(work, ['add', '-A']);
    await git(work, ['commit', '-q', '-m', `${name} part ${n}`]);
  }
}

/** A commit on `main` pushed through the server from the work tree (the target of open requests moves). */
async function moveMain(work: string, remote: string, name: string): Promise<void> {
  await git(work, ['fetch', '-q', 'origin']);
  await git(work, ['checkout', '-q', '-B', 'main', 'origin/main']);
  await fs.writeFile(path.join(work, `main-${name}.txt`), `${name}\n`);
  await git(work, ['add', '-A']);
  await git(work, ['commit', '-q', '-m', `main moves for ${name}`]);
  await git(work, ['push', '-q', remote, 'main']);
}

/**
 * Merges through the API, p50 of 10 each: with the preview settled, and with the target branch
 * moved by a push just before (the merge may have to recompute the preview); the limit merges
 * the same way with git alone on a copy of the repository.
 */
async function mergeRow(server: BenchServer, headers: Record<string, string>, work: string, projectId: number): Promise<void> {
  const call = async (method: string, route: string, body?: string, type = 'application/json') => {
    const res = await fetch(`${server.url}/~api${route}`, { method, headers: { ...headers, 'content-type': type }, body });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
    return text ? (JSON.parse(text) as unknown) : null;
  };
  const remote = `http://admin:${server.token}@127.0.0.1:${new URL(server.url).port}/bench`;
  const viaApi = { settled: [] as number[], moved: [] as number[] };
  for (const [kind, times] of Object.entries(viaApi)) {
    for (let i = 0; i < 10; i++) {
      const name = `api-${kind}-${i}`;
      await git(work, ['fetch', '-q', 'origin']);
      await branchOffMain(work, name);
      await git(work, ['push', '-q', remote, name]);
      const id = (await call(
        'POST',
        '/pulls',
        JSON.stringify({
          targetProjectId: projectId,
          sourceProjectId: projectId,
          targetBranch: 'main',
          sourceBranch: name,
          title: name,
          mergeStrategy: 'CREATE_MERGE_COMMIT',
        }),
      )) as number;
      await call('GET', `/pulls/${id}/merge-preview`);
      if (kind === 'moved') await moveMain(work, remote, name);
      times.push(await time(() => call('POST', `/pulls/${id}/merge`, `Merge ${name}`, 'text/plain')));
    }
  }
  // the limit: the same merges with git alone, on a copy of the repository
  const copy = path.join(work, '..', 'copy.git');
  await git(work, ['clone', '-q', '--bare', '--no-local', path.join(server.dataDir, 'repos', `${projectId}.git`), copy]);
  const direct: number[] = [];
  const gitDir = (args: string[]) => git(work, [`--git-dir=${copy}`, ...args]);
  for (let i = 0; i < 10; i++) {
    await branchOffMain(work, `direct-${i}`);
    await git(work, ['push', '-q', copy, `direct-${i}`]);
    direct.push(
      await time(async () => {
        const target = (await gitDir(['rev-parse', 'refs/heads/main'])).trim();
        const tree = (await gitDir(['merge-tree', '--write-tree', target, `refs/heads/direct-${i}`])).trim();
        const commit = (await gitDir(['commit-tree', tree, '-p', target, '-p', `refs/heads/direct-${i}`, '-m', `Merge direct-${i}`])).trim();
        await gitDir(['update-ref', 'refs/heads/main', commit, target]);
      }),
    );
  }
  const limit = `${ms(p50(direct))} (rev-parse + merge-tree + commit-tree + update-ref)`;
  add({
    measure: `merge (merge commit), ${COMMITS.toLocaleString('en')} commits, preview settled, p50`,
    gitloom: ms(p50(viaApi.settled)),
    limit,
    ratio: `${(p50(viaApi.settled) / p50(direct)).toFixed(2)}×`,
    target: '≤ 1.2×',
  });
  add({
    measure: `merge (merge commit), ${COMMITS.toLocaleString('en')} commits, target pushed to just before, p50`,
    gitloom: ms(p50(viaApi.moved)),
    limit,
    ratio: `${(p50(viaApi.moved) / p50(direct)).toFixed(2)}×`,
    target: '—',
  });
}

async function pushRow(server: BenchServer, headers: Record<string, string>, work: string, projectId: number): Promise<void> {
  const remote = `http://admin:${server.token}@127.0.0.1:${new URL(server.url).port}/bench`;
  await git(work, ['fetch', '-q', 'origin']);
  await branchOffMain(work, 'pushed');
  await git(work, ['push', '-q', remote, 'pushed']);
  const res = await fetch(`${server.url}/~api/pulls`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ targetProjectId: projectId, sourceProjectId: projectId, targetBranch: 'main', sourceBranch: 'pushed', title: 'pushed' }),
  });
  const id = (await res.json()) as number;
  const updates = async () => ((await (await fetch(`${server.url}/~api/pulls/${id}/updates`, { headers })).json()) as unknown[]).length;
  const waits: number[] = [];
  for (let i = 0; i < 10; i++) {
    const before = await updates();
    await fs.writeFile(path.join(work, 'pushed.txt'), `push ${i}\n`);
    await git(work, ['add', '-A']);
    await git(work, ['commit', '-q', '-m', `push ${i}`]);
    await git(work, ['push', '-q', remote, 'pushed']);
    const returned = performance.now();
    while ((await updates()) === before) {
      if (performance.now() - returned > 10_000) throw new Error('no pull request update 10 s after the push');
    }
    waits.push(performance.now() - returned);
  }
  add({ measure: 'push returned → pull request update visible, p50', gitloom: ms(p50(waits)), limit: '—', ratio: '—', target: '< 100 ms' });
}

/** Median start-to-ready of a command (3 runs, fresh data directory each). */
async function startUp(command: string[] | undefined, port: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const server = await startBenchServer(port, {}, [], command);
    times.push(server.startMs);
    await server.stop();
  }
  return p50(times);
}

/** The Git LFS rows (bench/lfs.ts): upload and download against `cp`, and the server's peak RSS meanwhile. */
async function lfsRows(server: BenchServer): Promise<void> {
  const f = await lfsTransfers(server, LFS_BENCH_BYTES);
  const size = `${(f.bytes / 1024 ** 2).toFixed(0)} MiB`;
  const ceiling = (ms: number) => `bare node:http ${rate(f.bytes, ms)}`;
  add({
    measure: `Git LFS upload of ${size} (PUT)`,
    gitloom: rate(f.bytes, f.uploadMs),
    limit: `cp ${rate(f.bytes, f.cpMs)}; ${ceiling(f.ceilingUploadMs)}`,
    ratio: (f.cpMs / f.uploadMs).toFixed(2),
    target: '≥ 0.8',
  });
  add({
    measure: `Git LFS download of ${size} (GET)`,
    gitloom: rate(f.bytes, f.downloadMs),
    limit: `cp ${rate(f.bytes, f.cpMs)}; ${ceiling(f.ceilingDownloadMs)}`,
    ratio: (f.cpMs / f.downloadMs).toFixed(2),
    target: '≥ 0.8',
  });
  add({ measure: 'server peak RSS during the LFS transfers', gitloom: `${f.peakRssMiB.toFixed(0)} MiB`, limit: '—', ratio: '—', target: '< 200 MiB' });
}

await build();
const loadBefore = os.loadavg()[0];
console.error('measuring…');

const npmStart = await startUp(['npm', 'start', '--silent'], 6741);
const nodeStart = await startUp(undefined, 6741);
add({
  measure: '`npm start` (already built) → ready',
  gitloom: ms(npmStart),
  limit: `${ms(nodeStart)} (node dist/cli.js serve)`,
  ratio: (npmStart / nodeStart).toFixed(2),
  target: '< 1500 ms',
});

// the server as `npm start` runs it: the environment and node flags of package.json's start script
const server = await startBenchServer(6742, { ...startScript.env, GITLOOM_LOG_LEVEL: 'info' }, startScript.flags);
const work = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-bench-work-'));
let bare: ChildProcess | undefined;
try {
  await new Promise((r) => setTimeout(r, 2000));
  const idleRss = await rssMiB(server.process.pid!);

  const headers = { authorization: `Bearer ${server.token}` };
  const projectId = (await (
    await fetch(`${server.url}/~api/projects`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: '{"name":"bench"}',
    })
  ).json()) as number;
  const projectPath = `/~api/projects/${projectId}`;
  const routes = {
    [projectPath]: await (await fetch(`${server.url}${projectPath}`, { headers })).json(),
    '/~api/users/me': await (await fetch(`${server.url}/~api/users/me`, { headers })).json(),
  };
  bare = await startBare(6743, routes);
  await new Promise((r) => setTimeout(r, 2000));
  add({
    measure: 'idle RSS after start',
    gitloom: `${idleRss.toFixed(0)} MiB`,
    limit: `${(await rssMiB(bare.pid!)).toFixed(0)} MiB (bare Fastify)`,
    ratio: '—',
    target: '< 90 MiB',
  });

  const servers = (route: string) =>
    [
      { url: `${server.url}${route}`, pid: server.process.pid! },
      { url: `http://127.0.0.1:6743${route}`, pid: bare!.pid! },
    ] as const;
  await throughput('`GET /~api/projects/{id}` (Bearer), 50 connections', 0.6, ...servers(projectPath), headers);
  await throughput('`GET /~api/users/me` (Bearer), 50 connections', 0.7, ...servers('/~api/users/me'), headers);

  await gitWithInput(path.join(server.dataDir, 'repos', `${projectId}.git`), ['fast-import', '--quiet'], history(COMMITS));
  await git(work, ['clone', '-q', `http://admin:${server.token}@127.0.0.1:6742/bench`, 'clone']);
  const clone = path.join(work, 'clone');
  await mergeRow(server, headers, clone, projectId);
  await pushRow(server, headers, clone, projectId);
  for (const row of await cloneRows(server, headers, work, projectId, 6742 + 1000)) add(row);
  await lfsRows(server);
} finally {
  bare?.kill('SIGTERM');
  await server.stop();
  await fs.rm(work, { recursive: true, force: true });
}

const cpu = os.cpus();
const markdown = process.argv.includes('--markdown');
console.log(
  `\nMachine: ${cpu.length} × ${cpu[0]?.model.trim()}, ${(os.totalmem() / 1024 ** 3).toFixed(0)} GiB, ${os.type()} ${os.release()}, Node ${process.version}; ` +
    `load average ${loadBefore.toFixed(1)} before, ${os.loadavg()[0].toFixed(1)} after; load generator in the same machine.\n`,
);
const header: Row = { measure: 'Measure', gitloom: 'Gitloom', limit: 'Limit measured beside it', ratio: 'Ratio', target: 'Target' };
if (markdown) {
  for (const row of [header, { measure: '---', gitloom: '---', limit: '---', ratio: '---', target: '---' }, ...rows]) {
    console.log(`| ${row.measure} | ${row.gitloom} | ${row.limit} | ${row.ratio} | ${row.target} |`);
  }
} else {
  const width = (key: keyof Row) => Math.max(...[header, ...rows].map((row) => row[key].length));
  for (const row of [header, ...rows]) {
    console.log((['measure', 'gitloom', 'limit', 'ratio', 'target'] as const).map((key) => row[key].padEnd(width(key))).join('  '));
  }
}
