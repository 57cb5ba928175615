import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, givenProject, givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { ADMIN, commitFiles, git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';
import { ifMissing } from '../../src/ci/job-directory.js';

const run = promisify(execFile);

const FILES = {
  'README.md': '# App\n',
  'src/main.ts': 'export const main = 1;\n',
  'docs/guide/intro.md': 'Intro\n',
};

/** The archive download (`/~downloads/projects/<id>/archives`) through HTTP, listed by unzip and tar. */
describe('archive download', () => {
  let server: TestServer;
  let repo: Repo;
  let reader: TestUser;
  let outsider: TestUser;
  let admin: WebSession;
  let firstCommit: string;
  let featureHead: string;
  let dir: string;

  beforeAll(async () => {
    server = await startTestServer();
    [reader, outsider] = await givenUsers(server, 'reader', 'outsider');
    repo = await givenRepo(server, 'app', { files: FILES });
    firstCommit = await repo.head('main');
    await git(repo.work, ['tag', '-a', '-m', 'Release 1.0', 'v1.0', firstCommit]);
    await git(repo.work, ['push', '-q', repo.remote, 'v1.0']);
    featureHead = await repo.commitOn('feature/x', { 'src/new.ts': 'export const n = 1;\n' }, 'Add new.ts');
    await grantRole(server, repo.id, reader.id, 'Code Reader');
    admin = await signInByFetch(server, ADMIN.name, ADMIN.password);
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-archives-'));
  }, 120_000);
  afterAll(async () => {
    await removeWorkTrees();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
    await server?.close();
  });

  const archiveUrl = (projectId: number, revision: string, format: string) =>
    `${server.url}/~downloads/projects/${projectId}/archives?${new URLSearchParams({ revision, format })}`;
  const download = (projectId: number, revision: string, format: string, headers: Record<string, string> = { cookie: admin.cookie }) =>
    fetch(archiveUrl(projectId, revision, format), { redirect: 'manual', headers });

  /** Saves a 200 response's body and lists the archive's files (directories left out). */
  async function listed(response: Response, format: 'zip' | 'tgz'): Promise<string[]> {
    expect(response.status).toBe(200);
    const file = path.join(dir, `${Math.random().toString(36).slice(2)}.${format}`);
    await fs.writeFile(file, Buffer.from(await response.arrayBuffer()));
    if (format === 'zip') {
      const { stdout } = await run('unzip', ['-Z1', file]);
      return stdout
        .split('\n')
        .filter((line) => line !== '' && !line.endsWith('/'))
        .sort();
    }
    const { stdout } = await run('tar', ['tzf', file]);
    return stdout
      .split('\n')
      .filter((line) => line !== '' && !line.endsWith('/'))
      .sort();
  }

  const mainFiles = Object.keys(FILES).sort();
  const keptDir = (projectId: number) => path.join(server.dataDir, 'archives', String(projectId));

  it('serves zip and tar.gz archives of a branch, a tag and a commit with the repository files', async () => {
    const cases: [string, string[], string][] = [
      ['main', mainFiles, 'app-main'],
      ['feature/x', [...mainFiles, 'src/new.ts'].sort(), 'app-feature-x'],
      ['v1.0', mainFiles, 'app-v1.0'],
      ['refs/tags/v1.0', mainFiles, 'app-v1.0'],
      [featureHead, [...mainFiles, 'src/new.ts'].sort(), `app-${featureHead}`],
      [firstCommit.slice(0, 10), mainFiles, `app-${firstCommit.slice(0, 10)}`],
    ];
    for (const [revision, files, name] of cases) {
      const zip = await download(repo.id, revision, 'zip');
      expect(zip.headers.get('content-type'), revision).toBe('application/zip');
      expect(zip.headers.get('content-disposition'), revision).toBe(`attachment; filename="${name}.zip"`);
      expect(zip.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await listed(zip, 'zip'), revision).toEqual(files);
      const tgz = await download(repo.id, revision, 'tgz');
      expect(tgz.headers.get('content-type'), revision).toBe('application/gzip');
      expect(tgz.headers.get('content-disposition'), revision).toBe(`attachment; filename="${name}.tar.gz"`);
      expect(await listed(tgz, 'tgz'), revision).toEqual(files);
    }
  });

  it('archives a Git LFS file as its pointer', async () => {
    const home = path.join(dir, 'lfs-home');
    const work = path.join(dir, 'lfs-work');
    await fs.mkdir(home);
    await fs.mkdir(work);
    const env = { HOME: home, GIT_CONFIG_GLOBAL: path.join(home, '.gitconfig') };
    await git(home, ['lfs', 'install', '--skip-repo'], env);
    await git(work, ['init', '-q', '-b', 'main'], env);
    await git(work, ['lfs', 'track', '*.png'], env);
    const image = randomBytes(4096);
    await fs.writeFile(path.join(work, 'logo.png'), image);
    await git(work, ['add', '-A'], env);
    await git(work, ['commit', '-q', '-m', 'logo'], env);
    const mediaId = await givenProject(server, { name: 'media' });
    await git(work, ['push', '-q', gitUrl(server, 'media', ADMIN), 'main'], env);
    const response = await download(mediaId, 'main', 'tgz');
    expect(response.status).toBe(200);
    const file = path.join(dir, 'lfs.tar.gz');
    await fs.writeFile(file, Buffer.from(await response.arrayBuffer()));
    const { stdout } = await run('tar', ['xzOf', file, 'logo.png']);
    const oid = createHash('sha256').update(image).digest('hex');
    expect(stdout).toBe(`version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize 4096\n`);
  });

  it('follows read-code permission: Basic credentials, 404 for a project the caller cannot see, anonymous per anonymous access', async () => {
    expect(await listed(await download(repo.id, 'main', 'zip', { authorization: reader.auth }), 'zip')).toEqual(mainFiles);
    const hidden = await download(repo.id, 'main', 'zip', { authorization: outsider.auth });
    expect(hidden.status).toBe(404);
    expect(hidden.headers.get('content-type')).toContain('application/problem+json');
    expect((await hidden.json()).detail).toBe(`Project not found: ${repo.id}`);
    expect((await download(987654, 'main', 'zip')).status).toBe(404);
    expect((await download(repo.id, 'main', 'zip', {})).status).toBe(302);

    const publicId = await givenProject(server, { name: 'public', defaultRoleId: 2 });
    const work = await makeWorkTree({ 'open.txt': 'open\n' });
    await git(work, ['push', '-q', gitUrl(server, 'public', ADMIN), 'main']);
    await server.call('POST', '/settings/security', { body: { enableAnonymousAccess: true } });
    try {
      expect(await listed(await download(publicId, 'main', 'tgz', {}), 'tgz')).toEqual(['open.txt']);
      expect((await download(repo.id, 'main', 'tgz', {})).status).toBe(404);
    } finally {
      await server.call('POST', '/settings/security', { body: { enableAnonymousAccess: false } });
      await fs.rm(work, { recursive: true, force: true });
    }
  });

  it('answers 404 for an unknown revision and 400 for bad input, as problem+json', async () => {
    const problem = async (response: Response, status: number) => {
      expect(response.status).toBe(status);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      return (await response.json()).detail as string;
    };
    expect(await problem(await download(repo.id, 'no-such-branch', 'zip'), 404)).toBe('Revision not found: no-such-branch');
    expect(await problem(await download(repo.id, 'main:src', 'zip'), 404)).toBe('Revision not found: main:src');
    expect(await problem(await download(repo.id, '-o/tmp/x', 'zip'), 400)).toContain("must not start with '-'");
    expect(await problem(await download(repo.id, '--output=/tmp/x', 'tgz'), 400)).toContain("must not start with '-'");
    expect(await problem(await download(repo.id, '', 'zip'), 400)).toBe('revision parameter has to be specified');
    expect(await problem(await download(repo.id, 'main', 'rar'), 400)).toBe('format parameter should be either zip or tgz');
    expect(await problem(await download(repo.id, 'main', '__proto__'), 400)).toBe('format parameter should be either zip or tgz');
    expect(
      await problem(await fetch(`${server.url}/~downloads/projects/abc/archives?revision=main&format=zip`, { headers: { cookie: admin.cookie } }), 404),
    ).toContain('Page not found');
  });

  it('offers the download menu on the files page of a branch, a tag and a commit', async () => {
    for (const revision of ['main', 'v1.0', firstCommit]) {
      const html = await (await fetch(`${server.url}/app/~files/${revision}`, { headers: { cookie: admin.cookie } })).text();
      expect(html, revision).toContain('<summary>Download</summary>');
      for (const format of ['zip', 'tgz']) {
        const href = `/~downloads/projects/${repo.id}/archives?${new URLSearchParams({ revision, format })}`.replaceAll('&', '&amp;');
        expect(html, revision).toContain(`href="${href}"`);
      }
    }
    const dirPage = await (await fetch(`${server.url}/app/~files/feature/x/src`, { headers: { cookie: admin.cookie } })).text();
    expect(dirPage).toContain(`href="/~downloads/projects/${repo.id}/archives?revision=feature%2Fx&amp;format=zip"`);
    const filePage = await (await fetch(`${server.url}/app/~files/main/README.md`, { headers: { cookie: admin.cookie } })).text();
    expect(filePage).not.toContain('<summary>Download</summary>');
  });

  it('keeps the archive of a commit after a whole download and serves later downloads of it from the file', async () => {
    const project = await givenRepo(server, 'kept', { files: FILES });
    const commit = await project.head('main');
    const first = Buffer.from(await (await download(project.id, 'main', 'zip')).arrayBuffer());
    const kept = path.join(keptDir(project.id), `${commit}.zip`);
    // renamed to its name once flushed to disk, after the download ended
    expect(await eventually(async () => (await fs.stat(kept).catch(ifMissing(null))) !== null)).toBe(true);
    expect((await fs.readFile(kept)).equals(first)).toBe(true);
    expect((await fs.stat(kept)).mode & 0o777).toBe(0o600);
    // a later download, by another name of the commit, reads the file and marks it used
    const past = new Date(Date.now() - 24 * 60 * 60 * 1000);
    await fs.utimes(kept, past, past);
    const again = await download(project.id, commit, 'zip');
    expect(again.headers.get('content-disposition')).toBe(`attachment; filename="kept-${commit}.zip"`);
    expect(Buffer.from(await again.arrayBuffer()).equals(first)).toBe(true);
    expect((await fs.stat(kept)).mtimeMs).toBeGreaterThan(past.getTime() + 60_000);
    expect(await listed(await download(project.id, 'main', 'tgz'), 'tgz')).toEqual(mainFiles);
    const both = [`${commit}.tar.gz`, `${commit}.zip`];
    expect(await eventually(async () => (await fs.readdir(keptDir(project.id))).sort().join() === both.join())).toBe(true);

    // start-up recovery removes the temp file of a download a crash cut short
    const { recoverAtStartup } = await import('../../src/domain/startup-recovery.js');
    const temp = path.join(keptDir(project.id), '.gitloom-upload-left-by-a-crash');
    await fs.writeFile(temp, 'partial');
    const old = new Date(Date.now() - 2 * 60 * 60 * 1000);
    await fs.utimes(temp, old, old);
    const removed: string[] = [];
    await recoverAtStartup(server.server.services, (message) => removed.push(message));
    expect(removed).toContain(`Start-up recovery: removed archive temp file ${temp}`);
    expect((await fs.readdir(keptDir(project.id))).sort()).toEqual(both);

    // the archives go with their project
    expect((await server.call('DELETE', `/projects/${project.id}`)).status).toBe(200);
    expect(await eventually(async () => !(await fs.stat(keptDir(project.id)).catch(ifMissing(null))))).toBe(true);
  });

  it('streams a large archive and ends git when the client disconnects', async () => {
    // 24 MiB that no compression shrinks: far more than the pipes and socket buffers hold
    await commitFiles(repo.work, { 'big/noise.bin': randomBytes(24 * 1024 * 1024).toString('base64') }, 'Add noise');
    await git(repo.work, ['push', '-q', repo.remote, 'HEAD:refs/heads/big']);
    const gitArchives = async () => {
      const { stdout } = await run('ps', ['-eo', 'args']);
      return stdout.split('\n').filter((line) => line.includes(`${server.dataDir}/`) && / archive /.test(line));
    };
    const client = new AbortController();
    const response = await fetch(archiveUrl(repo.id, 'big', 'zip'), { headers: { cookie: admin.cookie }, signal: client.signal });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(first.value!.length).toBeGreaterThan(0);
    expect((await gitArchives()).length).toBe(1);
    client.abort();
    await reader.cancel().catch(() => {});
    expect(await eventually(async () => (await gitArchives()).length === 0)).toBe(true);
    // a download cut short keeps nothing: no archive, no temp file
    const big = await repo.head('big');
    const cut = async () => (await fs.readdir(keptDir(repo.id))).filter((name) => name.startsWith('.gitloom-upload-') || name.startsWith(big));
    expect(await eventually(async () => (await cut()).length === 0)).toBe(true);
    // a HEAD request gets the headers only, and its git ends too
    const head = await fetch(archiveUrl(repo.id, 'big', 'tgz'), { method: 'HEAD', headers: { cookie: admin.cookie } });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-disposition')).toBe('attachment; filename="app-big.tar.gz"');
    expect(await eventually(async () => (await gitArchives()).length === 0)).toBe(true);
    // and a whole download of it still lists every file
    expect(await listed(await download(repo.id, 'big', 'zip'), 'zip')).toContain('big/noise.bin');
  }, 120_000);
});
