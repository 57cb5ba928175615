import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { commandSpec, eventually, givenRepo, removeWorkTrees, type Repo, runJobOnCommit } from '../helpers/fixtures.js';
import { ADMIN, basic, commitFiles, git, gitFails, startTestServer, type TestServer } from '../helpers/server.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const pgBase = process.env.GITLOOM_TEST_DATABASE_URL;

/** What the load saw answered 2xx: issues (id → title) and, per branch, the heads whose push succeeded, in order. */
interface Acknowledged {
  issues: Map<number, string>;
  pushes: Map<string, string[]>;
  refused: number;
}

/** One clone per pusher of the load (made before it starts); `dispose()` removes them. */
async function givenClones(repo: Repo, count: number): Promise<{ dirs: string[]; dispose(): Promise<void> }> {
  const dirs: string[] = [];
  for (let n = 0; n < count; n++) {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-outage-'));
    dirs.push(dir);
    await git(dir, ['clone', '-q', repo.remote, '.']);
  }
  return { dirs, dispose: async () => Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true }))).then(() => undefined) };
}

/**
 * Mixed load until `until` resolves: creating issues, and pushes of new commits to one branch
 * per clone. Only what was answered 2xx (or a push git reported done) is remembered; 503s and
 * refused pushes are counted.
 */
