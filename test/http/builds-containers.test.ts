import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerEngine, JOB_DIR_LABEL, JOBS_DIR_LABEL } from '../../src/ci/container-engine.js';
import { loadConfig } from '../../src/config.js';
import { eventually, givenRepo, removeWorkTrees, runJobOnCommit } from '../helpers/fixtures.js';
import { testEngine } from '../helpers/images.js';
import { processesWith, waitGone } from '../helpers/processes.js';
import {
  callChild,
  git,
  givenInstallation,
  killChild,
  makeWorkTree,
  remoteOf,
  serveChild,
  startTestServer,
  type ChildServer,
  type TestServer,
} from '../helpers/server.js';

const IMAGE = 'localhost/gitloom-test/build-environment:1';
/** The Sleep job's sleep, unique to this run so its processes can be found on the host. */
const MARKER = `600.${process.pid}`;

/** A OneDev 8.6-style spec: checkout, a command step in an image, the version from a file, artifacts, a shell step after. */
const SPEC = `version: 25
services:
- name: web
  image: ${IMAGE}
  arguments: httpd -f -p 8080 -h /www
  readinessCheckCommand: wget -q -O /dev/null http://localhost:8080/index.html
jobs:
- name: CI
  requiredServices:
  - web
  caches:
  - key: deps-@project_name@
    path: /root/.deps
  steps:
  - !CheckoutStep
    name: checkout
    cloneCredential: !DefaultCredential {}
    withLfs: false
    withSubmodules: false
    condition: ALL_PREVIOUS_STEPS_WERE_SUCCESSFUL
  - !CommandStep
    name: build
    runInContainer: true
    image: ${IMAGE}
    interpreter: !DefaultInterpreter
      commands:
      - cat /etc/os-release
      - echo "workspace $ONEDEV_WORKSPACE in $(pwd)"
      - cat README.md
      - mkdir -p target && echo "1.2.@build_number@" > target/version && build-tool > target/app.txt
      - wget -q -O- http://web:8080/index.html
      - cat /root/.deps/count 2>/dev/null || echo "no cache yet"
      - echo "cached by build @build_number@" > /root/.deps/count
    useTTY: false
    condition: ALL_PREVIOUS_STEPS_WERE_SUCCESSFUL
  - !SetBuildVersionStep
    name: set version
    buildVersion: '@file:target/version@'
    condition: ALL_PREVIOUS_STEPS_WERE_SUCCESSFUL
  - !PublishArtifactStep
    name: publish
    artifacts: target/*.txt
    condition: ALL_PREVIOUS_STEPS_WERE_SUCCESSFUL
  - !CommandStep
    name: on the server
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - cat target/app.txt
    condition: ALL_PREVIOUS_STEPS_WERE_SUCCESSFUL
- name: Sleep
  steps:
  - !CommandStep
    name: sleep
    image: ${IMAGE}
    interpreter: !DefaultInterpreter
      commands:
      - echo sleeping
      - sleep ${MARKER}
`;

let engine: ContainerEngine;
let images: Awaited<ReturnType<typeof testEngine>>;

beforeAll(async () => {
  images = await testEngine({
    [IMAGE]: {
      osName: 'Build Environment',
      files: { 'bin/build-tool': '#!/bin/sh\necho "built by the image\'s tool"\n', 'www/index.html': 'answered by the web service\n' },
    },
  });
  engine = images.engine;
}, 120_000);

afterAll(async () => {
  await images?.close();
  await removeWorkTrees();
});

