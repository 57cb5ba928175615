import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { objectStoreOf, type ObjectStore } from '../../src/object-store/index.js';
import { PART_BYTES } from '../../src/object-store/s3.js';
import { signInByFetch } from '../helpers/browser.js';
import { eventually, givenProject, runJobOnCommit } from '../helpers/fixtures.js';
import { startTestS3, type TestS3 } from '../helpers/s3.js';
import { ADMIN, git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';

const SPEC = `version: 25
jobs:
- name: CI
  steps:
  - !CommandStep
    name: build
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - mkdir -p dist/sub && echo built > dist/out.txt && echo deep > dist/sub/deep.txt
  - !PublishArtifactStep
    name: publish
    artifacts: 'dist/**'
- name: Release
  jobDependencies:
  - jobName: CI
    requireSuccessful: true
    artifacts: 'dist/**'
    destinationPath: deps
  steps:
  - !CommandStep
    name: release
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - cat deps/dist/out.txt deps/dist/sub/deep.txt
`;

let s3: TestS3;
let server: TestServer;
/** The bucket as the server sees it. */
let bucket: ObjectStore;
const temps: string[] = [];
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const keys = async (prefix: string) => {
  const found: string[] = [];
  for await (const object of bucket.list(prefix)) found.push(object.key);
  return found.sort();
};

async function tempDir(prefix: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

beforeAll(async () => {
  s3 = await startTestS3();
  const env = await s3.env('gitloom', 'site');
  server = await startTestServer({ ...env, GITLOOM_ARTIFACT_MAX_MB: '20' });
  bucket = objectStoreOf(loadConfig(env, { dataDir: server.dataDir }));
});
afterAll(async () => {
  await server?.close();
  await s3?.close();
  for (const dir of temps) await fs.rm(dir, { recursive: true, force: true });
});

describe('build artifacts in S3-compatible storage', () => {
  let projectId: number;
  let head: string;
  const build = async (id: number) => (await server.call('GET', `/builds/${id}`)).json;
  const finished = (id: number) =>
    eventually(async () => {
      const b = await build(id);
      return ['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(b.status) ? b : null;
    }, 60_000);
  const run = async (jobName: string) => finished((await runJobOnCommit(server, { projectId, commitHash: head, jobName })).json);

  beforeAll(async () => {
    projectId = await givenProject(server, { name: 'stored' });
    const work = await makeWorkTree({ 'README.md': '# s\n', '.onedev-buildspec.yml': SPEC });
    temps.push(work);
    head = (await git(work, ['rev-parse', 'HEAD'])).trim();
    await git(work, ['push', '-q', gitUrl(server, 'stored', ADMIN), 'main']);
  });

  it('a job publishes into the bucket; the API lists, downloads by range and deletes there; a dependent job retrieves them', async () => {
    const ci = await run('CI');
    expect(ci.status).toBe('SUCCESSFUL');
    const prefix = `builds/${projectId}/${ci.number}/artifacts/`;
    expect(await keys(prefix)).toEqual([`${prefix}dist/out.txt`, `${prefix}dist/sub/deep.txt`]);
    // nothing of them in the data dir
    await expect(fs.stat(path.join(server.dataDir, 'builds', String(projectId), String(ci.number), 'artifacts'))).rejects.toThrow();

    const root = (await server.call('GET', `/artifacts/${ci.id}/infos`)).json;
    expect(root).toMatchObject({ '@type': 'DirectoryInfo', path: null });
    expect(root.children.map((c: any) => [c['@type'], c.path])).toEqual([['DirectoryInfo', 'dist']]);
    const dist = (await server.call('GET', `/artifacts/${ci.id}/infos/dist`)).json;
    expect(dist.children.map((c: any) => [c['@type'], c.path, c.length ?? null])).toEqual([
      ['DirectoryInfo', 'dist/sub', null],
      ['FileInfo', 'dist/out.txt', 6],
    ]);
    expect((await server.call('GET', `/artifacts/${ci.id}/infos/dist/out.txt`)).json).toMatchObject({
      '@type': 'FileInfo',
      length: 6,
      mediaType: 'text/plain',
    });
    expect((await server.call('GET', `/artifacts/${ci.id}/infos/nothing`)).status).toBe(204);
    const part = await server.call('GET', `/artifacts/${ci.id}/contents/dist/out.txt`, { headers: { range: 'bytes=1-3' } });
    expect([part.status, part.text, part.headers.get('content-range')]).toEqual([206, 'uil', 'bytes 1-3/6']);
    const past = await server.call('GET', `/artifacts/${ci.id}/contents/dist/out.txt`, { headers: { range: 'bytes=6-' } });
    expect([past.status, past.headers.get('content-range')]).toEqual([416, 'bytes */6']);
    expect((await server.call('GET', `/artifacts/${ci.id}/contents/dist`)).status).toBe(400);
    expect((await server.call('GET', `/artifacts/${ci.id}/contents/missing`)).status).toBe(404);

    const release = await run('Release');
    expect(release.status).toBe('SUCCESSFUL');
    expect((await server.call('GET', `/builds/${release.id}/log`)).text).toMatch(/built\n.*deep/);

    // once the job ended, the log went to the bucket and is served from there
    const logFile = path.join(server.dataDir, 'builds', String(projectId), String(ci.number), 'build.log');
    await eventually(async () => (await bucket.stat(`builds/${projectId}/${ci.number}/build.log`)) !== null);
    await expect(fs.stat(logFile)).rejects.toThrow();
    const log = await server.call('GET', `/builds/${ci.id}/log`);
    expect(log.text).toContain('Published 2 artifact file(s)');
    expect(log.text).toContain('Job finished');
    const followed = await server.call('GET', `/builds/${ci.id}/log?follow=true`);
    expect(followed.text).toBe(log.text);
    // the build's page shows the archived log's tail and links the stored artifacts
    const session = await signInByFetch(server, ADMIN.name, ADMIN.password);
    const page = await (await fetch(`${server.url}/stored/~builds/${ci.number}`, { headers: { cookie: session.cookie } })).text();
    expect(page).toMatch(/<pre class="build-log"[^>]*>[^<]*Job finished/);
    expect(page).toContain(`href="/stored/~builds/${ci.number}/artifacts/dist/sub/deep.txt" download`);

    expect((await server.call('DELETE', `/artifacts/${ci.id}/dist/sub`)).status).toBe(200);
    expect(await keys(prefix)).toEqual([`${prefix}dist/out.txt`]);
    expect((await server.call('DELETE', `/artifacts/${ci.id}/dist/sub`)).status).toBe(404);
    expect((await server.call('DELETE', `/artifacts/${ci.id}`)).status).toBe(200);
    expect(await keys(prefix)).toEqual([]);
    expect((await server.call('GET', `/artifacts/${ci.id}/infos`)).status).toBe(204);
  });

  it('uploads a multipart-sized artifact streamed through the API and serves ranges across its parts; refuses clashes with directories', async () => {
    const ci = await run('CI');
    const data = randomBytes(2 * PART_BYTES + 4321);
    const upload = await fetch(`${server.api}/artifacts/${ci.id}/big/blob.bin`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${ADMIN.name}:${ADMIN.password}`).toString('base64')}`, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(data),
    });
    expect(upload.status).toBe(200);
    expect((await bucket.stat(`builds/${projectId}/${ci.number}/artifacts/big/blob.bin`))?.size).toBe(data.length);
    const whole = await fetch(`${server.api}/artifacts/${ci.id}/contents/big/blob.bin`, {
      headers: { authorization: `Basic ${Buffer.from(`${ADMIN.name}:${ADMIN.password}`).toString('base64')}` },
    });
    expect(sha256(Buffer.from(await whole.arrayBuffer()))).toBe(sha256(data));
    const start = PART_BYTES - 10;
    const across = await fetch(`${server.api}/artifacts/${ci.id}/contents/big/blob.bin`, {
      headers: { authorization: `Basic ${Buffer.from(`${ADMIN.name}:${ADMIN.password}`).toString('base64')}`, range: `bytes=${start}-${start + 19}` },
    });
    expect(across.status).toBe(206);
    expect(Buffer.from(await across.arrayBuffer()).equals(data.subarray(start, start + 20))).toBe(true);

    // over GITLOOM_ARTIFACT_MAX_MB (20): cut off as it streams, after parts went up; no object
    const tooLarge = await fetch(`${server.api}/artifacts/${ci.id}/big/huge.bin`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${ADMIN.name}:${ADMIN.password}`).toString('base64')}`, 'content-type': 'application/octet-stream' },
      // no Content-Length: chunks of 1 MiB, so the limit is found while the body streams
      body: Readable.toWeb(
        Readable.from(
          (function* () {
            for (let i = 0; i < 21; i++) yield randomBytes(1024 * 1024);
          })(),
        ),
      ) as ReadableStream,
      duplex: 'half',
    } as RequestInit).catch((error: unknown) => error);
    // the server answers 413 and closes the connection while the body still arrives
    if (tooLarge instanceof Response) expect(tooLarge.status).toBe(413);
    expect(await bucket.stat(`builds/${projectId}/${ci.number}/artifacts/big/huge.bin`)).toBeNull();

    const raw = (route: string, text: string) => server.call('POST', route, { text, headers: { 'content-type': 'application/octet-stream' } });
    // any name a file system allows is a key: spaces, backslashes, percent signs, non-ASCII
    const odd = 'a\\b c%20ü.txt';
    expect((await raw(`/artifacts/${ci.id}/odd/${encodeURIComponent(odd)}`, 'odd')).status).toBe(200);
    expect((await server.call('GET', `/artifacts/${ci.id}/infos/odd`)).json.children.map((c: any) => c.path)).toEqual([`odd/${odd}`]);
    expect((await server.call('GET', `/artifacts/${ci.id}/contents/odd/${encodeURIComponent(odd)}`)).text).toBe('odd');
    expect((await raw(`/artifacts/${ci.id}/big`, 'x')).status).toBe(409);
    expect((await raw(`/artifacts/${ci.id}/big/blob.bin/inner`, 'x')).status).toBe(409);
  });

  it('deleting a build, then its project, removes their objects from the bucket', async () => {
    const ci = await run('CI');
    const own = `builds/${projectId}/${ci.number}/`;
    // two artifacts, then the log once the job ended
    await eventually(async () => (await keys(own)).length === 3);
    expect((await server.call('DELETE', `/builds/${ci.id}`)).status).toBe(200);
    expect(await keys(own)).toEqual([]);
    expect((await keys(`builds/${projectId}/`)).length).toBeGreaterThan(0);
    expect((await server.call('DELETE', `/projects/${projectId}`)).status).toBe(200);
    expect(await keys(`builds/${projectId}/`)).toEqual([]);
  });
});

