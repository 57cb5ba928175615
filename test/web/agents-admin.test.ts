import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { givenAgent, givenFinishedBuilds, ranOnAgent } from '../helpers/agents.js';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { givenUsers, type TestUser } from '../helpers/fixtures.js';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Administration › Agents over plain HTTP (docs/compatibility.md#build-agents "Tokens and
 * agents"): the list by agent query, an agent's page (attributes, builds, pause, removal) and the
 * tokens, each change checked through the API; and the agent selector of the job executors page.
 */
describe('agents administration pages', () => {
  let server: TestServer;
  let alice: TestUser;
  let admin: WebSession;
  let aliceSession: WebSession;
  let builds: number[];
  const agents: Record<string, { id: number; tokenId: number }> = {};

  beforeAll(async () => {
    server = await startTestServer();
    [alice] = await givenUsers(server, 'alice');
    admin = await signInByFetch(server, ADMIN.name, ADMIN.password);
    aliceSession = await signInByFetch(server, 'alice', alice.password);
    builds = await givenFinishedBuilds(server, 'farm', 3);
    agents.online = await givenAgent(server, {
      name: 'builder-one',
      ipAddress: '10.1.0.1',
      osName: 'Linux',
      osVersion: '6.1.0',
      osArch: 'amd64',
      cpus: 16,
      memory: 32 * 1024 ** 3,
      attributes: { gpu: 'nvidia' },
    });
    agents.offline = await givenAgent(server, {
      name: 'builder-two',
      osName: 'Windows 11',
      osArch: 'x86_64',
      engine: null,
      online: false,
      attributes: { zone: 'west' },
    });
    await ranOnAgent(server, builds[0], agents.online.id, true);
    await ranOnAgent(server, builds[1], agents.online.id, false);
  });
  afterAll(async () => {
    await server?.close();
  });

  const get = (path: string, session?: WebSession) => fetch(`${server.url}${path}`, { redirect: 'manual', headers: session ? { cookie: session.cookie } : {} });
  const html = async (path: string) => {
    const response = await get(path, admin);
    expect(response.status, path).toBe(200);
    return response.text();
  };
  const post = (path: string, fields: Record<string, string>, session: WebSession = admin) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      body: new URLSearchParams({ _csrf: session.csrfToken, ...fields }).toString(),
    });
  const agent = async (id: number) => (await server.call('GET', `/agents/${id}`)).json;

  it('is for administrators only, and listed among the administration sections', async () => {
    for (const path of ['/~administration/agents', `/~administration/agents/${agents.online.id}`, '/~administration/agents/tokens']) {
      expect((await get(path, aliceSession)).status, path).toBe(404);
      expect((await get(path)).status, path).toBe(302);
    }
    for (const [path, fields] of [
      [`/~administration/agents/${agents.online.id}/pause`, {}],
      [`/~administration/agents/${agents.online.id}/remove`, { confirm: 'builder-one' }],
      ['/~administration/agents/tokens', {}],
    ] as const) {
      expect((await post(path, fields, aliceSession)).status, path).toBe(404);
    }
    expect((await server.call('GET', '/agent-tokens')).json).toHaveLength(2);
    expect((await agent(agents.online.id)).paused).toBe(false);
    const page = await html('/~administration/agents');
    expect(page).toContain('<title>Agents · Administration · Gitloom</title>');
    expect(page).toContain('href="/~administration/agents" aria-current="page"');
  });

  it('lists the agents: online or offline, paused, OS, CPUs, memory, engine and running builds', async () => {
    const page = await html('/~administration/agents');
    const row = (name: string) => page.slice(page.indexOf(`>${name}</a>`), page.indexOf('</tr>', page.indexOf(`>${name}</a>`)));
    expect(row('builder-one')).toContain('agent-online">online</span>');
    expect(row('builder-one')).toContain('<td>Linux 6.1.0</td><td>amd64</td><td>16</td><td>32.0 GiB</td><td>podman 4.3.1</td><td>1</td>');
    expect(row('builder-two')).toContain('agent-offline">offline</span>');
    expect(row('builder-two')).toContain('<td>—</td><td>0</td>');
    expect(page).toContain(`href="/~administration/agents/${agents.online.id}"`);
  });

  it('filters the list with the agent query, and shows a refused query under the box with 400', async () => {
    const online = await html(`/~administration/agents?query=${encodeURIComponent('online')}`);
    expect(online).toContain('>builder-one</a>');
    expect(online).not.toContain('>builder-two</a>');
    const attribute = await html(`/~administration/agents?query=${encodeURIComponent('"zone" is "west"')}`);
    expect(attribute).toContain('>builder-two</a>');
    expect(attribute).not.toContain('>builder-one</a>');
    expect(await html(`/~administration/agents?query=${encodeURIComponent('has attribute "none"')}`)).toContain('No agent found.');
    const refused = await get(`/~administration/agents?query=${encodeURIComponent('"rack" is "1"')}`, admin);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('role="alert">Attribute not found: rack</p>');
  });

  it("shows an agent's facts, attributes and builds with links to them", async () => {
    const page = await html(`/~administration/agents/${agents.online.id}`);
    expect(page).toContain('<h1>Agent builder-one</h1>');
    expect(page).toContain('<dd>Linux 6.1.0 (amd64)</dd>');
    expect(page).toContain('value="gpu"');
    expect(page).toContain('value="nvidia"');
    const running = page.slice(page.indexOf('id="running-heading"'), page.indexOf('id="recent-heading"'));
    expect(running).toContain('href="/farm/~builds/1"');
    expect(running).toContain('Running</span>');
    const recent = page.slice(page.indexOf('id="recent-heading"'), page.indexOf('id="remove-heading"'));
    expect(recent).toContain('href="/farm/~builds/2"');
    expect(recent).not.toContain('href="/farm/~builds/1"');
    expect(recent).toContain(`href="/~builds?query=${encodeURIComponent('ran on "builder-one"').replace(/%20/g, '+')}"`);
    // an offline agent's attributes are shown, not editable
    const offline = await html(`/~administration/agents/${agents.offline.id}`);
    expect(offline).toContain('<dt>zone</dt><dd>west</dd>');
    expect(offline).toContain('Attributes can be edited while the agent is online.');
    expect(offline).not.toContain('Save attributes');
    expect(offline).toContain('No running build.');
    expect((await get('/~administration/agents/9999', admin)).status).toBe(404);
    expect((await get('/~administration/agents/abc', admin)).status).toBe(404);
  });

  it('edits the attributes of an online agent, refusing what the API refuses and keeping what was typed', async () => {
    const base = `/~administration/agents/${agents.online.id}`;
    const saved = await post(`${base}/attributes`, {
      op: 'attributes',
      'name.0': 'gpu',
      'value.0': 'amd',
      'name.1': ' disk ',
      'value.1': 'ssd',
      'name.2': '',
      'value.2': '',
    });
    expect(saved.status).toBe(303);
    expect(saved.headers.get('location')).toBe(base);
    expect((await server.call('GET', `/agents/${agents.online.id}/attributes`)).json).toEqual({ disk: 'ssd', gpu: 'amd' });
    const removed = await post(`${base}/attributes`, { op: 'attributes', 'name.0': '', 'value.0': 'amd', 'name.1': 'disk', 'value.1': 'ssd' });
    expect(removed.status).toBe(303);
    expect((await server.call('GET', `/agents/${agents.online.id}/attributes`)).json).toEqual({ disk: 'ssd' });

    const refused = await post(`${base}/attributes`, { op: 'attributes', 'name.0': 'Os', 'value.0': 'x', 'name.1': 'disk', 'value.1': 'nvme' });
    expect(refused.status).toBe(400);
    const text = await refused.text();
    expect(text).toContain("Attribute 'Os' is reserved");
    expect(text).toContain('value="nvme"');
    const twice = await post(`${base}/attributes`, { op: 'attributes', 'name.0': 'a', 'value.0': '1', 'name.1': 'a', 'value.1': '2' });
    expect(await twice.text()).toContain("Attribute 'a' is given twice");
    const offline = await post(`/~administration/agents/${agents.offline.id}/attributes`, { op: 'attributes', 'name.0': 'zone', 'value.0': 'east' });
    expect(offline.status).toBe(400);
    expect(await offline.text()).toContain('Unable to update attributes as agent is offline');
    expect((await server.call('GET', `/agents/${agents.online.id}/attributes`)).json).toEqual({ disk: 'ssd' });
  });

  it('pauses and resumes an agent', async () => {
    const base = `/~administration/agents/${agents.online.id}`;
    const paused = await post(`${base}/pause`, {});
    expect(paused.status).toBe(303);
    expect((await agent(agents.online.id)).paused).toBe(true);
    const page = await html(base);
    expect(page).toContain('agent-paused">paused</span>');
    expect(page).toContain('>Resume</button>');
    expect(await html(`/~administration/agents?query=paused`)).toContain('>builder-one</a>');
    expect((await post(`${base}/resume`, {})).status).toBe(303);
    expect((await agent(agents.online.id)).paused).toBe(false);
  });

  it('refuses a form without the CSRF token', async () => {
    const response = await fetch(`${server.url}/~administration/agents/${agents.online.id}/pause`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: admin.cookie },
      body: '',
    });
    expect(response.status).toBe(403);
    expect((await agent(agents.online.id)).paused).toBe(false);
  });

  it('creates a token showing its value, and deletes tokens', async () => {
    const tokens = await html('/~administration/agents/tokens');
    expect(tokens).toContain('<h1>Agent tokens</h1>');
    expect(tokens).toContain(`href="/~administration/agents/${agents.online.id}">builder-one</a>`);
    const created = await post('/~administration/agents/tokens', {});
    expect(created.status).toBe(200);
    const all = (await server.call('GET', '/agent-tokens')).json as { id: number; value: string }[];
    const token = all[all.length - 1];
    expect(all).toHaveLength(3);
    expect(await created.text()).toContain(`Token #${token.id} created: ${token.value}`);
    expect(await html('/~administration/agents/tokens')).toContain('no agent yet');

    const deleted = await post('/~administration/agents/tokens/delete', { id: String(token.id) });
    expect(deleted.status).toBe(303);
    expect(deleted.headers.get('location')).toBe('/~administration/agents/tokens');
    expect((await server.call('GET', `/agent-tokens/${token.id}`)).status).toBe(404);
    const bad = await post('/~administration/agents/tokens/delete', { id: 'x' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('Invalid token id: x');
    const gone = await post('/~administration/agents/tokens/delete', { id: String(token.id) });
    expect(gone.status).toBe(404);
  });

  it('removes an agent once its name is typed: its token goes, its builds stay without it', async () => {
    const base = `/~administration/agents/${agents.online.id}`;
    const unconfirmed = await post(`${base}/remove`, { confirm: 'builder' });
    expect(unconfirmed.status).toBe(400);
    expect(await unconfirmed.text()).toContain("Type the agent's name (builder-one) to confirm the removal");
    expect((await agent(agents.online.id)).name).toBe('builder-one');
    const removed = await post(`${base}/remove`, { confirm: 'builder-one' });
    expect(removed.status).toBe(303);
    expect(removed.headers.get('location')).toBe('/~administration/agents');
    expect((await server.call('GET', `/agents/${agents.online.id}`)).status).toBe(404);
    expect((await server.call('GET', `/agent-tokens/${agents.online.tokenId}`)).status).toBe(404);
    expect((await server.call('GET', `/builds/${builds[1]}`)).json.agentId).toBeNull();
    expect(await html('/~administration/agents')).not.toContain('builder-one');
  });

  it('names on a build page the agent that ran it, linked for administrators', async () => {
    const agent = await givenAgent(server, { name: 'page-runner' });
    const [buildId] = await givenFinishedBuilds(server, 'ran-on-page', 1);
    await ranOnAgent(server, buildId, agent.id, false);
    const number = (await server.call('GET', `/builds/${buildId}`)).json.number;
    const asAdmin = await (await get(`/ran-on-page/~builds/${number}`, admin)).text();
    expect(asAdmin).toContain(`<dt>Agent</dt><dd><a href="/~administration/agents/${agent.id}">page-runner</a></dd>`);
  });

  it('edits the agent selector of remote executors, with concurrency per agent', async () => {
    const list = await html('/~administration/job-executors');
    expect(list).toContain('href="/~administration/job-executors/new?type=RemoteShellExecutor"');
    const form = await html('/~administration/job-executors/new?type=RemoteDockerExecutor');
    expect(form).toContain('Agent selector');
    expect(form).toContain('jobs at once on each agent');
    expect(form).toContain("empty for the agent's container engine");
    expect(await html('/~administration/job-executors/new?type=ServerShellExecutor')).not.toContain('Agent selector');

    const refused = await post('/~administration/job-executors/new?type=RemoteShellExecutor', {
      type: 'RemoteShellExecutor',
      name: 'remote',
      enabled: 'on',
      agentQuery: 'online',
      cacheTTL: '7',
    });
    expect(refused.status).toBe(400);
    const text = await refused.text();
    expect(text).toContain("Criteria 'online' is not supported here");
    expect(text).toContain('value="online"');
    const shell = await post('/~administration/job-executors/new?type=RemoteShellExecutor', {
      type: 'RemoteShellExecutor',
      name: 'remote',
      enabled: 'on',
      agentQuery: '"Os" is "Linux" and has attribute "gpu"',
      concurrency: '2',
      cacheTTL: '7',
    });
    expect(shell.status).toBe(303);
    const docker = await post('/~administration/job-executors/new?type=RemoteDockerExecutor', {
      type: 'RemoteDockerExecutor',
      name: 'remote-docker',
      agentQuery: ' ',
      cacheTTL: '7',
      memoryLimit: '1g',
      'userName.0': 'hub',
      'password.0': 'secret',
    });
    expect(docker.status).toBe(303);
    expect((await server.call('GET', '/settings/job-executors')).json).toMatchObject([
      { '@type': 'RemoteShellExecutor', name: 'remote', enabled: true, agentQuery: '"Os" is "Linux" and has attribute "gpu"', concurrency: '2' },
      { '@type': 'RemoteDockerExecutor', name: 'remote-docker', enabled: false, agentQuery: null, memoryLimit: '1g', registryLogins: [{ userName: 'hub' }] },
    ]);
    const page = await html('/~administration/job-executors');
    expect(page).toContain('<code>&quot;Os&quot; is &quot;Linux&quot; and has attribute &quot;gpu&quot;</code>');
    expect(page).toContain(' on any agent');
    expect(await html('/~administration/job-executors/0')).toContain('value="&quot;Os&quot; is &quot;Linux&quot; and has attribute &quot;gpu&quot;"');
  });
});
