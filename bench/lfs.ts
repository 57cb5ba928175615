/**
 * Git LFS transfers (docs/compatibility.md#git-lfs): one object of BENCH_LFS_BYTES (default
 * 1 GiB) uploaded and downloaded with curl through the batch API's basic-transfer hrefs, against
 * `cp` of the same file on the same disk (ratio cp time / transfer time, target ≥ 0.8), with the
 * server's peak RSS during the transfers (constant memory: target < 200 MiB whatever the size),
 * and the same transfers through a bare node:http server streaming to and from a file (the
 * ceiling of HTTP over loopback on this machine, as in bench/ci.ts).
 * Run alone with `npx tsx bench/lfs.ts`; `npm run bench` (bench/run.ts) adds its rows.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { bareTransfer, build, cpTime, curlTransfer, report, samplePeakRss, startBenchServer, type BenchServer } from './lib.js';

const run = promisify(execFile);

/** What {@link lfsTransfers} measured. */
export interface LfsFigures {
  bytes: number;
  cpMs: number;
  uploadMs: number;
  downloadMs: number;
  peakRssMiB: number;
  /** The same transfers through a bare node:http server streaming to and from a file (the ceiling of HTTP on this machine). */
  ceilingUploadMs: number;
  ceilingDownloadMs: number;
}

/** One action of a batch answer. */
interface Action {
  href: string;
  header?: Record<string, string>;
}

async function batchAction(server: BenchServer, operation: 'upload' | 'download', oid: string, size: number): Promise<Action> {
  const res = await fetch(`${server.url}/lfs-bench.git/info/lfs/objects/batch`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.token}`, accept: 'application/vnd.git-lfs+json', 'content-type': 'application/vnd.git-lfs+json' },
    body: JSON.stringify({ operation, transfers: ['basic'], objects: [{ oid, size }] }),
  });
  const body = (await res.json()) as { objects: { actions?: Record<string, Action> }[] };
  const action = body.objects[0].actions?.[operation];
  if (!action) throw new Error(`no ${operation} action: ${JSON.stringify(body)}`);
  return action;
}

/**
 * Uploads and downloads one object of `bytes` random bytes on `server` (a project `lfs-bench`
 * is created), timing `cp` of the same file first, and samples the server's RSS every 20 ms.
 */
export async function lfsTransfers(server: BenchServer, bytes: number): Promise<LfsFigures> {
  await fetch(`${server.url}/~api/projects`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
    body: '{"name":"lfs-bench"}',
  });
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-bench-lfs-'));
  try {
    const source = path.join(dir, 'object.bin');
    await run('dd', ['if=/dev/urandom', `of=${source}`, 'bs=1M', `count=${Math.max(1, Math.round(bytes / 1024 ** 2))}`]);
    const size = (await fs.stat(source)).size;
    const oid = (await run('sha256sum', [source])).stdout.split(' ')[0];
    const cpMs = await cpTime(source, dir);
    const up = await batchAction(server, 'upload', oid, size);
    const stopSampling = samplePeakRss(server.process.pid!);
    const gitloom = await curlTransfer(dir, source, { url: up.href, headers: up.header, method: 'PUT' }, async () => {
      const down = await batchAction(server, 'download', oid, size);
      return { url: down.href, headers: down.header };
    }).finally(stopSampling);
    const peakRssMiB = stopSampling();
    const ceiling = await bareTransfer(dir, source, BARE_PORT);
    return { bytes: size, cpMs, uploadMs: gitloom.up, downloadMs: gitloom.down, peakRssMiB, ceilingUploadMs: ceiling.up, ceilingDownloadMs: ceiling.down };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

const BARE_PORT = 6752;

/** The size of the object: BENCH_LFS_BYTES, default 1 GiB. */
export const LFS_BENCH_BYTES = Number(process.env.BENCH_LFS_BYTES ?? 1024 ** 3);

/** MB/s of `bytes` moved in `ms`. */
export const rate = (bytes: number, ms: number) => `${(bytes / 1024 ** 2 / (ms / 1000)).toFixed(0)} MB/s`;

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await build();
  const server = await startBenchServer(6751);
  try {
    const f = await lfsTransfers(server, LFS_BENCH_BYTES);
    report('object size', `${(f.bytes / 1024 ** 2).toFixed(0)} MiB`, '');
    report('cp', rate(f.bytes, f.cpMs), '');
    report('LFS upload (batch href, PUT)', rate(f.bytes, f.uploadMs), '');
    report('upload ratio vs cp', (f.cpMs / f.uploadMs).toFixed(2), '≥ 0.8');
    report('LFS download (batch href, GET)', rate(f.bytes, f.downloadMs), '');
    report('download ratio vs cp', (f.cpMs / f.downloadMs).toFixed(2), '≥ 0.8');
    report('bare node:http upload / download (ceiling)', `${rate(f.bytes, f.ceilingUploadMs)} / ${rate(f.bytes, f.ceilingDownloadMs)}`, '');
    report('Gitloom vs ceiling: upload / download', `${(f.ceilingUploadMs / f.uploadMs).toFixed(2)} / ${(f.ceilingDownloadMs / f.downloadMs).toFixed(2)}`, '');
    report('server peak RSS during transfers', `${f.peakRssMiB.toFixed(0)} MiB`, '< 200 MiB');
  } finally {
    await server.stop();
  }
}
