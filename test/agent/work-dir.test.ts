/**
 * The agent's work dir (src/agent/work-dir.ts): its modes, the attributes kept in
 * `attributes.json`, `--attribute` parsing, and the removal of what a previous run's jobs left
 * (their processes killed, their containers removed through the engine, their directories
 * removed).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAttributeOptions, prepareWorkDir, readAttributes, removeLeftJobs, workDirAt, writeAttributes } from '../../src/agent/work-dir.js';
import { JOB_DIR_LABEL, JOBS_DIR_LABEL } from '../../src/ci/container-engine.js';
import { tempDir } from '../git/helpers.js';
import { testEngine } from '../helpers/images.js';

const IMAGE = 'localhost/gitloom-test/left-jobs:1';

const dirs: { remove(): void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

function workDir() {
  const t = tempDir('agent-work');
  dirs.push(t);
  return workDirAt(path.join(t.path, 'agent'));
}

describe('the work dir', () => {
  it('is made 0700, or 0711 when job uids must reach their jobs; its caches 0700', async () => {
    const dir = workDir();
    await prepareWorkDir(dir, false);
    expect(statSync(dir.root).mode & 0o777).toBe(0o700);
    expect(statSync(dir.caches).mode & 0o777).toBe(0o700);
    await prepareWorkDir(dir, true);
    expect(statSync(dir.root).mode & 0o777).toBe(0o711);
  });

  it('keeps the attributes in attributes.json (0600), none at first', async () => {
    const dir = workDir();
    await prepareWorkDir(dir, false);
    expect(await readAttributes(dir)).toEqual({});
    await writeAttributes(dir, { gpu: 'yes', zone: 'b' });
    expect(await readAttributes(dir)).toEqual({ gpu: 'yes', zone: 'b' });
    expect(statSync(dir.attributes).mode & 0o777).toBe(0o600);
    writeFileSync(dir.attributes, '{"gpu": 1}');
    await expect(readAttributes(dir)).rejects.toThrow(/must be a JSON object of string values/);
  });

  it('parses --attribute name=value, the value keeping its =, a later one winning', () => {
    expect(parseAttributeOptions(['a=1', 'b=x=y', 'a=2', 'empty='])).toEqual({ a: '2', b: 'x=y', empty: '' });
    expect(() => parseAttributeOptions(['novalue'])).toThrow(/--attribute must be name=value/);
    expect(() => parseAttributeOptions(['=v'])).toThrow(/--attribute must be name=value/);
  });

  it("kills the processes of a previous run's jobs, then removes their directories", async () => {
    const dir = workDir();
    await prepareWorkDir(dir, false);
    const job = path.join(dir.jobs, '7-leftover');
    mkdirSync(path.join(job, 'workspace'), { recursive: true });
    writeFileSync(path.join(job, 'workspace', 'file'), 'x');
    const child = spawn('sleep', ['60'], { env: { PATH: process.env.PATH, GITLOOM_WORKSPACE: path.join(job, 'workspace') }, stdio: 'ignore' });
    const exited = new Promise<string | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    // its environment is the one given once it runs `sleep`
    await new Promise((r) => child.once('spawn', r));
    const logged: string[] = [];
    const { killed, removed } = await removeLeftJobs(dir, (m) => logged.push(m), null);
    expect(killed).toEqual([child.pid]);
    expect(await exited).toBe('SIGKILL');
    expect(removed).toEqual([job]);
    expect(existsSync(job)).toBe(false);
    expect(logged).toEqual([`Killed process ${child.pid} of a job of a previous run`, `Removed job directory ${job} of a previous run`]);
  });

  it('has nothing to remove without a jobs dir', async () => {
    const dir = workDir();
    expect(await removeLeftJobs(dir, () => undefined, null)).toEqual({ killed: [], containers: [], removed: [] });
  });

  it("removes the containers of a previous run's jobs from the engine, and no other work dir's", { timeout: 120_000 }, async () => {
    const images = await testEngine({ [IMAGE]: { osName: 'Left' } });
    const { engine } = images;
    try {
      const dir = workDir();
      await prepareWorkDir(dir, false);
      const job = path.join(dir.jobs, '8-leftover');
      mkdirSync(job, { recursive: true });
      // as a job's container step or service labels its container (src/ci/container-step.ts)
      const start = async (jobsDir: string, jobDir: string) => {
        const id = await engine.createContainer({
          image: IMAGE,
          command: ['sleep', '600'],
          env: {},
          workingDir: null,
          mounts: [],
          labels: { [JOBS_DIR_LABEL]: jobsDir, [JOB_DIR_LABEL]: jobDir },
          idMapping: null,
          networkNamespace: null,
          dns: [],
          hosts: [],
          limits: { memoryMb: 256, processes: 64, cpuSeconds: 600 },
          seccompProfile: null,
        });
        await engine.docker.getContainer(id).start();
        return id;
      };
      const left = await start(dir.jobs, job);
      const elsewhere = await start('/elsewhere/jobs', '/elsewhere/jobs/1-x');
      const logged: string[] = [];
      const result = await removeLeftJobs(dir, (m) => logged.push(m), engine);
      expect(result.containers).toEqual([left]);
      expect(logged).toContain(`Removed container ${left.slice(0, 12)} of a job of a previous run`);
      const ids = (await engine.docker.listContainers({ all: true })).map((c) => c.Id);
      expect(ids).not.toContain(left);
      expect(ids).toContain(elsewhere);
      await engine.removeContainer(elsewhere);
      expect(existsSync(job)).toBe(false);
    } finally {
      await images.close();
    }
  });
});
