/**
 * Git LFS transfers through S3-compatible object storage (docs/architecture.md#object-storage):
 * one object of BENCH_LFS_BYTES (default 1 GiB) uploaded and downloaded with curl through the
 * batch API's hrefs while the server keeps its objects in an s3rver bucket (started here, on
 * loopback, in a temp dir) — the server's peak RSS meanwhile shows that the multipart upload
 * and the download stream with flat memory: the same at any size (run it with
 * BENCH_LFS_BYTES=268435456 to compare), the data dir's figure plus the SDK and three 8 MiB
 * parts (target < 300 MiB) — beside the transfers of the same server on the data dir
 * (bench/lfs.ts) and `cp`.
 * Run alone with `npx tsx bench/object-store.ts`.
 */
import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
// s3rver ships no types
// eslint-disable-next-line @typescript-eslint/ban-ts-comment
// @ts-ignore
import S3rver from 's3rver';
import { build, report, startBenchServer } from './lib.js';
import { LFS_BENCH_BYTES, lfsTransfers, rate } from './lfs.js';

await build();
const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-bench-s3-'));
await fs.mkdir(path.join(directory, 'bench'));
const s3 = new S3rver({ address: '127.0.0.1', port: 0, directory, silent: true });
const { port } = (await s3.run()) as AddressInfo;
const env = {
  GITLOOM_OBJECT_STORE_URL: `s3://bench/objects?endpoint=http://127.0.0.1:${port}&forcePathStyle=true`,
  GITLOOM_OBJECT_STORE_ACCESS_KEY_ID: 'S3RVER',
  GITLOOM_OBJECT_STORE_SECRET_ACCESS_KEY: 'S3RVER',
};
const local = await startBenchServer(6761);
const dataDir = await lfsTransfers(local, LFS_BENCH_BYTES).finally(() => local.stop());
const server = await startBenchServer(6763, env);
try {
  const f = await lfsTransfers(server, LFS_BENCH_BYTES);
  report('object size', `${(f.bytes / 1024 ** 2).toFixed(0)} MiB`, '');
  report('cp', rate(f.bytes, f.cpMs), '');
  report('LFS upload: data dir / S3 (s3rver)', `${rate(f.bytes, dataDir.uploadMs)} / ${rate(f.bytes, f.uploadMs)}`, '');
  report('LFS download: data dir / S3 (s3rver)', `${rate(f.bytes, dataDir.downloadMs)} / ${rate(f.bytes, f.downloadMs)}`, '');
  report('S3 vs data dir: upload / download', `${(dataDir.uploadMs / f.uploadMs).toFixed(2)} / ${(dataDir.downloadMs / f.downloadMs).toFixed(2)}`, '');
  report('server peak RSS: data dir', `${dataDir.peakRssMiB.toFixed(0)} MiB`, '< 200 MiB');
  report('server peak RSS: S3 (multipart upload, streamed download)', `${f.peakRssMiB.toFixed(0)} MiB`, '< 300 MiB, flat');
} finally {
  await server.stop();
  await s3.close();
  await fs.rm(directory, { recursive: true, force: true });
}
