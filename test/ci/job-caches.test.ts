import { existsSync, readlinkSync } from 'node:fs';
import { chmod, mkdtemp, readdir, rm, utimes } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBuildSpec } from '../../src/ci/build-spec.js';
import type { ContainerEngine } from '../../src/ci/container-engine.js';
import { runJob, type RunJobOptions } from '../../src/ci/executor.js';
import { CacheStore } from '../../src/ci/job-caches.js';
import { testEngine } from '../helpers/images.js';

let tmp: string;
let store: CacheStore;
let caseNo = 0;
let engine: ContainerEngine;
let images: Awaited<ReturnType<typeof testEngine>>;
const IMAGE = 'localhost/gitloom-test/caches:1';

const shell = (name: string, commands: string[]): string =>
  `  - !CommandStep\n    name: ${name}\n    runInContainer: false\n    interpreter: !DefaultInterpreter\n      commands:\n${commands.map((c) => `      - ${JSON.stringify(c)}\n`).join('')}`;
const inImage = (name: string, commands: string[]): string => shell(name, commands).replace('    runInContainer: false\n', `    image: ${IMAGE}\n`);

async function exec(
  steps: string,
  caches: string,
  options: { store?: CacheStore; projectId?: number; ttlDays?: number } = {},
): Promise<{ status: string; lines: string[] }> {
  const lines: string[] = [];
  const job = parseBuildSpec(`version: 25\njobs:\n- name: J\n  steps:\n${steps}  caches:\n${caches}`).jobs[0];
  const result = await runJob({
    jobDir: path.join(tmp, 'jobs', `job-${++caseNo}`),
    steps: job.steps,
    checkout: () => Promise.reject(new Error('no checkout')),
    artifactsDir: path.join(tmp, `artifacts-${caseNo}`),
    log: (l) => lines.push(l),
    killGraceMs: 500,
    containers: { get: () => Promise.resolve(engine) },
    projectId: options.projectId ?? 1,
    caches: { store: options.store ?? store, specs: job.caches, ttlDays: options.ttlDays },
    variables: { projectName: 'demo', projectPath: 'demo', jobName: 'J', ref: 'refs/heads/main', commitHash: '0'.repeat(40), buildNumber: caseNo },
  } satisfies RunJobOptions);
  return { status: result.status, lines };
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'gitloom-caches-'));
  await chmod(tmp, 0o711);
  store = new CacheStore(path.join(tmp, 'caches'), 64 * 1024 * 1024);
  images = await testEngine({ [IMAGE]: { osName: 'Caches' } });
  engine = images.engine;
}, 120_000);

afterAll(async () => {
  await images?.close();
  await rm(tmp, { recursive: true, force: true });
});