describe('builds with container steps', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  it('runs a OneDev-style spec: a command step in its image with a service and a cache shares the workspace with checkout, version, artifacts and shell steps', async () => {
    const repo = await givenRepo(server, 'containers', { files: { 'README.md': 'readme of the project\n', '.onedev-buildspec.yml': SPEC } });
    const res = await runJobOnCommit(server, { projectId: repo.id, commitHash: await repo.head('main'), jobName: 'CI' });
    expect(res.status, res.text).toBe(200);
    type Build = { status: string; version: string | null; number: number };
    const build = (await eventually(async () => {
      const b = (await server.call('GET', `/builds/${res.json}`)).json as Build;
      return ['SUCCESSFUL', 'FAILED'].includes(b.status) ? b : null;
    }, 120_000)) as Build;
    const log = (await server.call('GET', `/builds/${res.json}/log`)).text;
    expect(build.status, log).toBe('SUCCESSFUL');
    expect(log).toContain('PRETTY_NAME="Build Environment"');
    expect(log).toContain('workspace /onedev-build/workspace in /onedev-build/workspace');
    expect(log).toContain('readme of the project');
    expect(log).toContain("Service 'web' is ready");
    expect(log).toContain('answered by the web service');
    expect(log).toContain('no cache yet');
    expect(log).toContain("Saved cache 'deps-containers'");
    expect(log).toMatch(/Container engine: .*\d/);
    expect(build.version).toBe(`1.2.${build.number}`);
    expect((await server.call('GET', `/artifacts/${res.json}/contents/target/app.txt`)).text).toBe("built by the image's tool\n");
    const lines = log.split('\n');
    expect(lines.filter((l) => l.endsWith("built by the image's tool"))).toHaveLength(1);
    expect(await engine.docker.listContainers({ all: true, filters: { label: [`${JOBS_DIR_LABEL}=${server.server.services.config.jobsDir}`] } })).toEqual([]);

    // the next build sees what the first one cached
    const next = await runJobOnCommit(server, { projectId: repo.id, commitHash: await repo.head('main'), jobName: 'CI' });
    await eventually(async () => ['SUCCESSFUL', 'FAILED'].includes((await server.call('GET', `/builds/${next.json}`)).json.status), 120_000);
    expect((await server.call('GET', `/builds/${next.json}/log`)).text).toContain(`cached by build ${build.number}`);
  }, 240_000);

  it("runs a docker executor's jobs on the engine at its dockerSockPath, within its limits", async () => {
    const own = await startTestServer();
    try {
      const executors = [
        { '@type': 'ServerDockerExecutor', name: 'elsewhere', dockerSockPath: `unix://${engine.socketPath}`, memoryLimit: '256m', cpuLimit: '1' },
      ];
      expect((await own.call('POST', '/settings/job-executors', { body: executors })).status).toBe(200);
      const repo = await givenRepo(own, 'socket', { files: { 'README.md': 'readme\n', '.onedev-buildspec.yml': SPEC } });
      const res = await runJobOnCommit(own, { projectId: repo.id, commitHash: await repo.head('main'), jobName: 'Sleep' });
      await eventually(async () => (await own.call('GET', `/builds/${res.json}/log`)).text.includes('sleeping'), 120_000);
      const [container] = await engine.docker.listContainers({ filters: { label: [`${JOBS_DIR_LABEL}=${own.server.services.config.jobsDir}`] } });
      const { HostConfig } = await engine.docker.getContainer(container.Id).inspect();
      expect(HostConfig.Memory).toBe(256 * 1024 * 1024);
      expect(HostConfig.CpuQuota).toBe(100_000);
      expect((await own.call('DELETE', `/job-runs/${res.json}`)).status).toBe(200);
      const log = (await own.call('GET', `/builds/${res.json}/log`)).text;
      expect(log).toContain('Executing job (executor: elsewhere, ');
      // the server's own engine service was never started
      expect(existsSync(path.join(own.dataDir, 'containers', 'podman.pid'))).toBe(false);
      await eventually(
        async () =>
          (await engine.docker.listContainers({ all: true, filters: { label: [`${JOBS_DIR_LABEL}=${own.server.services.config.jobsDir}`] } })).length === 0,
        30_000,
      );
    } finally {
      await own.close();
    }
  }, 240_000);
});

