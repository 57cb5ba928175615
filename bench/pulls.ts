/**
 * Pull request figures (run on demand: `npx tsx bench/pulls.ts`; PostgreSQL with
 * `GITLOOM_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres`):
 * - merge latency in a repository with 10,000+ commits (history made with `git fast-import`),
 *   per strategy, through the HTTP API (target < 300 ms per merge);
 * - query latency over 100,000 pull requests inserted directly through Kysely, for
 *   `open and "Target Branch" is "main" order by "Number" desc` and a fuzzy query (target p50 < 30 ms).
 * Prints the figures; not part of the tests. `GITLOOM_BENCH_PART=queries` skips the merges.
 */
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { dialectOf } from '../src/db/dialect.js';
import { startInProcessServer } from './lib.js';

const run = promisify(execFile);
const PASSWORD = 'bench-secret';
const auth = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
const COMMITS = 10_000;
const PULL_REQUESTS = 100_000;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function report(label: string, values: number[]): void {
  console.log(
    `${label.padEnd(64)} p50 ${percentile(values, 50).toFixed(1).padStart(7)} ms   p95 ${percentile(values, 95).toFixed(1).padStart(7)} ms   (n=${values.length})`,
  );
}

async function git(repo: string, args: string[], input?: string): Promise<string> {
  if (input === undefined) return (await run('git', [`--git-dir=${repo}`, ...args], { maxBuffer: 1 << 26 })).stdout;
  return new Promise((resolve, reject) => {
    const child = spawn('git', [`--git-dir=${repo}`, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`git ${args[0]} exited ${code}`))));
    child.stdin.end(input);
  });
}

/** A fast-import stream of `count` commits on refs/heads/main, each touching one of 200 files. */
function history(count: number): string {
  const parts: string[] = [];
  for (let i = 1; i <= count; i++) {
    const content = `line ${i}\n`;
    const message = `commit ${i}\n`;
    parts.push(
      'commit refs/heads/main',
      `mark :${i}`,
      `committer Bench <bench@example.com> ${1_700_000_000 + i} +0000`,
      `data ${Buffer.byteLength(message)}`,
      message.slice(0, -1),
      ...(i > 1 ? [`from :${i - 1}`] : []),
      `M 100644 inline src/file${i % 200}.txt`,
      `data ${Buffer.byteLength(content)}`,
      content.slice(0, -1),
      '',
    );
  }
  return `${parts.join('\n')}\n`;
}

/** A commit on top of `parent` changing one file, made directly in the bare repository. */
async function commitOnto(repo: string, parent: string, file: string, content: string, message: string): Promise<string> {
  const blob = (await git(repo, ['hash-object', '-w', '--stdin'], content)).trim();
  const env = { GIT_INDEX_FILE: path.join(os.tmpdir(), `bench-index-${randomUUID()}`) };
  const withEnv = (args: string[]) =>
    run('git', [`--git-dir=${repo}`, ...args], {
      env: {
        ...process.env,
        ...env,
        GIT_AUTHOR_NAME: 'Bench',
        GIT_AUTHOR_EMAIL: 'bench@example.com',
        GIT_COMMITTER_NAME: 'Bench',
        GIT_COMMITTER_EMAIL: 'bench@example.com',
      },
    });
  await withEnv(['read-tree', parent]);
  await withEnv(['update-index', '--add', '--cacheinfo', `100644,${blob},${file}`]);
  const tree = (await withEnv(['write-tree'])).stdout.trim();
  await fs.rm(env.GIT_INDEX_FILE, { force: true });
  return (await withEnv(['commit-tree', tree, '-p', parent, '-m', message])).stdout.trim();
}

