import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { DEFAULT_JOB_SANDBOX, planSandbox, SANDBOX_UNAVAILABLE, sandboxArgv } from '../../src/ci/sandbox.js';
import { processesWith, waitGone } from '../helpers/processes.js';

async function until(probe: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (probe()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return probe();
}

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'gitloom-sandbox-'));
  await chmod(tmp, 0o711);
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('job sandbox', () => {
  it('plans bubblewrap with limits and a network, and refuses when bubblewrap is missing', () => {
    const plan = planSandbox({ ...DEFAULT_JOB_SANDBOX, network: 'none' });
    expect(plan.kind).toBe('sandbox');
    if (plan.kind !== 'sandbox') return;
    expect(plan.network).toBeNull();
    expect(plan.description).toContain('network: none (GITLOOM_JOB_NETWORK=none)');
    expect(planSandbox({ ...DEFAULT_JOB_SANDBOX, bwrapPath: path.join(tmp, 'no-bwrap') })).toEqual({ kind: 'unavailable', message: SANDBOX_UNAVAILABLE });
    expect(planSandbox({ ...DEFAULT_JOB_SANDBOX, enabled: false })).toEqual({ kind: 'off' });
  });

  it('reads its settings from the environment and refuses malformed ones', () => {
    const config = loadConfig({
      GITLOOM_JOB_SANDBOX: 'on',
      GITLOOM_JOB_NETWORK: 'none',
      GITLOOM_JOB_MEMORY_MB: '256',
      GITLOOM_BWRAP_PATH: '/opt/bwrap',
      GITLOOM_SECRET_KEY: 'ab'.repeat(32),
    });
    expect(config.jobSandbox).toMatchObject({
      enabled: true,
      network: 'none',
      bwrapPath: '/opt/bwrap',
      limits: { memoryMb: 256, processes: 512, cpuSeconds: 3600 },
    });
    expect(config.secretKey).toEqual(Buffer.alloc(32, 0xab));
    expect(loadConfig({ GITLOOM_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') }).secretKey).toEqual(Buffer.alloc(32, 7));
    expect(loadConfig({}).jobSandbox).toEqual(DEFAULT_JOB_SANDBOX);
    expect(loadConfig({ GITLOOM_JOB_NETWORK_ALLOW: '10.1.2.3, 192.168.0.0/16,fd00::/8' }).jobSandbox.networkAllow).toEqual([
      '10.1.2.3/32',
      '192.168.0.0/16',
      'fd00::/8',
    ]);
    expect(() => loadConfig({ GITLOOM_JOB_NETWORK_ALLOW: '10.1.2.300' })).toThrow(
      "GITLOOM_JOB_NETWORK_ALLOW must list IP addresses or CIDR ranges, got '10.1.2.300'",
    );
    expect(() => loadConfig({ GITLOOM_JOB_SANDBOX: 'maybe' })).toThrow('GITLOOM_JOB_SANDBOX must be one of on, off');
    expect(() => loadConfig({ GITLOOM_JOB_NETWORK: 'host' })).toThrow('GITLOOM_JOB_NETWORK must be one of none, outward');
    expect(() => loadConfig({ GITLOOM_JOB_PROCESSES: '0' })).toThrow('GITLOOM_JOB_PROCESSES must be a positive integer');
    expect(() => loadConfig({ GITLOOM_SECRET_KEY: 'short' })).toThrow('GITLOOM_SECRET_KEY must be 32 bytes');
    expect(() => loadConfig({ GITLOOM_JOB_UID_BASE: String(2 ** 31 - 10) })).toThrow('GITLOOM_JOB_UID_BASE must be at most');
  });

  it('builds an argument array: prlimit, then bwrap with every namespace, read-only system dirs, an /etc allow-list and only the workspace and HOME writable', () => {
    const plan = planSandbox({ ...DEFAULT_JOB_SANDBOX, network: 'none', limits: { memoryMb: 512, processes: 32, cpuSeconds: 60 } });
    if (plan.kind !== 'sandbox') throw new Error('bubblewrap is required for these tests');
    const { file, args, stdio } = sandboxArgv(plan, {
      workspace: '/jobs/1-x/workspace',
      home: '/jobs/1-x/home',
      files: [
        { fd: 41, path: '/etc/passwd' },
        { fd: 42, path: '/gitloom/step-1.sh' },
      ],
      seccomp: 40,
      command: 'sh',
      args: ['/gitloom/step-1.sh'],
    });
    expect(file).toBe(plan.prlimit);
    expect(args.slice(0, 6)).toEqual([`--as=${512 * 1024 * 1024}`, '--nproc=32', '--cpu=60:65', '--core=0', '--', plan.bwrap]);
    for (const flag of [
      '--unshare-user',
      '--disable-userns',
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--unshare-net',
      '--die-with-parent',
      '--new-session',
    ])
      expect(args).toContain(flag);
    const writable = args.flatMap((a, i) => (a === '--bind' ? [args[i + 1]] : []));
    expect(writable).toEqual(['/jobs/1-x/home', '/jobs/1-x/workspace']);
    const text = args.join(' ');
    expect(text).toContain('--ro-bind /usr /usr');
    expect(text).toContain('--ro-bind /etc/ssl/certs /etc/ssl/certs');
    expect(text).toContain('--ro-bind /etc/nsswitch.conf /etc/nsswitch.conf');
    // the allow-list: secrets of /etc are not bound at all
    for (const hidden of ['/etc/shadow', '/etc/ssh', '/etc/ssl/private', '/etc/environment', '/etc/npmrc', '/etc/gitconfig', '/etc/postgresql']) {
      expect(args.filter((a) => a === hidden || a.startsWith(hidden + '/'))).toEqual([]);
    }
    expect(text).not.toContain('/root');
    // the server's files reach bwrap as descriptors: fds 3 and 4 stay unused without a network
    expect(stdio).toEqual(['ignore', 'ignore', 40, 41, 42]);
    expect(text).toContain('--seccomp 5');
    expect(text).toContain('--perms 0444 --ro-bind-data 6 /etc/passwd --perms 0444 --ro-bind-data 7 /gitloom/step-1.sh');
    expect(args.slice(-3)).toEqual(['--', 'sh', '/gitloom/step-1.sh']);
  });

  it('a crash of the server process (SIGKILL) takes every process of its running job down', async () => {
    const marker = `300.${process.pid}9`;
    const workspace = path.join(tmp, 'ws');
    const script = path.join(tmp, 'server.mts');
    const src = path.resolve('src');
    await writeFile(
      script,
      `
import { runJob } from ${JSON.stringify(path.join(src, 'ci/executor.ts'))};
import { parseBuildSpec } from ${JSON.stringify(path.join(src, 'ci/build-spec.ts'))};
const steps = parseBuildSpec('version: 25\\njobs:\\n- name: J\\n  steps:\\n  - !CommandStep\\n    name: s\\n    runInContainer: false\\n    interpreter: !DefaultInterpreter\\n      commands: |\\n        setsid sleep ${marker} > /dev/null 2>&1 &\\n        sleep ${marker}\\n').jobs[0].steps;
await runJob({ jobDir: ${JSON.stringify(workspace)}, steps, checkout: async () => undefined, artifactsDir: ${JSON.stringify(path.join(tmp, 'a'))}, log: (l) => console.log(l) });
`,
    );
    const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      expect(await until(() => processesWith(marker).length === 2, 30_000)).toBe(true);
      child.kill('SIGKILL');
      expect(await until(() => processesWith(marker).length === 0, 5000)).toBe(true);
    } finally {
      child.kill('SIGKILL');
      for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL');
    }
  }, 60_000);
});
