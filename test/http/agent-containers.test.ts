/**
 * Container jobs on a build agent (docs/compatibility.md#build-agents): a real server, a remote
 * docker executor and `gitloom agent` child processes — one told of an engine that is not there
 * (it connects with none), one that finds Podman as the server does and starts its own service.
 * The job's image and its service's come from a local registry that needs the executor's login,
 * pulled by the agent's engine.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shellJob, startAgent, type AgentProcess } from '../helpers/agents.js';
import { eventually, givenProject, runJobOnCommit } from '../helpers/fixtures.js';
import { testEngine } from '../helpers/images.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';

const LOCAL = 'localhost/gitloom-test/agent-environment:1';
/** A file only the image has. */
const MARKER = 'built-into-the-agent-image';
/** The registry's only user, a login of the docker executor. */
const LOGIN = { user: 'ci', password: 'agent-p4ss' };

const spec = (image: string): string => `version: 25
services:
- name: web
  image: ${image}
  arguments: httpd -f -p 8080 -h /www
  readinessCheckCommand: wget -q -O /dev/null http://localhost:8080/index.html
jobs:
- name: Container
  jobExecutor: containers
  requiredServices:
  - web
  steps:
  - !CheckoutStep
    name: checkout
    cloneCredential: !DefaultCredential {}
  - !CommandStep
    name: in the image
    runInContainer: true
    image: ${image}
    interpreter: !DefaultInterpreter
      commands:
      - cat /etc/os-release
      - cat /marker
      - echo "workspace $(pwd)"
      - cat README.md
      - wget -q -O- http://web:8080/index.html
- name: Sleep
  jobExecutor: containers
  steps:
  - !CommandStep
    name: sleep
    runInContainer: true
    image: ${image}
    interpreter: !DefaultInterpreter
      commands:
      - echo sleeping-in-the-container
      - sleep 600
${shellJob('Shell', 'shells', ['echo on-the-plain-agent'])}
`;

