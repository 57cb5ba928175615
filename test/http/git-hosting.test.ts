import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, basic, commitFiles, git, gitFails, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';

const CODE_WRITER = 2;
const CODE_READER = 3;

/** Git smart HTTP wired to permissions (docs/compatibility.md#gitloom-differs-mount-and-media-types, docs/compatibility.md#gitloom-differs-authentication; docs/compatibility.md#projects-repository-and-default-branch). */
describe('git hosting', () => {
  let server: TestServer;
  let appId: number;
  let writer: Awaited<ReturnType<TestServer['createUser']>>;
  let reader: Awaited<ReturnType<TestServer['createUser']>>;
  let outsider: Awaited<ReturnType<TestServer['createUser']>>;
  let work: string;
  const cleanup: string[] = [];

  async function tempDir(): Promise<string> {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-git-'));
    cleanup.push(dir);
    return dir;
  }

  const infoRefs = (projectPath: string, auth: string | null, service = 'git-upload-pack') =>
    fetch(`${server.url}/${projectPath}/info/refs?service=${service}`, { headers: auth ? { authorization: auth } : {} });

  beforeAll(async () => {
    server = await startTestServer();
    writer = await server.createUser('wendy');
    reader = await server.createUser('reed');
    outsider = await server.createUser('otto');
    const team = (await server.call('POST', '/projects', { body: { name: 'team' } })).json;
    appId = (await server.call('POST', '/projects', { body: { name: 'app', parentId: team } })).json;
    for (const [userId, roleId] of [
      [writer.id, CODE_WRITER],
      [reader.id, CODE_READER],
    ]) {
      const res = await server.call('POST', '/user-authorizations', { body: { projectId: team, userId, roleId } });
      expect(res.status).toBe(200);
    }
    work = await makeWorkTree({ 'README.md': '# app\n' });
    cleanup.push(work);
  });
  afterAll(async () => {
    await server.close();
    for (const dir of cleanup) await fs.rm(dir, { recursive: true, force: true });
  });

  it('lets a writer push; the first pushed branch becomes the default branch', async () => {
    expect((await server.call('GET', `/repositories/${appId}/default-branch`)).status).toBe(204);
    await git(work, ['checkout', '-q', '-b', 'develop']);
    await git(work, ['push', '-q', gitUrl(server, 'team/app', writer), 'develop']);
    await git(work, ['checkout', '-q', 'main']);
    await git(work, ['push', '-q', gitUrl(server, 'team/app.git', writer), 'main']);
    const symref = await git(work, ['ls-remote', '--symref', gitUrl(server, 'team/app', reader), 'HEAD']);
    expect(symref).toMatch(/^ref: refs\/heads\/develop\tHEAD$/m);
    const res = await server.call('GET', `/repositories/${appId}/default-branch`);
    expect(res.status).toBe(200);
    expect(res.text).toBe('develop');
  });

  it('picks main, else master, else the first name when the first push brings several branches', async () => {
    const admin = { name: ADMIN.name, password: ADMIN.password };
    for (const [name, branches, expected] of [
      ['several-a', ['zeta', 'alpha'], 'alpha'],
      ['several-b', ['feature', 'master'], 'master'],
      ['several-c', ['master', 'main', 'aaa'], 'main'],
    ] as const) {
      const id = (await server.call('POST', '/projects', { body: { name } })).json;
      const refspecs = branches.map((b) => `HEAD:refs/heads/${b}`);
      await git(work, ['push', '-q', gitUrl(server, name, admin), ...refspecs]);
      expect((await server.call('GET', `/repositories/${id}/default-branch`)).text).toBe(expected);
    }
  });

  it('clones an empty repository; the default branch cannot be deleted by a push', async () => {
    const admin = { name: ADMIN.name, password: ADMIN.password };
    const id = (await server.call('POST', '/projects', { body: { name: 'empty' } })).json;
    const dir = await tempDir();
    await git(dir, ['clone', '-q', gitUrl(server, 'empty', admin), 'clone']);
    expect(await git(path.join(dir, 'clone'), ['branch', '-a'])).toBe('');
    await git(work, ['push', '-q', gitUrl(server, 'empty', admin), 'HEAD:refs/heads/first']);
    expect((await server.call('GET', `/repositories/${id}/default-branch`)).text).toBe('first');
    await git(work, ['push', '-q', gitUrl(server, 'empty', admin), 'HEAD:refs/heads/second']);
    expect((await server.call('GET', `/repositories/${id}/default-branch`)).text).toBe('first');
    expect(await gitFails(work, ['push', '-q', gitUrl(server, 'empty', admin), ':refs/heads/first'])).toMatch(/deletion of the current branch prohibited/);
    await git(work, ['push', '-q', gitUrl(server, 'empty', admin), ':refs/heads/second']);
    expect(await git(work, ['ls-remote', '--heads', gitUrl(server, 'empty', admin)])).toMatch(/\trefs\/heads\/first\n$/);
  });

  it.each([
    ['v2', '2', 'team/app'],
    ['v0', '0', 'team/app.git'],
    ['v1', '1', 'TEAM/App'],
  ])('lets a reader clone over protocol %s', async (_label, version, projectPath) => {
    const dir = await tempDir();
    await git(dir, ['-c', `protocol.version=${version}`, 'clone', '-q', gitUrl(server, projectPath, reader), 'clone']);
    const clone = path.join(dir, 'clone');
    expect(await fs.readFile(path.join(clone, 'README.md'), 'utf8')).toBe('# app\n');
    expect((await git(clone, ['rev-parse', '--abbrev-ref', 'HEAD'])).trim()).toBe('develop');
    expect((await git(clone, ['branch', '-r'])).split('\n').map((l) => l.trim())).toContain('origin/main');
  });

  it('lets a reader fetch new commits, but not push', async () => {
    const dir = await tempDir();
    await git(dir, ['clone', '-q', gitUrl(server, 'team/app', reader), 'clone']);
    const clone = path.join(dir, 'clone');
    const head = await commitFiles(work, { 'NEWS.md': 'news\n' }, 'news');
    await git(work, ['push', '-q', gitUrl(server, 'team/app', writer), 'main']);
    await git(clone, ['-c', 'protocol.version=2', 'fetch', '-q', 'origin']);
    expect((await git(clone, ['rev-parse', 'origin/main'])).trim()).toBe(head);

    await git(clone, ['checkout', '-q', 'main']);
    await commitFiles(clone, { 'evil.txt': 'x\n' }, 'reader tries');
    expect(await gitFails(clone, ['push', '-q', 'origin', 'main'])).toMatch(/403/);
    const refused = await infoRefs('team/app', reader.auth, 'git-receive-pack');
    expect(refused.status).toBe(403);
    expect((await git(work, ['ls-remote', gitUrl(server, 'team/app', reader), 'refs/heads/main'])).split('\t')[0]).toBe(head);
  });

  it('accepts an access token as the password', async () => {
    const token = (await server.call('POST', `/users/${reader.id}/access-tokens`, { body: {}, auth: reader.auth })).text;
    const dir = await tempDir();
    await git(dir, ['clone', '-q', gitUrl(server, 'team/app', { name: 'whoever', password: token }), 'clone']);
    expect(await fs.readFile(path.join(dir, 'clone', 'README.md'), 'utf8')).toBe('# app\n');
  });

  it('answers 404 to a user without a role, and for unknown projects', async () => {
    const dir = await tempDir();
    expect(await gitFails(dir, ['clone', '-q', gitUrl(server, 'team/app', outsider), 'clone'])).toMatch(/not found|404/i);
    expect((await infoRefs('team/app', outsider.auth)).status).toBe(404);
    expect((await infoRefs('team/app', outsider.auth, 'git-receive-pack')).status).toBe(404);
    expect((await infoRefs('team/nothing', reader.auth)).status).toBe(404);
    expect((await infoRefs('team/app/deeper', basic(ADMIN.name, ADMIN.password))).status).toBe(404);
  });

  it('asks anonymous callers and wrong passwords for credentials (401)', async () => {
    for (const auth of [null, basic('reed', 'wrong password'), basic('nobody', 'x')]) {
      const res = await infoRefs('team/app', auth);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Basic realm="Gitloom"');
    }
    expect((await infoRefs('team/nothing', null)).status).toBe(401);
    const dir = await tempDir();
    expect(await gitFails(dir, ['clone', '-q', gitUrl(server, 'team/app'), 'anon'])).toMatch(/could not read Username|Authentication failed|401/i);
    expect(await gitFails(dir, ['clone', '-q', gitUrl(server, 'team/app', { name: 'reed', password: 'wrong' }), 'wrong'])).toMatch(
      /Authentication failed|401/i,
    );
  });

  it('lets anonymous callers clone public projects only when anonymous access is on, never push', async () => {
    const id = (await server.call('POST', '/projects', { body: { name: 'open', defaultRoleId: CODE_READER } })).json;
    const seed = await makeWorkTree({ 'open.txt': 'open\n' });
    cleanup.push(seed);
    await git(seed, ['push', '-q', gitUrl(server, 'open', { name: ADMIN.name, password: ADMIN.password }), 'main']);
    expect((await infoRefs('open', null)).status).toBe(401);
    await server.call('POST', '/settings/security', { body: { enableAnonymousAccess: true } });
    try {
      const dir = await tempDir();
      await git(dir, ['clone', '-q', gitUrl(server, 'open'), 'clone']);
      expect(await fs.readFile(path.join(dir, 'clone', 'open.txt'), 'utf8')).toBe('open\n');
      expect((await infoRefs('open', null, 'git-receive-pack')).status).toBe(401);
      expect((await infoRefs('team/app', null)).status).toBe(401);
      // a logged-in user without a role gets the default role too
      expect((await infoRefs('open', outsider.auth)).status).toBe(200);
      expect((await infoRefs('open', outsider.auth, 'git-receive-pack')).status).toBe(403);
    } finally {
      await server.call('POST', '/settings/security', { body: { enableAnonymousAccess: false } });
    }
    expect(id).toBeGreaterThan(0);
  });

  it('streams a large push and clone', async () => {
    // random bytes do not compress: the client does not spend time trying
    const big = randomBytes(20 * 1024 * 1024);
    const digest = createHash('sha256').update(big).digest('hex');
    await git(work, ['checkout', '-q', '-b', 'big', 'main']);
    await fs.writeFile(path.join(work, 'big.bin'), big);
    await git(work, ['-c', 'core.compression=0', 'add', 'big.bin']);
    await git(work, ['commit', '-q', '-m', 'big file']);
    await git(work, ['-c', 'pack.compression=0', 'push', '-q', gitUrl(server, 'team/app', writer), 'big']);
    const dir = await tempDir();
    await git(dir, ['clone', '-q', '--branch', 'big', gitUrl(server, 'team/app', reader), 'clone']);
    const copy = await fs.readFile(path.join(dir, 'clone', 'big.bin'));
    expect(createHash('sha256').update(copy).digest('hex')).toBe(digest);
  }, 60_000);
});