describe('Git LFS objects in S3-compatible storage', () => {
  let lfsEnv: Record<string, string>;
  const lfs = (cwd: string, args: string[]) => git(cwd, args, lfsEnv);
  const auth = `Basic ${Buffer.from(`${ADMIN.name}:${ADMIN.password}`).toString('base64')}`;

  beforeAll(async () => {
    const home = await tempDir('gitloom-s3-lfs-home-');
    lfsEnv = { HOME: home, GIT_CONFIG_GLOBAL: path.join(home, '.gitconfig') };
    await git(home, ['lfs', 'install', '--skip-repo'], lfsEnv);
  });

  it('pushes and clones with the git-lfs client, serves ranges, refuses corrupt uploads, and shares with forks until no project references an object', async () => {
    const originId = await givenProject(server, { name: 'media' });
    const big = randomBytes(PART_BYTES + 999);
    const oid = sha256(big);
    const work = await tempDir('gitloom-s3-lfs-wt-');
    await lfs(work, ['init', '-q', '-b', 'main']);
    await lfs(work, ['lfs', 'track', '*.bin']);
    await fs.writeFile(path.join(work, 'big.bin'), big);
    await lfs(work, ['add', '-A']);
    await lfs(work, ['commit', '-q', '-m', 'big']);
    await lfs(work, ['push', '-q', gitUrl(server, 'media', ADMIN), 'main']);
    const key = `lfs/${oid.slice(0, 2)}/${oid.slice(2, 4)}/${oid}`;
    expect((await bucket.stat(key))?.size).toBe(big.length);
    await expect(fs.stat(path.join(server.dataDir, key))).rejects.toThrow();

    const clone = await tempDir('gitloom-s3-lfs-clone-');
    await lfs(clone, ['clone', '-q', gitUrl(server, 'media.git', ADMIN), '.']);
    expect((await fs.readFile(path.join(clone, 'big.bin'))).equals(big)).toBe(true);

    const url = `${server.url}/media/info/lfs/objects/${oid}`;
    const rest = await fetch(url, { headers: { authorization: auth, range: `bytes=${PART_BYTES}-` } });
    expect([rest.status, rest.headers.get('content-range')]).toEqual([206, `bytes ${PART_BYTES}-${big.length - 1}/${big.length}`]);
    expect(Buffer.from(await rest.arrayBuffer()).equals(big.subarray(PART_BYTES))).toBe(true);
    expect((await fetch(url, { headers: { authorization: auth, range: `bytes=${big.length}-` } })).status).toBe(416);

    const other = randomBytes(PART_BYTES + 5);
    const otherOid = sha256(other);
    const corrupt = Buffer.from(other);
    corrupt[PART_BYTES + 1] ^= 1;
    const put = await fetch(`${server.url}/media/info/lfs/objects/${otherOid}/${other.length}`, {
      method: 'PUT',
      headers: { authorization: auth, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(corrupt),
    });
    expect(put.status).toBe(422);
    expect(await bucket.stat(`lfs/${otherOid.slice(0, 2)}/${otherOid.slice(2, 4)}/${otherOid}`)).toBeNull();

    const forkId = (await server.call('POST', '/projects', { body: { name: 'media-fork', forkedFromId: originId } })).json;
    expect(typeof forkId).toBe('number');
    expect((await server.call('DELETE', `/projects/${originId}`)).status).toBe(200);
    expect(await bucket.stat(key)).not.toBeNull();
    const fromFork = await tempDir('gitloom-s3-lfs-fork-');
    await lfs(fromFork, ['clone', '-q', gitUrl(server, 'media-fork.git', ADMIN), '.']);
    expect((await fs.readFile(path.join(fromFork, 'big.bin'))).equals(big)).toBe(true);
    expect((await server.call('DELETE', `/projects/${forkId}`)).status).toBe(200);
    expect(await bucket.stat(key)).toBeNull();
  });
});
