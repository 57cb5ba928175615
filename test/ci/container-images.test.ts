import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBuildSpec } from '../../src/ci/build-spec.js';
import type { ContainerEngine } from '../../src/ci/container-engine.js';
import { runJob, type RunJobOptions } from '../../src/ci/executor.js';
import { baseImages, parseBuildOptions } from '../../src/ci/image-build.js';
import { loginFor, registryOf, verifiesTls } from '../../src/ci/image-registries.js';
import { testEngine } from '../helpers/images.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

let tmp: string;
let engine: ContainerEngine;
let images: Awaited<ReturnType<typeof testEngine>>;
let registry: TestRegistry;
let caseNo = 0;
const LOCAL = 'localhost/gitloom-test/registry-source:1';
const login = { user: 'ci', password: 'p4ss-w0rd' };
const secrets = { REGISTRY_PASSWORD: login.password };

const steps = (yaml: string): RunJobOptions['steps'] => parseBuildSpec(`version: 25\njobs:\n- name: J\n  steps:\n${yaml}`).jobs[0].steps;
const command = (name: string, commands: string[], more = ''): string =>
  `  - !CommandStep\n    name: ${name}\n${more}    interpreter: !DefaultInterpreter\n      commands:\n${commands.map((c) => `      - ${JSON.stringify(c)}\n`).join('')}`;
const loginYaml = (indent: string): string =>
  `${indent}registryLogins:\n${indent}- registryUrl: ${registry.address}\n${indent}  userName: ${login.user}\n${indent}  passwordSecret: REGISTRY_PASSWORD\n`;

async function exec(yaml: string, extra: Partial<RunJobOptions> = {}): Promise<{ status: string; lines: string[] }> {
  const lines: string[] = [];
  const result = await runJob({
    jobDir: path.join(tmp, 'jobs', `job-${++caseNo}`),
    steps: steps(yaml),
    checkout: () => Promise.reject(new Error('no checkout')),
    artifactsDir: path.join(tmp, `artifacts-${caseNo}`),
    log: (l) => lines.push(l),
    killGraceMs: 500,
    containers: { get: () => Promise.resolve(engine) },
    projectId: 1,
    variables: { projectName: 'p', projectPath: 'p', jobName: 'J', ref: 'refs/heads/main', commitHash: '0'.repeat(40), buildNumber: caseNo, secrets },
    ...extra,
  });
  return { status: result.status, lines };
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'gitloom-images-'));
  await chmod(tmp, 0o711);
  images = await testEngine({ [LOCAL]: { osName: 'Registry Image' } });
  engine = images.engine;
  registry = await startRegistry(login);
  // the image reaches the registry through the engine, with the login
  const remote = `${registry.address}/test/busybox:1`;
  await engine.docker.getImage(LOCAL).tag({ repo: `${registry.address}/test/busybox`, tag: '1' });
  await engine.pushImage(
    remote,
    [{ registryUrl: `http://${registry.address}`, userName: login.user, password: login.password }],
    () => undefined,
    new AbortController().signal,
  );
  await engine.docker.getImage(remote).remove();
}, 180_000);

afterAll(async () => {
  for (const name of [`${registry?.address}/test/busybox:1`, `${registry?.address}/test/built:1`])
    await engine?.docker
      .getImage(name)
      .remove({ force: true })
      .catch(() => undefined);
  await registry?.close();
  await images?.close();
  await rm(tmp, { recursive: true, force: true });
});

describe('image registries', () => {
  it('names registries as Docker does and reaches loopback and listed ones over plain HTTP', () => {
    expect(registryOf('busybox')).toBe('docker.io');
    expect(registryOf('library/debian:12')).toBe('docker.io');
    expect(registryOf('localhost/a/b:1')).toBe('localhost');
    expect(registryOf('127.0.0.1:5000/a:1')).toBe('127.0.0.1:5000');
    expect(registryOf('registry.example.com/team/app@sha256:abc')).toBe('registry.example.com');
    expect(verifiesTls('127.0.0.1:5000', [])).toBe(false);
    expect(verifiesTls('localhost:5000', [])).toBe(false);
    expect(verifiesTls('[::1]:5000', [])).toBe(false);
    expect(verifiesTls('registry.example.com', [])).toBe(true);
    expect(verifiesTls('10.0.0.5:5000', [])).toBe(true);
    expect(verifiesTls('10.0.0.5:5000', ['10.0.0.5:5000'])).toBe(false);
    const logins = [
      { registryUrl: null, userName: 'hub', password: 'x' },
      { registryUrl: 'https://registry.example.com/v2/', userName: 'ex', password: 'y' },
    ];
    expect(loginFor('debian:12', logins)?.userName).toBe('hub');
    expect(loginFor('registry.example.com/a:1', logins)?.userName).toBe('ex');
    expect(loginFor('other.example.com/a:1', logins)).toBeNull();
  });

  it('pulls a step image with the registry login of the step, its password a job secret', async () => {
    const image = `${registry.address}/test/busybox:1`;
    const { status, lines } = await exec(command('probe', ['cat /etc/os-release'], `    image: ${image}\n${loginYaml('    ')}`));
    expect(status, lines.join('\n')).toBe('SUCCESSFUL');
    expect(lines).toContain(`Pulling image ${image}...`);
    expect(lines).toContain('PRETTY_NAME="Registry Image"');
    expect(lines.join('\n')).not.toContain(login.password);
    await engine.docker.getImage(image).remove();
  }, 120_000);

  it("pulls with the executor's registry logins too, and fails clearly without a login", async () => {
    const image = `${registry.address}/test/busybox:1`;
    const yaml = command('probe', ['true'], `    image: ${image}\n`);
    const denied = await exec(yaml);
    expect(denied.status).toBe('FAILED');
    expect(denied.lines.find((l) => l.includes(`Unable to pull image '${image}'`))).toMatch(/authentication required|unauthorized/);
    const executor = await exec(yaml, { registryLogins: [{ registryUrl: registry.address, userName: login.user, password: login.password }] });
    expect(executor.status, executor.lines.join('\n')).toBe('SUCCESSFUL');
    await engine.docker.getImage(image).remove();
  }, 120_000);
});

