import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { eventually, givenRepo, removeWorkTrees } from '../helpers/fixtures.js';
import { ADMIN, basic, createPostgresDatabase, git, startTestServer, type TestServer } from '../helpers/server.js';

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

describe('backup and restore', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
    await removeWorkTrees();
  });

  it('restores every project, pull request, ref and build log from a backup taken while the server runs', async () => {
    const server: TestServer = await startTestServer();
    cleanup.push(() => server.close());
    const repo = await givenRepo(server, 'kept', { files: { 'README.md': '# kept\n', '.onedev-buildspec.yml': SPEC } });
    const other = await givenRepo(server, 'other');
    const child = await server.call('POST', '/projects', { body: { name: 'child', parentId: repo.id } });
    expect(child.status).toBe(200);
    await repo.commitOn('open-one', { 'a.txt': 'a\n' }, 'a');
    await repo.commitOn('merged-one', { 'b.txt': 'b\n' }, 'b');
    const open = (branch: string, title: string) => server.call('POST', '/pulls', {
      body: { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: branch, title },
    });
    expect((await open('open-one', 'Still open')).status).toBe(200);
    const merged = (await open('merged-one', 'Merged')).json;
    expect((await server.call('POST', `/pulls/${merged}/merge`, { text: '' })).status).toBe(200);
    const head = await repo.head('main');
    const build = (await server.call('POST', '/job-runs', {
      body: { '@type': 'JobRunOnCommit', projectId: repo.id, commitHash: head, refName: 'refs/heads/main', jobName: 'Hello', params: {}, reason: 'backup test' },
    })).json as number;
    expect(await eventually(async () => (await server.call('GET', `/builds/${build}`)).json?.status === 'SUCCESSFUL', 30_000)).toBe(true);
    expect(other.id).toBeGreaterThan(0);

    const projects = (await server.call('GET', '/projects?count=100')).json;
    const pulls = (await server.call('GET', '/pulls?count=100')).json;
    const refs = await allRefs(server.dataDir);
    expect(Object.keys(refs).some((k) => k.includes('refs/pulls/2/merge'))).toBe(true);

    const work = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-backup-test-'));
    cleanup.push(() => fs.rm(work, { recursive: true, force: true }));
    const archive = path.join(work, 'gitloom-backup.tar.gz');
    const databaseUrl = server.server.services.config.databaseUrl;
    const sourceEnv = { GITLOOM_DATA_DIR: server.dataDir, GITLOOM_DATABASE_URL: databaseUrl ?? '' };
    expect(await cli(['backup', archive], sourceEnv)).toContain('3 repositories');

    const target = path.join(work, 'restored');
    const pgBase = process.env.GITLOOM_TEST_DATABASE_URL;
    const database = pgBase ? await createPostgresDatabase(pgBase) : null;
    if (database) cleanup.push(() => database.drop());
    const targetEnv = { GITLOOM_DATA_DIR: target, GITLOOM_DATABASE_URL: database?.url ?? '' };
    expect(await cli(['restore', archive], targetEnv)).toContain(`into ${target}`);
    // a second restore into the now non-empty place is refused
    await expect(cli(['restore', archive], targetEnv)).rejects.toMatchObject({ stderr: expect.stringContaining('is not empty') });

    expect(await allRefs(target)).toEqual(refs);
    const restored: RunningServer = await startServer(loadConfig({
      GITLOOM_HOST: '127.0.0.1', ...(database && { GITLOOM_DATABASE_URL: database.url }),
    }, { port: 0, dataDir: target }), { logger: false });
    cleanup.push(() => restored.close());
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
});
