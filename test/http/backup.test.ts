import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { eventually, freshClone, givenRepo, removeWorkTrees, runJobOnCommit } from '../helpers/fixtures.js';
import { ADMIN, basic, commitFiles, createPostgresDatabase, git, gitUrl, settled, startTestServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const SPEC = `version: 25
jobs:
- name: Hello
  steps:
  - !CommandStep
    name: hello
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo hello from the build
`;

/** Runs the gitloom CLI from source with `env`. */
async function cli(args: string[], env: Record<string, string>): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: root, env: { ...process.env, ...env } });
  return stdout;
}

/** Every ref of every repository of a data directory, read by git. */
async function allRefs(dataDir: string): Promise<Record<string, string>> {
  const refs: Record<string, string> = {};
  const reposDir = path.join(dataDir, 'repos');
  for (const name of (await fs.readdir(reposDir)).sort()) {
    const repo = path.join(reposDir, name);
    refs[`${name} HEAD`] = (await git(repo, ['symbolic-ref', 'HEAD'])).trim();
    for (const line of (await git(repo, ['for-each-ref', '--format=%(refname) %(objectname)'])).trim().split('\n')) {
      const [ref, hash] = line.split(' ');
      refs[`${name} ${ref}`] = hash;
    }
  }
  return refs;
}

/** Runs the gitloom CLI expecting it to fail; returns its stdout. */
async function cliFails(args: string[], env: Record<string, string>): Promise<string> {
  try {
    await cli(args, env);
  } catch (error) {
    return (error as { stdout: string }).stdout;
  }
  throw new Error(`gitloom ${args.join(' ')} unexpectedly succeeded`);
}

/** The environment the CLI needs to work on a test server's data directory and database. */
function envOf(server: TestServer): Record<string, string> {
  return { GITLOOM_DATA_DIR: server.dataDir, GITLOOM_DATABASE_URL: server.server.services.config.databaseUrl ?? '' };
}

