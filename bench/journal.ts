/**
 * Ref-change journal latency (run on demand: `npx tsx bench/journal.ts`; PostgreSQL with
 * `GITLOOM_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres`): pushes to the source
 * branch of an open pull request over HTTP, and measures from `git push` returning to the new
 * head being visible as the request's latest update (`GET /~api/pulls/{id}/updates`, polled every
 * 2 ms) — the post-receive hook's journal row, the worker's claim, the update. Prints p50 and p99
 * over `GITLOOM_BENCH_PUSHES` pushes (default 60). Not part of the tests.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { git, startInProcessServer } from './lib.js';

const PASSWORD = 'bench-secret';
const auth = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
const PUSHES = Number(process.env.GITLOOM_BENCH_PUSHES ?? 60);

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const bench = await startInProcessServer('journal', PASSWORD);
const work = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-bench-journal-'));
try {
  const base = bench.server.url;
  const api = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${base}/~api${route}`, {
      method,
      headers: { authorization: auth, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status !== 200) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
    const text = await res.text();
    return text ? JSON.parse(text) : undefined;
  };
  const projectId = (await api('POST', '/projects', { name: 'journal' })) as number;
  const remote = new URL(`${base}/journal`);
  remote.username = 'admin';
  remote.password = PASSWORD;
  await git(work, ['init', '-q', '-b', 'main']);
  await fs.writeFile(path.join(work, 'a.txt'), 'a\n');
  await git(work, ['add', '.']);
  await git(work, ['commit', '-qm', 'initial']);
  await git(work, ['push', '-q', remote.href, 'main']);
  await git(work, ['checkout', '-q', '-b', 'topic']);
  await fs.writeFile(path.join(work, 'b.txt'), '0\n');
  await git(work, ['add', '.']);
  await git(work, ['commit', '-qm', 'topic file']);
  await git(work, ['push', '-q', remote.href, 'topic']);
  const requestId = (await api('POST', '/pulls', {
    targetProjectId: projectId,
    sourceProjectId: projectId,
    targetBranch: 'main',
    sourceBranch: 'topic',
    title: 'Journal latency',
  })) as number;

  const latencies: number[] = [];
  for (let i = 1; i <= PUSHES; i++) {
    await fs.writeFile(path.join(work, 'b.txt'), `${i}\n`);
    await git(work, ['commit', '-qam', `topic ${i}`]);
    const head = (await git(work, ['rev-parse', 'HEAD'])).trim();
    await git(work, ['push', '-q', remote.href, 'topic']);
    const pushed = performance.now();
    for (;;) {
      const updates = (await api('GET', `/pulls/${requestId}/updates`)) as { headCommitHash: string }[];
      if (updates.at(-1)?.headCommitHash === head) break;
      await new Promise((r) => setTimeout(r, 2));
    }
    latencies.push(performance.now() - pushed);
  }
  const engine = process.env.GITLOOM_BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite';
  console.log(
    `journal: push returned → pull request update visible (${engine}, n=${latencies.length})` +
      `   p50 ${percentile(latencies, 50).toFixed(1)} ms   p99 ${percentile(latencies, 99).toFixed(1)} ms`,
  );
} finally {
  await bench.close();
  await fs.rm(work, { recursive: true, force: true });
}
