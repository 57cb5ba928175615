/**
 * Job caches in object storage (docs/compatibility.md#builds-caches "In object storage"): with a
 * bucket (a real s3rver), a cache saved by a job on one agent is restored by a job on another
 * agent and by a job of the server itself, through the job token's `/~agent/job/caches/…`,
 * per project; none stays on an agent; an archive a job token sent that does not hold what a
 * cache may hold is refused when restored, writing nothing outside; the caches unused for the
 * executor's `cacheTTL` go before a job starts.
 */
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { S3ObjectStore } from '../../src/object-store/index.js';
import { shellJob, startAgent, type AgentProcess } from '../helpers/agents.js';
import { eventually, givenRepo, removeWorkTrees, runJobOnCommit, type Repo } from '../helpers/fixtures.js';
import { startTestS3, type TestS3 } from '../helpers/s3.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const CACHE = ['  caches:', '  - key: deps', '    path: .cache/deps'];
const SPEC = `version: 25
jobs:
${shellJob('Fill', 'on-a', ['echo filled-by-@build_number@ > .cache/deps/a.txt', 'mkdir -p .cache/deps/sub && echo deep > .cache/deps/sub/b.txt', 'ln -sf a.txt .cache/deps/inside', 'ln -sf /etc/passwd .cache/deps/outside'], CACHE)}
${shellJob('Read', 'on-b', ['cat .cache/deps/a.txt || echo no-cache', 'cat .cache/deps/inside .cache/deps/sub/b.txt || true', 'test -L .cache/deps/outside && echo outside-kept || echo outside-left-out'], CACHE)}
${shellJob('ReadHere', 'here', ['cat .cache/deps/a.txt || echo no-cache'], CACHE)}
${shellJob('Poison', 'on-c', ['true'], ['  caches:', '  - key: poison', '    path: p'])}
${shellJob('ReadPoison', 'here', ['echo ran'], ['  caches:', '  - key: poison', '    path: p'])}
`;

