import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBuildSpec } from '../../src/ci/build-spec.js';
import { JOB_DIR_LABEL, type ContainerEngine } from '../../src/ci/container-engine.js';
import { runJob, type RunJobOptions } from '../../src/ci/executor.js';
import { DEFAULT_JOB_SANDBOX } from '../../src/ci/sandbox.js';
import { eventually } from '../helpers/fixtures.js';
import { testEngine } from '../helpers/images.js';

let tmp: string;
let engine: ContainerEngine;
let images: Awaited<ReturnType<typeof testEngine>>;
let image: string;
let other: string;
let caseNo = 0;

const steps = (yaml: string): RunJobOptions['steps'] => parseBuildSpec(`version: 25\njobs:\n- name: J\n  steps:\n${yaml}`).jobs[0].steps;
const step = (name: string, commands: string[], more = ''): string =>
  `  - !CommandStep\n    name: ${name}\n${more}    interpreter: !DefaultInterpreter\n      commands:\n${commands.map((c) => `      - ${JSON.stringify(c)}\n`).join('')}`;

async function exec(yaml: string, extra: Partial<RunJobOptions> = {}): Promise<{ status: string; lines: string[]; jobDir: string }> {
  const lines: string[] = [];
  const jobDir = path.join(tmp, 'jobs', `job-${++caseNo}`);
  const result = await runJob({
    jobDir,
    steps: steps(yaml),
    checkout: () => Promise.reject(new Error('no checkout')),
    artifactsDir: path.join(tmp, `artifacts-${caseNo}`),
    log: (l) => lines.push(l),
    killGraceMs: 500,
    containers: { get: () => Promise.resolve(engine) },
    ...extra,
  });
  return { status: result.status, lines, jobDir };
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'gitloom-containers-'));
  await chmod(tmp, 0o711);
  image = 'localhost/gitloom-test/busybox:1';
  other = 'localhost/gitloom-test/other:1';
  images = await testEngine({ [image]: { osName: 'Gitloom Test Busybox' }, [other]: { osName: 'Other Image' } });
  engine = images.engine;
}, 120_000);

afterAll(async () => {
  await images?.close();
  await rm(tmp, { recursive: true, force: true });
});

