/**
 * Repository mirrors (docs/compatibility.md#repository-mirrors) between two real servers over
 * HTTP: a pull mirror follows its remote's branches and tags (new commits, new and deleted
 * branches and tags) through the ref journal, so webhooks react as to a push; a pull-mirrored
 * project refuses pushes and ref edits; a push mirror pushes after each push, retries a remote
 * that was away and shows its last error; a failing remote backs off; credentials never show in
 * the API, the errors, the logs or the process list; private addresses are refused when saved and
 * when connecting.
 */
import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, git, gitFails, gitUrl, makeWorkTree, startTestServer, ADMIN, type TestServer } from '../helpers/server.js';
import { eventually, givenProject, givenRepo, grantRole, removeWorkTrees, type Repo } from '../helpers/fixtures.js';
import { startHttpReceiver } from '../helpers/receivers.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { MirrorWorker } from '../../src/domain/mirrors/index.js';

type Receiver = Awaited<ReturnType<typeof startHttpReceiver>>;

/** The mirror's JSON once `done` says its latest attempt is the one awaited (polling the API). */
async function mirrorWhen(server: TestServer, projectId: number, mirrorId: number, done: (m: any) => boolean, timeoutMs = 20_000): Promise<any> {
  let last: any;
  await eventually(async () => {
    last = (await server.call('GET', `/projects/${projectId}/mirrors/${mirrorId}`)).json;
    return done(last);
  }, timeoutMs);
  return last;
}

/** The mirror's JSON after its next attempt ends (the attempt count grows past `after`). */
const afterAttempt = (server: TestServer, projectId: number, mirrorId: number, after: number) =>
  mirrorWhen(server, projectId, mirrorId, (m) => m.attemptCount > after && !m.syncing);

/** Branches and tags of a project as git sees them over HTTP: `ref → hash`. */
async function refsOf(server: TestServer, projectPath: string): Promise<Record<string, string>> {
  const out = await git('/', ['ls-remote', gitUrl(server, projectPath, ADMIN), 'refs/heads/*', 'refs/tags/*']);
  return Object.fromEntries(
    out
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('\t').reverse()),
  );
}

async function addMirror(server: TestServer, projectId: number, body: Record<string, unknown>): Promise<number> {
  const res = await server.call('POST', `/projects/${projectId}/mirrors`, { body });
  expect(res.status, res.text).toBe(200);
  return res.json as number;
}

