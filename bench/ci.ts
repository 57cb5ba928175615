/**
 * CI figures, on demand: `npx tsx bench/ci.ts` (BENCH_BYTES sets the artifact size, default 1 GiB).
 * The server runs as its own process (`node dist/cli.js serve`, as `npm start` runs it) and the
 * transfers use curl, so the figures are the server's:
 * - push-to-RUNNING latency of a branch-update-triggered job (target < 500 ms);
 * - artifact upload and download throughput vs `cp` on the same disk (ratio, target ≥ 0.7);
 * - server RSS during the transfers (target < 200 MB).
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build, git, report, rssMiB, startBenchServer, time } from './lib.js';

const run = promisify(execFile);
const SIZE = Number(process.env.BENCH_BYTES ?? 1024 ** 3);
const SPEC = `version: 25
jobs:
- name: CI
  steps:
  - !CommandStep
    name: s
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - sleep 1
  triggers:
  - !BranchUpdateTrigger {}
`;

await build();
const server = await startBenchServer(6721);
const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-bench-ci-'));
try {
  const headers = { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' };
  await fetch(`${server.url}/~api/projects`, { method: 'POST', headers, body: '{"name":"bench"}' });
  const work = path.join(dir, 'work');
  await fs.mkdir(work);
  await git(work, ['init', '-q', '-b', 'main']);
  await fs.writeFile(path.join(work, '.onedev-buildspec.yml'), SPEC);
  await git(work, ['add', '-A']);
  await git(work, ['commit', '-q', '-m', 'build spec']);
  const pushStart = Date.now();
  await git(work, ['push', '-q', `http://admin:${server.token}@127.0.0.1:6721/bench`, 'main']);
  const pushEnd = Date.now();
  let buildId = 0;
  let runningAt = 0;
  while (Date.now() - pushStart < 20_000 && !runningAt) {
    const builds = await (await fetch(`${server.url}/~api/builds?query=running&count=1`, { headers })).json() as { id: number; runningDate: string }[];
    if (builds.length > 0) ({ id: buildId } = builds[0]), (runningAt = Date.parse(builds[0].runningDate));
    else await new Promise((r) => setTimeout(r, 5));
  }
  report('push to RUNNING (push included)', `${runningAt - pushStart} ms`, '< 500 ms');
  report('push finished to RUNNING', `${runningAt - pushEnd} ms`, '');

  const source = path.join(dir, 'big.bin');
  execFileSync('dd', ['if=/dev/urandom', `of=${source}`, 'bs=1M', `count=${Math.round(SIZE / 1024 ** 2)}`], { stdio: 'ignore' });
  const cpMs = await time(() => run('cp', [source, path.join(dir, 'copy.bin')]));
  await fs.rm(path.join(dir, 'copy.bin'));

  let peak = 0;
  const sampler = setInterval(() => {
    rssMiB(server.process.pid!).then((v) => (peak = Math.max(peak, v)), () => undefined);
  }, 20);
  const auth = `Authorization: Bearer ${server.token}`;
  const upMs = await time(() => run('curl', ['-sSf', '-X', 'POST', '-H', auth, '-H', 'Content-Type: application/octet-stream',
    '-T', source, `${server.url}/~api/artifacts/${buildId}/big.bin`]));
  const downMs = await time(() => run('curl', ['-sSf', '-H', auth, '-o', path.join(dir, 'down.bin'),
    `${server.url}/~api/artifacts/${buildId}/contents/big.bin`]));
  clearInterval(sampler);
  const mb = SIZE / 1024 ** 2;
  report('cp', `${(mb / (cpMs / 1000)).toFixed(0)} MB/s`, '');
  report('artifact upload', `${(mb / (upMs / 1000)).toFixed(0)} MB/s`, '');
  report('upload ratio vs cp', (cpMs / upMs).toFixed(2), '≥ 0.7');
  report('artifact download', `${(mb / (downMs / 1000)).toFixed(0)} MB/s`, '');
  report('download ratio vs cp', (cpMs / downMs).toFixed(2), '≥ 0.7');
  report('server peak RSS during transfers', `${peak.toFixed(0)} MiB`, '< 200 MiB');
} finally {
  await server.stop();
  await fs.rm(dir, { recursive: true, force: true });
}
