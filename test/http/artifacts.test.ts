import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandSpec, runJobOnCommit } from '../helpers/fixtures.js';
import { git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';

const SPEC = commandSpec({ name: 'Job', commands: ['echo ok'] });

/** Sends a request with the path exactly as written (fetch would normalize `..` and `%2e%2e`). */
function exact(server: TestServer, method: string, route: string, body?: string): Promise<{ status: number; text: string }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: `/~api${route}`,
        headers: {
          authorization: `Basic ${Buffer.from('admin:admin-secret').toString('base64')}`,
          'content-type': 'application/octet-stream',
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('artifacts: upload, info, download, delete, path safety', () => {
  let server: TestServer;
  let work: string;
  let buildId: number;
  let artifactsRoot: string;
  const raw = (method: string, route: string, body?: string, auth?: string | null) =>
    server.call(method, route, { text: body, auth, headers: { 'content-type': 'application/octet-stream' } });

  beforeAll(async () => {
    server = await startTestServer();
    const projectId = (await server.call('POST', '/projects', { body: { name: 'art' } })).json;
    work = await makeWorkTree({ '.onedev-buildspec.yml': SPEC });
    const head = (await git(work, ['rev-parse', 'HEAD'])).trim();
    await git(work, ['push', '-q', gitUrl(server, 'art', { name: 'admin', password: 'admin-secret' }), 'main']);
    buildId = (await runJobOnCommit(server, { projectId, commitHash: head, jobName: 'Job', reason: 'r' })).json;
    const b = (await server.call('GET', `/builds/${buildId}`)).json;
    artifactsRoot = path.join(server.dataDir, 'builds', String(projectId), String(b.number), 'artifacts');
  });
  afterAll(async () => {
    await server?.close();
    await fs.rm(work, { recursive: true, force: true });
  });

  it('uploads, lists, downloads and deletes', async () => {
    expect((await server.call('GET', `/artifacts/${buildId}/infos/nothing`)).status).toBe(204);
    expect((await raw('POST', `/artifacts/${buildId}/dist/a..b.txt`, 'hello world')).status).toBe(200);
    expect((await raw('POST', `/artifacts/${buildId}/dist/sub/x.json`, '{}')).status).toBe(200);
    expect((await raw('POST', `/artifacts/${buildId}/top.txt`, 'top')).status).toBe(200);
    const root = (await server.call('GET', `/artifacts/${buildId}/infos`)).json;
    expect(root['@type']).toBe('DirectoryInfo');
    expect(root.path).toBeNull();
    expect(root.children.map((c: any) => [c['@type'], c.path])).toEqual([
      ['DirectoryInfo', 'dist'],
      ['FileInfo', 'top.txt'],
    ]);
    const dist = (await server.call('GET', `/artifacts/${buildId}/infos/dist`)).json;
    expect(dist.children.map((c: any) => c.path)).toEqual(['dist/sub', 'dist/a..b.txt']);
    const file = (await server.call('GET', `/artifacts/${buildId}/infos/dist/a..b.txt`)).json;
    expect(file).toMatchObject({ '@type': 'FileInfo', path: 'dist/a..b.txt', length: 11, mediaType: 'text/plain' });
    const json = await server.call('GET', `/artifacts/${buildId}/contents/dist/sub/x.json`);
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(json.text).toBe('{}');
    expect((await server.call('GET', `/artifacts/${buildId}/contents/missing.txt`)).status).toBe(404);
    expect((await server.call('GET', `/artifacts/${buildId}/contents/dist`)).status).toBe(400);

    const outsider = await server.createUser('viewer');
    expect((await raw('POST', `/artifacts/${buildId}/evil.txt`, 'x', outsider.auth)).status).toBe(404);
    expect((await raw('POST', `/artifacts/${buildId}/evil.txt`, 'x', null)).status).toBe(401);

    expect((await server.call('DELETE', `/artifacts/${buildId}/dist/sub`)).status).toBe(200);
    expect((await server.call('GET', `/artifacts/${buildId}/infos/dist/a..b.txt`)).status).toBe(200);
    expect((await server.call('GET', `/artifacts/${buildId}/infos/dist/sub`)).status).toBe(204);
    expect((await server.call('DELETE', `/artifacts/${buildId}/nope`)).status).toBe(404);
    expect((await server.call('DELETE', `/artifacts/${buildId}`)).status).toBe(200);
    expect((await server.call('GET', `/artifacts/${buildId}/infos/top.txt`)).status).toBe(204);
  });

  it('refuses traversal: .., encoded .., absolute paths and symlinks', async () => {
    await fs.mkdir(artifactsRoot, { recursive: true });
    await fs.symlink('/etc', path.join(artifactsRoot, 'link'));
    const attempts = [
      `/artifacts/${buildId}/contents/../../../../etc/passwd`,
      `/artifacts/${buildId}/contents/%2e%2e/%2e%2e/build.log`,
      `/artifacts/${buildId}/contents/dist/%2E%2E/%2E%2E/build.log`,
      `/artifacts/${buildId}/contents//etc/passwd`,
      `/artifacts/${buildId}/contents/link/passwd`,
      `/artifacts/${buildId}/infos/link`,
      `/artifacts/${buildId}/infos/%2e%2e`,
    ];
    for (const route of attempts) {
      const res = await exact(server, 'GET', route);
      expect(res.status, route).toBe(400);
      expect(res.text).not.toContain('root:');
    }
    expect((await exact(server, 'POST', `/artifacts/${buildId}/%2e%2e/escape.txt`, 'x')).status).toBe(400);
    expect((await exact(server, 'POST', `/artifacts/${buildId}/../escape.txt`, 'x')).status).toBe(400);
    expect((await exact(server, 'POST', `/artifacts/${buildId}//tmp/escape.txt`, 'x')).status).toBe(400);
    expect((await exact(server, 'POST', `/artifacts/${buildId}/link/escape.txt`, 'x')).status).toBe(400);
    expect((await exact(server, 'DELETE', `/artifacts/${buildId}/%2e%2e`)).status).toBe(400);
    expect((await exact(server, 'DELETE', `/artifacts/${buildId}/link/passwd`)).status).toBe(400);
    await expect(fs.stat('/etc/passwd')).resolves.toBeTruthy();
    await expect(fs.stat(path.join(artifactsRoot, '..', 'escape.txt'))).rejects.toThrow();
  });

  it('never serves an artifact as active content of our origin: HTML and SVG are attachments, sandboxed, not sniffed', async () => {
    const upload = async (name: string, body: string | Uint8Array<ArrayBuffer>) => {
      const res = await fetch(`${server.api}/artifacts/${buildId}/${name}`, {
        method: 'POST',
        body,
        headers: { authorization: `Basic ${Buffer.from('admin:admin-secret').toString('base64')}`, 'content-type': 'application/octet-stream' },
      });
      expect(res.status, name).toBe(200);
    };
    const png = new Uint8Array(Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex'));
    await upload('report.html', '<script>fetch("/~api/users/1/password", {method: "POST", body: "pwned"})</script>');
    await upload('badge.svg', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.domain)</script></svg>');
    await upload('notes.txt', 'plain notes');
    await upload('pixel.png', png);

    const sandboxed = (res: { headers: Headers }) => {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toMatch(/^sandbox(;|$)/);
    };
    for (const [name, type] of [
      ['report.html', 'text/html'],
      ['badge.svg', 'image/svg+xml'],
    ]) {
      const res = await server.call('GET', `/artifacts/${buildId}/contents/${name}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type'), name).toBe(type);
      expect(res.headers.get('content-disposition'), name).toBe(`attachment; filename="${name}"`);
      sandboxed(res);
      // a range of it too
      const part = await server.call('GET', `/artifacts/${buildId}/contents/${name}`, { headers: { range: 'bytes=0-4' } });
      expect(part.status).toBe(206);
      expect(part.headers.get('content-disposition'), name).toBe(`attachment; filename="${name}"`);
      sandboxed(part);
    }
    // control: safe types are shown inline, still sandboxed
    const notes = await server.call('GET', `/artifacts/${buildId}/contents/notes.txt`);
    expect(notes.headers.get('content-type')).toBe('text/plain');
    expect(notes.headers.get('content-disposition')).toBe('inline; filename="notes.txt"');
    expect(notes.text).toBe('plain notes');
    sandboxed(notes);
    const pixel = await fetch(`${server.api}/artifacts/${buildId}/contents/pixel.png`, {
      headers: { authorization: `Basic ${Buffer.from('admin:admin-secret').toString('base64')}` },
    });
    expect(pixel.headers.get('content-type')).toBe('image/png');
    expect(pixel.headers.get('content-disposition')).toBe('inline; filename="pixel.png"');
    expect(new Uint8Array(await pixel.arrayBuffer())).toEqual(png);
    sandboxed(pixel);
  });
});

/** Every file name under `dir`, recursively. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => e.name);
}

/**
 * Uploads `size` bytes in 64 KiB chunks, chunked (no length) or with `Content-Length`; resolves
 * with the answer, or with the socket error when the server hung up before answering.
 */
function upload(server: TestServer, route: string, size: number, declareLength: boolean): Promise<{ status: number; json: any; bytesSent: number }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    let bytesSent = 0;
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: `/~api${route}`,
        headers: {
          authorization: `Basic ${Buffer.from('admin:admin-secret').toString('base64')}`,
          'content-type': 'application/octet-stream',
          ...(declareLength && { 'content-length': String(size) }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : undefined, bytesSent }));
      },
    );
    req.on('error', reject);
    const chunk = Buffer.alloc(64 * 1024, 7);
    const write = (): void => {
      while (bytesSent < size && !req.destroyed) {
        const n = Math.min(chunk.length, size - bytesSent);
        bytesSent += n;
        if (!req.write(chunk.subarray(0, n))) return void req.once('drain', write);
      }
      if (!req.destroyed) req.end();
    };
    write();
  });
}

describe('artifacts: one uploaded file holds at most GITLOOM_ARTIFACT_MAX_MB', () => {
  let server: TestServer;
  let work: string;
  let buildId: number;
  let artifactsRoot: string;

  beforeAll(async () => {
    server = await startTestServer({ GITLOOM_ARTIFACT_MAX_MB: '1' });
    const projectId = (await server.call('POST', '/projects', { body: { name: 'capped' } })).json;
    work = await makeWorkTree({ '.onedev-buildspec.yml': SPEC });
    const head = (await git(work, ['rev-parse', 'HEAD'])).trim();
    await git(work, ['push', '-q', gitUrl(server, 'capped', { name: 'admin', password: 'admin-secret' }), 'main']);
    buildId = (await runJobOnCommit(server, { projectId, commitHash: head, jobName: 'Job', reason: 'r' })).json;
    const b = (await server.call('GET', `/builds/${buildId}`)).json;
    artifactsRoot = path.join(server.dataDir, 'builds', String(projectId), String(b.number), 'artifacts');
  });
  afterAll(async () => {
    await server?.close();
    await fs.rm(work, { recursive: true, force: true });
  });

  it('refuses a larger file with 413 as it streams in, keeping nothing; a file under the limit is stored', async () => {
    const limit = 1024 * 1024;
    const streamed = await upload(server, `/artifacts/${buildId}/big/streamed.bin`, 8 * limit, false);
    expect(streamed.status).toBe(413);
    expect(streamed.json).toMatchObject({ status: 413, title: 'Payload Too Large', code: 'GITLOOM_ERR_ARTIFACT_TOO_LARGE' });
    expect(streamed.json.detail).toBe('Artifact file is larger than the limit of 1 MiB');
    const declared = await upload(server, `/artifacts/${buildId}/big/declared.bin`, 2 * limit, true);
    expect([declared.status, declared.json.code]).toEqual([413, 'GITLOOM_ERR_ARTIFACT_TOO_LARGE']);
    expect((await server.call('GET', `/artifacts/${buildId}/infos/big/streamed.bin`)).status).toBe(204);
    expect((await server.call('GET', `/artifacts/${buildId}/infos/big/declared.bin`)).status).toBe(204);
    expect(await filesUnder(artifactsRoot)).toEqual([]);

    // control: exactly the limit, then a replacement that is too large leaves the stored file as it was
    const stored = await upload(server, `/artifacts/${buildId}/big/ok.bin`, limit, false);
    expect(stored.status).toBe(200);
    expect((await server.call('GET', `/artifacts/${buildId}/infos/big/ok.bin`)).json).toMatchObject({ '@type': 'FileInfo', length: limit });
    expect((await upload(server, `/artifacts/${buildId}/big/ok.bin`, limit + 1, false)).status).toBe(413);
    expect((await server.call('GET', `/artifacts/${buildId}/infos/big/ok.bin`)).json).toMatchObject({ length: limit });
    expect(await filesUnder(artifactsRoot)).toEqual(['ok.bin']);
  });
});
