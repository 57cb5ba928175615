/**
 * The agent's work dir (src/agent/work-dir.ts): its modes, the attributes kept in
 * `attributes.json`, `--attribute` parsing, and the removal of what a previous run's jobs left
 * (their processes killed, their directories removed).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAttributeOptions, prepareWorkDir, readAttributes, removeLeftJobs, workDirAt, writeAttributes } from '../../src/agent/work-dir.js';
import { tempDir } from '../git/helpers.js';

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
    const { killed, removed } = await removeLeftJobs(dir, (m) => logged.push(m));
    expect(killed).toEqual([child.pid]);
    expect(await exited).toBe('SIGKILL');
    expect(removed).toEqual([job]);
    expect(existsSync(job)).toBe(false);
    expect(logged).toEqual([`Killed process ${child.pid} of a job of a previous run`, `Removed job directory ${job} of a previous run`]);
  });

  it('has nothing to remove without a jobs dir', async () => {
    const dir = workDir();
    expect(await removeLeftJobs(dir, () => undefined)).toEqual({ killed: [], removed: [] });
  });
});
