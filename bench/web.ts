/**
 * Web UI figures (docs/compatibility.md#gitloom-differs-web-ui): server time p50/p99 of pages, measured in-process
 * through the server's whole request pipeline (`app.inject`: routing, session/credentials,
 * domain, rendering; no socket) against a real server with real git and a real build, and the
 * bytes of JS/CSS shipped (gzip). Targets: p50 < 30 ms, p99 < 100 ms.
 *
 * Run: `npx tsx bench/web.ts [name filter]` (PostgreSQL: `GITLOOM_BENCH_DATABASE_URL=postgres://…`);
 * profile one page with `node --cpu-prof --import tsx bench/web.ts "file view"`.
 *
 * Every row is one entry of {@link CASES}: a name and a `setup` that prepares its data through
 * the shared {@link Env} and returns the URL to measure. Add a page's row by adding one entry.
 * The tree view's last commits have rows of their own ({@link treeLastCommits}): cold and warm,
 * beside the git walk run alone.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { lastCommitsOf } from '../src/git/last-commits.js';
import { shippedBytes } from '../src/web/assets.js';
import { git, startInProcessServer, time, type InProcessBenchServer } from './lib.js';

const PASSWORD = 'bench-secret';
const AUTH = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
const WARMUP = 20;
const RUNS = 200;

/** What every case's setup can use: the server, the API, and the `bench` project (pushed, with a build spec). */
interface Env {
  bench: InProcessBenchServer;
  /** Calls the API as the administrator; returns the parsed JSON (or text) body; throws unless 2xx. */
  api(method: string, route: string, body?: unknown): Promise<any>;
  /** The `bench` project: id, path and a work tree whose `main` is pushed. */
  project: { id: number; path: string; work: string; remote: string };
  /** Runs a job of the bench spec on main and waits until it finished; returns its number. */
  runJob(jobName: string): Promise<number>;
  /** Commits `files` on a new branch from main and pushes it. */
  pushBranch(branch: string, files: Record<string, string>): Promise<void>;
  /** Opens a pull request from a pushed branch to main; returns its id. */
  openPull(branch: string, title: string): Promise<number>;
}

/** One row of the table. */
interface Case {
  name: string;
  /** Prepares the data and returns the page URL (path and query) to measure. */
  setup(env: Env): Promise<string>;
}

const SPEC = `version: 25
jobs:
- name: Log
  steps:
  - !CommandStep
    name: print
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - i=1; while [ $i -le 5000 ]; do echo "log line $i of the benchmark build, with some text to make it realistic"; i=$((i+1)); done
`;

