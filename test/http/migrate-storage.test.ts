import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { LocalObjectStore, S3ObjectStore, type ObjectStore } from '../../src/object-store/index.js';
import { commandSpec, runJobOnCommit, eventually } from '../helpers/fixtures.js';
import { startTestS3, type TestS3 } from '../helpers/s3.js';
import { ADMIN, git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const auth = `Basic ${Buffer.from(`${ADMIN.name}:${ADMIN.password}`).toString('base64')}`;

/** Every stored object of `store` (artifacts and LFS objects) with the SHA-256 of its bytes. */
async function contents(store: ObjectStore): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const prefix of ['lfs/', 'builds/']) {
    for await (const object of store.list(prefix)) {
      if (object.key.endsWith('/build.log')) continue;
      const hash = createHash('sha256');
      for await (const chunk of (await store.get(object.key))!.stream) hash.update(chunk as Buffer);
      found.set(object.key, hash.digest('hex'));
    }
  }
  return found;
}

/**
 * Runs `gitloom admin migrate-storage --to <to>`; with `killAfter`, kills it (SIGKILL) once it
 * reported that many objects. Resolves with its output lines and how it ended.
 */
function migrate(env: Record<string, string>, to: string, killAfter?: number): Promise<{ lines: string[]; code: number | null; signal: string | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'admin', 'migrate-storage', '--to', to], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    let pending = '';
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (data: string) => {
      pending += data;
      const parts = pending.split('\n');
      pending = parts.pop() ?? '';
      lines.push(...parts);
      if (killAfter !== undefined && lines.filter((l) => /^(Moved|Verified) /.test(l)).length >= killAfter) child.kill('SIGKILL');
    });
    child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code !== 0 && signal === null) reject(new Error(`migrate-storage exited ${code}: ${stderr}`));
      else resolve({ lines: pending ? [...lines, pending] : lines, code, signal });
    });
  });
}

/** The keys each run reported as moved or verified. */
const reported = (lines: string[]) => lines.flatMap((l) => /^(?:Moved|Verified) (\S+)/.exec(l)?.[1] ?? []);

