import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { commitFiles, git, gitFails, gitUrl, startTestServer, type TestServer } from '../helpers/server.js';
import { eventually, givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { openRequest } from './pulls-fixtures.js';

describe('GITLOOM_PUSH_MAX_MB and GITLOOM_ARTIFACT_MAX_MB', () => {
  it('default to 2048 and 1024 MiB and refuse anything but a positive integer at start-up', () => {
    expect(loadConfig({})).toMatchObject({ pushMaxBytes: 2048 * 1024 * 1024, artifactMaxBytes: 1024 * 1024 * 1024 });
    expect(loadConfig({ GITLOOM_PUSH_MAX_MB: '3', GITLOOM_ARTIFACT_MAX_MB: '5' })).toMatchObject({
      pushMaxBytes: 3 * 1024 * 1024,
      artifactMaxBytes: 5 * 1024 * 1024,
    });
    for (const name of ['GITLOOM_PUSH_MAX_MB', 'GITLOOM_ARTIFACT_MAX_MB']) {
      expect(() => loadConfig({ [name]: '0' })).toThrow(`${name} must be a positive integer, got '0'`);
      expect(() => loadConfig({ [name]: '1.5' })).toThrow(`${name} must be a positive integer, got '1.5'`);
      expect(() => loadConfig({ [name]: 'lots' })).toThrow(`${name} must be a positive integer, got 'lots'`);
      expect(() => loadConfig({ [name]: String(2 ** 40) })).toThrow(`${name} must be at most`);
    }
  });
});

describe('git push: only branches and tags, packs up to GITLOOM_PUSH_MAX_MB (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input)', () => {
  let server: TestServer;
  let repo: Repo;
  let writer: TestUser;
  let work: string;
  let pr: { id: number; number: number };
  let updateId: number;

  const bare = () => path.join(server.dataDir, 'repos', `${repo.id}.git`);
  /** Every ref of the server's repository, `<name> <hash>` per line. */
  const serverRefs = async () => git(bare(), ['for-each-ref', '--format=%(refname) %(objectname)']);
  const serverRef = async (ref: string) => (await git(bare(), ['for-each-ref', '--format=%(objectname)', ref])).trim();
  /** Leftover push quarantines (receive-pack's `objects/tmp_objdir-incoming-*`, older `incoming-*`). */
  const quarantines = async () => (await fs.readdir(path.join(bare(), 'objects'))).filter((name) => /^(incoming-|tmp_objdir-)/.test(name));

  beforeAll(async () => {
    server = await startTestServer({ GITLOOM_PUSH_MAX_MB: '1' });
    repo = await givenRepo(server, 'limits', { files: { 'a.txt': 'a\n' } });
    [writer] = await givenUsers(server, 'writer');
    await grantRole(server, repo.id, writer.id, 'Code Writer');
    await repo.commitOn('feature', { 'f.txt': 'f\n' }, 'feature');
    const opened = await openRequest(server, { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'feature' });
    expect(opened.status, opened.text).toBe(200);
    pr = (await server.call('GET', `/pulls/${opened.json}`)).json;
    updateId = (await server.call('GET', `/pulls/${pr.id}/updates`)).json[0].id;
    work = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-push-limits-'));
    await git(work, ['clone', '-q', gitUrl(server, repo.path, writer), '.']);
  });
  afterAll(async () => {
    await server.close();
    await removeWorkTrees();
    await fs.rm(work, { recursive: true, force: true });
  });

  it("refuses a Code Writer's pushes to and deletions of server refs, printing why; no ref moves", async () => {
    expect(await serverRef(`refs/pulls/${pr.number}/head`)).not.toBe('');
    expect(await serverRef(`refs/updates/${updateId}`)).not.toBe('');
    const before = await serverRefs();
    const own = await commitFiles(work, { 'own.txt': 'mine\n' }, 'own work');

    const update = await gitFails(work, ['push', '-f', 'origin', `HEAD:refs/updates/${updateId}`]);
    expect(update).toMatch(/remote: .*Only branches \(refs\/heads\/\*\) and tags \(refs\/tags\/\*\) may be pushed/);
    expect(update).toContain(`refs/updates/${updateId}: Only branches`);
    expect(update).toContain('! [remote rejected]');
    const deletion = await gitFails(work, ['push', 'origin', `:refs/pulls/${pr.number}/head`]);
    expect(deletion).toContain(`refs/pulls/${pr.number}/head: Only branches`);
    expect(deletion).toContain('! [remote rejected]');
    for (const ref of [`refs/pulls-staging/${pr.number}`, `refs/pull/${pr.number}/head`, 'refs/meta/config', 'refs/notes/commits']) {
      expect(await gitFails(work, ['push', '-f', 'origin', `HEAD:${ref}`])).toContain(`${ref}: Only branches`);
    }
    // one refused ref refuses the whole push (the pre-receive hook decides for all refs at once)
    const mixed = await gitFails(work, ['push', '-f', 'origin', 'HEAD:refs/heads/main', `HEAD:refs/updates/${updateId}`]);
    expect(mixed).toMatch(/! \[remote rejected\] +HEAD -> main \(pre-receive hook declined\)/);
    expect(mixed).toMatch(new RegExp(`! \\[remote rejected\\] +HEAD -> refs/updates/${updateId} \\(pre-receive hook declined\\)`));

    expect(await serverRefs()).toBe(before);
    expect(await serverRef('refs/heads/main')).not.toBe(own);
  });

  it('lets the same writer push and delete branches and tags (control)', async () => {
    const head = await commitFiles(work, { 'control.txt': 'ok\n' }, 'control');
    await git(work, ['push', '-q', 'origin', 'HEAD:refs/heads/main']);
    expect(await serverRef('refs/heads/main')).toBe(head);
    await git(work, ['push', '-q', 'origin', 'HEAD:refs/heads/topic', 'HEAD:refs/tags/v1']);
    expect(await serverRef('refs/heads/topic')).toBe(head);
    expect(await serverRef('refs/tags/v1')).toBe(head);
    await git(work, ['push', '-q', 'origin', ':refs/heads/topic', ':refs/tags/v1']);
    expect(await serverRef('refs/heads/topic')).toBe('');
    expect(await serverRef('refs/tags/v1')).toBe('');
  });

  it("keeps the server's own ref writes working: a moved source branch moves refs/pulls/N/head", async () => {
    const next = await repo.commitOn('feature', { 'f2.txt': 'f2\n' }, 'feature moves');
    expect(await eventually(async () => (await serverRef(`refs/pulls/${pr.number}/head`)) === next)).toBe(true);
  });

  it("refuses a pack over GITLOOM_PUSH_MAX_MB with git's own error; no ref moves, no quarantine is left", async () => {
    await git(work, ['fetch', '-q', 'origin']);
    await git(work, ['reset', '-q', '--hard', 'origin/main']);
    const before = await serverRefs();
    await fs.writeFile(path.join(work, 'big.bin'), randomBytes(2 * 1024 * 1024));
    await git(work, ['add', 'big.bin']);
    await git(work, ['commit', '-q', '-m', 'two random MiB']);
    const stderr = await gitFails(work, ['push', 'origin', 'HEAD:refs/heads/main', 'HEAD:refs/heads/big']);
    expect(stderr).toContain('pack exceeds maximum allowed size');
    expect(stderr).toMatch(/! \[remote rejected\] +HEAD -> main \(unpacker error\)/);
    expect(await serverRefs()).toBe(before);
    expect(await quarantines()).toEqual([]);

    // control: a small push under the limit lands
    await git(work, ['reset', '-q', '--hard', 'origin/main']);
    const small = await commitFiles(work, { 'small.txt': randomBytes(64 * 1024).toString('hex') }, 'small');
    await git(work, ['push', '-q', 'origin', 'HEAD:refs/heads/main']);
    expect(await serverRef('refs/heads/main')).toBe(small);
    expect(await quarantines()).toEqual([]);
  });
});
