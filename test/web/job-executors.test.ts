import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { givenUsers, type TestUser } from '../helpers/fixtures.js';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server.js';

/** `/~administration/job-executors` over plain HTTP: each change checked through the API (docs/compatibility.md#builds-job-executors). */
describe('job executors page', () => {
  let server: TestServer;
  let alice: TestUser;
  let admin: WebSession;
  let aliceSession: WebSession;

  beforeAll(async () => {
    server = await startTestServer();
    [alice] = await givenUsers(server, 'alice');
    admin = await signInByFetch(server, ADMIN.name, ADMIN.password);
    aliceSession = await signInByFetch(server, 'alice', alice.password);
  });
  afterAll(async () => {
    await server?.close();
  });

  const get = (path: string, session: WebSession = admin) => fetch(`${server.url}${path}`, { redirect: 'manual', headers: { cookie: session.cookie } });
  const post = (path: string, fields: Record<string, string>, session: WebSession = admin) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      body: new URLSearchParams({ _csrf: session.csrfToken, ...fields }).toString(),
    });
  const executors = async () => (await server.call('GET', '/settings/job-executors')).json as Record<string, unknown>[];

  it('is for administrators only, and listed among the administration sections', async () => {
    expect((await get('/~administration/job-executors', aliceSession)).status).toBe(404);
    expect((await post('/~administration/job-executors/new?type=ServerShellExecutor', { name: 'x', cacheTTL: '7' }, aliceSession)).status).toBe(404);
    expect(await executors()).toEqual([]);
    const html = await (await get('/~administration/job-executors')).text();
    expect(html).toContain('<title>Job executors · Administration · Gitloom</title>');
    expect(html).toContain('href="/~administration/job-executors" aria-current="page"');
    expect(html).toContain('No job executor yet');
    expect(html).toContain('href="/~administration/job-executors/new?type=ServerDockerExecutor"');
    expect((await get('/~administration/job-executors/new?type=KubernetesExecutor')).status).toBe(404);
    expect((await get('/~administration/job-executors/0')).status).toBe(404);
  });

  it('creates executors of each type, refusing what the API refuses with the same message and keeping the values', async () => {
    const shell = await post('/~administration/job-executors/new?type=ServerShellExecutor', {
      type: 'ServerShellExecutor',
      name: 'shell',
      enabled: 'on',
      jobRequirement: 'on branch "main"',
      concurrency: '2',
      cacheTTL: '5',
    });
    expect(shell.status).toBe(303);
    expect(shell.headers.get('location')).toBe('/~administration/job-executors');
    const docker = { type: 'ServerDockerExecutor', name: 'docker', enabled: 'on', jobRequirement: '', concurrency: '', cacheTTL: '7', cpuLimit: '1.5' };
    const refused = await post('/~administration/job-executors/new?type=ServerDockerExecutor', { ...docker, memoryLimit: '12x' });
    expect(refused.status).toBe(400);
    const html = await refused.text();
    expect(html).toContain("jobExecutors[1].memoryLimit: Invalid memory limit '12x'");
    expect(html).toContain('value="12x"');
    const api = await server.call('POST', '/settings/job-executors', {
      body: [...(await executors()), { '@type': 'ServerDockerExecutor', name: 'docker', memoryLimit: '12x' }],
    });
    expect(api.json.detail).toBe("jobExecutors[1].memoryLimit: Invalid memory limit '12x': a size such as 512m or 2g, at least 6m");
    const duplicate = await post('/~administration/job-executors/new?type=ServerDockerExecutor', { ...docker, name: 'shell' });
    expect(await duplicate.text()).toContain("Name 'shell' is already used by another job executor");

    const created = await post('/~administration/job-executors/new?type=ServerDockerExecutor', {
      ...docker,
      memoryLimit: '1g',
      'registryUrl.0': '',
      'userName.0': 'hub-user',
      'password.0': 'hub-password',
    });
    expect(created.status).toBe(303);
    expect(await executors()).toMatchObject([
      { '@type': 'ServerShellExecutor', name: 'shell', enabled: true, jobRequirement: 'on branch "main"', concurrency: '2', cacheTTL: 5 },
      {
        '@type': 'ServerDockerExecutor',
        name: 'docker',
        cpuLimit: '1.5',
        memoryLimit: '1g',
        registryLogins: [{ registryUrl: null, userName: 'hub-user', password: 'hub-password' }],
      },
    ]);
  });

  it('edits an executor: a password left empty keeps the stored one, and the password is never shown', async () => {
    const form = await (await get('/~administration/job-executors/1')).text();
    expect(form).toContain('<h1>Job executor docker</h1>');
    expect(form).toContain('value="hub-user"');
    expect(form).not.toContain('hub-password');
    const saved = await post('/~administration/job-executors/1', {
      type: 'ServerDockerExecutor',
      name: 'docker',
      jobRequirement: '"Job" is "CI"',
      concurrency: '1',
      cacheTTL: '3',
      cpuLimit: '',
      memoryLimit: '512m',
      dockerSockPath: '',
      'registryUrl.0': '',
      'userName.0': 'hub-user',
      'password.0': '',
      'registryUrl.1': 'registry.example.com',
      'userName.1': 'other',
      'password.1': 'other-password',
    });
    expect(saved.status).toBe(303);
    expect((await executors())[1]).toMatchObject({
      enabled: false,
      jobRequirement: '"Job" is "CI"',
      concurrency: '1',
      cacheTTL: 3,
      cpuLimit: null,
      memoryLimit: '512m',
      registryLogins: [
        { registryUrl: null, userName: 'hub-user', password: 'hub-password' },
        { registryUrl: 'registry.example.com', userName: 'other', password: 'other-password' },
      ],
    });
  });

  it('moves, enables, disables and deletes executors in the list', async () => {
    const change = (op: string, index: number, name: string) => post('/~administration/job-executors', { op, index: String(index), name });
    const names = async () => (await executors()).map((e) => `${e.name}:${e.enabled}`);
    expect((await change('up', 1, 'docker')).status).toBe(303);
    expect(await names()).toEqual(['docker:false', 'shell:true']);
    await change('enable', 0, 'docker');
    await change('disable', 1, 'shell');
    expect(await names()).toEqual(['docker:true', 'shell:false']);
    await change('down', 0, 'docker');
    expect(await names()).toEqual(['shell:false', 'docker:true']);
    const list = await (await get('/~administration/job-executors')).text();
    expect(list.indexOf('>shell</a>')).toBeLessThan(list.indexOf('>docker</a>'));
    expect(list).toContain('aria-label="Enable shell"');
    // a change of an executor the list no longer has at that place is refused, not applied elsewhere
    const stale = await change('delete', 0, 'docker');
    expect(stale.status).toBe(400);
    expect(await stale.text()).toContain('The job executors changed meanwhile');
    await change('delete', 0, 'shell');
    expect(await names()).toEqual(['docker:true']);
  });
});