describe('backup and restore', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
    await removeWorkTrees();
  });

  let places = 0;
  /** Restores `backup` with the CLI into a fresh data directory (and a fresh PostgreSQL database when testing on it); returns its output. */
  async function restoreFresh(
    work: string,
    backup: string,
  ): Promise<{ output: string; dataDir: string; env: Record<string, string>; databaseUrl: string | null }> {
    const dataDir = path.join(work, `restored-${++places}`);
    const pgBase = process.env.GITLOOM_TEST_DATABASE_URL;
    const database = pgBase ? await createPostgresDatabase(pgBase) : null;
    if (database) cleanup.push(() => database.drop());
    const env = { GITLOOM_DATA_DIR: dataDir, GITLOOM_DATABASE_URL: database?.url ?? '' };
    return { output: await cli(['restore', backup], env), dataDir, env, databaseUrl: database?.url ?? null };
  }

  /** Starts a server on a restored data directory (closed after the tests). */
  async function startRestored(restored: { dataDir: string; databaseUrl: string | null }): Promise<RunningServer> {
    const server = await startServer(
      loadConfig(
        {
          GITLOOM_HOST: '127.0.0.1',
          GITLOOM_SSH_PORT: '0',
          ...(restored.databaseUrl && { GITLOOM_DATABASE_URL: restored.databaseUrl }),
        },
        { port: 0, dataDir: restored.dataDir },
      ),
      { logger: false },
    );
    cleanup.push(() => server.close());
    return server;
  }

  /**
   * Once the restored server has reacted to every journaled change: every open pull request's
   * latest update and `refs/pulls/N/head` are its source branch's head in git, and `git fsck` finds
   * every repository whole. Returns the open requests' heads.
   */
  async function expectConsistent(server: RunningServer, dataDir: string): Promise<string[]> {
    await settled(server);
    const { db } = server.services;
    const open = await db
      .selectFrom('pullRequests')
      .select(['id', 'number', 'sourceProjectId', 'targetProjectId', 'sourceBranch'])
      .where('status', '=', 'OPEN')
      .execute();
    const heads: string[] = [];
    for (const pr of open) {
      const update = await db
        .selectFrom('pullRequestUpdates')
        .select('headCommitHash')
        .where('requestId', '=', pr.id)
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      const source = path.join(dataDir, 'repos', `${pr.sourceProjectId}.git`);
      const target = path.join(dataDir, 'repos', `${pr.targetProjectId}.git`);
      expect(update.headCommitHash).toBe((await git(source, ['rev-parse', `refs/heads/${pr.sourceBranch}`])).trim());
      expect((await git(target, ['rev-parse', `refs/pulls/${pr.number}/head`])).trim()).toBe(update.headCommitHash);
      heads.push(update.headCommitHash);
    }
    for (const name of await fs.readdir(path.join(dataDir, 'repos'))) {
      // git fsck exits non-zero (the helper throws) on a missing or corrupt object
      await git(path.join(dataDir, 'repos', name), ['fsck', '--no-dangling', '--no-progress']);
    }
    return heads;
  }

  it('restores every project, pull request, ref and build log from a backup taken while the server runs', async () => {
    const server: TestServer = await startTestServer({}, { ssh: true });
    cleanup.push(() => server.close());
    const repo = await givenRepo(server, 'kept', { files: { 'README.md': '# kept\n', '.onedev-buildspec.yml': SPEC } });
    const other = await givenRepo(server, 'other');
    const child = await server.call('POST', '/projects', { body: { name: 'child', parentId: repo.id } });
    expect(child.status).toBe(200);
    await repo.commitOn('open-one', { 'a.txt': 'a\n' }, 'a');
    await repo.commitOn('merged-one', { 'b.txt': 'b\n' }, 'b');
    const open = (branch: string, title: string) =>
      server.call('POST', '/pulls', {
        body: { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: branch, title },
      });
    expect((await open('open-one', 'Still open')).status).toBe(200);
    const merged = (await open('merged-one', 'Merged')).json;
    expect((await server.call('POST', `/pulls/${merged}/merge`, { text: '' })).status).toBe(200);
    const head = await repo.head('main');
    const build = (await runJobOnCommit(server, { projectId: repo.id, commitHash: head, jobName: 'Hello', reason: 'backup test' })).json as number;
    expect(await eventually(async () => (await server.call('GET', `/builds/${build}`)).json?.status === 'SUCCESSFUL', 30_000)).toBe(true);
    expect(other.id).toBeGreaterThan(0);

    const projects = (await server.call('GET', '/projects?count=100')).json;
    const pulls = (await server.call('GET', '/pulls?count=100')).json;
    const refs = await allRefs(server.dataDir);
    expect(Object.keys(refs).some((k) => k.includes('refs/pulls/2/merge'))).toBe(true);

    const work = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-backup-test-'));
    cleanup.push(() => fs.rm(work, { recursive: true, force: true }));
    const archive = path.join(work, 'gitloom-backup.tar.gz');
    expect(await cli(['backup', archive], envOf(server))).toContain('3 repositories');

    const copy = await restoreFresh(work, archive);
    const target = copy.dataDir;
    expect(copy.output).toContain(`into ${target}`);
    // a backup of a server at rest agrees with git
    expect(copy.output).toContain('Reconciled with git: nothing to reconcile');
    // a second restore into the now non-empty place is refused
    await expect(cli(['restore', archive], copy.env)).rejects.toMatchObject({ stderr: expect.stringContaining('is not empty') });

    expect(await allRefs(target)).toEqual(refs);
    // the SSH host keys go with the data: clients' known_hosts entries hold for the restored server
    for (const key of ['ssh_host_ed25519_key', 'ssh_host_rsa_key']) {
      expect(await fs.readFile(path.join(target, 'ssh', key), 'utf8')).toBe(await fs.readFile(path.join(server.dataDir, 'ssh', key), 'utf8'));
    }
    const restored = await startRestored(copy);
    const auth = { authorization: basic(ADMIN.name, ADMIN.password) };
    const get = async (route: string) => (await fetch(`${restored.url}/~api${route}`, { headers: auth })).json();
    expect(await get('/projects?count=100')).toEqual(projects);
    expect(await get('/pulls?count=100')).toEqual(pulls);
    const log = await fetch(`${restored.url}/~api/builds/${build}/log`, { headers: auth });
    expect(await log.text()).toContain('hello from the build');
    const clone = path.join(work, 'clone');
    const url = new URL(`${restored.url}/kept`);
    url.username = ADMIN.name;
    url.password = ADMIN.password;
    await git(work, ['clone', '-q', url.toString(), clone]);
    expect((await git(clone, ['rev-parse', 'HEAD'])).trim()).toBe(head);
  }, 180_000);

  it('journals at restore a push, a merge and a new branch the database copy missed, and admin check reports a ref the database does not know', async () => {
    const server = await startTestServer();
    cleanup.push(() => server.close());
    const repo = await givenRepo(server, 'race');
    const before = await repo.commitOn('feature', { 'f.txt': '1\n' }, 'one');
    await repo.commitOn('fix', { 'g.txt': '1\n' }, 'fix');
    const open = (sourceBranch: string) =>
      server.call('POST', '/pulls', {
        body: { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch, title: sourceBranch },
      });
    expect((await open('feature')).status).toBe(200);
    const fix = await open('fix');
    expect(fix.status).toBe(200);
    await server.settled();
    const work = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-backup-test-'));
    cleanup.push(() => fs.rm(work, { recursive: true, force: true }));
    const backupDir = path.join(work, 'backup');
    expect(await cli(['backup', backupDir], envOf(server))).toContain('1 repositories');

    // a push and a merge after the database copy, before the repositories were copied
    const pushed = await repo.commitOn('feature', { 'f.txt': '2\n' }, 'two');
    const mainBefore = (await git(path.join(server.dataDir, 'repos', `${repo.id}.git`), ['rev-parse', 'main'])).trim();
    expect((await server.call('POST', `/pulls/${fix.json}/merge`, { text: '' })).status).toBe(200);
    const late = await repo.commitOn('late', { 'h.txt': '1\n' }, 'late');
    await server.settled();
    const merged = await repo.head('main');
    const mirror = path.join(backupDir, 'repos', `${repo.id}.git`);
    await fs.rm(mirror, { recursive: true });
    await git(work, ['clone', '-q', '--mirror', path.join(server.dataDir, 'repos', `${repo.id}.git`), mirror]);
    // what the backup reads from the journal once the repositories are copied
    const journal = await server.server.services.db
      .selectFrom('refJournal')
      .select(['id', 'projectId', 'ref', 'oldHash', 'newHash', 'userId'])
      .where('appliedDate', 'is not', null)
      .orderBy('id')
      .execute();
    await fs.writeFile(path.join(backupDir, 'journal.json'), JSON.stringify(journal));

    const copy = await restoreFresh(work, backupDir);
    expect(copy.output).toContain(
      `project ${repo.id} refs/heads/feature: the database knows ${before.slice(0, 12)}, git has ${pushed.slice(0, 12)}: journaled`,
    );
    expect(copy.output).toContain(
      `project ${repo.id} refs/heads/main: the database knows ${mainBefore.slice(0, 12)}, git has ${merged.slice(0, 12)}: journaled`,
    );
    expect(copy.output).toContain(`project ${repo.id} refs/heads/late: the database knows nothing, git has ${late.slice(0, 12)}: journaled`);
    expect(copy.output).not.toContain('Still disagreeing');
    // the restored copy, before any server ran on it, agrees: the changes wait in the journal
    expect(await cli(['admin', 'check'], copy.env)).toContain('nothing to reconcile');
    const restored = await startRestored(copy);
    expect(await expectConsistent(restored, copy.dataDir)).toEqual([pushed]);
    // the merged request, open in the database copy, is found merged by the reaction to its target's move
    const { status } = await restored.services.db.selectFrom('pullRequests').select('status').where('id', '=', fix.json).executeTakeFirstOrThrow();
    expect(status).toBe('MERGED');

    expect(await cli(['admin', 'check'], envOf(server))).toContain('nothing to reconcile');
    // a branch moved behind the server's back (not through a push) is found, and nothing changed
    const live = path.join(server.dataDir, 'repos', `${repo.id}.git`);
    await git(live, ['update-ref', 'refs/heads/feature', before]);
    const report = await cliFails(['admin', 'check'], envOf(server));
    expect(report).toContain(`ref-unknown: project ${repo.id} refs/heads/feature: the database knows ${pushed.slice(0, 12)}, git has ${before.slice(0, 12)}`);
    expect((await git(live, ['rev-parse', 'refs/heads/feature'])).trim()).toBe(before);
  }, 180_000);

  it('restores consistent copies from three backups taken while two loops push and a pull request is open', async () => {
    const server = await startTestServer();
    cleanup.push(() => server.close());
    // copied before the busy one (by project id), they widen the time between the database copy and its copy
    for (const name of ['quiet-1', 'quiet-2', 'quiet-3']) await givenRepo(server, name);
    const repo = await givenRepo(server, 'busy');
    await repo.commitOn('feature', { 'feature.txt': '0\n' }, 'feature 0');
    const pr = await server.call('POST', '/pulls', {
      body: { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'feature', title: 'Busy' },
    });
    expect(pr.status).toBe(200);
    await server.settled();
    const work = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-backup-test-'));
    cleanup.push(() => fs.rm(work, { recursive: true, force: true }));

    let stopped = false;
    const pushes = { feature: 0, main: 0 };
    const { db } = server.server.services;
    /**
     * Commits and pushes to `branch` over HTTP until stopped. After a push it pauses, then waits
     * while the journal worker has three or more entries to go: pushes keep arriving, and the
     * backlog a backup copies (which the restored server works off first) stays small on a loaded
     * machine.
     */
    const loop = async (branch: 'feature' | 'main') => {
      const dir = await freshClone(server, repo.path);
      await git(dir, ['checkout', '-q', branch]);
      while (!stopped) {
        const n = ++pushes[branch];
        await commitFiles(dir, { [`${branch}.txt`]: `${n}\n` }, `${branch} ${n}`);
        await git(dir, ['push', '-q', gitUrl(server, repo.path, ADMIN), `HEAD:refs/heads/${branch}`]);
        // a pause leaves the machine to the backup and the restored servers, whose speed is under test
        await new Promise((resolve) => setTimeout(resolve, 250));
        while ((await db.selectFrom('refJournal').select('id').where('processedDate', 'is', null).execute()).length >= 3) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    };
    const loops = [loop('feature'), loop('main')];
    expect(await eventually(async () => pushes.feature > 1 && pushes.main > 1)).toBe(true);
    const targets = [path.join(work, 'round-1.tar.gz'), path.join(work, 'round-2'), path.join(work, 'round-3')];
    try {
      for (const [round, target] of targets.entries()) {
        const args = round === 2 ? ['backup', target, '--incremental-from', targets[1]] : ['backup', target];
        expect(await cli(args, envOf(server))).toContain('Backup written');
        const copy = await restoreFresh(work, target);
        expect(copy.output).toMatch(/Reconciled with git:/);
        expect(copy.output).not.toContain('Still disagreeing');
        expect(await expectConsistent(await startRestored(copy), copy.dataDir)).toHaveLength(1);
      }
    } finally {
      stopped = true;
      await Promise.all(loops);
    }

    // the incremental backup hard-links every object file of the one before
    const manifest = JSON.parse(await fs.readFile(path.join(targets[2], 'manifest.json'), 'utf8'));
    expect(manifest.incrementalFrom).toBe(targets[1]);
    const objects = (round: string) => path.join(round, 'repos', `${repo.id}.git`, 'objects');
    const files = (await fs.readdir(objects(targets[1]), { recursive: true })).filter((f) => /^([0-9a-f]{2}|pack)\/./.test(f));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      expect((await fs.stat(path.join(objects(targets[2]), file))).ino).toBe((await fs.stat(path.join(objects(targets[1]), file))).ino);
    }

    await server.settled();
    expect(await cli(['admin', 'check'], envOf(server))).toContain('nothing to reconcile');
    // three rounds of what each test above does once (their budgets: 180 s)
  }, 600_000);
});