describe('command steps in containers', () => {
  it("runs a step in its image: the image's /etc/os-release, OneDev's workspace path, root mapped onto the job's uid", async () => {
    const { status, lines } = await exec(
      step(
        'probe',
        ['cat /etc/os-release', 'pwd', 'echo "ws=$ONEDEV_WORKSPACE"', 'id -u', 'cat /proc/self/uid_map', 'grep CapEff /proc/self/status'],
        `    image: ${image}\n`,
      ),
    );
    expect(status, lines.join('\n')).toBe('SUCCESSFUL');
    expect(lines).toContain('PRETTY_NAME="Gitloom Test Busybox"');
    expect(lines).toContain('/onedev-build/workspace');
    expect(lines).toContain('ws=/onedev-build/workspace');
    expect(lines).toContain('0');
    const map = lines.find((l) => /^\s*0\s+\d+\s+65536$/.test(l));
    expect(map, 'container root is a job uid of the host, with a range of its own').toBeDefined();
    expect(Number(map!.trim().split(/\s+/)[1])).toBeGreaterThan(1_900_000_000);
    expect(lines).toContain('CapEff:\t0000000000000000');
  }, 120_000);

  it('shares the workspace between steps of different images and shell steps', async () => {
    const { status, lines } = await exec(
      [
        step('write', ['echo from-container > made-in-container.txt'], `    image: ${image}\n`),
        step('shell', ['cat made-in-container.txt', 'echo from-shell > made-in-shell.txt'], '    runInContainer: false\n'),
        step('read', ['cat made-in-shell.txt', 'cat /etc/os-release | grep PRETTY'], `    image: ${other}\n`),
      ].join(''),
    );
    expect(status, lines.join('\n')).toBe('SUCCESSFUL');
    expect(lines).toContain('from-container');
    expect(lines).toContain('from-shell');
    expect(lines).toContain('PRETTY_NAME="Other Image"');
  }, 120_000);

  it('delivers every line a step writes, in order per stream, also when it exits right after writing', async () => {
    const { status, lines } = await exec(
      step(
        'burst',
        ['i=0; while [ $i -lt 3000 ]; do echo "out $i"; echo "err $i" >&2; i=$((i+1)); done; printf "no newline at the end"'],
        `    image: ${image}\n`,
      ),
    );
    expect(status, lines.slice(-5).join('\n')).toBe('SUCCESSFUL');
    // Podman's live follow of a busy log may skip lines: the log then says so and repeats the
    // whole stream, so it always ends with the complete output in order
    for (const stream of ['out', 'err']) {
      const all = lines.filter((l) => l.startsWith(`${stream} `));
      expect(all.slice(-3000)).toEqual(Array.from({ length: 3000 }, (_, i) => `${stream} ${i}`));
      if (all.length > 3000) expect(lines.some((l) => l.includes(`missed some of its std${stream}; all of its std${stream} follows`))).toBe(true);
    }
    expect(lines).toContain('no newline at the end');
  }, 120_000);

  it('runs a !RunContainerStep: its arguments, environment, working directory and volume mounts of workspace paths', async () => {
    const run = `  - !RunContainerStep
    name: container
    image: ${image}
    args: sh -c 'cat /data/in.txt > /out/result.txt && echo "$GREETING in $(pwd), workspace $ONEDEV_WORKSPACE"'
    workingDir: /tmp
    envVars:
    - name: GREETING
      value: hello
    volumeMounts:
    - sourcePath: in
      targetPath: /data
    - sourcePath: out
      targetPath: /out
`;
    const { status, lines } = await exec(
      [
        step('prepare', ['mkdir in out', 'echo input > in/in.txt'], '    runInContainer: false\n'),
        run,
        step('read', ['cat out/result.txt'], '    runInContainer: false\n'),
      ].join(''),
    );
    expect(status, lines.join('\n')).toBe('SUCCESSFUL');
    expect(lines).toContain('hello in /tmp, workspace /onedev-build/workspace');
    expect(lines).toContain('input');

    const linked = await exec(
      [
        step('prepare', ['ln -s /etc in'], '    runInContainer: false\n'),
        `  - !RunContainerStep\n    name: container\n    image: ${image}\n    volumeMounts:\n    - sourcePath: in\n      targetPath: /data\n`,
      ].join(''),
    );
    expect(linked.status).toBe('FAILED');
    expect(linked.lines).toContain('Step "container" failed: Volume mount source must not go through a symbolic link: \'in\'');
    const failing = await exec(`  - !RunContainerStep\n    name: container\n    image: ${image}\n    args: sh -c 'exit 4'\n`);
    expect(failing.lines).toContain('Step "container" failed: Container exited with code 4');
  }, 120_000);

  it('fails a step on a non-zero exit and leaves no container behind', async () => {
    const { status, lines, jobDir } = await exec(step('fail', ['echo before', 'exit 3'], `    image: ${image}\n`));
    expect(status).toBe('FAILED');
    expect(lines).toContain('before');
    expect(lines).toContain('Step "fail" failed: Command exited with code 3');
    const left = await engine.docker.listContainers({ all: true, filters: { label: [`${JOB_DIR_LABEL}=${jobDir}`] } });
    expect(left).toEqual([]);
  }, 120_000);

  it('fails clearly when the image cannot be had', async () => {
    const { status, lines } = await exec(step('missing', ['true'], '    image: 127.0.0.1:9/nothing/here:1\n'));
    expect(status).toBe('FAILED');
    expect(lines.join('\n')).toMatch(/Step "missing" failed: Unable to pull image '127\.0\.0\.1:9\/nothing\/here:1': .+/);
  }, 120_000);

  it('stops a running container on cancel', async () => {
    const controller = new AbortController();
    const running = exec(step('sleep', ['echo started', 'sleep 600'], `    image: ${image}\n`), { signal: controller.signal });
    const deadline = Date.now() + 60_000;
    let labelled: unknown[] = [];
    while (Date.now() < deadline && labelled.length === 0) {
      labelled = await engine.docker.listContainers({ filters: { label: [JOB_DIR_LABEL] } });
      await new Promise((r) => setTimeout(r, 100));
    }
    controller.abort();
    const { status, jobDir } = await running;
    expect(status).toBe('CANCELLED');
    const left = await engine.docker.listContainers({ all: true, filters: { label: [`${JOB_DIR_LABEL}=${jobDir}`] } });
    expect(left).toEqual([]);
  }, 120_000);

  it('holds a container to the job limits: memory and processes', async () => {
    const sandbox = { ...DEFAULT_JOB_SANDBOX, limits: { memoryMb: 64, processes: 40, cpuSeconds: 60 } };
    const memory = await exec(step('bomb', ['echo start', 'x=0123456789; while true; do x="$x$x"; done'], `    image: ${image}\n`), { sandbox });
    expect(memory.status).toBe('FAILED');
    expect(memory.lines).toContain('Step "bomb" failed: Command exited with code 137');
    expect(memory.lines.join('\n')).toContain('The step ran with the job limits: memory 64 MiB');
    const forks = await exec(step('forks', ['n=0; while [ $n -lt 100 ]; do sleep 30 & n=$((n+1)); done', 'echo done'], `    image: ${image}\n`), { sandbox });
    expect(forks.lines.join('\n')).toMatch(/can't fork|Resource temporarily unavailable/);
  }, 120_000);

  it("holds a container to its job executor's limits: the stricter memory limit and a CPU quota", async () => {
    /** The memory and CPU quota the engine gave the container of a job run with `extra`. */
    const limitsOf = async (extra: Partial<RunJobOptions>): Promise<{ memory: number; quota: number; period: number }> => {
      const job = exec(step('limits', ['echo started', 'sleep 30'], `    image: ${image}\n`), extra);
      const id = await eventually(
        async () => (await engine.docker.listContainers({ filters: { label: [`${JOB_DIR_LABEL}=${path.join(tmp, 'jobs', `job-${caseNo}`)}`] } }))[0]?.Id,
        60_000,
      );
      const { HostConfig } = await engine.docker.getContainer(id).inspect();
      await engine.removeContainer(id);
      await job;
      return { memory: HostConfig.Memory ?? 0, quota: HostConfig.CpuQuota ?? 0, period: HostConfig.CpuPeriod ?? 0 };
    };
    expect(await limitsOf({ containerLimits: { memoryMb: 96, cpus: 0.5 } })).toEqual({ memory: 96 * 1024 * 1024, quota: 50_000, period: 100_000 });
    // the sandbox's memory limit when it is the stricter one; no CPU quota without a CPU limit
    const sandbox = { ...DEFAULT_JOB_SANDBOX, limits: { ...DEFAULT_JOB_SANDBOX.limits, memoryMb: 80 } };
    const stricter = await limitsOf({ sandbox, containerLimits: { memoryMb: 1024, cpus: null } });
    expect(stricter.memory).toBe(80 * 1024 * 1024);
    expect(stricter.quota).toBe(0);
  }, 120_000);

  it('refuses container steps and services under a server shell executor before the first step, in OneDev words', async () => {
    const yaml = step('first', ['echo ran'], '    runInContainer: false\n') + step('build', ['true'], `    image: ${image}\n`);
    const refused = await exec(yaml, { executorKind: 'ServerShellExecutor' });
    expect(refused.status).toBe('FAILED');
    expect(refused.lines).toContain(
      'Step "build" failed: This step can only be executed by server docker executor, remote docker executor, or kubernetes executor',
    );
    expect(refused.lines).not.toContain('ran');
    const services = await exec(step('first', ['echo ran'], '    runInContainer: false\n'), {
      executorKind: 'ServerShellExecutor',
      services: [{ name: 'db', image, arguments: null, envVars: [], readinessCheckCommand: 'true' }],
    });
    expect(services.lines).toContain('This job requires services, which can only be supported by docker aware executors');
    const shellOnly = await exec(step('first', ['echo ran'], '    runInContainer: false\n'), { executorKind: 'ServerShellExecutor', containers: null });
    expect(shellOnly.status).toBe('SUCCESSFUL');
  });

  it('fails a job with a container step at once when no engine is configured, saying what to install', async () => {
    const { status, lines } = await exec(step('probe', ['true'], `    image: ${image}\n`), { containers: null });
    expect(status).toBe('FAILED');
    expect(lines.join('\n')).toContain('install podman');
    expect(existsSync(path.join(tmp, 'jobs', `job-${caseNo}`))).toBe(false);
  });

  it('keeps the job network policy: neither the host nor its addresses are reached, DNS is slirp4netns', async () => {
    let connections = 0;
    const server = net.createServer((socket) => {
      connections++;
      socket.end('HTTP/1.0 200 OK\r\n\r\nreached\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const hostAddress = Object.values(os.networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
    try {
      const targets = ['10.0.2.2', '127.0.0.1', ...(hostAddress ? [hostAddress] : [])];
      const { lines } = await exec(
        step('net', [...targets.map((t) => `wget -T 3 -q -O- http://${t}:${port}/ || echo "refused ${t}"`), 'cat /etc/resolv.conf'], `    image: ${image}\n`),
      );
      for (const t of targets) expect(lines).toContain(`refused ${t}`);
      expect(lines).not.toContain('reached');
      expect(lines.join('\n')).toContain('nameserver 10.0.2.3');
      expect(connections).toBe(0);
    } finally {
      server.close();
    }
  }, 120_000);
});