describe('job caches', () => {
  it('restores what a successful run saved, per project and key, in the workspace', async () => {
    const caches = '  - key: deps-@project_name@\n    path: .cache/deps\n';
    const first = await exec(shell('fill', ['ls .cache/deps', 'echo one > .cache/deps/a.txt', 'ln -s /etc/passwd .cache/deps/link']), caches);
    expect(first.status, first.lines.join('\n')).toBe('SUCCESSFUL');
    expect(first.lines).toContain("Cache 'deps-demo' is empty; it is saved after a successful run");
    expect(first.lines.find((l) => l.startsWith("Saved cache 'deps-demo'"))).toBeDefined();
    // a link is kept as a link: the server never copied what it points to
    expect(readlinkSync(path.join(tmp, 'caches', '1', 'deps-demo', 'tree', 'link'))).toBe('/etc/passwd');

    const second = await exec(shell('read', ['cat .cache/deps/a.txt', 'echo two >> .cache/deps/a.txt']), caches);
    expect(second.status).toBe('SUCCESSFUL');
    expect(second.lines).toContain("Restored cache 'deps-demo' into '.cache/deps'");
    expect(second.lines).toContain('one');
    const third = await exec(shell('read', ['cat .cache/deps/a.txt']), caches);
    expect(third.lines).toContain('two');

    const otherProject = await exec(shell('read', ['ls .cache/deps | wc -l']), caches, { projectId: 2 });
    expect(otherProject.lines).toContain('0');
  }, 120_000);

  it('saves nothing from a failed run', async () => {
    const caches = '  - key: failing\n    path: out\n';
    const failed = await exec(shell('fail', ['echo x > out/x', 'exit 1']), caches);
    expect(failed.status).toBe('FAILED');
    expect(existsSync(path.join(tmp, 'caches', '1', 'failing'))).toBe(false);
  }, 60_000);

  it('mounts a cache at an absolute path into container steps', async () => {
    const caches = '  - key: m2\n    path: /root/.m2\n';
    const first = await exec(inImage('fill', ['echo artifact > /root/.m2/repo.txt']), caches);
    expect(first.status, first.lines.join('\n')).toBe('SUCCESSFUL');
    const second = await exec(inImage('read', ['cat /root/.m2/repo.txt']), caches);
    expect(second.lines).toContain("Restored cache 'm2' into '/root/.m2'");
    expect(second.lines).toContain('artifact');
  }, 120_000);

  it('refuses a path that leaves the workspace, before any step', async () => {
    const run = await exec(shell('never', ['echo ran']), '  - key: escape\n    path: ../outside\n');
    expect(run.status).toBe('FAILED');
    expect(run.lines.join('\n')).toContain("Unable to restore the job's caches: Cache path must be a relative path inside the workspace: '../outside'");
    expect(run.lines).not.toContain('ran');
  }, 60_000);

  it('keeps all caches within the bound: a too large cache is not saved, the least recently used go first', async () => {
    const small = new CacheStore(path.join(tmp, 'small'), 3000);
    const fill = (bytes: number) => shell('fill', [`dd if=/dev/zero of=c/f bs=${bytes} count=1 2>/dev/null`]);
    const big = await exec(fill(4000), '  - key: big\n    path: c\n', { store: small });
    expect(big.lines, big.lines.join('\n')).toContain("Cache 'big' not saved: larger than the cache limit of 3000 bytes (GITLOOM_JOB_CACHE_MB)");
    await exec(fill(1000), '  - key: a\n    path: c\n', { store: small });
    await new Promise((r) => setTimeout(r, 20));
    await exec(fill(1000), '  - key: b\n    path: c\n', { store: small });
    await new Promise((r) => setTimeout(r, 20));
    await exec(shell('use a', ['true']), '  - key: a\n    path: c\n', { store: small }); // a is used again (and saved again)
    await new Promise((r) => setTimeout(r, 20));
    await exec(fill(1500), '  - key: c\n    path: c\n', { store: small });
    expect((await readdir(path.join(tmp, 'small', '1'))).sort()).toEqual(['a', 'c']);
  }, 120_000);

  it("removes the caches unused for the executor's cache TTL before a job restores its own", async () => {
    const aging = new CacheStore(path.join(tmp, 'aging'), 64 * 1024 * 1024);
    const save = (key: string, projectId: number) => exec(shell('fill', ['echo x > c/f']), `  - key: ${key}\n    path: c\n`, { store: aging, projectId });
    await save('old', 1);
    await save('other-project', 2);
    await save('recent', 1);
    const eightDaysAgo = new Date(Date.now() - 8 * 24 * 3600 * 1000);
    for (const dir of ['1/old', '2/other-project']) await utimes(path.join(tmp, 'aging', dir), eightDaysAgo, eightDaysAgo);
    const kept = await exec(shell('use', ['true']), '  - key: recent\n    path: c\n', { store: aging, ttlDays: 10 });
    expect(kept.lines.join('\n')).not.toContain('unused');
    expect(await readdir(path.join(tmp, 'aging', '2'))).toEqual(['other-project']);
    const run = await exec(shell('use', ['cat c/f']), '  - key: recent\n    path: c\n', { store: aging, ttlDays: 7 });
    expect(run.lines).toContain('Removed 2 job cache(s) unused for 7 days (cache TTL of the job executor)');
    expect(run.lines).toContain('x');
    expect(await readdir(path.join(tmp, 'aging', '1'))).toEqual(['recent']);
    expect(await readdir(path.join(tmp, 'aging', '2'))).toEqual([]);
  }, 120_000);
});