const CASES: Case[] = [
  { name: 'project home (README, tree)', setup: async ({ project }) => `/${project.path}` },
  {
    name: 'build page, 5,000-line log',
    setup: async ({ runJob, project }) => `/${project.path}/~builds/${await runJob('Log')}`,
  },
  {
    name: 'builds list (1,000 builds, first page)',
    setup: async ({ bench, project }) => {
      const db = bench.server.services.db;
      const first = await db.selectFrom('builds').selectAll().where('projectId', '=', project.id).orderBy('number', 'desc').executeTakeFirstOrThrow();
      const rows = [];
      for (let n = first.number + 1; rows.length < 1000; n++) {
        const submitDate = first.submitDate + n * 60_000;
        rows.push({
          ...first,
          id: undefined,
          number: n,
          uuid: `bench-${n}`,
          status: n % 7 === 0 ? ('FAILED' as const) : ('SUCCESSFUL' as const),
          submitDate,
          pendingDate: submitDate,
          runningDate: submitDate + 1000,
          finishDate: submitDate + 30_000,
          leaseOwner: null,
          leaseExpires: null,
        });
      }
      for (let i = 0; i < rows.length; i += 100)
        await db
          .insertInto('builds')
          .values(rows.slice(i, i + 100))
          .execute();
      return `/${project.path}/~builds`;
    },
  },
  { name: 'builds across projects (/~builds)', setup: async () => '/~builds' },
  {
    name: 'file view, 5,000-line TypeScript file',
    setup: async ({ project, pushBranch }) => {
      const source = Array.from({ length: 5000 }, (_, i) =>
        i % 10 === 0
          ? `/** Line ${i}: a documented function. */`
          : `export function f${i}(value: number): string { return \`\${value * ${i}} items\`; } // ${i}`,
      ).join('\n');
      await pushBranch('big-file', { 'src/big.ts': `${source}\n` });
      return `/${project.path}/~files/big-file/src/big.ts`;
    },
  },
  {
    name: 'pull request page, 200 activities',
    setup: async ({ api, project, pushBranch, openPull }) => {
      await pushBranch('talk', { 'talk.md': 'talk\n' });
      const id = await openPull('talk', 'A long conversation');
      for (let i = 0; i < 200; i++) {
        await api('POST', '/pull-request-comments', {
          requestId: id,
          content: `Comment ${i} with **Markdown**, \`code\` and a [link](https://example.com/${i}).`,
        });
      }
      return `/${project.path}/~pulls/${(await api('GET', `/pulls/${id}`)).number}`;
    },
  },
  {
    name: 'global search, 2,000 issues (two words)',
    setup: async ({ api, bench, project }) => {
      const db = bench.server.services.db;
      const seedId = (await api('POST', '/issues', { projectId: project.id, title: 'Seed issue' })) as number;
      const seed = await db.selectFrom('issues').selectAll().where('id', '=', seedId).executeTakeFirstOrThrow();
      const topics = ['parser', 'renderer', 'scheduler', 'cache', 'index', 'router', 'mailer', 'tokenizer', 'importer', 'exporter'];
      const rows = Array.from({ length: 2000 }, (_, i) => ({
        ...seed,
        id: undefined,
        number: seed.number + 1 + i,
        uuid: `bench-issue-${i}`,
        title: `The ${topics[i % topics.length]} fails on input ${i}`,
        description: `Steps to reproduce the ${topics[(i + 3) % topics.length]} failure number ${i}.`,
        lastActivityDate: seed.lastActivityDate + i,
      }));
      for (let i = 0; i < rows.length; i += 100)
        await db
          .insertInto('issues')
          .values(rows.slice(i, i + 100))
          .execute();
      return `/~search?q=${encodeURIComponent('scheduler fails')}`;
    },
  },
  {
    name: 'pull request changes, 2,000-line diff',
    setup: async ({ api, project, pushBranch, openPull }) => {
      const files: Record<string, string> = {};
      for (let f = 0; f < 10; f++) {
        files[`src/changed-${f}.ts`] =
          `${Array.from({ length: 200 }, (_, i) => `export const item${f}x${i} = { id: ${i}, name: 'item ${i}', enabled: ${i % 2 === 0} };`).join('\n')}\n`;
      }
      await pushBranch('big-diff', files);
      const id = await openPull('big-diff', 'Two thousand lines');
      return `/${project.path}/~pulls/${(await api('GET', `/pulls/${id}`)).number}/changes`;
    },
  },
];

/**
 * The diff view's rows (docs/compatibility.md#diff-view): a pull request of 2,000 changed lines
 * (1,000 lines rewritten in 10 files of 300, so every pair gets intra-line marks) in the unified
 * and the split layout, and one of 100 changed files; beside them the git commands a cold page
 * runs, alone (`diff --raw --numstat`, `diff -U3`, `cat-file --batch-check` and `--batch` of the
 * blobs). Targets: p50 < 30 ms (2,000 lines), < 60 ms (100 files).
 */