async function mixedLoad(server: TestServer, repo: Repo, clones: string[], until: Promise<void>): Promise<Acknowledged> {
  const acknowledged: Acknowledged = { issues: new Map(), pushes: new Map(), refused: 0 };
  let done = false;
  void until.then(() => {
    done = true;
  });
  const writer = async (n: number) => {
    for (let i = 0; !done; i++) {
      const title = `load ${n}.${i}`;
      const res = await server.call('POST', '/issues', { body: { projectId: repo.id, title } });
      if (res.status === 200) acknowledged.issues.set(res.json as number, title);
      else {
        expect(res.status).toBe(503);
        expect(res.json.code).toBe('GITLOOM_ERR_UNAVAILABLE');
        acknowledged.refused++;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  const pusher = async (work: string, n: number) => {
    const branch = `load-${n}`;
    const heads: string[] = [];
    acknowledged.pushes.set(branch, heads);
    for (let i = 0; !done; i++) {
      const head = await commitFiles(work, { [`file-${n}.txt`]: `${i}\n` }, `change ${n}.${i}`);
      try {
        await git(work, ['push', '-q', repo.remote, `HEAD:refs/heads/${branch}`]);
        heads.push(head);
      } catch {
        acknowledged.refused++;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  await Promise.all([writer(1), writer(2), ...clones.map((work, n) => pusher(work, n))]);
  return acknowledged;
}

/** Readiness: status and body. */
async function ready(server: TestServer): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/~health/ready`);
  return { status: res.status, body: await res.json() };
}

/**
 * After the outage: the server is ready again by itself, every acknowledged issue is there, every
 * branch is at its last acknowledged push, and every acknowledged push has its journal entry,
 * processed.
 */
async function expectNothingLost(server: TestServer, acknowledged: Acknowledged, repo: Repo): Promise<void> {
  await eventually(async () => (await ready(server)).status === 200);
  expect((await ready(server)).status).toBe(200);
  for (const [id, title] of acknowledged.issues) {
    const res = await server.call('GET', `/issues/${id}`);
    expect(res.status).toBe(200);
    expect(res.json.title).toBe(title);
  }
  await server.settled();
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-outage-'));
  try {
    for (const [branch, heads] of acknowledged.pushes) {
      if (heads.length === 0) continue;
      const onServer = (await git(work, ['ls-remote', repo.remote, `refs/heads/${branch}`])).split('\t')[0];
      expect(onServer).toBe(heads.at(-1));
      const journaled = await server.server.services.db
        .selectFrom('refJournal')
        .select(['newHash', 'processedDate'])
        .where('ref', '=', `refs/heads/${branch}`)
        .execute();
      const processed = new Set(journaled.filter((row) => row.processedDate !== null).map((row) => row.newHash));
      for (const head of heads) expect(processed.has(head), `journal entry of ${branch} at ${head}`).toBe(true);
    }
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
  // and it works as before
  expect((await server.call('POST', '/issues', { body: { projectId: repo.id, title: 'after the outage' } })).status).toBe(200);
}

describe.runIf(pgBase)('PostgreSQL outages', () => {
  let server: TestServer | undefined;
  let proxy: TcpProxy | undefined;
  afterEach(async () => {
    proxy?.restore();
    await server?.close();
    await proxy?.close();
    await removeWorkTrees();
    server = undefined;
    proxy = undefined;
  });

  it('survives its connections being terminated (pg_terminate_backend) during a mixed load', async () => {
    server = await startTestServer();
    const repo = await givenRepo(server, 'terminated');
    const database = new URL(server.server.services.config.databaseUrl!).pathname.slice(1);
    const admin = new pg.Client({ connectionString: pgBase });
    await admin.connect();
    try {
      let terminations = 0;
      const terminate = async () => {
        for (let i = 0; i < 15; i++) {
          const { rowCount } = await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [database]);
          terminations += rowCount ?? 0;
          await new Promise((r) => setTimeout(r, 200));
        }
      };
      const clones = await givenClones(repo, 2);
      const terminating = terminate();
      const [acknowledged] = await Promise.all([mixedLoad(server, repo, clones.dirs, terminating), terminating]).finally(() => clones.dispose());
      expect(terminations).toBeGreaterThan(0);
      expect(acknowledged.issues.size).toBeGreaterThan(0);
      expect((await fetch(`${server.url}/~health/live`)).status).toBe(200);
      await expectNothingLost(server, acknowledged, repo);
    } finally {
      await admin.end();
    }
  });

  it('survives PostgreSQL being unreachable for 10 s: 503 with Retry-After, readiness 503 then 200, nothing lost', async () => {
    const target = new URL(pgBase!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const through = proxy;
    const running = await startTestServer({ GITLOOM_METRICS_TOKEN: 'scrape-me' }, { databaseVia: (url) => through.via(url) });
    const scrape = async () => (await fetch(`${running.url}/~metrics`, { headers: { authorization: 'Bearer scrape-me' } })).text();
    server = running;
    const spec = commandSpec({ name: 'Slow', commands: ['sleep 5', 'echo slept'] });
    const repo = await givenRepo(server, 'cut-off', { files: { 'README.md': '# cut-off\n', '.onedev-buildspec.yml': spec } });
    expect((await ready(server)).status).toBe(200);
    const clones = await givenClones(repo, 2);
    // a build that finishes while the database is away: its outcome is recorded once it is back
    const buildId = (await runJobOnCommit(server, { projectId: repo.id, commitHash: await repo.head('main'), jobName: 'Slow', reason: 'outage' }))
      .json as number;
    const build = async () => (await running.call('GET', `/builds/${buildId}`)).json;
    expect(await eventually(async () => (await build()).status === 'RUNNING')).toBe(true);
    const outage = (async () => {
      await new Promise((r) => setTimeout(r, 1000));
      through.cut();
      await new Promise((r) => setTimeout(r, 10_000));
      through.restore();
    })();
    const load = mixedLoad(server, repo, clones.dirs, outage).finally(() => clones.dispose());
    await new Promise((r) => setTimeout(r, 3000));
    // in the middle of the outage
    const during = await ready(server);
    expect(during.status).toBe(503);
    expect(during.body.checks.database.ok).toBe(false);
    expect(during.body.checks.database.detail).toMatch(/^unavailable since /);
    expect((await fetch(`${server.url}/~health/live`)).status).toBe(200);
    const refused = await server.call('GET', `/projects/${repo.id}`);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(refused.json.code).toBe('GITLOOM_ERR_UNAVAILABLE');
    // pages too, as a page
    const page = await fetch(`${running.url}/${repo.path}`, { headers: { authorization: basic(ADMIN.name, ADMIN.password) } });
    expect(page.status).toBe(503);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('retry-after')).toBe('5');
    // metrics still answer, and say so
    expect(await scrape()).toMatch(/^gitloom_database_up 0$/m);
    const acknowledged = await load;
    expect(acknowledged.refused).toBeGreaterThan(0);
    await expectNothingLost(server, acknowledged, repo);
    const finished = await eventually(async () => {
      const b = await build();
      return b.status === 'RUNNING' ? null : b;
    });
    expect(finished.status).toBe('SUCCESSFUL');
    expect(await scrape()).toMatch(/^gitloom_database_up 1$/m);
    expect((await server.call('GET', `/builds/${buildId}/log`)).text).toContain('slept');
  });
});

describe.runIf(!pgBase)('SQLite outages', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    await removeWorkTrees();
    server = undefined;
  });

  it('answers 503 GITLOOM_ERR_UNAVAILABLE, not 500, while another connection holds the database locked beyond busy_timeout', async () => {
    server = await startTestServer();
    const projectId = (await server.call('POST', '/projects', { body: { name: 'locked' } })).json as number;
    const locker = new Database(path.join(server.dataDir, 'gitloom.db'));
    try {
      locker.exec('begin exclusive');
      const res = await server.call('POST', '/issues', { body: { projectId, title: 'while locked' } });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(res.json.code).toBe('GITLOOM_ERR_UNAVAILABLE');
      locker.exec('rollback');
    } finally {
      locker.close();
    }
    const created = await server.call('POST', '/issues', { body: { projectId, title: 'after the lock' } });
    expect(created.status).toBe(200);
    expect((await server.call('GET', `/issues/${created.json as number}`)).json.title).toBe('after the lock');
    expect((await fetch(`${server.url}/~health/ready`)).status).toBe(200);
  });

  it('refuses a push whose journal intent cannot be written, before any ref moves', async () => {
    server = await startTestServer();
    const repo = await givenRepo(server, 'locked-push');
    const before = await repo.head('main');
    await git(repo.work, ['checkout', '-q', 'main']);
    const head = await commitFiles(repo.work, { 'README.md': 'changed\n' }, 'while locked');
    const locker = new Database(path.join(server.dataDir, 'gitloom.db'));
    try {
      // reads go on (WAL), so the push is normally authorized and checked, and the pre-receive
      // hook refuses it as its intent cannot be written; a write of the HTTP exchange before it
      // (sign-in bookkeeping) is refused with a 503 instead
      locker.exec('begin exclusive');
      const stderr = await gitFails(repo.work, ['push', '-q', repo.remote, 'main']);
      expect(stderr).toMatch(/PUSH REJECTED: the server cannot record pushes right now, its database is unavailable|returned error: 503/);
      locker.exec('rollback');
    } finally {
      locker.close();
    }
    expect(await repo.head('main')).toBe(before);
    const journaled = await server.server.services.db.selectFrom('refJournal').select('id').where('newHash', '=', head).execute();
    expect(journaled).toEqual([]);
    // once the database answers, the same push lands and is journaled
    await git(repo.work, ['push', '-q', repo.remote, 'main']);
    expect(await repo.head('main')).toBe(head);
    await server.settled();
    const processed = await server.server.services.db.selectFrom('refJournal').select('processedDate').where('newHash', '=', head).execute();
    expect(processed).toHaveLength(1);
    expect(processed[0].processedDate).not.toBeNull();
  });
});
