import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** `/~api/settings/job-executors` (docs/compatibility.md#builds-job-executors; OneDev 8.6 SettingResource). */
describe('job executors setting', () => {
  let server: TestServer;
  let user: Awaited<ReturnType<TestServer['createUser']>>;
  beforeAll(async () => {
    server = await startTestServer();
    user = await server.createUser('plain');
    expect((await server.call('POST', '/groups', { body: { name: 'builders' } })).status).toBe(200);
  });
  afterAll(() => server?.close());

  const set = (body: unknown) => server.call('POST', '/settings/job-executors', { body });
  const get = async () => (await server.call('GET', '/settings/job-executors')).json as Record<string, unknown>[];

  it('is empty at first and for administrators only', async () => {
    expect(await get()).toEqual([]);
    expect((await server.call('GET', '/settings/job-executors', { auth: user.auth })).status).toBe(403);
    expect((await server.call('GET', '/settings/job-executors', { auth: null })).status).toBe(401);
    expect((await server.call('POST', '/settings/job-executors', { body: [], auth: user.auth })).status).toBe(403);
  });

  it("answers OneDev's shape: @type first, every field in OneDev's order with its default", async () => {
    const res = await set([
      { '@type': 'ServerDockerExecutor', name: 'docker' },
      { '@type': 'ServerShellExecutor', name: 'shell', enabled: false, concurrency: 2 },
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe('');
    const [docker, shell] = await get();
    expect(Object.keys(docker)).toEqual([
      '@type',
      'enabled',
      'name',
      'jobRequirement',
      'shellAccessEnabled',
      'sitePublishEnabled',
      'cacheTTL',
      'registryLogins',
      'runOptions',
      'dockerExecutable',
      'mountDockerSock',
      'dockerSockPath',
      'networkOptions',
      'cpuLimit',
      'memoryLimit',
      'concurrency',
      'imageMappings',
    ]);
    expect(docker).toEqual({
      '@type': 'ServerDockerExecutor',
      enabled: true,
      name: 'docker',
      jobRequirement: null,
      shellAccessEnabled: false,
      sitePublishEnabled: false,
      cacheTTL: 7,
      registryLogins: [],
      runOptions: null,
      dockerExecutable: null,
      mountDockerSock: false,
      dockerSockPath: null,
      networkOptions: null,
      cpuLimit: null,
      memoryLimit: null,
      concurrency: null,
      imageMappings: [],
    });
    expect(shell).toEqual({
      '@type': 'ServerShellExecutor',
      enabled: false,
      name: 'shell',
      jobRequirement: null,
      shellAccessEnabled: false,
      sitePublishEnabled: false,
      cacheTTL: 7,
      concurrency: '2',
    });
  });

  it('keeps every setting Gitloom acts on; a registry password is returned as OneDev does, and stored encrypted', async () => {
    const docker = {
      '@type': 'ServerDockerExecutor',
      enabled: true,
      name: 'limited-1',
      jobRequirement: '"Project" is "acme/**" and (on branch "main" or submitted by group "builders") and "Job" is "CI*"',
      shellAccessEnabled: false,
      sitePublishEnabled: false,
      cacheTTL: 3,
      registryLogins: [
        { registryUrl: null, userName: 'hub-user', password: 'hub-password-123' },
        { registryUrl: 'registry.example.com', userName: 'me', password: 'other-password-456' },
      ],
      runOptions: null,
      dockerExecutable: null,
      mountDockerSock: false,
      dockerSockPath: '/run/other/podman.sock',
      networkOptions: null,
      cpuLimit: '1.5',
      memoryLimit: '512m',
      concurrency: '3',
      imageMappings: [],
    };
    expect((await set([docker])).status).toBe(200);
    expect(await get()).toEqual([docker]);
    const stored = await server.server.services.db.selectFrom('settings').select('value').where('key', '=', 'jobExecutors').executeTakeFirstOrThrow();
    expect(stored.value).not.toContain('hub-password-123');
    expect(stored.value).not.toContain('other-password-456');
    expect(stored.value).toContain('encryptedPassword');
  });

  /** POSTs `executors` and expects a 400 with `code` and a detail containing `detail`; the setting stays as it was. */
  async function refused(executors: unknown, code: string, detail: string): Promise<void> {
    const before = await get();
    const res = await set(executors);
    expect(res.status, res.text).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.json.code, res.text).toBe(code);
    expect(res.json.detail).toContain(detail);
    expect(await get()).toEqual(before);
  }

  it('takes remote executors with an agent query, refusing one an executor cannot use', async () => {
    const remote = [
      { '@type': 'RemoteDockerExecutor', name: 'linux', agentQuery: '"Os" is "Linux" and has attribute "gpu"', concurrency: '2' },
      { '@type': 'RemoteShellExecutor', name: 'any-agent' },
    ];
    expect((await set(remote)).status).toBe(200);
    const [docker, shell] = await get();
    expect(docker).toMatchObject({ '@type': 'RemoteDockerExecutor', name: 'linux', agentQuery: '"Os" is "Linux" and has attribute "gpu"', concurrency: '2' });
    expect(docker.registryLogins).toEqual([]);
    expect(shell).toMatchObject({ '@type': 'RemoteShellExecutor', name: 'any-agent', agentQuery: null, concurrency: null });
    await refused(
      [{ '@type': 'RemoteShellExecutor', name: 'r', agentQuery: 'online' }],
      'GITLOOM_ERR_JOB_EXECUTOR_AGENT_QUERY',
      "Criteria 'online' is not supported here",
    );
    await refused([{ '@type': 'RemoteShellExecutor', name: 'r', agentQuery: '"Os" is' }], 'GITLOOM_ERR_JOB_EXECUTOR_AGENT_QUERY', 'jobExecutors[0].agentQuery');
    await refused([{ '@type': 'RemoteDockerExecutor', name: 'r', agentQuery: 'order by "Name"' }], 'GITLOOM_ERR_JOB_EXECUTOR_AGENT_QUERY', 'Order by');
  });

  it('refuses executor types it does not have, saying so', async () => {
    await refused(
      [{ '@type': 'KubernetesExecutor', name: 'k8s' }],
      'GITLOOM_ERR_JOB_EXECUTOR_TYPE',
      "Job executor type 'KubernetesExecutor' is not available in Gitloom yet",
    );
    await refused([{ '@type': 'Nonsense', name: 'r' }], 'GITLOOM_ERR_JOB_EXECUTOR_TYPE', "Unknown job executor type 'Nonsense'");
    await refused([{ name: 'r' }], 'GITLOOM_ERR_JOB_EXECUTOR_TYPE', '"@type" is missing');
  });

  it('refuses a missing, malformed or repeated name', async () => {
    await refused([{ '@type': 'ServerShellExecutor' }], 'GITLOOM_ERR_JOB_EXECUTOR_NAME', 'jobExecutors[0].name: Name is required');
    await refused([{ '@type': 'ServerShellExecutor', name: '  ' }], 'GITLOOM_ERR_JOB_EXECUTOR_NAME', 'Name is required');
    await refused(
      [{ '@type': 'ServerShellExecutor', name: 'bad name' }],
      'GITLOOM_ERR_JOB_EXECUTOR_NAME',
      "Should only contain alphanumberic characters or '-'",
    );
    await refused([{ '@type': 'ServerShellExecutor', name: '-x' }], 'GITLOOM_ERR_JOB_EXECUTOR_NAME', 'can only start and end with alphanumeric characters');
    await refused(
      [
        { '@type': 'ServerShellExecutor', name: 'same' },
        { '@type': 'ServerDockerExecutor', name: 'same' },
      ],
      'GITLOOM_ERR_JOB_EXECUTOR_NAME',
      "jobExecutors[1].name: Name 'same' is already used by another job executor",
    );
  });

  it('refuses a job requirement that does not parse in the job match language or names nobody', async () => {
    const shell = (jobRequirement: string) => [{ '@type': 'ServerShellExecutor', name: 'shell', jobRequirement }];
    await refused(shell('on branch main'), 'GITLOOM_ERR_JOB_EXECUTOR_REQUIREMENT', 'jobExecutors[0].jobRequirement: Unexpected');
    await refused(shell('"Status" is "x"'), 'GITLOOM_ERR_JOB_EXECUTOR_REQUIREMENT', 'Field not found: Status');
    await refused(shell('submitted by user "nobody"'), 'GITLOOM_ERR_JOB_EXECUTOR_REQUIREMENT', 'Unable to find user with login: nobody');
    await refused(shell('submitted by group "nogroup"'), 'GITLOOM_ERR_JOB_EXECUTOR_REQUIREMENT', 'Unable to find group: nogroup');
    await refused(shell(`on branch "${'*a'.repeat(600)}"`), 'GITLOOM_ERR_JOB_EXECUTOR_REQUIREMENT', 'jobExecutors[0].jobRequirement:');
    expect((await set(shell('"Job" is "Release" or submitted by user "plain"'))).status).toBe(200);
    expect((await set(shell('   '))).status).toBe(200);
    expect((await get())[0].jobRequirement).toBeNull();
  });

  it('refuses every setting Gitloom does not act on when it is not at its default', async () => {
    const docker = (more: Record<string, unknown>) => [{ '@type': 'ServerDockerExecutor', name: 'docker', ...more }];
    const unsupported = 'GITLOOM_ERR_JOB_EXECUTOR_UNSUPPORTED';
    await refused(
      docker({ mountDockerSock: true }),
      unsupported,
      "jobExecutors[0].mountDockerSock: not supported: the container engine's socket is never mounted",
    );
    await refused(docker({ runOptions: '--privileged' }), unsupported, 'jobExecutors[0].runOptions: not supported');
    await refused(docker({ networkOptions: '--subnet 10.0.0.0/8' }), unsupported, 'jobExecutors[0].networkOptions: not supported');
    await refused(docker({ dockerExecutable: '/usr/bin/docker' }), unsupported, 'jobExecutors[0].dockerExecutable: not supported');
    await refused(docker({ imageMappings: [{ from: 'a', to: 'b' }] }), unsupported, 'jobExecutors[0].imageMappings: not supported');
    await refused(docker({ shellAccessEnabled: true }), unsupported, 'no web terminal');
    await refused([{ '@type': 'ServerShellExecutor', name: 's', sitePublishEnabled: true }], unsupported, 'jobExecutors[0].sitePublishEnabled: not supported');
    // at their defaults they are taken
    expect((await set(docker({ mountDockerSock: false, runOptions: '', networkOptions: null, imageMappings: [] }))).status).toBe(200);
  });

  it('refuses values that do not read: concurrency, limits, cache TTL, socket path, registry logins', async () => {
    const docker = (more: Record<string, unknown>) => [{ '@type': 'ServerDockerExecutor', name: 'docker', ...more }];
    const value = 'GITLOOM_ERR_JOB_EXECUTOR_VALUE';
    await refused(docker({ concurrency: '0' }), value, "jobExecutors[0].concurrency: Invalid number '0'");
    await refused([{ '@type': 'ServerShellExecutor', name: 's', concurrency: 'many' }], value, "Invalid number 'many'");
    await refused(docker({ cpuLimit: 'lots' }), value, "jobExecutors[0].cpuLimit: Invalid CPU limit 'lots'");
    await refused(docker({ memoryLimit: '12x' }), value, "jobExecutors[0].memoryLimit: Invalid memory limit '12x'");
    await refused(docker({ memoryLimit: '1k' }), value, 'at least 6m');
    await refused(docker({ cacheTTL: 0 }), value, 'Cache TTL must be at least 1 day');
    await refused(docker({ dockerSockPath: 'relative.sock' }), value, 'must be an absolute path');
    await refused(docker({ registryLogins: [{ registryUrl: null, userName: 'u', password: '' }] }), value, 'registryLogins[0].password: must not be empty');
    await refused(
      docker({
        registryLogins: [
          { userName: 'a', password: 'b' },
          { registryUrl: '', userName: 'c', password: 'd' },
        ],
      }),
      value,
      'Duplicate login entry for official registry',
    );
    expect((await set(docker({ memoryLimit: '1.5g', cpuLimit: 2, concurrency: '' }))).status).toBe(200);
    expect(await get()).toMatchObject([{ memoryLimit: '1.5g', cpuLimit: '2', concurrency: null }]);
  });

  it('refuses what is not a list of executor objects, unknown fields and values of the wrong type', async () => {
    const validation = 'GITLOOM_ERR_VALIDATION';
    await refused({ '@type': 'ServerShellExecutor', name: 's' }, validation, '');
    await refused(['shell'], validation, 'jobExecutors[0]: must be an object');
    await refused([{ '@type': 'ServerShellExecutor', name: 's', registryLogins: [] }], validation, "Unknown field 'registryLogins' of ServerShellExecutor");
    await refused([{ '@type': 'ServerShellExecutor', name: 's', enabled: 'yes' }], validation, 'jobExecutors[0].enabled: must be true or false');
    await refused([{ '@type': 'ServerShellExecutor', name: 's', cacheTTL: 1.5 }], validation, 'jobExecutors[0].cacheTTL: must be a whole number');
    await refused(
      [{ '@type': 'ServerDockerExecutor', name: 's', registryLogins: [{ userName: 'a', password: 'b', token: 'c' }] }],
      validation,
      "Unknown field 'token'",
    );
  });
});