describe('container jobs on a build agent', { timeout: 240_000 }, () => {
  let server: TestServer;
  let registry: TestRegistry;
  let images: Awaited<ReturnType<typeof testEngine>>;
  let projectId: number;
  let head: string;
  const agents: AgentProcess[] = [];
  const dirs: string[] = [];

  const build = async (id: number) => (await server.call('GET', `/builds/${id}`)).json;
  const log = async (id: number) => (await server.call('GET', `/builds/${id}/log`)).text;
  const finished = (id: number) =>
    eventually(async () => {
      const b = await build(id);
      return ['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(b.status) ? b : null;
    }, 180_000);
  const run = async (jobName: string): Promise<number> => {
    const res = await runJobOnCommit(server, { projectId, commitHash: head, jobName });
    expect(res.status, res.text).toBe(200);
    return res.json as number;
  };
  const newToken = async (): Promise<string> => (await server.call('GET', `/agent-tokens/${(await server.call('POST', '/agent-tokens')).json}`)).json.value;
  const workDir = async (): Promise<string> => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-agent-'));
    dirs.push(dir);
    return dir;
  };
  const connected = async (agent: AgentProcess): Promise<void> => {
    expect(await eventually(async () => (agent.output().includes('Connected to') ? true : null), 60_000), agent.output()).toBe(true);
  };

  beforeAll(async () => {
    // the image, built offline in an engine of the test's own, reaches the agent through a registry
    images = await testEngine({
      [LOCAL]: { osName: 'Agent Environment', files: { marker: `${MARKER}\n`, 'www/index.html': 'answered by the web service\n' } },
    });
    registry = await startRegistry(LOGIN);
    const repository = `${registry.address}/gitloom-test/agent-environment`;
    await images.engine.docker.getImage(LOCAL).tag({ repo: repository, tag: '1' });
    await images.engine.pushImage(
      `${repository}:1`,
      [{ registryUrl: `http://${registry.address}`, userName: LOGIN.user, password: LOGIN.password }],
      () => undefined,
      new AbortController().signal,
    );
    await images.engine.docker.getImage(`${repository}:1`).remove();

    server = await startTestServer();
    projectId = await givenProject(server, { name: 'agent-containers' });
    const work = await makeWorkTree({ 'README.md': 'readme of the agent project\n', '.onedev-buildspec.yml': spec(`${repository}:1`) });
    dirs.push(work);
    head = (await git(work, ['rev-parse', 'HEAD'])).trim();
    await git(work, ['push', '-q', gitUrl(server, 'agent-containers', { name: 'admin', password: 'admin-secret' }), 'main']);
    const executors = [
      {
        '@type': 'RemoteDockerExecutor',
        name: 'containers',
        agentQuery: '"pool" is "ci"',
        registryLogins: [{ registryUrl: registry.address, userName: LOGIN.user, password: LOGIN.password }],
      },
      { '@type': 'RemoteShellExecutor', name: 'shells', agentQuery: '"pool" is "ci"' },
    ];
    const saved = await server.call('POST', '/settings/job-executors', { body: executors });
    expect(saved.status, saved.text).toBe(200);
  }, 180_000);

  afterAll(async () => {
    // SIGTERM: each agent stops the Podman service it started
    for (const agent of agents) {
      if (agent.child.exitCode === null) agent.child.kill('SIGTERM');
      await agent.exited;
    }
    await server?.close();
    await registry?.close();
    await images?.close();
    for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
  });

  let pending: number;
  /** The work dir of the agent with Podman. */
  let dockerDir: string;

  it('keeps a docker job PENDING while the only matching agent has no container engine, which runs shell jobs meanwhile', async () => {
    const dir = await workDir();
    // a socket that is not there: the agent finds no engine and connects without one
    const plain = startAgent(server.url, dir, await newToken(), ['--name', 'plain-runner', '--attribute', 'pool=ci'], {
      GITLOOM_CONTAINER_HOST: `unix://${path.join(dir, 'no-engine.sock')}`,
    });
    agents.push(plain);
    await connected(plain);
    expect(plain.output()).toContain('container engine: none');
    const row = await server.server.services.db.selectFrom('agents').select(['id', 'engine']).where('name', '=', 'plain-runner').executeTakeFirstOrThrow();
    expect(row.engine).toBeNull();

    pending = await run('Container');
    // a shell job queued after it runs on that agent: the scheduler went past the docker job
    const shell = await finished(await run('Shell'));
    expect(shell.status, await log(shell.id)).toBe('SUCCESSFUL');
    expect(shell.agentId).toBe(row.id);
    expect(await log(shell.id)).toContain('on-the-plain-agent');

    const waiting = await build(pending);
    expect(waiting.status).toBe('PENDING');
    expect(waiting.agentId).toBeNull();
    expect(await log(pending)).not.toContain('Executing job');
    expect(plain.output()).not.toContain(`Build ${pending}`);
  });

  it('runs it on an agent with Podman once one connects: steps in the image pulled from the registry with the executor login, a service, nothing left on the engine', async () => {
    const dir = (dockerDir = await workDir());
    const agent = startAgent(server.url, dir, await newToken(), ['--name', 'docker-runner', '--attribute', 'pool=ci']);
    agents.push(agent);
    await connected(agent);
    const row = await server.server.services.db.selectFrom('agents').select(['id', 'engine']).where('name', '=', 'docker-runner').executeTakeFirstOrThrow();
    expect(row.engine).toMatch(/\d/);

    const b = await finished(pending);
    const text = await log(pending);
    expect(b.status, `${text}\n${agent.output()}`).toBe('SUCCESSFUL');
    expect(text).toContain('Executing job (executor: containers, agent: docker-runner)...');
    expect(text).toContain('PRETTY_NAME="Agent Environment"');
    expect(text).toContain(MARKER);
    expect(text).toContain('workspace /onedev-build/workspace');
    expect(text).toContain('readme of the agent project');
    expect(text).toContain("Service 'web' is ready");
    expect(text).toContain('answered by the web service');
    expect(b.agentId).toBe(row.id);
    expect((await server.call('GET', `/agents/${b.agentId}`)).json.name).toBe('docker-runner');

    // the agent's own Podman service (its work dir's `containers/`) keeps no container of the job
    const engine = new Docker({ socketPath: path.join(dir, 'containers', 'podman.sock') });
    expect(await engine.listContainers({ all: true })).toEqual([]);
    // the job's directory went with it
    expect(await fs.readdir(path.join(dir, 'jobs'))).toEqual([]);
  });

  it('a cancel stops a container step on the agent and removes its container', async () => {
    const engine = new Docker({ socketPath: path.join(dockerDir, 'containers', 'podman.sock') });
    const id = await run('Sleep');
    await eventually(async () => ((await log(id)).includes('sleeping-in-the-container') ? true : null), 120_000);
    expect(await engine.listContainers()).toHaveLength(1);
    expect((await server.call('DELETE', `/job-runs/${id}`)).status).toBe(200);
    expect((await finished(id)).status).toBe('CANCELLED');
    await eventually(async () => (agents[1].output().includes(`Build ${id}: stopped, as the server asked`) ? true : null), 30_000);
    expect(await engine.listContainers({ all: true })).toEqual([]);
    expect(await fs.readdir(path.join(dockerDir, 'jobs'))).toEqual([]);
  });
});
