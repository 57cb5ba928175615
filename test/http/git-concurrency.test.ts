import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, givenRepo, removeWorkTrees } from '../helpers/fixtures.js';
import { ADMIN, basic, GIT_TEST_ENV, gitUrl, startTestServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);

/** `GITLOOM_GIT_CONCURRENCY`: upload-packs beyond the limit wait in a bounded queue (docs/architecture.md#git-concurrency). */
describe('upload-pack slots', () => {
  let server: TestServer;
  const auth = basic(ADMIN.name, ADMIN.password);
  /** The head commit of `shared`: a want git accepts and then waits for the rest of the request. */
  let head = '';

  beforeAll(async () => {
    server = await startTestServer({ GITLOOM_GIT_CONCURRENCY: '1' });
    await givenRepo(server, 'shared');
    const { stdout } = await run('git', ['ls-remote', gitUrl(server, 'shared', ADMIN), 'HEAD'], { env: { ...process.env, ...GIT_TEST_ENV } });
    head = stdout.slice(0, 40);
  });
  afterAll(async () => {
    await server?.close();
    await removeWorkTrees();
  });

  /** The `gitloom_git_upload_packs` gauge by state. */
  async function load(): Promise<{ running: number; waiting: number }> {
    const text = await (await fetch(`${server.url}/~metrics`, { headers: { authorization: auth } })).text();
    const value = (state: string) => Number(new RegExp(`^gitloom_git_upload_packs\\{state="${state}"\\} (\\d+)$`, 'm').exec(text)?.[1]);
    return { running: value('running'), waiting: value('waiting') };
  }

  /** A fetch whose request body has begun and never ends: once it has a slot, its upload-pack waits for the rest. */
  function heldFetch(): { request: http.ClientRequest; response: Promise<http.IncomingMessage> } {
    const url = new URL(`${server.url}/shared.git/git-upload-pack`);
    const request = http.request(url, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/x-git-upload-pack-request', 'transfer-encoding': 'chunked' },
    });
    const response = new Promise<http.IncomingMessage>((resolve, reject) => {
      request.on('response', resolve);
      request.on('error', reject);
    });
    response.catch(() => {});
    // a whole first pkt-line (a want): the request has begun (it takes or waits for a slot), and
    // never ends
    request.write(`0032want ${head}\n`);
    return { request, response };
  }

  it('a connection that sends nothing holds no slot', async () => {
    const idle = http.request(new URL(`${server.url}/shared.git/git-upload-pack`), {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/x-git-upload-pack-request', 'transfer-encoding': 'chunked' },
    });
    idle.on('error', () => {});
    idle.flushHeaders();
    try {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-slots-'));
      const clone = spawn('git', ['clone', '-q', gitUrl(server, 'shared', ADMIN), dir], { env: { ...process.env, ...GIT_TEST_ENV } });
      expect(await new Promise<number>((resolve) => clone.on('close', (code) => resolve(code ?? -1)))).toBe(0);
      await fs.rm(dir, { recursive: true, force: true });
    } finally {
      idle.destroy();
    }
  });

  it('a clone waits for the slot a fetch holds, and runs once it is given back', async () => {
    const holder = heldFetch();
    expect(await eventually(async () => (await load()).running === 1)).toBe(true);
    // the upload-pack holding the slot runs at a lower CPU priority
    const { stdout } = await run('ps', ['-eo', 'ni=,args=']);
    const ours = stdout.split('\n').filter((line) => line.includes('upload-pack') && line.includes(server.dataDir));
    expect(ours).toHaveLength(1);
    expect(ours[0].trim().split(/\s+/)[0]).toBe('10');

    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-slots-'));
    const clone = spawn('git', ['clone', '-q', gitUrl(server, 'shared', ADMIN), dir], { env: { ...process.env, ...GIT_TEST_ENV } });
    const cloned = new Promise<number>((resolve) => clone.on('close', (code) => resolve(code ?? -1)));
    expect(await eventually(async () => (await load()).waiting === 1)).toBe(true);

    holder.request.destroy();
    expect(await cloned).toBe(0);
    expect(await fs.readFile(path.join(dir, 'README.md'), 'utf8')).toBe('# shared\n');
    await fs.rm(dir, { recursive: true, force: true });
    expect(await eventually(async () => JSON.stringify(await load()) === JSON.stringify({ running: 0, waiting: 0 }))).toBe(true);
  });

  it('a request whose first pkt-line is incomplete holds no slot', async () => {
    const partial = http.request(new URL(`${server.url}/shared.git/git-upload-pack`), {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/x-git-upload-pack-request', 'transfer-encoding': 'chunked' },
    });
    partial.on('error', () => {});
    partial.write('0014command=');
    try {
      const { stdout } = await run('git', ['ls-remote', gitUrl(server, 'shared', ADMIN), 'HEAD'], { env: { ...process.env, ...GIT_TEST_ENV } });
      expect(stdout).toMatch(/\tHEAD$/m);
      expect(await load()).toEqual({ running: 0, waiting: 0 });
    } finally {
      partial.destroy();
    }
  });

  it('a protocol v2 ref listing takes no slot: ls-remote answers while the only slot is held', async () => {
    const holder = heldFetch();
    expect(await eventually(async () => (await load()).running === 1)).toBe(true);
    const { stdout } = await run('git', ['-c', 'protocol.version=2', 'ls-remote', gitUrl(server, 'shared', ADMIN), 'HEAD'], {
      env: { ...process.env, ...GIT_TEST_ENV },
    });
    expect(stdout).toMatch(/^[0-9a-f]{40}\tHEAD$/m);
    expect(await load()).toEqual({ running: 1, waiting: 0 });
    holder.request.destroy();
    expect(await eventually(async () => (await load()).running === 0)).toBe(true);
  });

  it('past 32 waiters per slot a fetch is refused with 503 and Retry-After; waiters that leave free the queue', async () => {
    const holder = heldFetch();
    expect(await eventually(async () => (await load()).running === 1)).toBe(true);
    const waiters = Array.from({ length: 32 }, () => heldFetch());
    expect(await eventually(async () => (await load()).waiting === 32)).toBe(true);

    const refused = await fetch(`${server.url}/shared.git/git-upload-pack`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/x-git-upload-pack-request' },
      body: '0000',
    });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect((await refused.json()).code).toBe('GITLOOM_ERR_GIT_BUSY');

    for (const waiter of waiters) waiter.request.destroy();
    expect(await eventually(async () => (await load()).waiting === 0)).toBe(true);
    holder.request.destroy();
    expect(await eventually(async () => (await load()).running === 0)).toBe(true);
    // control: the next fetch gets the slot at once
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-slots-'));
    const clone = spawn('git', ['clone', '-q', gitUrl(server, 'shared', ADMIN), dir], { env: { ...process.env, ...GIT_TEST_ENV } });
    expect(await new Promise<number>((resolve) => clone.on('close', (code) => resolve(code ?? -1)))).toBe(0);
    await fs.rm(dir, { recursive: true, force: true });
  });
});
