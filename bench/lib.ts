import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { loadConfig } from '../src/config.js';
import { startServer, type RunningServer } from '../src/server.js';

const run = promisify(execFile);

/** The environment and node flags of package.json's `start` script: the server as `npm start` runs it. */
export const startScript = (() => {
  const words = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/);
  const node = words.indexOf('node');
  return {
    env: Object.fromEntries(words.slice(0, node).map((word) => word.split('=') as [string, string])),
    flags: words.slice(node + 1).filter((word) => word.startsWith('--')),
  };
})();

/** A Gitloom server in its own process, started from the build in dist/. */
export interface BenchServer {
  url: string;
  dataDir: string;
  process: ChildProcess;
  /** Milliseconds from spawn to the first successful HTTP answer. */
  startMs: number;
  token: string;
  /** Stops the server (SIGTERM) and removes its data dir unless `keepDataDir`. */
  stop(options?: { keepDataDir?: boolean }): Promise<void>;
}

export const ADMIN_PASSWORD = 'bench-secret';

/**
 * Builds dist/ once with `npm run build`'s script (the server is measured as `npm start` runs
 * it). tsc still emits when some file fails to typecheck (the tree is shared while work is in
 * progress): the errors are printed and the measurement goes on.
 */
export async function build(): Promise<void> {
  try {
    await run(process.execPath, ['scripts/build.mjs']);
  } catch (error) {
    console.error(`build: type errors (dist/ emitted anyway):\n${(error as { stdout?: string }).stdout ?? String(error)}`);
  }
}

/**
 * Starts `node [nodeArgs] dist/cli.js serve` (or `command`, e.g. `npm start`, in its own process
 * group) on `port` (git over SSH on `port + 1000`) with a temp data dir and waits until it
 * answers `/~health/live`. The log level is `warn` unless `env` says otherwise.
 */