describe('a server killed during a container step', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  const alive = (pid: number): boolean => existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));

  it('leaves no container, engine service, conmon or job process within seconds, without a restart; the next start finds nothing left', async () => {
    const env = await givenInstallation(cleanup);
    const jobsDir = loadConfig(env).jobsDir;
    const containersOf = () => engine.docker.listContainers({ all: true, filters: { label: [`${JOBS_DIR_LABEL}=${jobsDir}`] } });

    const first = await serveChild(env);
    cleanup.push(() => killChild(first));
    const work = await makeWorkTree({ '.onedev-buildspec.yml': SPEC });
    cleanup.push(() => fs.rm(work, { recursive: true, force: true }));
    const id = (await callChild(first, 'POST', '/projects', { name: 'killed' })).json as number;
    await git(work, ['push', '-q', remoteOf(first, 'killed'), 'main']);
    const head = (await git(work, ['rev-parse', 'HEAD'])).trim();
    const build = await callChild(first, 'POST', '/job-runs', {
      '@type': 'JobRunOnCommit',
      projectId: id,
      commitHash: head,
      refName: 'refs/heads/main',
      jobName: 'Sleep',
      params: {},
      reason: 'kill',
    });
    expect(build.status, build.text).toBe(200);
    await eventually(async () => (await callChild(first, 'GET', `/builds/${build.json}/log`)).text.includes('sleeping'), 120_000);
    const containers = await containersOf();
    expect(containers).toHaveLength(1);
    const socket = path.join(env.GITLOOM_DATA_DIR, 'containers', 'podman.sock');
    const service = Number(readFileSync(path.join(env.GITLOOM_DATA_DIR, 'containers', 'podman.pid'), 'utf8'));
    expect(alive(service)).toBe(true);
    expect(processesWith(MARKER).length).toBeGreaterThan(0);
    const holders = processesWith(jobsDir);
    expect(holders.length, 'the job network namespace holder').toBeGreaterThan(0);
    expect(processesWith(`/proc/${holders[0]}/ns/net`).length, 'slirp4netns').toBeGreaterThan(0);
    // conmon, which supervises the container, names it in its arguments
    expect(processesWith(containers[0].Id).length, 'the conmon of the container').toBeGreaterThan(0);

    await killChild(first);
    // the reaper removes the killed server's container and ends its engine service
    expect(await eventually(async () => ((await containersOf()).length === 0 ? true : null), 15_000)).toBe(true);
    expect(await waitGone(MARKER)).toBe(true);
    expect(await waitGone(containers[0].Id)).toBe(true);
    expect(await waitGone(jobsDir)).toBe(true);
    // slirp4netns names the holder's network namespace
    for (const holder of holders) expect(await waitGone(`/proc/${holder}/ns/net`)).toBe(true);
    // the service and the reaper name the socket in their arguments
    expect(await waitGone(socket, 10_000)).toBe(true);
    expect(alive(service)).toBe(false);

    const stop = async (server: ChildServer): Promise<void> => {
      server.child.kill('SIGTERM');
      await new Promise((resolve) => (server.child.exitCode !== null ? resolve(null) : server.child.once('exit', resolve)));
    };
    let second = await serveChild(env);
    cleanup.push(() => killChild(second));
    const final = await eventually(async () => {
      const b = (await callChild(second, 'GET', `/builds/${build.json}`)).json;
      return b.status === 'RUNNING' ? null : b;
    }, 60_000);
    expect(['FAILED', 'CANCELLED']).toContain(final.status);
    if (process.env.GITLOOM_TEST_DATABASE_URL) {
      // PostgreSQL: other processes may share the data dir, so what runs under an unexpired lease
      // is kept at start-up; the next start after the lease expired (the build FAILED) removes it
      await stop(second);
      second = await serveChild(env);
    }
    expect(await containersOf()).toEqual([]);
    expect(processesWith(MARKER)).toEqual([]);
    await stop(second);
    // a server stopped in order stops its engine service and removes its pid file
    expect(existsSync(path.join(env.GITLOOM_DATA_DIR, 'containers', 'podman.pid'))).toBe(false);
  }, 240_000);

  it("a server process's reaper removes only that process's containers: another's on the same engine and jobs dir stay", async () => {
    // two server processes of one data dir (PostgreSQL) on one engine; the end of the first ends its reaper's wait
    const stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-reapers-'));
    cleanup.push(() => fs.rm(stateDir, { recursive: true, force: true }));
    const connect = async (): Promise<ContainerEngine> => {
      const connected = await ContainerEngine.connect({ host: engine.socketPath, stateDir, log: () => undefined });
      if ('unavailable' in connected) throw new Error(connected.unavailable);
      return connected;
    };
    const [first, second] = [await connect(), await connect()];
    cleanup.push(() => second.close());
    const sleeper = async (server: ContainerEngine, n: number): Promise<string> => {
      const id = await server.createContainer({
        image: IMAGE,
        command: ['sleep', `${MARKER}${n}`],
        env: {},
        workingDir: null,
        mounts: [],
        labels: { [JOB_DIR_LABEL]: path.join(stateDir, 'jobs', `${n}-job`), [JOBS_DIR_LABEL]: path.join(stateDir, 'jobs') },
        idMapping: null,
        networkNamespace: null,
        dns: [],
        hosts: [],
        limits: { memoryMb: 64, processes: 16, cpuSeconds: 60 },
        seccompProfile: null,
      });
      await server.docker.getContainer(id).start();
      return id;
    };
    const [mine, theirs] = [await sleeper(first, 1), await sleeper(second, 2)];
    await first.close();
    await expect(engine.docker.getContainer(mine).inspect()).rejects.toMatchObject({ statusCode: 404 });
    expect((await engine.docker.getContainer(theirs).inspect()).State.Running).toBe(true);
    expect(processesWith(`${MARKER}1`)).toEqual([]);
    await second.close();
    await expect(engine.docker.getContainer(theirs).inspect()).rejects.toMatchObject({ statusCode: 404 });
    expect(processesWith(`${MARKER}2`)).toEqual([]);
  });
});