describe('!BuildImageStep', () => {
  it("builds from a Dockerfile of the workspace with RUN in the job's uid range, pushes with the login, and a later step runs the image", async () => {
    const base = `${registry.address}/test/busybox:1`;
    const built = `${registry.address}/test/built:1`;
    const dockerfile = [
      `FROM ${base}`,
      'ARG GREETING',
      'RUN cat /proc/self/uid_map && echo "$GREETING from the build" > /greeting',
      'COPY note.txt /note.txt',
      'RUN unshare -U true 2>/dev/null && echo nested || echo "no nested user namespace"',
    ];
    const yaml =
      command(
        'write',
        [`printf '%s\\n' ${dockerfile.map((l) => `'${l}'`).join(' ')} > docker/Dockerfile`, 'echo noted > docker/note.txt'],
        '    runInContainer: false\n',
      ).replace('commands:\n', 'commands:\n      - mkdir -p docker\n') +
      `  - !BuildImageStep\n    name: build\n    buildPath: docker\n    tags: ${built}\n    moreOptions: --build-arg GREETING=hello\n${loginYaml('    ')}` +
      command('use', ['cat /greeting /note.txt'], `    image: ${built}\n`);
    const { status, lines } = await exec(yaml);
    expect(status, lines.join('\n')).toBe('SUCCESSFUL');
    const map = lines.find((l) => /^\s*0\s+\d+\s+65536$/.test(l));
    expect(map, 'RUN ran as container root mapped onto the job range').toBeDefined();
    expect(Number(map!.trim().split(/\s+/)[1])).toBeGreaterThan(1_900_000_000);
    expect(lines, lines.join('\n')).toContain('hello from the build');
    expect(lines).toContain('noted');
    expect(lines, "RUN runs under the job containers' seccomp profile").toContain('no nested user namespace');
    expect(lines).toContain(`Pushing image ${built}...`);
    expect(await registry.tags('test/built')).toEqual(['1']);
    const first = await engine.imageId(built);
    const again = await exec(yaml);
    expect(again.status, again.lines.join('\n')).toBe('SUCCESSFUL');
    expect(again.lines).toContain(`Removed image ${first!.slice(0, 12)}, no longer tagged`);
    expect(await engine.imageId(first!)).toBeNull();
  }, 300_000);

  it("a project's build cannot plant an image under a name another project's jobs use: they pull it from its registry", async () => {
    const name = `${registry.address}/test/busybox:1`;
    const yaml =
      command(
        'write',
        ['mkdir -p d', `echo 'FROM ${LOCAL}' > d/Dockerfile`, "echo 'RUN echo planted > /planted' >> d/Dockerfile"],
        '    runInContainer: false\n',
      ) + `  - !BuildImageStep\n    name: plant\n    buildPath: d\n    tags: ${name}\n    publish: false\n`;
    const planted = await exec(yaml, { projectId: 7 });
    expect(planted.status, planted.lines.join('\n')).toBe('SUCCESSFUL');
    const other = await exec(command('probe', ['ls /planted || echo clean'], `    image: ${name}\n${loginYaml('    ')}`), { projectId: 8 });
    expect(other.status, other.lines.join('\n')).toBe('SUCCESSFUL');
    expect(other.lines).toContain(`Image ${name} was built by another project's job: pulling it from its registry...`);
    expect(other.lines).toContain('clean');
  }, 240_000);

  it('refuses build options it does not act on, and a Dockerfile outside the workspace', async () => {
    expect(parseBuildOptions('--build-arg A=1 --label=x=y --target t --no-cache --platform linux/amd64')).toEqual({
      buildArgs: { A: '1' },
      labels: { x: 'y' },
      target: 't',
      noCache: true,
      platform: 'linux/amd64',
    });
    expect(() => parseBuildOptions('--network host')).toThrow('Build option not supported: --network');
    expect(() => parseBuildOptions('--build-arg')).toThrow('needs a value');
    expect(baseImages('ARG V=3\nFROM alpine:${V} AS base\nFROM base\nCOPY --from=tools:1 /x /x\nFROM scratch\n', {})).toEqual(['alpine:3', 'tools:1']);
    expect(baseImages('ARG V=3\nFROM alpine:${V}\n', { V: '4' })).toEqual(['alpine:4']);
    const { status, lines } = await exec(`  - !BuildImageStep\n    name: b\n    dockerfile: ../../etc/passwd\n    tags: localhost/x:1\n    publish: false\n`);
    expect(status).toBe('FAILED');
    expect(lines.join('\n')).toMatch(/Dockerfile must be a relative path inside the workspace/);
  }, 60_000);
});