describe('repository mirrors between two servers', () => {
  let upstream: TestServer;
  let local: TestServer;
  let receiver: Receiver;
  const logs: string[] = [];
  let source: Repo;

  beforeAll(async () => {
    receiver = await startHttpReceiver();
    upstream = await startTestServer({ GITLOOM_WEBHOOK_ALLOW_PRIVATE: 'true' });
    local = await startTestServer(
      { GITLOOM_WEBHOOK_ALLOW_PRIVATE: 'true', GITLOOM_MIRROR_BACKOFF_MS: '400', GITLOOM_OUTBOX_BACKOFF_MS: '50' },
      { logDestination: { write: (line: string) => void logs.push(line) } },
    );
    source = await givenRepo(upstream, 'upstream', { files: { 'README.md': '# upstream\n' } });
  });
  afterAll(async () => {
    await local?.close();
    await upstream?.close();
    await receiver?.close();
    await removeWorkTrees();
  });

  describe('a pull mirror', () => {
    let projectId: number;
    let mirrorId: number;
    let work: string;

    beforeAll(async () => {
      projectId = await givenProject(local, { name: 'follower' });
      const setting = (await local.call('GET', `/projects/${projectId}/setting`)).json;
      const hooks = [{ postUrl: `${receiver.url}/push`, eventTypes: ['CODE_PUSH'], secret: 'hook-secret' }];
      expect((await local.call('POST', `/projects/${projectId}/setting`, { body: { ...setting, webHooks: hooks } })).status).toBe(200);
      work = source.work;
    });

    it('copies the remote at once, with its default branch, and shows the sync', async () => {
      mirrorId = await addMirror(local, projectId, {
        direction: 'PULL',
        url: `${upstream.url}/upstream`,
        userName: ADMIN.name,
        password: ADMIN.password,
        intervalMinutes: 30,
      });
      const mirror = await mirrorWhen(local, projectId, mirrorId, (m) => m.lastSuccessDate !== null);
      expect(mirror).toMatchObject({ direction: 'PULL', url: `${upstream.url}/upstream`, userName: ADMIN.name, passwordSet: true, intervalMinutes: 30 });
      expect(mirror.lastError).toBeNull();
      expect(await refsOf(local, 'follower')).toEqual(await refsOf(upstream, 'upstream'));
      expect((await local.call('GET', `/repositories/${projectId}/default-branch`)).text).toBe('main');
    });

    it('picks up new commits, branches and tags, then deletions, and webhooks hear of each as of a push', async () => {
      const head = await commitFiles(work, { 'a.txt': 'a\n' }, 'second');
      await git(work, ['tag', '-a', 'v1', '-m', 'release 1']);
      await git(work, ['branch', 'feature']);
      await git(work, ['push', '-q', source.remote, 'main', 'feature', 'v1']);
      let before = (await local.call('GET', `/projects/${projectId}/mirrors/${mirrorId}`)).json.attemptCount;
      expect((await local.call('POST', `/projects/${projectId}/mirrors/${mirrorId}/sync`)).status).toBe(200);
      let mirror = await afterAttempt(local, projectId, mirrorId, before);
      expect(mirror.lastError).toBeNull();
      const copied = await refsOf(local, 'follower');
      expect(copied).toEqual(await refsOf(upstream, 'upstream'));
      expect(copied['refs/heads/main']).toBe(head);
      expect(Object.keys(copied)).toEqual(expect.arrayContaining(['refs/heads/feature', 'refs/tags/v1']));

      await local.settled();
      const pushes = await eventually(async () => {
        const bodies = receiver.received.filter((r) => r.path === '/push').map((r) => JSON.parse(r.body));
        const heard = (ref: string, hash?: string) => bodies.some((b) => b.refName === ref && (hash === undefined || b.newCommitId === hash));
        return heard('refs/heads/main', head) && heard('refs/heads/feature') && heard('refs/tags/v1') && bodies;
      });
      expect(pushes).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ '@type': 'RefUpdated', refName: 'refs/heads/main', newCommitId: head, projectId }),
          expect.objectContaining({ refName: 'refs/heads/feature', oldCommitId: null }),
          expect.objectContaining({ refName: 'refs/tags/v1', oldCommitId: null }),
        ]),
      );

      await git(work, ['push', '-q', source.remote, ':feature', ':v1']);
      before = mirror.attemptCount;
      expect((await local.call('POST', `/projects/${projectId}/mirrors/${mirrorId}/sync`)).status).toBe(200);
      mirror = await afterAttempt(local, projectId, mirrorId, before);
      expect(mirror.lastError).toBeNull();
      expect(Object.keys(await refsOf(local, 'follower'))).toEqual(['refs/heads/main']);
      await local.settled();
      const deleted = await eventually(() =>
        Promise.resolve(
          receiver.received.some((r) => r.path === '/push' && JSON.parse(r.body).refName === 'refs/heads/feature' && JSON.parse(r.body).newCommitId === null),
        ),
      );
      expect(deleted).toBe(true);
    });

    it('follows a forced push of the remote', async () => {
      await git(work, ['reset', '-q', '--hard', 'HEAD~1']);
      const rewritten = await commitFiles(work, { 'b.txt': 'b\n' }, 'rewritten');
      await git(work, ['push', '-q', '-f', source.remote, 'main']);
      const before = (await local.call('GET', `/projects/${projectId}/mirrors/${mirrorId}`)).json.attemptCount;
      await local.call('POST', `/projects/${projectId}/mirrors/${mirrorId}/sync`);
      expect((await afterAttempt(local, projectId, mirrorId, before)).lastError).toBeNull();
      expect((await refsOf(local, 'follower'))['refs/heads/main']).toBe(rewritten);
    });

    it('keeps its branches when the remote lists none, saying why', async () => {
      const vanishing = await givenRepo(upstream, 'vanishing');
      const followerId = await givenProject(local, { name: 'keeper' });
      const id = await addMirror(local, followerId, { direction: 'PULL', url: `${upstream.url}/vanishing`, userName: ADMIN.name, password: ADMIN.password });
      const first = await mirrorWhen(local, followerId, id, (m) => m.lastSuccessDate !== null);
      // a remote emptied behind its server's back (its default branch cannot be deleted otherwise)
      await git('/', [`--git-dir=${upstream.dataDir}/repos/${vanishing.id}.git`, 'update-ref', '-d', 'refs/heads/main']);
      expect(await refsOf(upstream, 'vanishing')).toEqual({});
      await local.call('POST', `/projects/${followerId}/mirrors/${id}/sync`);
      const refused = await afterAttempt(local, followerId, id, first.attemptCount);
      expect(refused.lastError).toContain('The remote has no branches or tags');
      expect(Object.keys(await refsOf(local, 'keeper'))).toEqual(['refs/heads/main']);
      // the journal's reactions to the mirrored changes ran without a fault
      expect(logs.filter((line) => /journal worker failed|event handler failed/.test(line))).toEqual([]);
    });

    it('refuses pushes, ref edits and a second pull mirror; deleting the mirror lifts the refusal', async () => {
      const clone = await makeWorkTree({ 'x.txt': 'x\n' });
      const stderr = await gitFails(clone, ['push', gitUrl(local, 'follower', ADMIN), 'main:other']);
      expect(stderr).toContain('This project is a pull mirror');
      const branch = await local.call('POST', `/repositories/${projectId}/branches`, { body: { branchName: 'other', revision: 'main' } });
      expect(branch.status).toBe(409);
      expect(branch.json.code).toBe('GITLOOM_ERR_PULL_MIRRORED');
      const second = await local.call('POST', `/projects/${projectId}/mirrors`, { body: { direction: 'PULL', url: `${upstream.url}/upstream` } });
      expect(second.status).toBe(409);
      expect(second.json.code).toBe('GITLOOM_ERR_MIRROR_CONFLICT');

      const other = await givenProject(local, { name: 'busy' });
      await git(clone, ['push', '-q', gitUrl(local, 'busy', ADMIN), 'main']);
      const notEmpty = await local.call('POST', `/projects/${other}/mirrors`, { body: { direction: 'PULL', url: `${upstream.url}/upstream` } });
      expect(notEmpty.status).toBe(409);
      expect(notEmpty.json.detail).toContain('no branches or tags');

      const scratch = await givenProject(local, { name: 'scratch' });
      const scratchMirror = await addMirror(local, scratch, {
        direction: 'PULL',
        url: `${upstream.url}/upstream`,
        userName: ADMIN.name,
        password: ADMIN.password,
      });
      await mirrorWhen(local, scratch, scratchMirror, (m) => m.lastSuccessDate !== null);
      expect((await local.call('DELETE', `/projects/${scratch}/mirrors/${scratchMirror}`)).status).toBe(200);
      await git(clone, ['push', '-q', gitUrl(local, 'scratch', ADMIN), 'main:other']);
      await fs.rm(clone, { recursive: true, force: true });
    });
  });

  describe('a push mirror', () => {
    let proxy: TcpProxy;
    let origin: Repo;
    let mirrorId: number;
    let targetId: number;

    beforeAll(async () => {
      proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(upstream.url).port) });
      origin = await givenRepo(local, 'origin', { files: { 'README.md': '# origin\n' } });
      targetId = await givenProject(upstream, { name: 'copy' });
    });
    afterAll(async () => {
      await proxy?.close();
    });

    it('pushes branches and tags at once, then after each push', async () => {
      mirrorId = await addMirror(local, origin.id, {
        direction: 'PUSH',
        url: proxy.via(`${upstream.url}/copy`),
        userName: ADMIN.name,
        password: ADMIN.password,
      });
      let mirror = await mirrorWhen(local, origin.id, mirrorId, (m) => m.lastSuccessDate !== null);
      expect(mirror).toMatchObject({ direction: 'PUSH', intervalMinutes: null, lastError: null });
      expect(await refsOf(upstream, 'copy')).toEqual(await refsOf(local, 'origin'));

      await origin.commitOn('main', { 'n.txt': 'new\n' }, 'new work');
      await origin.commitOn('topic', { 't.txt': 'topic\n' }, 'topic work');
      await git(origin.work, ['tag', 'v2']);
      await git(origin.work, ['push', '-q', origin.remote, 'v2']);
      const wanted = await refsOf(local, 'origin');
      await eventually(async () => JSON.stringify(await refsOf(upstream, 'copy')) === JSON.stringify(wanted));
      expect(await refsOf(upstream, 'copy')).toEqual(wanted);

      // deletions propagate, as `git push --mirror`
      await git(origin.work, ['push', '-q', origin.remote, ':topic']);
      await eventually(async () => !('refs/heads/topic' in (await refsOf(upstream, 'copy'))));
      expect(await refsOf(upstream, 'copy')).toEqual(await refsOf(local, 'origin'));
      // nothing left to push: not due until the next change
      mirror = await mirrorWhen(local, origin.id, mirrorId, (m) => !m.syncing && m.nextSyncDate === null);
      expect(mirror.lastError).toBeNull();
    });

    it('shows the error of a remote that is away and pushes by itself once it is back', async () => {
      proxy.cut();
      const before = (await local.call('GET', `/projects/${origin.id}/mirrors/${mirrorId}`)).json.attemptCount;
      const head = await origin.commitOn('main', { 'away.txt': 'while away\n' }, 'while away');
      const failed = await afterAttempt(local, origin.id, mirrorId, before);
      expect(failed.lastError).toMatch(/Failed to connect|Connection refused|Empty reply|Recv failure|reset/i);
      expect(failed.failureCount).toBeGreaterThanOrEqual(1);
      expect(failed.nextSyncDate).not.toBeNull();
      proxy.restore();
      const recovered = await mirrorWhen(local, origin.id, mirrorId, (m) => m.failureCount === 0 && m.lastError === null);
      expect(new Date(recovered.lastSuccessDate).getTime()).toBeGreaterThan(new Date(failed.lastAttemptDate).getTime());
      expect((await refsOf(upstream, 'copy'))['refs/heads/main']).toBe(head);
    });

    it('shows a refused login as the last error, without the password', async () => {
      const wrong = 'wrong-Pa55word-value';
      const before = (await local.call('GET', `/projects/${origin.id}/mirrors/${mirrorId}`)).json.attemptCount;
      expect((await local.call('POST', `/projects/${origin.id}/mirrors/${mirrorId}`, { body: { password: wrong } })).status).toBe(200);
      const failed = await afterAttempt(local, origin.id, mirrorId, before);
      expect(failed.lastError).toMatch(/Authentication failed|401|could not read Username/i);
      const shown = JSON.stringify((await local.call('GET', `/projects/${origin.id}/mirrors`)).json);
      for (const secret of [wrong, ADMIN.password, Buffer.from(`${ADMIN.name}:${wrong}`).toString('base64')]) {
        expect(shown).not.toContain(secret);
        expect(logs.join('\n')).not.toContain(secret);
      }
      expect(logs.some((line) => line.includes('mirror sync failed'))).toBe(true);
      expect((await local.call('POST', `/projects/${origin.id}/mirrors/${mirrorId}`, { body: { password: ADMIN.password } })).status).toBe(200);
      await mirrorWhen(local, origin.id, mirrorId, (m) => m.failureCount === 0 && m.lastSuccessDate !== null && m.lastError === null);
    });
  });

  describe('a failing remote', () => {
    it('is retried with exponential backoff, not stormed, and its error is shown', async () => {
      const failing = await startHttpReceiver(() => 500);
      try {
        const projectId = await givenProject(local, { name: 'storm' });
        const mirrorId = await addMirror(local, projectId, { direction: 'PULL', url: `${failing.url}/repo.git` });
        const started = Date.now();
        await new Promise((r) => setTimeout(r, 5000));
        const mirror = (await local.call('GET', `/projects/${projectId}/mirrors/${mirrorId}`)).json;
        const elapsed = Date.now() - started;
        // backoff 400 ms doubling: attempts near 0, 0.4, 1.2, 2.8 s (and 6 s): four within five seconds, not dozens
        expect(elapsed).toBeLessThan(8000);
        expect(mirror.attemptCount).toBeGreaterThanOrEqual(2);
        expect(mirror.attemptCount).toBeLessThanOrEqual(5);
        expect(failing.received.length).toBeLessThanOrEqual(mirror.attemptCount + 1);
        expect(mirror.failureCount).toBe(mirror.attemptCount);
        expect(mirror.lastError).toMatch(/500|returned error/);
        expect(mirror.lastSuccessDate).toBeNull();
        expect(new Date(mirror.nextSyncDate).getTime()).toBeGreaterThan(Date.now());
        expect((await local.call('DELETE', `/projects/${projectId}/mirrors/${mirrorId}`)).status).toBe(200);
      } finally {
        await failing.close();
      }
    });
  });

  describe('credentials', () => {
    it('never appear in the API output nor in the arguments of the git process', async () => {
      const hanging = await startHttpReceiver(() => null);
      const secret = 'S3cret-token-in-env-only';
      try {
        const projectId = await givenProject(local, { name: 'hidden' });
        const mirrorId = await addMirror(local, projectId, { direction: 'PULL', url: `${hanging.url}/slow.git`, userName: 'robot', password: secret });
        await eventually(() => Promise.resolve(hanging.received.length > 0));
        // the git process is waiting for the remote's answer now
        const commandLines: string[] = [];
        for (const pid of await fs.readdir('/proc')) {
          if (!/^\d+$/.test(pid)) continue;
          const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
          if (cmdline.includes(hanging.url)) commandLines.push(cmdline.replace(/\0/g, ' '));
        }
        expect(commandLines.length).toBeGreaterThan(0);
        for (const line of commandLines) expect(line).not.toContain(secret);
        expect(hanging.received[0].headers.authorization).toBe(`Basic ${Buffer.from(`robot:${secret}`).toString('base64')}`);
        const listed = await local.call('GET', `/projects/${projectId}/mirrors`);
        expect(listed.json[0]).toMatchObject({ userName: 'robot', passwordSet: true, syncing: true });
        expect(listed.text).not.toContain(secret);
        expect(listed.text).not.toContain('password"');
        const stored = await local.server.services.db.selectFrom('repositoryMirrors').select('password').where('id', '=', mirrorId).executeTakeFirstOrThrow();
        expect(stored.password).toMatch(/^v1:/);
        expect(stored.password).not.toContain(secret);
        expect((await local.call('DELETE', `/projects/${projectId}/mirrors/${mirrorId}`)).status).toBe(200);
      } finally {
        await hanging.close();
      }
    });
  });

  describe('leases', () => {
    it('let one worker at a time sync a mirror, however many processes poll the database', async () => {
      const hanging = await startHttpReceiver(() => null);
      // a second worker on the same database, as a second server process would run it
      const second = new MirrorWorker(local.server.services, { tickMs: 50 });
      await second.start();
      try {
        const projectId = await givenProject(local, { name: 'leased' });
        const mirrorId = await addMirror(local, projectId, { direction: 'PULL', url: `${hanging.url}/slow.git` });
        await eventually(() => Promise.resolve(hanging.received.length > 0));
        await new Promise((r) => setTimeout(r, 1500));
        expect(hanging.received.length).toBe(1);
        const row = await local.server.services.db.selectFrom('repositoryMirrors').selectAll().where('id', '=', mirrorId).executeTakeFirstOrThrow();
        expect(row.leaseOwner).not.toBeNull();
        expect(row.leaseExpires).toBeGreaterThan(Date.now());
        expect((await local.call('DELETE', `/projects/${projectId}/mirrors/${mirrorId}`)).status).toBe(200);
      } finally {
        await hanging.close();
        await second.stop();
      }
    });
  });

  describe('outbound rules', () => {
    let guarded: TestServer;
    beforeAll(async () => {
      guarded = await startTestServer({ GITLOOM_MIRROR_BACKOFF_MS: '60000' });
    });
    afterAll(async () => {
      await guarded?.close();
    });

    it('refuse private, loopback and link-local addresses when a mirror is saved', async () => {
      const projectId = await givenProject(guarded, { name: 'guarded' });
      for (const url of [
        'http://127.0.0.1:9/x.git',
        'http://localhost/x.git',
        'http://[::1]/x.git',
        'http://169.254.169.254/latest',
        'http://10.1.2.3/x.git',
        'http://0x7f.1/x',
      ]) {
        const res = await guarded.call('POST', `/projects/${projectId}/mirrors`, { body: { direction: 'PUSH', url } });
        expect(res.status, url).toBe(400);
        expect(res.json.code, url).toBe('GITLOOM_ERR_MIRROR_URL');
        expect(res.json.detail, url).toMatch(/public address/);
      }
    });

    it('are checked again when connecting', async () => {
      const projectId = await givenProject(guarded, { name: 'rebound' });
      const target = await givenProject(upstream, { name: 'rebound-target' });
      expect(target).toBeGreaterThan(0);
      // saved while private addresses were allowed, synced once they no longer are
      guarded.server.services.config.webhookAllowPrivate = true;
      const mirrorId = await addMirror(guarded, projectId, {
        direction: 'PULL',
        url: `${upstream.url}/rebound-target`,
        userName: ADMIN.name,
        password: ADMIN.password,
        enabled: false,
      });
      guarded.server.services.config.webhookAllowPrivate = false;
      expect((await guarded.call('POST', `/projects/${projectId}/mirrors/${mirrorId}`, { body: { enabled: true } })).status).toBe(200);
      const mirror = await mirrorWhen(guarded, projectId, mirrorId, (m) => m.attemptCount > 0 && !m.syncing);
      expect(mirror.lastError).toContain('127.0.0.1 is not a public address');
      expect(mirror.lastSuccessDate).toBeNull();
    });
  });

  describe('validation and permissions', () => {
    it('answers 400 with stable codes for bad settings', async () => {
      const projectId = await givenProject(local, { name: 'checks' });
      const cases: [Record<string, unknown>, string][] = [
        [{ direction: 'PULL', url: 'ftp://example.com/x' }, 'GITLOOM_ERR_MIRROR_URL'],
        [{ direction: 'PUSH', url: 'https://bob:pw@example.com/x.git' }, 'GITLOOM_ERR_MIRROR_URL'],
        [{ direction: 'PUSH', url: 'not a url' }, 'GITLOOM_ERR_MIRROR_URL'],
        [{ direction: 'PULL', url: 'https://example.com/x.git', intervalMinutes: 1 }, 'GITLOOM_ERR_MIRROR_VALUE'],
        [{ direction: 'PUSH', url: 'https://example.com/x.git', intervalMinutes: 60 }, 'GITLOOM_ERR_MIRROR_VALUE'],
        [{ direction: 'PUSH', url: 'https://example.com/x.git', password: 'token' }, 'GITLOOM_ERR_MIRROR_VALUE'],
        [{ direction: 'PUSH', url: 'https://example.com/x.git', userName: 'a:b', password: 'token' }, 'GITLOOM_ERR_MIRROR_VALUE'],
        [{ direction: 'SIDEWAYS', url: 'https://example.com/x.git' }, 'GITLOOM_ERR_VALIDATION'],
        [{ url: 'https://example.com/x.git' }, 'GITLOOM_ERR_VALIDATION'],
        [{ direction: 'PUSH', url: 'https://example.com/x.git', token: 'x' }, 'GITLOOM_ERR_VALIDATION'],
      ];
      for (const [body, code] of cases) {
        const res = await local.call('POST', `/projects/${projectId}/mirrors`, { body });
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.headers.get('content-type')).toContain('application/problem+json');
        expect(res.json.code, JSON.stringify(body)).toBe(code);
      }
      const id = await addMirror(local, projectId, { direction: 'PUSH', url: 'https://example.invalid/x.git', enabled: false });
      const turned = await local.call('POST', `/projects/${projectId}/mirrors/${id}`, { body: { direction: 'PULL' } });
      expect(turned.json.code).toBe('GITLOOM_ERR_MIRROR_VALUE');
      const disabled = await local.call('POST', `/projects/${projectId}/mirrors/${id}/sync`);
      expect(disabled.status).toBe(409);
      expect((await local.call('GET', `/projects/${projectId}/mirrors/${id + 1000}`)).status).toBe(404);
    });

    it('drops a stored password when the URL moves to another host', async () => {
      const projectId = await givenProject(local, { name: 'moving' });
      const id = await addMirror(local, projectId, { direction: 'PUSH', url: 'https://example.invalid/a.git', userName: 'u', password: 'p', enabled: false });
      await local.call('POST', `/projects/${projectId}/mirrors/${id}`, { body: { url: 'https://example.invalid/b.git' } });
      expect((await local.call('GET', `/projects/${projectId}/mirrors/${id}`)).json.passwordSet).toBe(true);
      await local.call('POST', `/projects/${projectId}/mirrors/${id}`, { body: { url: 'https://other.invalid/b.git' } });
      expect((await local.call('GET', `/projects/${projectId}/mirrors/${id}`)).json.passwordSet).toBe(false);
    });

    it('needs the manage privilege; a project one cannot see is 404', async () => {
      const projectId = await givenProject(local, { name: 'managed' });
      const writer = await local.createUser('mirror-writer');
      const stranger = await local.createUser('mirror-stranger');
      await grantRole(local, projectId, writer.id, 'Code Writer');
      expect((await local.call('GET', `/projects/${projectId}/mirrors`, { auth: writer.auth })).status).toBe(403);
      const create = await local.call('POST', `/projects/${projectId}/mirrors`, {
        auth: writer.auth,
        body: { direction: 'PUSH', url: 'https://example.invalid/x.git' },
      });
      expect(create.status).toBe(403);
      expect((await local.call('GET', `/projects/${projectId}/mirrors`, { auth: stranger.auth })).status).toBe(404);
      expect((await local.call('GET', `/projects/${projectId}/mirrors`, { auth: null })).status).toBe(401);
    });
  });
});