async function main(): Promise<void> {
  const bench = await startInProcessServer('pulls', PASSWORD);
  const { server, dataDir } = bench;
  const call = async (method: string, route: string, body?: unknown, text?: string) => {
    const res = await fetch(`${server.url}/~api${route}`, {
      method,
      headers: { authorization: auth, ...(body !== undefined ? { 'content-type': 'application/json' } : { 'content-type': 'text/plain' }) },
      body: body !== undefined ? JSON.stringify(body) : text,
    });
    const raw = await res.text();
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${raw}`);
    return raw ? JSON.parse(raw) : null;
  };
  console.log(`Gitloom pull request figures (${dialectOf(server.services.db).engine === 'postgres' ? 'PostgreSQL' : 'SQLite'})`);
  try {
    // --- merges in a 10,000-commit repository
    const projectId = (await call('POST', '/projects', { name: 'big' })) as number;
    const repo = path.join(dataDir, 'repos', `${projectId}.git`);
    let started = performance.now();
    if (process.env.GITLOOM_BENCH_PART !== 'queries') {
      await git(repo, ['fast-import', '--quiet'], history(COMMITS));
      console.log(`history: ${COMMITS} commits imported in ${(performance.now() - started).toFixed(0)} ms`);
      for (const strategy of ['CREATE_MERGE_COMMIT', 'SQUASH_SOURCE_BRANCH_COMMITS', 'REBASE_SOURCE_BRANCH_COMMITS', 'CREATE_MERGE_COMMIT_IF_NECESSARY']) {
        const opens: number[] = [];
        const merges: number[] = [];
        for (let i = 0; i < 10; i++) {
          const main = (await git(repo, ['rev-parse', 'refs/heads/main'])).trim();
          const branch = `${strategy.toLowerCase()}-${i}`;
          const first = await commitOnto(repo, `${main}~5`, `feature/${branch}.txt`, `${branch}\n`, `work on ${branch}`);
          const second = await commitOnto(repo, first, `feature/${branch}.txt`, `${branch} v2\n`, `more work on ${branch}`);
          await git(repo, ['update-ref', `refs/heads/${branch}`, second]);
          started = performance.now();
          const id = await call('POST', '/pulls', {
            targetProjectId: projectId,
            sourceProjectId: projectId,
            targetBranch: 'main',
            sourceBranch: branch,
            title: branch,
            mergeStrategy: strategy,
          });
          opens.push(performance.now() - started);
          await call('GET', `/pulls/${id}/merge-preview`);
          started = performance.now();
          await call('POST', `/pulls/${id}/merge`, undefined, `Merge ${branch}`);
          merges.push(performance.now() - started);
        }
        report(`open pull request (${strategy})`, opens);
        report(`merge (${strategy}, preview ready)`, merges);
      }
    }

    // --- queries over 100,000 pull requests
    const db = server.services.db;
    const projectIds: number[] = [projectId];
    for (let i = 0; i < 9; i++) projectIds.push((await call('POST', '/projects', { name: `p${i}` })) as number);
    // Titles and texts from a vocabulary of 20,000 pseudo-random 5–9 letter words (seeded, so runs
    // compare) plus a few common verbs, so a word names a handful of requests as in real titles.
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const vocabulary = Array.from({ length: 20_000 }, () =>
      Array.from({ length: 5 + Math.floor(random() * 5) }, () => String.fromCharCode(97 + Math.floor(random() * 26))).join(''),
    );
    const word = (n: number) => vocabulary[((n % 20_000) + 20_000) % 20_000];
    const verbs = ['Fix', 'Add', 'Update', 'Remove', 'Refactor'];
    const branches = ['main', 'main', 'main', 'develop', 'release/1.0', 'release/2.0'];
    const statuses = ['OPEN', 'OPEN', 'MERGED', 'MERGED', 'MERGED', 'DISCARDED'] as const;
    started = performance.now();
    const now = Date.now();
    const BATCH = 1000;
    for (let offset = 0; offset < PULL_REQUESTS; offset += BATCH) {
      const rows = [];
      for (let i = offset; i < offset + BATCH; i++) {
        const scope = projectIds[i % projectIds.length];
        const title = `${verbs[i % 5]} ${word(i * 31)} ${word(i * 97 + 5)} ${word(i * 7 + 11)}`;
        rows.push({
          numberScopeId: scope,
          number: 1000 + Math.floor(i / projectIds.length),
          status: statuses[i % statuses.length],
          title,
          description: i % 3 === 0 ? `About ${word(i * 13 + 3)} and ${word(i * 17 + 1)}` : null,
          submitterId: 1,
          targetProjectId: scope,
          targetBranch: branches[i % branches.length],
          sourceProjectId: scope,
          sourceBranch: `feature/${i}`,
          baseCommitHash: '0'.repeat(40),
          buildCommitHash: null,
          submitDate: now - i * 60_000,
          mergeStrategy: 'CREATE_MERGE_COMMIT' as const,
          uuid: randomUUID(),
          commentCount: 0,
          lastActivityUserId: 1,
          lastActivityDate: now - ((i * 7919) % PULL_REQUESTS) * 60_000,
          lastActivityDescription: 'opened',
          codeCommentsUpdateDate: null,
          checkError: null,
          closeDate: null,
          previewTargetHeadCommitHash: null,
          previewHeadCommitHash: null,
          previewMergeStrategy: null,
          previewMergeCommitHash: null,
        });
      }
      const inserted = await db.insertInto('pullRequests').values(rows).returning('id').execute();
      const comments = inserted
        .filter((_, k) => k % 5 === 0)
        .map((r, k) => ({ requestId: r.id, userId: 1, content: `Comment about ${word(k * 19 + 2)}`, date: now }));
      await db.insertInto('pullRequestComments').values(comments).execute();
    }
    console.log(`inserted ${PULL_REQUESTS} pull requests (+ ${PULL_REQUESTS / 5} comments) in ${(performance.now() - started).toFixed(0)} ms`);
    await sql`analyze`.execute(db);
    const queries = [
      'open and "Target Branch" is "main" order by "Number" desc',
      `~${word(31 * 500)} ${word(97 * 500 + 5)}~`,
      `~${word(4242)}~`,
      '~fix~',
      '~nothing-matches-this~',
      `"Title" contains "${word(31 * 777)}" and submitted by "admin"`,
      '',
    ];
    for (const text of queries) {
      const times: number[] = [];
      for (let i = 0; i < 30; i++) {
        started = performance.now();
        await call('GET', `/pulls?query=${encodeURIComponent(text)}&count=100`);
        times.push(performance.now() - started);
      }
      report(`query ${JSON.stringify(text || '(default order)')}`, times.slice(5));
    }
  } finally {
    await bench.close();
  }
}

await main();
