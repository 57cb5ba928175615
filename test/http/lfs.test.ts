import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, git, gitFails, gitUrl, startTestServer, ADMIN, type TestServer } from '../helpers/server.js';

let server: TestServer;
/** git's environment with a global config in which `git lfs install` set up the LFS filters. */
let lfsEnv: Record<string, string>;
const temps: string[] = [];

async function tempDir(prefix: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

beforeAll(async () => {
  server = await startTestServer();
  const home = await tempDir('gitloom-lfs-home-');
  lfsEnv = { HOME: home, GIT_CONFIG_GLOBAL: path.join(home, '.gitconfig') };
  await git(home, ['lfs', 'install', '--skip-repo'], lfsEnv);
});

afterAll(async () => {
  await server.close();
  for (const dir of temps) await fs.rm(dir, { recursive: true, force: true });
});

const lfs = (cwd: string, args: string[]) => git(cwd, args, lfsEnv);
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const pointer = (data: Buffer) => `version https://git-lfs.github.com/spec/v1\noid sha256:${sha256(data)}\nsize ${data.length}\n`;

/** A work tree tracking `*.bin` with LFS, holding `files`, committed on main. */
async function lfsWorkTree(files: Record<string, Buffer | string>): Promise<string> {
  const dir = await tempDir('gitloom-lfs-wt-');
  await lfs(dir, ['init', '-q', '-b', 'main']);
  await lfs(dir, ['lfs', 'track', '*.bin', '*.txt']);
  for (const [name, content] of Object.entries(files)) await fs.writeFile(path.join(dir, name), content);
  await lfs(dir, ['add', '-A']);
  await lfs(dir, ['commit', '-q', '-m', 'files']);
  return dir;
}

async function createProject(name: string, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await server.call('POST', '/projects', { body: { name, ...extra } });
  expect(res.status, res.text).toBe(200);
  return res.json as number;
}

describe('Git LFS over HTTP', () => {
  it('pushes and clones LFS files with the git-lfs client', async () => {
    await createProject('media');
    const big = randomBytes(3 * 1024 * 1024 + 17);
    const work = await lfsWorkTree({ 'big.bin': big, 'README.md': '# media\n' });
    await lfs(work, ['push', '-q', gitUrl(server, 'media', ADMIN), 'main']);
    const stored = path.join(server.dataDir, 'lfs', sha256(big).slice(0, 2), sha256(big).slice(2, 4), sha256(big));
    expect((await fs.readFile(stored)).equals(big)).toBe(true);

    const clone = await tempDir('gitloom-lfs-clone-');
    await lfs(clone, ['clone', '-q', gitUrl(server, 'media.git', ADMIN), '.']);
    expect((await fs.readFile(path.join(clone, 'big.bin'))).equals(big)).toBe(true);
  });

  it('refuses a push whose pointers name objects the server does not have, in git-lfs words', async () => {
    await createProject('pointers');
    const missing = randomBytes(1000);
    const work = await lfsWorkTree({ 'README.md': '# p\n' });
    // a pointer committed without its object (as a client without the LFS hooks would push it)
    await fs.writeFile(path.join(work, 'lost.bin'), pointer(missing));
    await git(work, ['add', '-A']);
    await git(work, ['commit', '-q', '-m', 'pointer only']);
    const stderr = await gitFails(work, ['push', '--no-verify', gitUrl(server, 'pointers', ADMIN), 'main']);
    expect(stderr).toContain(`Your push referenced 1 unknown Git LFS object: ${sha256(missing)}`);
    expect(stderr).toContain('git lfs push --all');
    expect((await server.call('GET', `/repositories/${await projectId('pointers')}/branches`)).json).toEqual([]);
  });

  it('locks, lists and unlocks files with git lfs lock; another user needs --force and the manage privilege', async () => {
    const id = await createProject('locked');
    const work = await lfsWorkTree({ 'a.bin': randomBytes(100), 'b.bin': randomBytes(100) });
    const url = gitUrl(server, 'locked', ADMIN);
    await lfs(work, ['push', '-q', url, 'main']);
    await lfs(work, ['remote', 'add', 'origin', url]);
    await lfs(work, ['config', 'lfs.locksverify', 'true']);
    expect(await lfs(work, ['lfs', 'lock', 'a.bin'])).toContain('Locked a.bin');
    const listed = JSON.parse(await lfs(work, ['lfs', 'locks', '--json']));
    expect(listed).toEqual([expect.objectContaining({ path: 'a.bin', owner: { name: ADMIN.name } })]);

    const writer = await server.createUser('lock-writer');
    await server.call('POST', '/user-authorizations', { body: { projectId: id, userId: writer.id, roleId: 2 } });
    const other = await tempDir('gitloom-lfs-other-');
    await lfs(other, ['clone', '-q', gitUrl(server, 'locked', writer), '.']);
    expect(await lfs(other, ['lfs', 'locks'])).toContain('a.bin');
    const refused = await lfs(other, ['lfs', 'unlock', 'a.bin']).then(
      () => '',
      (e: { stderr: string }) => e.stderr,
    );
    expect(refused).toMatch(/another user|--force/);
    const forced = await lfs(other, ['lfs', 'unlock', '--force', 'a.bin']).then(
      () => '',
      (e: { stderr: string }) => e.stderr,
    );
    expect(forced).toMatch(/manage the project/);
    expect(await lfs(other, ['lfs', 'lock', 'b.bin'])).toContain('Locked b.bin');
    // the owner may force another user's lock away
    expect(await lfs(work, ['lfs', 'unlock', '--force', 'b.bin'])).toContain('Unlocked b.bin');
    expect(await lfs(work, ['lfs', 'unlock', 'a.bin'])).toContain('Unlocked a.bin');
    expect(JSON.parse(await lfs(work, ['lfs', 'locks', '--json']))).toEqual([]);
  });
});

async function projectId(name: string): Promise<number> {
  const res = await server.call('GET', `/projects?query=${encodeURIComponent(`"Name" is "${name}"`)}`);
  return res.json[0].id;
}

describe('Git LFS endpoints over raw HTTP', () => {
  const lfsHeaders = (auth: string | null) => ({
    accept: 'application/vnd.git-lfs+json',
    'content-type': 'application/vnd.git-lfs+json',
    ...(auth && { authorization: auth }),
  });
  const post = (project: string, rest: string, body: unknown, auth: string | null) =>
    fetch(`${server.url}/${project}.git/info/lfs/${rest}`, { method: 'POST', headers: lfsHeaders(auth), body: JSON.stringify(body) });
  const adminAuth = basic(ADMIN.name, ADMIN.password);

  it('lets anonymous callers download from a project anonymous access may read, without a token', async () => {
    await createProject('public-media', { defaultRoleId: 2 });
    const data = randomBytes(4096);
    const work = await lfsWorkTree({ 'pic.bin': data });
    await lfs(work, ['push', '-q', gitUrl(server, 'public-media', ADMIN), 'main']);
    await server.call('POST', '/settings/security', { body: { enableAnonymousAccess: true } });
    try {
      const object = { oid: sha256(data), size: data.length };
      const answer = await (await post('public-media', 'objects/batch', { operation: 'download', objects: [object] }, null)).json();
      expect(answer.objects[0].actions.download.header).toBeUndefined();
      expect(answer.objects[0].authenticated).toBeUndefined();
      const clone = await tempDir('gitloom-lfs-anon-');
      await lfs(clone, ['clone', '-q', gitUrl(server, 'public-media'), '.']);
      expect((await fs.readFile(path.join(clone, 'pic.bin'))).equals(data)).toBe(true);
      expect((await post('public-media', 'objects/batch', { operation: 'upload', objects: [object] }, null)).status).toBe(401);
    } finally {
      await server.call('POST', '/settings/security', { body: { enableAnonymousAccess: false } });
    }
  });

  it('asks anonymous callers for credentials with LFS-Authenticate and answers errors in the LFS shape', async () => {
    await createProject('private-media');
    const res = await post('private-media', 'objects/batch', { operation: 'download', objects: [] }, null);
    expect(res.status).toBe(401);
    expect(res.headers.get('lfs-authenticate')).toBe('Basic realm="Gitloom"');
    expect(res.headers.get('content-type')).toContain('application/vnd.git-lfs+json');
    const body = await res.json();
    expect(body).toEqual({ message: expect.any(String), documentation_url: expect.any(String), request_id: expect.any(String) });
    expect((await post('no-such-project', 'objects/batch', { operation: 'download', objects: [] }, adminAuth)).status).toBe(404);
    const bad = await post('private-media', 'objects/batch', { operation: 'download', objects: [{ oid: 'xyz', size: 1 }] }, adminAuth);
    expect((await bad.json()).objects[0].error.code).toBe(422);
    expect((await post('private-media', 'objects/batch', { operation: 'download', objects: [], hash_algo: 'sha512' }, adminAuth)).status).toBe(409);
  });

  it("refuses a reader's upload (403) and lets the reader download", async () => {
    const id = await createProject('read-only');
    const reader = await server.createUser('lfs-reader');
    await server.call('POST', '/user-authorizations', { body: { projectId: id, userId: reader.id, roleId: 3 } });
    const data = randomBytes(2048);
    const object = { oid: sha256(data), size: data.length };
    const refused = await post('read-only', 'objects/batch', { operation: 'upload', objects: [object] }, reader.auth);
    expect(refused.status).toBe(403);
    const put = await fetch(`${server.url}/read-only/info/lfs/objects/${object.oid}`, {
      method: 'PUT',
      headers: { authorization: reader.auth, 'content-type': 'application/octet-stream' },
      body: data,
    });
    expect(put.status).toBe(403);

    const upload = await (await post('read-only', 'objects/batch', { operation: 'upload', objects: [object] }, adminAuth)).json();
    const action = upload.objects[0].actions.upload;
    expect(action.header.Authorization).toMatch(/^Gitloom-LFS /);
    const stored = await fetch(action.href, { method: 'PUT', headers: { ...action.header, 'content-type': 'application/octet-stream' }, body: data });
    expect(stored.status).toBe(200);
    // the upload token writes objects only: the API does not take it
    expect((await server.call('GET', '/projects', { auth: action.header.Authorization })).status).toBe(401);

    const download = await (await post('read-only', 'objects/batch', { operation: 'download', objects: [object] }, reader.auth)).json();
    const get = download.objects[0].actions.download;
    const fetched = Buffer.from(await (await fetch(get.href, { headers: get.header })).arrayBuffer());
    expect(fetched.equals(data)).toBe(true);
    // a download token does not upload
    const again = await fetch(action.href.replace(/\/\d+$/, ''), {
      method: 'PUT',
      headers: { ...get.header, 'content-type': 'application/octet-stream' },
      body: data,
    });
    expect(again.status).toBe(403);
  });

  it('serves a byte range of an object, as git-lfs asks when it resumes a download, and 416 past the end', async () => {
    await createProject('resume');
    const data = randomBytes(10_000);
    const oid = sha256(data);
    const url = `${server.url}/resume/info/lfs/objects/${oid}`;
    const put = await fetch(url, { method: 'PUT', headers: { authorization: adminAuth, 'content-type': 'application/octet-stream' }, body: data });
    expect(put.status).toBe(200);
    const whole = await fetch(url, { headers: { authorization: adminAuth } });
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    expect(Buffer.from(await whole.arrayBuffer()).equals(data)).toBe(true);
    const rest = await fetch(url, { headers: { authorization: adminAuth, range: 'bytes=6000-' } });
    expect(rest.status).toBe(206);
    expect(rest.headers.get('content-range')).toBe('bytes 6000-9999/10000');
    expect(rest.headers.get('content-length')).toBe('4000');
    expect(Buffer.from(await rest.arrayBuffer()).equals(data.subarray(6000))).toBe(true);
    const past = await fetch(url, { headers: { authorization: adminAuth, range: 'bytes=10000-' } });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe('bytes */10000');
  });

  it('refuses a corrupt or wrong-size upload and keeps nothing', async () => {
    await createProject('corrupt');
    const data = randomBytes(4096);
    const oid = sha256(data);
    const put = (body: Buffer, size = data.length) =>
      fetch(`${server.url}/corrupt/info/lfs/objects/${oid}/${size}`, {
        method: 'PUT',
        headers: { authorization: adminAuth, 'content-type': 'application/octet-stream' },
        body: new Uint8Array(body),
      });
    const flipped = Buffer.from(data);
    flipped[100] ^= 1;
    const corrupt = await put(flipped);
    expect(corrupt.status).toBe(422);
    expect((await corrupt.json()).message).toContain('does not match');
    expect((await put(data.subarray(0, 4000))).status).toBe(422);
    expect((await put(data, 4000)).status).toBe(422);
    const objectFile = path.join(server.dataDir, 'lfs', oid.slice(0, 2), oid.slice(2, 4), oid);
    await expect(fs.stat(objectFile)).rejects.toThrow();
    // no upload temp file is left beside the objects
    expect((await fs.readdir(path.join(server.dataDir, 'lfs'), { recursive: true })).filter((name) => name.includes('.gitloom-upload-'))).toEqual([]);
    const batch = await (await post('corrupt', 'objects/batch', { operation: 'download', objects: [{ oid, size: data.length }] }, adminAuth)).json();
    expect(batch.objects[0].error.code).toBe(404);
    expect((await put(data)).status).toBe(200);
  });
});

describe('Git LFS files in pages, forks, deletion and builds', () => {
  const adminAuth = basic(ADMIN.name, ADMIN.password);
  const page = async (url: string) => {
    const res = await fetch(`${server.url}${url}`, { headers: { authorization: adminAuth } });
    return { status: res.status, type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
  };
  const objectFile = (data: Buffer) => path.join(server.dataDir, 'lfs', sha256(data).slice(0, 2), sha256(data).slice(2, 4), sha256(data));

  it('shows the content and size of LFS files in the file view, raw downloads and diffs', async () => {
    const id = await createProject('viewer');
    const notes = Buffer.from('first line of the notes\nsecond line\n'.repeat(50));
    const work = await lfsWorkTree({ 'notes.txt': notes, 'blob.bin': randomBytes(5000) });
    await lfs(work, ['push', '-q', gitUrl(server, 'viewer', ADMIN), 'main']);

    const view = await page('/viewer/~files/main/notes.txt');
    expect(view.status).toBe(200);
    const html = view.body.toString('utf8');
    expect(html).toContain('first line of the notes');
    expect(html).toContain(`${notes.length.toLocaleString('en-US')} bytes`);
    expect(html).toContain('stored with Git LFS');
    const raw = await page('/viewer/~raw/main/notes.txt');
    expect(raw.type).toBe('text/plain; charset=utf-8');
    expect(raw.body.equals(notes)).toBe(true);
    const binary = await page('/viewer/~files/main/blob.bin');
    expect(binary.body.toString('utf8')).toContain('5,000 bytes');

    const longer = Buffer.concat([notes, Buffer.from('x'.repeat(2048))]);
    await fs.writeFile(path.join(work, 'notes.txt'), longer);
    await lfs(work, ['commit', '-q', '-am', 'longer notes']);
    await lfs(work, ['push', '-q', gitUrl(server, 'viewer', ADMIN), 'main']);
    const head = (await lfs(work, ['rev-parse', 'HEAD'])).trim();
    const commit = (await page(`/viewer/~commits/${head}`)).body.toString('utf8');
    expect(commit).toContain('Stored with Git LFS: 1.8 KiB → 3.8 KiB');
    expect(commit).not.toContain('oid sha256:');

    const settings = (await page('/viewer/~settings')).body.toString('utf8');
    expect(settings).toMatch(/3 objects stored with Git LFS/);
    expect(id).toBeGreaterThan(0);
  });

  it("lets a fork read its origin's objects without a copy, keeps them when the origin goes and removes them with the last project", async () => {
    const originId = await createProject('lfs-origin');
    const shared = randomBytes(10_000);
    const own = randomBytes(3000);
    const work = await lfsWorkTree({ 'shared.bin': shared });
    await lfs(work, ['push', '-q', gitUrl(server, 'lfs-origin', ADMIN), 'main']);
    const forkId = (await server.call('POST', '/projects', { body: { name: 'lfs-fork', forkedFromId: originId } })).json;

    const clone = await tempDir('gitloom-lfs-fork-');
    await lfs(clone, ['clone', '-q', gitUrl(server, 'lfs-fork', ADMIN), '.']);
    expect((await fs.readFile(path.join(clone, 'shared.bin'))).equals(shared)).toBe(true);
    // a push to the fork naming the origin's object needs no upload
    await fs.writeFile(path.join(clone, 'copy.bin'), shared);
    await fs.writeFile(path.join(clone, 'own.bin'), own);
    await lfs(clone, ['add', '-A']);
    await lfs(clone, ['commit', '-q', '-m', 'fork work']);
    await lfs(clone, ['push', '-q', 'origin', 'main']);
    expect(await fs.readFile(objectFile(own))).toEqual(own);

    expect((await server.call('DELETE', `/projects/${originId}`)).status).toBe(200);
    await expect(fs.stat(objectFile(shared))).resolves.toBeTruthy();
    const again = await tempDir('gitloom-lfs-fork-again-');
    await lfs(again, ['clone', '-q', gitUrl(server, 'lfs-fork', ADMIN), '.']);
    expect((await fs.readFile(path.join(again, 'shared.bin'))).equals(shared)).toBe(true);

    expect((await server.call('DELETE', `/projects/${forkId}`)).status).toBe(200);
    await expect(fs.stat(objectFile(shared))).rejects.toThrow();
    await expect(fs.stat(objectFile(own))).rejects.toThrow();
  });

  it('issues short-lived tokens for git-lfs-authenticate, scoped to one project and operation', async () => {
    const { issueLfsToken } = await import('../../src/domain/lfs/index.js');
    const { createContext, systemActor } = await import('../../src/domain/context.js');
    const id = await createProject('token-target');
    const otherId = await createProject('token-other');
    const reader = await server.createUser('token-reader');
    await server.call('POST', '/user-authorizations', { body: { projectId: id, userId: reader.id, roleId: 3 } });
    const ctx = createContext(server.server.services, systemActor);
    const auth = await issueLfsToken(ctx, { userId: reader.id, projectId: id, operation: 'download' });
    expect(auth).toEqual({
      href: `${server.url}/token-target.git/info/lfs`,
      header: { Authorization: expect.stringMatching(/^Gitloom-LFS /) },
      expires_in: 600,
    });
    await expect(issueLfsToken(ctx, { userId: reader.id, projectId: id, operation: 'upload' })).rejects.toThrow(/permission/i);
    await expect(issueLfsToken(ctx, { userId: reader.id, projectId: otherId, operation: 'download' })).rejects.toThrow(/not found/i);

    const batch = (project: string, operation: string, authorization: string) =>
      fetch(`${server.url}/${project}.git/info/lfs/objects/batch`, {
        method: 'POST',
        headers: { accept: 'application/vnd.git-lfs+json', 'content-type': 'application/vnd.git-lfs+json', authorization },
        body: JSON.stringify({ operation, objects: [] }),
      });
    expect((await batch('token-target', 'download', auth.header.Authorization)).status).toBe(200);
    expect((await batch('token-target', 'upload', auth.header.Authorization)).status).toBe(403);
    expect((await batch('token-other', 'download', auth.header.Authorization)).status).toBe(404);
    const forged = auth.header.Authorization.slice(0, -2) + (auth.header.Authorization.endsWith('A') ? 'BB' : 'AA');
    expect((await batch('token-target', 'download', forged)).status).toBe(401);
    const expired = await issueLfsToken({ ...ctx, now: () => Date.now() - 601_000 }, { userId: reader.id, projectId: id, operation: 'download' });
    expect((await batch('token-target', 'download', expired.header.Authorization)).status).toBe(401);
  });

  it('copies the LFS objects into the workspace of a build whose checkout says withLfs', async () => {
    const id = await createProject('lfs-build');
    const data = Buffer.from('real content of the model\n');
    const spec = [
      'version: 25',
      'jobs:',
      '- name: CI',
      '  steps:',
      '  - !CheckoutStep',
      '    name: checkout',
      '    cloneCredential: !DefaultCredential {}',
      '    withLfs: true',
      '  - !CommandStep',
      '    name: check',
      '    runInContainer: false',
      '    interpreter: !DefaultInterpreter',
      '      commands:',
      '      - cat model.bin',
      '',
    ].join('\n');
    const work = await lfsWorkTree({ 'model.bin': data, '.onedev-buildspec.yml': spec });
    await lfs(work, ['push', '-q', gitUrl(server, 'lfs-build', ADMIN), 'main']);
    const commitHash = (await lfs(work, ['rev-parse', 'HEAD'])).trim();
    const run = await server.call('POST', '/job-runs', {
      body: { '@type': 'JobRunOnCommit', projectId: id, commitHash, jobName: 'CI', refName: 'refs/heads/main', params: {}, reason: 'test' },
    });
    expect(run.status, run.text).toBe(200);
    const deadline = Date.now() + 60_000;
    let status = '';
    while (Date.now() < deadline) {
      status = (await server.call('GET', `/builds/${run.json}`)).json.status;
      if (['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(status)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const log = (await server.call('GET', `/builds/${run.json}/log`)).text;
    expect(status, log).toBe('SUCCESSFUL');
    expect(log).toContain('real content of the model');
    expect(log).toContain('Fetched 1 Git LFS file');
  });

  it('backs up the LFS objects, hard-linking those an earlier backup holds', async () => {
    const { backup } = await import('../../src/ops/backup.js');
    await createProject('backed-up');
    const data = randomBytes(20_000);
    const work = await lfsWorkTree({ 'data.bin': data });
    await lfs(work, ['push', '-q', gitUrl(server, 'backed-up', ADMIN), 'main']);
    const dir = await tempDir('gitloom-lfs-backup-');
    const rel = path.join('lfs', sha256(data).slice(0, 2), sha256(data).slice(2, 4), sha256(data));
    await backup(server.server.services.config, path.join(dir, 'full'));
    expect((await fs.readFile(path.join(dir, 'full', rel))).equals(data)).toBe(true);
    await backup(server.server.services.config, path.join(dir, 'next'), { incrementalFrom: path.join(dir, 'full') });
    expect((await fs.stat(path.join(dir, 'next', rel))).ino).toBe((await fs.stat(path.join(dir, 'full', rel))).ino);
  });

  it('removes the upload temp files a crash left at start-up', async () => {
    const { recoverAtStartup } = await import('../../src/domain/startup-recovery.js');
    const tmp = path.join(server.dataDir, 'lfs', 'tmp', 'left-by-a-crash');
    await fs.mkdir(path.dirname(tmp), { recursive: true });
    await fs.writeFile(tmp, 'partial');
    const old = new Date(Date.now() - 2 * 60 * 60 * 1000);
    await fs.utimes(tmp, old, old);
    const removed: string[] = [];
    await recoverAtStartup(server.server.services, (message) => removed.push(message));
    expect(removed).toContain(`Start-up recovery: removed Git LFS upload temp file ${tmp}`);
    await expect(fs.stat(tmp)).rejects.toThrow();
  });
});