async function diffRows(env: Env): Promise<void> {
  const { project, pushBranch, openPull, api, bench } = env;
  const base: Record<string, string> = {};
  const changed: Record<string, string> = {};
  const lines = (f: number, edit: boolean) =>
    Array.from({ length: 300 }, (_, i) =>
      edit && i % 3 === 1
        ? `export const item${f}x${i} = { id: ${i}, label: 'changed ${i}', enabled: ${i % 2 !== 0} };`
        : `export const item${f}x${i} = { id: ${i}, name: 'item ${i}', enabled: ${i % 2 === 0} };`,
    ).join('\n') + '\n';
  for (let f = 0; f < 10; f++) {
    base[`diff/rewritten-${f}.ts`] = lines(f, false);
    changed[`diff/rewritten-${f}.ts`] = lines(f, true);
  }
  for (let f = 0; f < 100; f++) {
    const dir = `many/dir-${f % 10}`;
    base[`${dir}/file-${f}.ts`] = lines(f, false);
    changed[`${dir}/file-${f}.ts`] = lines(f, false).replace(`item${f}x7 `, `item${f}x7b `).replace(`item${f}x200 `, `item${f}x200b `);
  }
  // both the base files and the two branches, then their requests
  await git(project.work, ['checkout', '-q', 'main']);
  for (const [name, content] of Object.entries(base)) {
    await fs.mkdir(path.dirname(path.join(project.work, name)), { recursive: true });
    await fs.writeFile(path.join(project.work, name), content);
  }
  await git(project.work, ['add', '-A']);
  await git(project.work, ['commit', '-q', '-m', 'diff bench base']);
  await git(project.work, ['push', '-q', project.remote, 'main']);
  const pick = (prefix: string) => Object.fromEntries(Object.entries(changed).filter(([name]) => name.startsWith(prefix)));
  await pushBranch('diff-2000', pick('diff/'));
  await pushBranch('diff-100', pick('many/'));
  const url = async (branch: string) => `/${project.path}/~pulls/${(await api('GET', `/pulls/${await openPull(branch, branch)}`)).number}/changes`;
  const [lines2000, files100] = [await url('diff-2000'), await url('diff-100')];
  // the new requests' background work (merge previews) is done before measuring
  await new Promise((resolve) => setTimeout(resolve, 5000));
  const rows: [string, string][] = [
    ['PR changes, 2,000 changed lines, unified', `${lines2000}?view=unified`],
    ['PR changes, 2,000 changed lines, split', `${lines2000}?view=split`],
    ['PR changes, 100 files, unified', `${files100}?view=unified`],
  ];
  for (const [name, page] of rows) {
    const { p50, p99, cpu, bytes } = await measure(bench, page, { asBytes: true });
    console.log(
      `${name.padEnd(44)} ${`${p50.toFixed(1)} ms`.padStart(9)} ${`${p99.toFixed(1)} ms`.padStart(9)} ${`${(bytes / 1024).toFixed(1)} KiB`.padStart(10)}   CPU p50 ${cpu.toFixed(1)} ms`,
    );
  }
  for (const branch of ['diff-2000', 'diff-100']) {
    const dir = branch === 'diff-2000' ? 'diff' : 'many';
    const blobs = `${(await git(project.work, ['ls-tree', '-r', '--format=%(objectname)', 'main', dir])).trim()}\n${(await git(project.work, ['ls-tree', '-r', '--format=%(objectname)', branch, dir])).trim()}\n`;
    const times: number[] = [];
    for (let i = 0; i < 30; i++) {
      const start = performance.now();
      await Promise.all([
        git(project.work, ['diff', '--raw', '--numstat', '-z', '--no-abbrev', '--find-renames', 'main', branch, '--']),
        git(project.work, ['diff', '--no-color', '--find-renames', '-U3', 'main', branch, '--']),
      ]);
      await runWithInput(project.work, ['cat-file', '--batch-check'], blobs);
      await runWithInput(project.work, ['cat-file', '--batch'], blobs);
      times.push(performance.now() - start);
    }
    console.log(`${`  git alone, cold page (${branch})`.padEnd(44)} ${`${percentile(times, 50).toFixed(1)} ms`.padStart(9)}`);
  }
}

