/**
 * Foundation figures : start-to-ready, idle RSS, GET project and
 * pull-request query throughput and latency at 50 connections, and clone time of a ≥ 50 MB
 * repository through Gitloom vs `git clone --no-local` of the same bare repository.
 * Run: `npx tsx bench/foundation.ts` (builds dist/ first).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { build, git, load, report, rssMiB, startBenchServer, time } from './lib.js';

await build();
const server = await startBenchServer(6711);
try {
  report('start to ready', `${server.startMs.toFixed(0)} ms`, '< 1500 ms');
  await new Promise((r) => setTimeout(r, 2000));
  report('idle RSS after start', `${(await rssMiB(server.process.pid!)).toFixed(1)} MiB`, '< 120 MiB');

  const auth = { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' };
  const projectId = (await (await fetch(`${server.url}/~api/projects`, { method: 'POST', headers: auth, body: '{"name":"bench"}' })).json()) as number;

  // 2,000 pull requests straight into the database (the query reads rows, not git)
  const db = new Database(path.join(server.dataDir, 'gitloom.db'));
  const insert = db.prepare(`insert into pull_requests (number_scope_id, number, status, title, description, submitter_id,
    target_project_id, target_branch, source_project_id, source_branch, base_commit_hash, submit_date, merge_strategy, uuid,
    comment_count, last_activity_date, last_activity_description) values (?, ?, ?, ?, null, 1, ?, ?, ?, ?, ?, ?, 'CREATE_MERGE_COMMIT', ?, 0, ?, 'opened')`);
  db.transaction(() => {
    for (let n = 1; n <= 2000; n++) {
      insert.run(
        projectId,
        n,
        n % 3 === 0 ? 'MERGED' : 'OPEN',
        `Change number ${n}`,
        projectId,
        n % 2 ? 'main' : 'dev',
        projectId,
        `feature-${n}`,
        '0'.repeat(40),
        Date.now() - n * 1000,
        `uuid-${n}`,
        Date.now() - n * 1000,
      );
    }
  })();
  db.close();

  const get = await load(`${server.url}/~api/projects/${projectId}`, auth);
  report('GET /~api/projects/{id}: requests/s', get.requestsPerSecond.toFixed(0), '');
  report('GET /~api/projects/{id}: p50 / p99', `${get.p50} / ${get.p99} ms`, 'p99 < 5 ms');
  const query = encodeURIComponent('open and "Target Branch" is "main" order by "Number" desc');
  const pulls = await load(`${server.url}/~api/pulls?query=${query}&count=25`, auth);
  report('pull request query: requests/s', pulls.requestsPerSecond.toFixed(0), '');
  report('pull request query: p50 / p99', `${pulls.p50} / ${pulls.p99} ms`, '');

  // clone of a ≥ 50 MB repository
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-bench-wt-'));
  try {
    await git(work, ['init', '-q', '-b', 'main', 'src']);
    const src = path.join(work, 'src');
    for (let i = 0; i < 5; i++) {
      await fs.writeFile(path.join(src, `blob-${i}.bin`), randomBytes(11 * 1024 * 1024));
      await git(src, ['add', '-A']);
      await git(src, ['commit', '-q', '-m', `data ${i}`]);
    }
    const remote = `http://admin:${server.token}@127.0.0.1:6711/bench.git`;
    await git(src, ['push', '-q', remote, 'main']);
    const bare = path.join(server.dataDir, 'repos', `${projectId}.git`);
    const viaGitloom = await time(() => git(work, ['clone', '-q', remote, 'via-gitloom']));
    const direct = await time(() => git(work, ['clone', '-q', '--no-local', bare, 'direct']));
    report('clone 55 MB: Gitloom / git --no-local', `${(viaGitloom / 1000).toFixed(2)} s / ${(direct / 1000).toFixed(2)} s`, '');
    report('clone ratio', (viaGitloom / direct).toFixed(2), '≤ 1.3');
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
} finally {
  await server.stop();
}