describe('gitloom admin migrate-storage', () => {
  let s3: TestS3;
  let server: TestServer;
  /** The server's environment: the variables of the bucket are added and removed between restarts. */
  const env: Record<string, string> = {};
  let s3env: Record<string, string>;
  let local: ObjectStore;
  let bucket: S3ObjectStore;
  let buildId: number;
  let projectId: number;
  let head: string;
  const lfsData = [randomBytes(9 * 1024 * 1024), randomBytes(1000), randomBytes(20_000)];

  beforeAll(async () => {
    s3 = await startTestS3();
    s3env = await s3.env('migrated');
    server = await startTestServer(env);
    local = new LocalObjectStore(server.dataDir);
    bucket = new S3ObjectStore(loadConfig(s3env).objectStore!);
    projectId = (await server.call('POST', '/projects', { body: { name: 'moving' } })).json;
    const work = await makeWorkTree({ '.onedev-buildspec.yml': commandSpec({ name: 'Job', commands: ['echo ok'] }) });
    head = (await git(work, ['rev-parse', 'HEAD'])).trim();
    await git(work, ['push', '-q', gitUrl(server, 'moving', ADMIN), 'main']);
    await fs.rm(work, { recursive: true, force: true });
    buildId = (await runJobOnCommit(server, { projectId, commitHash: head, jobName: 'Job' })).json;
    await eventually(async () => ['SUCCESSFUL', 'FAILED'].includes((await server.call('GET', `/builds/${buildId}`)).json.status));
    for (let i = 0; i < 30; i++) {
      const res = await server.call('POST', `/artifacts/${buildId}/dir${i % 3}/file-${i}.txt`, {
        text: `artifact ${i}\n`,
        headers: { 'content-type': 'application/octet-stream' },
      });
      expect(res.status).toBe(200);
    }
    for (const data of lfsData) {
      const put = await fetch(`${server.url}/moving/info/lfs/objects/${sha256(data)}/${data.length}`, {
        method: 'PUT',
        headers: { authorization: auth, 'content-type': 'application/octet-stream' },
        body: new Uint8Array(data),
      });
      expect(put.status).toBe(200);
    }
  });
  afterAll(async () => {
    bucket?.destroy();
    await server?.close();
    await s3?.close();
  });

  /** The API serves an artifact and an LFS object range from wherever the server keeps them. */
  const served = async () => {
    expect((await server.call('GET', `/artifacts/${buildId}/contents/dir1/file-7.txt`)).text).toBe('artifact 7\n');
    expect((await server.call('GET', `/artifacts/${buildId}/infos/dir2`)).json.children).toHaveLength(10);
    const [big] = lfsData;
    const range = await fetch(`${server.url}/moving/info/lfs/objects/${sha256(big)}`, { headers: { authorization: auth, range: 'bytes=8388600-8388615' } });
    expect(range.status).toBe(206);
    expect(Buffer.from(await range.arrayBuffer()).equals(big.subarray(8388600, 8388616))).toBe(true);
  };

  /** Moves everything with an interruption midway, then checks that each object moved once, whole. */
  const moveInterrupted = async (to: 's3' | 'local', from: ObjectStore, into: ObjectStore) => {
    const before = await contents(from);
    expect(before.size).toBe(33);
    const cli = { GITLOOM_DATA_DIR: server.dataDir, ...s3env };
    const first = await migrate(cli, to, 8);
    expect(first.signal).toBe('SIGKILL');
    // after the kill every object is whole in the source or the destination
    const [left, arrived] = [await contents(from), await contents(into)];
    for (const [key, digest] of before) expect(left.get(key) ?? arrived.get(key), key).toBe(digest);
    expect(left.size).toBeGreaterThan(0);
    const second = await migrate(cli, to);
    expect(second.code).toBe(0);
    expect(second.lines.at(-1)).toMatch(new RegExp(`^Storage migrated to ${to}: \\d+ object\\(s\\) moved`));
    // each object was reported once over both runs: moved, or verified after the interrupted run copied it
    const keys = [...reported(first.lines), ...reported(second.lines)].filter((key) => !key.endsWith('/build.log')).sort();
    expect(keys).toEqual([...before.keys()].sort());
    expect(await contents(into)).toEqual(before);
    expect((await contents(from)).size).toBe(0);
    // a third run finds nothing to do
    expect((await migrate(cli, to)).lines.at(-1)).toBe(`Storage migrated to ${to}: 0 object(s) moved (0 bytes), 0 found already copied`);
  };

  it('moves artifacts and LFS objects into the bucket and back, resuming after a kill, and the server serves them from each', async () => {
    await served();
    await moveInterrupted('s3', local, bucket);
    await expect(fs.stat(path.join(server.dataDir, 'lfs', sha256(lfsData[0]).slice(0, 2)))).rejects.toThrow();
    Object.assign(env, s3env);
    await server.restart();
    await served();
    // a build run on the bucket: its log is archived there once its job ended
    const later = (await runJobOnCommit(server, { projectId, commitHash: head, jobName: 'Job' })).json;
    const { number } = (await server.call('GET', `/builds/${later}`)).json;
    const logKey = `builds/${projectId}/${number}/build.log`;
    await eventually(async () => (await bucket.stat(logKey)) !== null);

    await moveInterrupted('local', bucket, local);
    for (const name of Object.keys(s3env)) delete env[name];
    await server.restart();
    await served();
    // the archived log came back with the rest
    expect(await bucket.stat(logKey)).toBeNull();
    expect((await server.call('GET', `/builds/${later}/log`)).text).toContain('Job finished');
    // six runs of the CLI, each starting a process
  }, 240_000);
});