describe('job caches in object storage', { timeout: 180_000 }, () => {
  let s3: TestS3;
  let bucket: S3ObjectStore;
  let server: TestServer;
  let repo: Repo;
  let other: Repo;
  const agents: AgentProcess[] = [];
  const workDirs: string[] = [];

  const build = async (id: number) => (await server.call('GET', `/builds/${id}`)).json;
  const log = async (id: number) => (await server.call('GET', `/builds/${id}/log`)).text;
  const finished = (id: number) =>
    eventually(async () => {
      const b = await build(id);
      return ['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(b.status) ? b : null;
    }, 90_000);
  const run = async (project: Repo, jobName: string) => {
    const res = await runJobOnCommit(server, { projectId: project.id, commitHash: await project.head('main'), jobName });
    expect(res.status, res.text).toBe(200);
    const id = res.json as number;
    const done = await finished(id);
    return { id, status: done.status as string, log: await log(id) };
  };
  const objects = async (prefix: string) => {
    const keys: string[] = [];
    for await (const object of bucket.list(prefix)) keys.push(object.key);
    return keys;
  };
  const newToken = async () => {
    const id = (await server.call('POST', '/agent-tokens')).json;
    return (await server.call('GET', `/agent-tokens/${id}`)).json.value as string;
  };

  beforeAll(async () => {
    s3 = await startTestS3();
    const env = await s3.env('caches', 'forge');
    bucket = new S3ObjectStore(loadConfig(env).objectStore!);
    server = await startTestServer(env);
    repo = await givenRepo(server, 'cached', { files: { '.onedev-buildspec.yml': SPEC } });
    other = await givenRepo(server, 'elsewhere', { files: { '.onedev-buildspec.yml': SPEC } });
    const executors = [
      { '@type': 'RemoteShellExecutor', name: 'on-a', agentQuery: '"zone" is "a"' },
      { '@type': 'RemoteShellExecutor', name: 'on-b', agentQuery: '"zone" is "b"' },
      { '@type': 'RemoteShellExecutor', name: 'on-c', agentQuery: '"zone" is "c"' },
      { '@type': 'ServerShellExecutor', name: 'here' },
    ];
    const saved = await server.call('POST', '/settings/job-executors', { body: executors });
    expect(saved.status, saved.text).toBe(200);
    for (const zone of ['a', 'b']) {
      const workDir = await fs.mkdtemp(path.join(os.tmpdir(), `gitloom-agent-${zone}-`));
      workDirs.push(workDir);
      const agent = startAgent(server.url, workDir, await newToken(), ['--name', `runner-${zone}`, '--attribute', `zone=${zone}`]);
      agents.push(agent);
      await eventually(async () => (agent.output().includes('Connected to') ? true : null), 60_000);
    }
  });

  afterAll(async () => {
    for (const agent of agents) {
      if (agent.child.exitCode === null) {
        agent.child.kill('SIGKILL');
        await agent.exited;
      }
    }
    bucket?.destroy();
    await server?.close();
    await s3?.close();
    for (const dir of workDirs) await fs.rm(dir, { recursive: true, force: true });
    await removeWorkTrees();
  });

  it('restores on another agent, and on the server, what a job on one agent saved; inside links kept, escaping ones left out; nothing stays on the agents', async () => {
    const fill = await run(repo, 'Fill');
    expect(fill.status, fill.log).toBe('SUCCESSFUL');
    expect(fill.log).toContain("Cache 'deps' is empty; it is saved after a successful run");
    expect(fill.log).toMatch(/Saved cache 'deps' \(/);
    const stored = await objects(`caches/${repo.id}/deps/`);
    expect(stored).toHaveLength(1);

    const read = await run(repo, 'Read');
    expect(read.status, read.log).toBe('SUCCESSFUL');
    expect(read.log).toContain("Restored cache 'deps' into '.cache/deps'");
    expect(read.log).toContain(`filled-by-${(await build(fill.id)).number}`);
    expect(read.log).toContain('deep');
    expect(read.log).toContain('outside-left-out');

    const here = await run(repo, 'ReadHere');
    expect(here.status, here.log).toBe('SUCCESSFUL');
    expect(here.log).toContain(`filled-by-${(await build(fill.id)).number}`);

    // each save replaced the archive it followed: one object per cache
    const again = await run(repo, 'Fill');
    expect(again.status, again.log).toBe('SUCCESSFUL');
    const replaced = await objects(`caches/${repo.id}/deps/`);
    expect(replaced).toHaveLength(1);
    expect(replaced).not.toEqual(stored);
    for (const dir of workDirs) expect(await fs.readdir(path.join(dir, 'caches')).catch(() => [])).toEqual([]);

    // another project's job does not see this project's cache
    const elsewhere = await run(other, 'ReadHere');
    expect(elsewhere.log).toContain("Cache 'deps' is empty");
    expect(elsewhere.log).toContain('no-cache');
  });

  it("removes the caches unused for the executor's cache TTL before an agent's job starts", async () => {
    const [before] = await objects(`caches/${repo.id}/deps/`);
    expect(before).toBeDefined();
    const db = server.server.services.db;
    await db
      .updateTable('jobCaches')
      .set({ usedDate: Date.now() - 8 * 24 * 3600 * 1000 })
      .where('projectId', '=', repo.id)
      .execute();
    const read = await run(repo, 'Read');
    expect(read.status, read.log).toBe('SUCCESSFUL');
    expect(read.log).toContain('Removed 1 job cache(s) unused for 7 days (cache TTL of the job executor)');
    expect(read.log).toContain('no-cache');
    expect(await objects(`caches/${repo.id}/deps/`)).not.toContain(before);
  });

  it('lets a job token reach only its own project’s caches, and a restore refuses an archive escaping its directory', async () => {
    // an agent speaking the protocol itself, as a compromised one could
    const token = await newToken();
    const post = (route: string, body: unknown) =>
      fetch(`${server.url}${route}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const connected = await (
      await post('/~agent/connect', {
        name: 'rogue',
        osName: 'Linux',
        osVersion: '6.1',
        osArch: 'amd64',
        cpus: 2,
        memory: 1e9,
        engine: null,
        attributes: { zone: 'c' },
      })
    ).json();
    const res = await runJobOnCommit(server, { projectId: other.id, commitHash: await other.head('main'), jobName: 'Poison' });
    const buildId = res.json as number;
    const leased = await eventually(async () => {
      const lease = await post('/~agent/lease', { session: connected.session, waitMs: 1000 });
      return lease.status === 200 ? await lease.json() : null;
    }, 30_000);
    expect(leased.buildId).toBe(buildId);
    expect(leased.sharedCaches).toEqual({ maxBytes: 4096 * 1024 * 1024 });
    const jobCall = (route: string, init: RequestInit = {}) =>
      fetch(`${server.url}/~agent/job/caches${route}`, {
        ...init,
        headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${leased.jobToken}` },
      });

    expect((await fetch(`${server.url}/~agent/job/caches/deps`)).status).toBe(401);
    // the cache `deps` of this job's project (saved empty by its run above), not the one of project `cached`
    const own = await jobCall('/deps');
    expect(own.status).toBe(200);
    expect(await own.text()).not.toContain('filled-by');
    expect((await jobCall('/never-saved')).status).toBe(404);
    const bad = await jobCall('/not%20normalized');
    expect(bad.status).toBe(400);

    const target = path.join(os.tmpdir(), `gitloom-poisoned-${process.pid}-${Date.now()}`);
    const pack = tar.pack();
    pack.entry({ name: 'ok.txt' }, 'fine');
    pack.entry({ name: 'tmp', type: 'symlink', linkname: path.dirname(target) });
    pack.entry({ name: `tmp/${path.basename(target)}` }, 'written through a link');
    pack.finalize();
    const chunks: Uint8Array[] = [];
    for await (const chunk of pack as AsyncIterable<Uint8Array>) chunks.push(chunk);
    const upload = await jobCall('/poison', { method: 'POST', body: Buffer.concat(chunks), headers: { 'content-type': 'application/octet-stream' } });
    expect(upload.status, await upload.clone().text()).toBe(200);
    expect(((await upload.json()) as { size: number }).size).toBeGreaterThan(0);
    const finish = await fetch(`${server.url}/~agent/job/finish`, {
      method: 'POST',
      headers: { authorization: `Bearer ${leased.jobToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'SUCCESSFUL' }),
    });
    expect(finish.status).toBe(200);

    const poisoned = await run(other, 'ReadPoison');
    expect(poisoned.status).toBe('FAILED');
    expect(poisoned.log).toContain('Unable to restore the job\'s caches: Cache archive refused: entry "tmp" is a link leaving the cache');
    expect(poisoned.log).not.toContain('ran');
    expect(existsSync(target)).toBe(false);
  });
});

const BOUNDED = `version: 25
jobs:
${['a', 'b', 'c', 'big'].map((key) => shellJob(`Fill-${key}`, 'here', [`dd if=/dev/zero of=c/f bs=1024 count=${key === 'big' ? 1100 : 400} 2>/dev/null`], ['  caches:', `  - key: ${key}`, '    path: c'])).join('\n')}
${shellJob('Use-a', 'here', ['ls c'], ['  caches:', '  - key: a', '    path: c'])}
`;

describe("the server's own jobs' caches in a bucket bounded by GITLOOM_JOB_CACHE_MB", { timeout: 180_000 }, () => {
  let s3: TestS3;
  let bucket: S3ObjectStore;
  let server: TestServer;
  let repo: Repo;

  beforeAll(async () => {
    s3 = await startTestS3();
    const env = await s3.env('bounded');
    bucket = new S3ObjectStore(loadConfig(env).objectStore!);
    server = await startTestServer({ ...env, GITLOOM_JOB_CACHE_MB: '1' });
    repo = await givenRepo(server, 'bounded', { files: { '.onedev-buildspec.yml': BOUNDED } });
    const saved = await server.call('POST', '/settings/job-executors', { body: [{ '@type': 'ServerShellExecutor', name: 'here' }] });
    expect(saved.status, saved.text).toBe(200);
  });
  afterAll(async () => {
    bucket?.destroy();
    await server?.close();
    await s3?.close();
    await removeWorkTrees();
  });

  const run = async (jobName: string) => {
    const res = await runJobOnCommit(server, { projectId: repo.id, commitHash: await repo.head('main'), jobName });
    expect(res.status, res.text).toBe(200);
    const id = res.json as number;
    const done = await eventually(async () => {
      const b = (await server.call('GET', `/builds/${id}`)).json;
      return ['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(b.status) ? b : null;
    }, 90_000);
    const log = (await server.call('GET', `/builds/${id}/log`)).text;
    expect(done.status, log).toBe('SUCCESSFUL');
    return log;
  };
  const cachesInBucket = async () => {
    const keys = new Set<string>();
    for await (const object of bucket.list(`caches/${repo.id}/`)) keys.add(object.key.split('/')[2]);
    return [...keys].sort();
  };

  it('keeps no archive larger than the bound, and removes the least recently used first', async () => {
    expect(await run('Fill-big')).toContain("Cache 'big' not saved: larger than the cache limit of 1 MiB (GITLOOM_JOB_CACHE_MB)");
    expect(await cachesInBucket()).toEqual([]);
    await run('Fill-a');
    await run('Fill-b');
    // a is used again (restored and saved again): b is now the least recently used
    expect(await run('Use-a')).toContain("Restored cache 'a' into 'c'");
    await run('Fill-c');
    expect(await cachesInBucket()).toEqual(['a', 'c']);
    const rows = await server.server.services.db.selectFrom('jobCaches').select('cacheKey').where('projectId', '=', repo.id).execute();
    expect(rows.map((r) => r.cacheKey).sort()).toEqual(['a', 'c']);
  });
});