export async function startBenchServer(port: number, env: Record<string, string> = {}, nodeArgs: string[] = [], command?: string[]): Promise<BenchServer> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-bench-'));
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const [file, ...args] = command ?? [process.execPath, ...nodeArgs, 'dist/cli.js', 'serve'];
  const child = spawn(file, args, {
    env: {
      ...process.env,
      GITLOOM_PORT: String(port),
      GITLOOM_HOST: '127.0.0.1',
      GITLOOM_DATA_DIR: dataDir,
      GITLOOM_INITIAL_PASSWORD: ADMIN_PASSWORD,
      GITLOOM_LOG_LEVEL: 'warn',
      GITLOOM_SERVER_URL: url,
      // SSH beside HTTP, one port above the HTTP ports bench servers use
      GITLOOM_SSH_PORT: String(port + 1000),
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
    detached: command !== undefined,
  });
  await waitForAnswer(`${url}/~health/live`, () => child.exitCode !== null);
  const startMs = performance.now() - started;
  const basic = `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}`;
  const token = await (
    await fetch(`${url}/~api/users/1/access-tokens`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/json' },
      body: '{}',
    })
  ).text();
  return {
    url,
    dataDir,
    process: child,
    startMs,
    token,
    async stop(options = {}) {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        if (command) process.kill(-child.pid!, 'SIGTERM');
        else child.kill('SIGTERM');
        await exited;
      }
      if (!options.keepDataDir) await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Polls `url` every 5 ms until it answers 2xx; throws when `exited()` turns true first. */
export async function waitForAnswer(url: string, exited: () => boolean): Promise<void> {
  for (;;) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (exited()) throw new Error(`server exited before ${url} answered`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Resident set size of a process in MiB (from /proc). */
export async function rssMiB(pid: number): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

/** CPU time (user + system) a process has used so far, in milliseconds (from /proc). */
export async function cpuMs(pid: number): Promise<number> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields 14 and 15 of stat(5) (utime, stime), counted after the command name
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** Load-tests one GET URL: requests/s and latency percentiles (ms). */
export async function load(url: string, headers: Record<string, string>, connections = 50, seconds = 5) {
  const result = await autocannon({ url, headers, connections, duration: seconds });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { requestsPerSecond: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

/** Runs git with an argument array; returns stdout. */
export async function git(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await run('git', args, {
    cwd,
    maxBuffer: 256 * 1024 * 1024,
    env: {
      ...process.env,
      GIT_TERMINAL_PROMPT: '0',
      GIT_AUTHOR_NAME: 'Bench',
      GIT_AUTHOR_EMAIL: 'bench@example.com',
      GIT_COMMITTER_NAME: 'Bench',
      GIT_COMMITTER_EMAIL: 'bench@example.com',
    },
  });
  return stdout;
}

/** Times an async function in milliseconds. */
export async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** The `p`-th percentile (0–100) of `values`, nearest rank. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Prints a table row. */
export function report(name: string, value: string, target: string): void {
  console.log(`${name.padEnd(48)} ${value.padStart(14)}   target ${target}`);
}

/** A server started in this process (for benchmarks that insert rows through its database handle). */
export interface InProcessBenchServer {
  server: RunningServer;
  dataDir: string;
  /** Stops the server and removes its data dir and, on PostgreSQL, its database. */
  close(): Promise<void>;
}

/**
 * Starts a server in this process on a temp data dir: SQLite, or a fresh PostgreSQL database
 * when GITLOOM_BENCH_DATABASE_URL names a server. The administrator's password is `password`.
 */
export async function startInProcessServer(label: string, password: string, logger = false): Promise<InProcessBenchServer> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), `gitloom-bench-${label}-`));
  const base = process.env.GITLOOM_BENCH_DATABASE_URL;
  const name = `gitloom_bench_${label}_${process.pid}`;
  const { default: pg } = await import('pg');
  const onAdmin = async (statement: string) => {
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    await client.query(statement);
    await client.end();
  };
  let databaseUrl: string | undefined;
  if (base) {
    await onAdmin(`create database ${name}`);
    const url = new URL(base);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
  }
  const config = loadConfig(
    {
      GITLOOM_INITIAL_PASSWORD: password,
      GITLOOM_INITIAL_EMAIL: 'admin@example.com',
      GITLOOM_HOST: '127.0.0.1',
      GITLOOM_LOG_LEVEL: 'warn',
      GITLOOM_SSH_PORT: '0',
      ...(databaseUrl && { GITLOOM_DATABASE_URL: databaseUrl }),
    },
    { port: 0, dataDir },
  );
  const server = await startServer(config, { logger });
  return {
    server,
    dataDir,
    async close() {
      await server.close();
      if (base) await onAdmin(`drop database if exists ${name} with (force)`);
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The times of an upload and a download of one file, ms. */
export interface TransferTimes {
  up: number;
  down: number;
}

/** One request of {@link curlTransfer}: its URL and headers. */
export interface CurlRequest {
  url: string;
  headers?: Record<string, string>;
}

const curlHeaders = (request: CurlRequest) => Object.entries(request.headers ?? {}).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);

/**
 * Writes dirty pages back to disk before a step is timed: every transfer here ends in a write of
 * the whole file, so without it each step would also pay for its predecessor's writeback.
 */
export const settle = () => run('sync');

/** `cp` of `source` into `dir`, ms, after {@link settle}; the copy is removed. */
export async function cpTime(source: string, dir: string): Promise<number> {
  await settle();
  const copy = path.join(dir, 'copy.bin');
  const ms = await time(() => run('cp', [source, copy]));
  await fs.rm(copy);
  return ms;
}

/**
 * Times, with curl, an upload of `source` (`method` to `upload.url`, `application/octet-stream`)
 * and then a download of it into `<dir>/down.bin` (checked to be `source`'s size, then removed),
 * each after {@link settle}. `download` may be asked for once the upload is done (an LFS
 * download action exists only for a stored object).
 */
export async function curlTransfer(
  dir: string,
  source: string,
  upload: CurlRequest & { method: 'PUT' | 'POST' },
  downloadRequest: CurlRequest | (() => Promise<CurlRequest>),
): Promise<TransferTimes> {
  await settle();
  const up = await time(() =>
    run('curl', ['-sSf', '-X', upload.method, ...curlHeaders(upload), '-H', 'Content-Type: application/octet-stream', '-T', source, upload.url]),
  );
  const download = typeof downloadRequest === 'function' ? await downloadRequest() : downloadRequest;
  await settle();
  const target = path.join(dir, 'down.bin');
  const down = await time(() => run('curl', ['-sSf', ...curlHeaders(download), '-o', target, download.url]));
  if ((await fs.stat(target)).size !== (await fs.stat(source)).size) throw new Error(`${download.url} sent the wrong size`);
  await fs.rm(target);
  return { up, down };
}

/** {@link curlTransfer} through the bare node:http server of {@link BARE_FILE_SERVER} on `port`: the ceiling of HTTP over loopback on this machine. */
export async function bareTransfer(dir: string, source: string, port: number): Promise<TransferTimes> {
  const bare = spawn(process.execPath, ['--input-type=module', '-e', BARE_FILE_SERVER, path.join(dir, 'bare.bin'), String(port)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await new Promise((r) => bare.stdout.once('data', r));
    const url = `http://127.0.0.1:${port}/f`;
    return await curlTransfer(dir, source, { url, method: 'PUT' }, { url });
  } finally {
    bare.kill();
  }
}

/** Samples the resident memory of process `pid` every 20 ms until the returned function is called; it (idempotent) returns the peak, MiB. */
export function samplePeakRss(pid: number): () => number {
  let peak = 0;
  const sampler = setInterval(() => {
    rssMiB(pid).then(
      (v) => (peak = Math.max(peak, v)),
      () => undefined,
    );
  }, 20);
  return () => {
    clearInterval(sampler);
    return peak;
  };
}

/**
 * Proportional set size (PSS, /proc/<pid>/smaps_rollup) of process `pid` and all its descendants,
 * summed, in MiB: a server with the git processes it started. PSS splits shared pages (a pack
 * file mapped by several upload-packs, the page cache of git's mmap) between the processes that
 * map them, so the sum counts each page once. Processes that exit while read are skipped.
 */
export async function treeMemoryMiB(pid: number): Promise<number> {
  let kb = 0;
  for (const next of await processTree(pid)) {
    try {
      kb += Number(/^Pss:\s+(\d+)/m.exec(await fs.readFile(`/proc/${next}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
    } catch {
      // exited meanwhile
    }
  }
  return kb / 1024;
}

/** Process `pid` and all its descendants (from /proc), `pid` first. */
export async function processTree(pid: number): Promise<number[]> {
  const children = new Map<number, number[]>();
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await fs.readFile(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(parent) ?? [];
      list.push(Number(entry));
      children.set(parent, list);
    } catch {
      // exited meanwhile
    }
  }
  const tree: number[] = [];
  const pending = [pid];
  while (pending.length > 0) {
    const next = pending.pop()!;
    tree.push(next);
    pending.push(...(children.get(next) ?? []));
  }
  return tree;
}

/** Samples {@link treeMemoryMiB} of `pid` every `everyMs` until the returned function is called; it (idempotent) returns the peak, MiB. */
export function samplePeakTreeMemory(pid: number, everyMs = 200): () => number {
  let peak = 0;
  let running = true;
  void (async () => {
    while (running) {
      peak = Math.max(peak, await treeMemoryMiB(pid));
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return () => {
    running = false;
    return peak;
  };
}

/** The bare node:http server of the ceiling figures: POST (or PUT) /f stores the body, GET /f streams it; argv[1] is the file, argv[2] the port. */
export const BARE_FILE_SERVER = `
import http from 'node:http';
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
const file = process.argv[1];
http.createServer(async (req, res) => {
  if (req.method !== 'GET') {
    await pipeline(req, fs.createWriteStream(file, { highWaterMark: 1 << 20 }));
    res.end('');
  } else {
    res.writeHead(200, { 'content-length': fs.statSync(file).size });
    await pipeline(fs.createReadStream(file, { highWaterMark: 1 << 20 }), res);
  }
}).listen(Number(process.argv[2]), '127.0.0.1', () => console.log('ready'));
`;

/** mulberry32: a small seeded generator of numbers in [0, 1), so generated repositories are the same on every machine. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The cache directory of the bench `name` (outside the repository): `$BENCH_CACHE_DIR/<name>`, else under `$XDG_CACHE_HOME` or `~/.cache`. */
export function benchCacheDir(name: string): string {
  const base = process.env.BENCH_CACHE_DIR ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'gitloom-bench');
  return path.join(base, name);
}

/**
 * CPU time (user + system) of process `pid` with its descendants, ms (from /proc): its own, its
 * reaped children's and, recursively, its live children's. 0 for a process gone meanwhile.
 */
export async function treeCpuMs(pid: number): Promise<number> {
  let stat: string;
  const children: number[] = [];
  try {
    stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    for (const task of await fs.readdir(`/proc/${pid}/task`)) {
      for (const child of (await fs.readFile(`/proc/${pid}/task/${task}/children`, 'utf8')).split(' ')) if (child) children.push(Number(child));
    }
  } catch {
    return 0;
  }
  // fields 14–17 of stat(5): utime, stime, cutime, cstime (clock ticks), counted after the command name
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  let total = ((Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 1000) / 100;
  for (const child of children) total += await treeCpuMs(child);
  return total;
}

/**
 * Waits until process `pid` with its descendants (a server with its git processes) has used under
 * 50 ms of CPU in each of `calmSeconds` seconds in a row — its work after a push done — at most `maxMs`.
 */
export async function waitQuiet(pid: number, maxMs: number, calmSeconds = 1): Promise<void> {
  const until = performance.now() + maxMs;
  for (let calm = 0; calm < calmSeconds && performance.now() < until;) {
    const before = await treeCpuMs(pid);
    await new Promise((r) => setTimeout(r, 1000));
    calm = (await treeCpuMs(pid)) - before < 50 ? calm + 1 : 0;
  }
}