/** Runs git in `cwd` with `input` on its standard input. */
function runWithInput(cwd: string, args: string[], input: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, stdio: ['pipe', 'ignore', 'ignore'] });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`git ${args.join(' ')}: exit ${code}`))));
    child.stdin.end(input);
  });
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Server time of `url`: p50 and p99 of the wall time, the p50 of the process's CPU time per
 * request (user + system: on a loaded machine, the share of the wall time that is the server's own
 * work; the in-process server's background loops count too), and the page's bytes.
 */
async function measure(bench: InProcessBenchServer, url: string, { asBytes = false } = {}): Promise<{ p50: number; p99: number; cpu: number; bytes: number }> {
  const times: number[] = [];
  const cpus: number[] = [];
  let bytes = 0;
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const start = performance.now();
    const cpu = process.cpuUsage();
    // asBytes: the page is read as bytes (inject's default decodes it into a string, which for a
    // page of megabytes costs the bench several milliseconds the server does not spend)
    const response = await bench.server.app.inject({ method: 'GET', url, headers: { authorization: AUTH }, payloadAsStream: asBytes });
    let size = 0;
    if (asBytes) for await (const chunk of response.stream()) size += (chunk as Buffer).length;
    const elapsed = performance.now() - start;
    const used = process.cpuUsage(cpu);
    if (response.statusCode !== 200) throw new Error(`${url}: ${response.statusCode}`);
    bytes = asBytes ? size : response.rawPayload.length;
    if (i >= WARMUP) {
      times.push(elapsed);
      cpus.push((used.user + used.system) / 1000);
    }
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99), cpu: percentile(cpus, 50), bytes };
}

