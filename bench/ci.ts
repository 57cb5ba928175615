/**
 * CI figures, on demand: `npx tsx bench/ci.ts`.
 * - push-to-RUNNING latency of a branch-update-triggered job (target < 500 ms);
 * - artifact upload and download throughput of a 1 GB file vs `cp` on the same disk (ratio, target ≥ 0.7);
 * - server RSS during the transfer (target < 200 MB). The server runs in this process, so RSS is
 *   this process's resident set.
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { git, gitUrl, makeWorkTree, startTestServer } from '../test/helpers/server.js';

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

async function main(): Promise<void> {
  const server = await startTestServer();
  const auth = `Basic ${Buffer.from('admin:admin-secret').toString('base64')}`;
  let peakRss = 0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
  try {
    const projectId = (await server.call('POST', '/projects', { body: { name: 'bench' } })).json as number;
    const work = await makeWorkTree({ '.onedev-buildspec.yml': SPEC });
    const started = Date.now();
    await git(work, ['push', '-q', gitUrl(server, 'bench', { name: 'admin', password: 'admin-secret' }), 'main']);
    let runningAt = 0;
    let buildId = 0;
    while (Date.now() - started < 20_000) {
      const list = (await server.call('GET', '/builds?query=running&offset=0&count=1')).json as { id: number; runningDate: string }[];
      if (list.length > 0) {
        runningAt = Date.parse(list[0].runningDate);
        buildId = list[0].id;
        break;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    console.log(`push-to-RUNNING latency: ${runningAt ? runningAt - started : 'n/a'} ms (push included; target < 500 ms)`);
    void projectId;

    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-bench-'));
    const source = path.join(dir, 'big.bin');
    execFileSync('dd', ['if=/dev/urandom', `of=${source}`, 'bs=1M', `count=${Math.round(SIZE / 1024 ** 2)}`], { stdio: 'ignore' });
    let t = Date.now();
    execFileSync('cp', [source, path.join(dir, 'copy.bin')]);
    const cpMs = Date.now() - t;
    await fs.rm(path.join(dir, 'copy.bin'));
    const url = new URL(server.url);
    peakRss = process.memoryUsage().rss;
    t = Date.now();
    await new Promise<void>((resolve, reject) => {
      const req = http.request({ host: url.hostname, port: url.port, method: 'POST', path: `/~api/artifacts/${buildId}/big.bin`,
        headers: { authorization: auth, 'content-type': 'application/octet-stream' } }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`upload ${res.statusCode}`))));
      });
      req.on('error', reject);
      createReadStream(source).pipe(req);
    });
    const upMs = Date.now() - t;
    t = Date.now();
    await new Promise<void>((resolve, reject) => {
      http.get({ host: url.hostname, port: url.port, path: `/~api/artifacts/${buildId}/contents/big.bin`, headers: { authorization: auth } }, (res) => {
        pipeline(res, createWriteStream(path.join(dir, 'down.bin'))).then(resolve, reject);
      }).on('error', reject);
    });
    const downMs = Date.now() - t;
    const mb = SIZE / 1024 ** 2;
    console.log(`cp: ${(mb / (cpMs / 1000)).toFixed(0)} MB/s`);
    console.log(`upload: ${(mb / (upMs / 1000)).toFixed(0)} MB/s (ratio vs cp ${(cpMs / upMs).toFixed(2)}; target >= 0.7)`);
    console.log(`download: ${(mb / (downMs / 1000)).toFixed(0)} MB/s (ratio vs cp ${(cpMs / downMs).toFixed(2)}; target >= 0.7)`);
    console.log(`peak RSS during transfer: ${(peakRss / 1024 ** 2).toFixed(0)} MB (target < 200 MB)`);
    await fs.rm(dir, { recursive: true, force: true });
    await fs.rm(work, { recursive: true, force: true });
  } finally {
    clearInterval(sampler);
    await server.close();
  }
}

await main();