const bench = await startInProcessServer('web', PASSWORD);
const work = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-bench-web-'));
try {
  const api: Env['api'] = async (method, route, body) => {
    const response = await fetch(`${bench.server.url}/~api${route}`, {
      method,
      headers: { authorization: AUTH, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  const id = (await api('POST', '/projects', { name: 'bench' })) as number;
  const readme = Array.from({ length: 40 }, (_, i) => `## Section ${i}\n\nSome *Markdown* text with \`code\` and a [link](https://example.com/${i}).\n`).join(
    '\n',
  );
  await git(work, ['init', '-q', '-b', 'main']);
  await fs.writeFile(path.join(work, 'README.md'), `# Bench\n\n${readme}`);
  await fs.writeFile(path.join(work, '.onedev-buildspec.yml'), SPEC);
  for (let i = 0; i < 30; i++) await fs.writeFile(path.join(work, `file-${i}.ts`), `export const value${i} = ${i};\n`);
  await git(work, ['add', '-A']);
  await git(work, ['commit', '-q', '-m', 'bench repository']);
  const remote = new URL(`${bench.server.url}/bench`);
  remote.username = 'admin';
  remote.password = PASSWORD;
  await git(work, ['push', '-q', remote.toString(), 'main']);
  const head = (await git(work, ['rev-parse', 'HEAD'])).trim();

  const env: Env = {
    bench,
    api,
    project: { id, path: 'bench', work, remote: remote.toString() },
    async runJob(jobName) {
      const buildId = (await api('POST', '/job-runs', {
        '@type': 'JobRunOnCommit',
        projectId: id,
        commitHash: head,
        refName: 'refs/heads/main',
        jobName,
        params: {},
        reason: 'bench',
      })) as number;
      for (;;) {
        const build = await api('GET', `/builds/${buildId}`);
        if (['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(build.status)) {
          if (build.status !== 'SUCCESSFUL') throw new Error(`bench build ${jobName}: ${build.status}`);
          return build.number as number;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async pushBranch(branch, files) {
      await git(work, ['checkout', '-q', '-B', branch, 'main']);
      for (const [name, content] of Object.entries(files)) {
        await fs.mkdir(path.dirname(path.join(work, name)), { recursive: true });
        await fs.writeFile(path.join(work, name), content);
      }
      await git(work, ['add', '-A']);
      await git(work, ['commit', '-q', '-m', branch]);
      await git(work, ['push', '-q', remote.toString(), branch]);
      await git(work, ['checkout', '-q', 'main']);
    },
    async openPull(branch, title) {
      return (await api('POST', '/pulls', { targetProjectId: id, sourceProjectId: id, targetBranch: 'main', sourceBranch: branch, title })) as number;
    },
  };

  const engine = process.env.GITLOOM_BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite';
  console.log(`web pages, server time (app.inject, ${RUNS} sequential requests after ${WARMUP} warm-up), ${engine}; target p50 < 30 ms, p99 < 100 ms`);
  console.log(`${'page'.padEnd(44)} ${'p50'.padStart(9)} ${'p99'.padStart(9)} ${'HTML'.padStart(10)}`);
  const filter = process.argv[2]?.toLowerCase() ?? '';
  for (const entry of CASES.filter((c) => c.name.toLowerCase().includes(filter))) {
    const url = await entry.setup(env);
    const { p50, p99, bytes } = await measure(bench, url);
    console.log(
      `${entry.name.padEnd(44)} ${`${p50.toFixed(1)} ms`.padStart(9)} ${`${p99.toFixed(1)} ms`.padStart(9)} ${`${(bytes / 1024).toFixed(1)} KiB`.padStart(10)}`,
    );
  }
  if ('tree view, 500 entries, last commits'.includes(filter) || filter.startsWith('tree')) await treeLastCommits(env);
  if ('diff view'.includes(filter) || filter === '') await diffRows(env);
  const shipped = shippedBytes();
  console.log(
    `JS shipped (gzip, all client modules): ${(shipped.js / 1024).toFixed(1)} KiB (budget 60 KiB); CSS shipped (gzip): ${(shipped.css / 1024).toFixed(1)} KiB`,
  );
} finally {
  await bench.close();
  await fs.rm(work, { recursive: true, force: true });
}

/**
 * The tree view of a directory of 500 entries with their last commits (target: < 40 ms warm, <
 * 400 ms cold on a git/git-sized repository). The repository is written with `git fast-import`:
 * a root commit creating `wide/` (450 files, 50 directories) and the rest of the tree, then
 * `GITLOOM_BENCH_TREE_COMMITS` (default 80,000, git/git's size) commits each changing one file —
 * seven in ten outside `wide/`, the others on a long-tailed choice of its entries, so some
 * entries are last changed by the root commit and a walk must reach it. Or, with
 * `GITLOOM_BENCH_TREE_REPO=/path/to/repo` (`GITLOOM_BENCH_TREE_DIR`, default the root), a real
 * repository's HEAD fetched into the project. Rows: the page cold (each request at a commit not
 * seen before, the median of 5: the names at once, the last commits when read within 300 ms),
 * cold waiting for the last commits (`?last-commits=wait`), warm (the measure loop), and the walk
 * alone — as the page runs it (stopping when every entry is found) and `git log` to the end.
 */
async function treeLastCommits(env: Env): Promise<void> {
  const id = (await env.api('POST', '/projects', { name: 'wide' })) as number;
  const repo = path.join(env.bench.dataDir, 'repos', `${id}.git`);
  const real = process.env.GITLOOM_BENCH_TREE_REPO;
  const dir = real ? (process.env.GITLOOM_BENCH_TREE_DIR ?? '') : 'wide';
  if (real) await git(repo, ['fetch', '-q', path.resolve(real), '+HEAD:refs/heads/main']);
  else await fastImport(repo, Number(process.env.GITLOOM_BENCH_TREE_COMMITS ?? 80_000));
  const log = (await git(repo, ['rev-list', '--max-count=11', 'main'])).trim().split('\n');
  const commits = Number((await git(repo, ['rev-list', '--count', 'main'])).trim());
  const names = (await git(repo, ['ls-tree', '-z', '--name-only', `main:${dir}`])).split('\0').filter(Boolean);
  const url = (revision: string) => `/wide/~files/${revision}${dir ? `/${dir}` : ''}`;
  const get = async (u: string) => {
    const response = await env.bench.server.app.inject({ method: 'GET', url: u, headers: { authorization: AUTH } });
    if (response.statusCode !== 200) throw new Error(`${u}: ${response.statusCode}`);
  };
  // a first view answers after at most 300 ms, its walk going on: wait for it before the next one
  const cold: number[] = [];
  for (const commit of log.slice(1, 6)) {
    cold.push(await time(() => get(url(commit))));
    await get(`${url(commit)}?last-commits=wait`);
  }
  const coldWaiting: number[] = [];
  for (const commit of log.slice(6, 11)) coldWaiting.push(await time(() => get(`${url(commit)}?last-commits=wait`)));
  const walk = await time(() => lastCommitsOf(repo, log[0], dir, names));
  const full = await time(
    () =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(
          'git',
          [`--git-dir=${repo}`, 'log', '-z', '--name-only', '--no-renames', '--format=%x01%H%x1f%an%x1f%at%x1f%s', log[0], '--', ...(dir ? [`${dir}/`] : [])],
          {
            stdio: ['ignore', 'ignore', 'inherit'],
          },
        );
        child.on('error', reject);
        child.on('close', () => resolve());
      }),
  );
  const { p50, p99, bytes } = await measure(env.bench, url('main'));
  const what = `${names.length} entries, ${commits.toLocaleString('en-US')} commits`;
  const ms = (n: number) => `${n.toFixed(1)} ms`.padStart(9);
  console.log(`tree view with last commits (${what}${real ? `, ${real}` : ''}); target < 40 ms warm, < 400 ms cold`);
  console.log(`${'  page, cold (median of 5 new commits)'.padEnd(44)} ${ms(percentile(cold, 50))}`);
  console.log(`${'  page, cold, waiting for the last commits'.padEnd(44)} ${ms(percentile(coldWaiting, 50))}`);
  console.log(`${'  page, warm'.padEnd(44)} ${ms(p50)} ${ms(p99)} ${`${(bytes / 1024).toFixed(1)} KiB`.padStart(10)}`);
  console.log(`${'  git log walk, stopped when all are found'.padEnd(44)} ${ms(walk)}`);
  console.log(`${'  git log walk to the end of the history'.padEnd(44)} ${ms(full)}`);
}

/** Writes the synthetic history of {@link treeLastCommits} into a bare repository's `main`. */
async function fastImport(repo: string, commits: number): Promise<void> {
  const lines: string[] = [];
  const blob = (file: string, text: string) => lines.push(`M 100644 inline ${file}`, `data ${Buffer.byteLength(text)}`, text);
  const entries = Array.from({ length: 500 }, (_, i) => (i < 450 ? `wide/file-${i}.txt` : `wide/dir-${i}/index.txt`));
  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const start = 1_600_000_000;
  for (let n = 0; n <= commits; n++) {
    const message = n === 0 ? 'root' : `change ${n}`;
    lines.push('commit refs/heads/main', `committer Bench <bench@example.com> ${start + n * 60} +0000`, `data ${message.length}`, message);
    if (n === 0) {
      for (const file of entries) blob(file, 'v0\n');
      for (let i = 0; i < 200; i++) blob(`other/module-${i}.txt`, 'v0\n');
    } else if (random() < 0.7) blob(`other/module-${Math.floor(random() * 200)}.txt`, `v${n}\n`);
    // long-tailed: entry i is chosen with weight ~1/(i+1)²; the last ones almost never after the root
    else blob(entries[Math.min(499, Math.floor(1 / (1 - random() * 0.9998)) - 1)], `v${n}\n`);
    lines.push('');
  }
  await new Promise<void>((resolve, reject) => {
    const child = spawn('git', [`--git-dir=${repo}`, 'fast-import', '--quiet'], { stdio: ['pipe', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`git fast-import: ${code}`))));
    child.stdin.end(lines.join('\n'));
  });
}
