import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { givenAgent, givenFinishedBuilds, ranOnAgent } from '../helpers/agents.js';
import { givenUsers, type TestUser } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const DAY = 86_400_000;

/**
 * Agent tokens and agents over the REST API (docs/compatibility.md#build-agents "Tokens and
 * agents", "Agent query"; OneDev `AgentTokenResource`, `AgentResource`), and the build query's
 * `ran on`. Agents are written as the agent protocol's connect writes them: a row with
 * `online_until` an hour ahead is online.
 */
describe('build agents REST', () => {
  let server: TestServer;
  let alice: TestUser;
  let builds: number[];
  const agents: Record<string, { id: number; tokenId: number }> = {};

  beforeAll(async () => {
    server = await startTestServer();
    [alice] = await givenUsers(server, 'alice');
    builds = await givenFinishedBuilds(server, 'agent-builds', 4);
    const now = Date.now();
    agents.one = await givenAgent(server, {
      name: 'linux-box-1',
      ipAddress: '10.0.0.1',
      osName: 'Linux',
      osVersion: '6.1.0',
      osArch: 'amd64',
      cpus: 8,
      lastUsedDate: now - 3_600_000,
      attributes: { gpu: 'nvidia', zone: 'east' },
    });
    agents.two = await givenAgent(server, {
      name: 'linux-box-2',
      ipAddress: '10.0.0.2',
      osName: 'Linux',
      osVersion: '5.10.0',
      osArch: 'arm64',
      engine: null,
      paused: true,
      online: false,
      lastUsedDate: now - 10 * DAY,
      attributes: { zone: 'west' },
    });
    agents.mac = await givenAgent(server, {
      name: 'mac-mini',
      ipAddress: '192.168.1.5',
      osName: 'Mac OS X',
      osVersion: '14.1',
      osArch: 'aarch64',
      online: null,
      lastUsedDate: now - 2 * DAY,
    });
    await ranOnAgent(server, builds[0], agents.one.id, true);
    await ranOnAgent(server, builds[1], agents.two.id, false);
    await ranOnAgent(server, builds[2], agents.two.id, false);
  });
  afterAll(async () => {
    await server?.close();
  });

  const names = async (query: string, extra = '') => {
    const res = await server.call('GET', `/agents?query=${encodeURIComponent(query)}${extra}`);
    expect(res.status, res.text).toBe(200);
    return (res.json as { name: string }[]).map((a) => a.name);
  };
  const refused = async (query: string) => {
    const res = await server.call('GET', `/agents?query=${encodeURIComponent(query)}`);
    expect(res.status, res.text).toBe(400);
    expect(res.json.code).toBe('GITLOOM_ERR_QUERY_SYNTAX');
    return res.json.detail as string;
  };

  it('is for administrators only: 401 anonymous, 403 other users, on every path', async () => {
    const paths: [string, string, unknown?][] = [
      ['GET', '/agent-tokens'],
      ['GET', `/agent-tokens/${agents.one.tokenId}`],
      ['GET', `/agent-tokens/${agents.one.tokenId}/agent`],
      ['POST', '/agent-tokens'],
      ['DELETE', `/agent-tokens/${agents.one.tokenId}`],
      ['GET', '/agents'],
      ['GET', `/agents/${agents.one.id}`],
      ['GET', `/agents/${agents.one.id}/attributes`],
      ['POST', `/agents/${agents.one.id}/attributes`, { zone: 'north' }],
    ];
    for (const [method, path, body] of paths) {
      expect((await server.call(method, path, { auth: alice.auth, body })).status, `${method} ${path}`).toBe(403);
      expect((await server.call(method, path, { auth: null, body })).status, `${method} ${path}`).toBe(401);
    }
    expect((await server.call('GET', '/agent-tokens')).json).toHaveLength(3);
    expect((await server.call('GET', `/agents/${agents.one.id}/attributes`)).json).toEqual({ gpu: 'nvidia', zone: 'east' });
  });

  it('creates tokens with a random 36-character value, answering the id; reads them and finds one by value', async () => {
    const created = await server.call('POST', '/agent-tokens');
    expect(created.status).toBe(200);
    expect(typeof created.json).toBe('number');
    const token = await server.call('GET', `/agent-tokens/${created.json}`);
    expect(token.status).toBe(200);
    expect(Object.keys(token.json)).toEqual(['id', 'value']);
    expect(token.json.value).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const all = (await server.call('GET', '/agent-tokens')).json as { id: number; value: string }[];
    expect(all.map((t) => t.id)).toEqual([agents.one.tokenId, agents.two.tokenId, agents.mac.tokenId, created.json]);
    expect(new Set(all.map((t) => t.value)).size).toBe(4);
    expect((await server.call('GET', `/agent-tokens?value=${token.json.value}`)).json).toEqual([token.json]);
    expect((await server.call('GET', '/agent-tokens?value=nope')).json).toEqual([]);
    expect((await server.call('GET', '/agent-tokens?offset=1&count=2')).json.map((t: { id: number }) => t.id)).toEqual([
      agents.two.tokenId,
      agents.mac.tokenId,
    ]);
    const tooMany = await server.call('GET', '/agent-tokens?count=101');
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.detail).toBe('Count should not be greater than 100');
    // the value is stored as its hash and encrypted, never in clear
    const row = await server.server.services.db.selectFrom('agentTokens').selectAll().where('id', '=', created.json).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(token.json.value);

    // a token no agent connected with yet has no agent: no body
    const none = await server.call('GET', `/agent-tokens/${created.json}/agent`);
    expect(none.status).toBe(204);
    expect(none.text).toBe('');
    const agent = await server.call('GET', `/agent-tokens/${agents.one.tokenId}/agent`);
    expect(agent.json).toMatchObject({ id: agents.one.id, name: 'linux-box-1' });

    expect((await server.call('DELETE', `/agent-tokens/${created.json}`)).status).toBe(200);
    for (const path of [`/agent-tokens/${created.json}`, `/agent-tokens/${created.json}/agent`]) {
      const gone = await server.call('GET', path);
      expect(gone.status).toBe(404);
      expect(gone.json.detail).toBe(`Agent token not found: ${created.json}`);
    }
    expect((await server.call('DELETE', `/agent-tokens/${created.json}`)).status).toBe(404);
  });

  it('reads an agent in OneDev field order, and its attributes', async () => {
    const res = await server.call('GET', `/agents/${agents.two.id}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.json)).toEqual(['id', 'tokenId', 'name', 'ipAddress', 'osName', 'osVersion', 'osArch', 'cpus', 'temporal', 'paused']);
    expect(res.json).toEqual({
      id: agents.two.id,
      tokenId: agents.two.tokenId,
      name: 'linux-box-2',
      ipAddress: '10.0.0.2',
      osName: 'Linux',
      osVersion: '5.10.0',
      osArch: 'arm64',
      cpus: 4,
      temporal: false,
      paused: true,
    });
    expect((await server.call('GET', `/agents/${agents.mac.id}/attributes`)).json).toEqual({});
    const missing = await server.call('GET', '/agents/9999');
    expect(missing.status).toBe(404);
    expect(missing.json.detail).toBe('Agent not found: 9999');
    expect((await server.call('GET', '/agents/9999/attributes')).status).toBe(404);
  });

  it('queries agents by each criterion of the agent query', async () => {
    expect(await names('')).toEqual(['linux-box-1', 'linux-box-2', 'mac-mini']);
    expect(await names('online')).toEqual(['linux-box-1']);
    expect(await names('offline')).toEqual(['linux-box-2', 'mac-mini']);
    expect(await names('not(online)')).toEqual(['linux-box-2', 'mac-mini']);
    expect(await names('paused')).toEqual(['linux-box-2']);
    expect(await names('has running builds')).toEqual(['linux-box-1']);
    expect(await names('not(has running builds)')).toEqual(['linux-box-2', 'mac-mini']);
    expect(await names('has attribute "zone"')).toEqual(['linux-box-1', 'linux-box-2']);
    expect(await names('has attribute "Zone"')).toEqual([]);
    expect(await names('"zone" is "west"')).toEqual(['linux-box-2']);
    expect(await names('"zone" is "WEST"')).toEqual([]);
    expect(await names('"gpu" is "nvidia" or "zone" is "west"')).toEqual(['linux-box-1', 'linux-box-2']);
    expect(await names('"Name" is "LINUX-*"')).toEqual(['linux-box-1', 'linux-box-2']);
    expect(await names('"Name" is "*mini"')).toEqual(['mac-mini']);
    expect(await names('"Ip Address" is "10.0.*"')).toEqual(['linux-box-1', 'linux-box-2']);
    expect(await names('"Os" is "mac os x"')).toEqual(['mac-mini']);
    expect(await names('"Os Version" is "5.*"')).toEqual(['linux-box-2']);
    expect(await names('"Os Arch" is "a*64" and not("Os Arch" is "amd64")')).toEqual(['linux-box-2', 'mac-mini']);
    expect(await names('ever used since "3 days ago"')).toEqual(['linux-box-1', 'mac-mini']);
    expect(await names('not used since "3 days ago"')).toEqual(['linux-box-2']);
    expect(await names('not used since "1 day ago"')).toEqual(['linux-box-2', 'mac-mini']);
    expect(await names(`ran build "agent-builds#2"`)).toEqual(['linux-box-2']);
    expect(await names(`ran build "agent-builds#1"`)).toEqual(['linux-box-1']);
    expect(await names(`ran build "agent-builds#4"`)).toEqual([]);
    // fuzzy: each word in the name, address, OS, version or architecture
    expect(await names('~box~')).toEqual(['linux-box-1', 'linux-box-2']);
    expect(await names('~MAC~')).toEqual(['mac-mini']);
    expect(await names('~linux arm64~')).toEqual(['linux-box-2']);
    expect(await names('~192.168~')).toEqual(['mac-mini']);
    expect(await names('~box_~')).toEqual([]);
  });

  it('refuses what the agent query refuses, with 400', async () => {
    expect(await refused('"rack" is "a"')).toBe('Attribute not found: rack');
    expect(await refused('ever used since "someday"')).toBe('Unrecognized date: someday');
    expect(await refused('ran build "agent-builds#99"')).toBe('Unable to find build: agent-builds#99');
    expect(await refused('ran build "nowhere#1"')).toBe('Unable to find project: nowhere');
    expect(await refused('order by "Cpus"')).toMatch(/^Can not order by field: Cpus/);
    expect(await refused('online and')).toMatch(/^Unexpected end of query/);
    expect(await refused('"Name" is greater than "a"')).toBe("Unexpected 'greater' at column 11");
  });

  it('orders by the sort fields (by name by default) and pages with offset and count', async () => {
    expect(await names('order by "Name" desc')).toEqual(['mac-mini', 'linux-box-2', 'linux-box-1']);
    expect(await names('order by "Os Arch"')).toEqual(['mac-mini', 'linux-box-1', 'linux-box-2']);
    expect(await names('order by "Ip Address" desc')).toEqual(['mac-mini', 'linux-box-2', 'linux-box-1']);
    expect(await names('order by "Os Version"')).toEqual(['mac-mini', 'linux-box-2', 'linux-box-1']);
    expect(await names('order by "Os" desc and "Name" desc')).toEqual(['mac-mini', 'linux-box-2', 'linux-box-1']);
    expect(await names('order by "Last Used Date" desc')).toEqual(['linux-box-1', 'mac-mini', 'linux-box-2']);
    expect(await names('', '&offset=1&count=1')).toEqual(['linux-box-2']);
    expect(await names('', '&offset=3')).toEqual([]);
    const tooMany = await server.call('GET', '/agents?count=101');
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.detail).toBe('Count should not be greater than 100');
  });

  it('replaces the attributes of an online agent; refuses an offline one and names OneDev refuses', async () => {
    const path = `/agents/${agents.one.id}/attributes`;
    const updated = await server.call('POST', path, { body: { zone: 'north', 'disk size': 'big.ssd', _x: '' } });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.text).toBe('');
    expect((await server.call('GET', path)).json).toEqual({ _x: '', 'disk size': 'big.ssd', zone: 'north' });
    expect(await names('"zone" is "north"')).toEqual(['linux-box-1']);
    expect(await names('has attribute "gpu"')).toEqual([]);

    const offline = await server.call('POST', `/agents/${agents.two.id}/attributes`, { body: { zone: 'north' } });
    expect(offline.status).toBe(400);
    expect(offline.json).toMatchObject({ code: 'GITLOOM_ERR_AGENT_OFFLINE', detail: 'Unable to update attributes as agent is offline' });
    const never = await server.call('POST', `/agents/${agents.mac.id}/attributes`, { body: {} });
    expect(never.json.code).toBe('GITLOOM_ERR_AGENT_OFFLINE');

    for (const name of ['-zone', 'zone.', 'a/b', '']) {
      const bad = await server.call('POST', path, { body: { [name]: 'x' } });
      expect(bad.status, name).toBe(400);
      expect(bad.json.code).toBe('GITLOOM_ERR_AGENT_ATTRIBUTE');
      expect(bad.json.detail).toBe(
        `Attribute '${name}' should start and end with alphanumeric or underscore. Only alphanumeric, underscore, dash, space and dot are allowed in the middle.`,
      );
    }
    const reserved = await server.call('POST', path, { body: { 'Os Arch': 'x' } });
    expect(reserved.json).toMatchObject({ code: 'GITLOOM_ERR_AGENT_ATTRIBUTE', detail: "Attribute 'Os Arch' is reserved" });
    const notText = await server.call('POST', path, { body: { zone: 3 } });
    expect(notText.status).toBe(400);
    expect(notText.json.code).toBe('GITLOOM_ERR_VALIDATION');
    expect((await server.call('POST', path, { body: ['zone'] })).status).toBe(400);
    expect((await server.call('GET', path)).json).toEqual({ _x: '', 'disk size': 'big.ssd', zone: 'north' });
    expect((await server.call('POST', '/agents/9999/attributes', { body: {} })).status).toBe(404);
  });

  it('finds the builds an agent ran with the build query\'s "ran on"', async () => {
    const ids = async (query: string) => {
      const res = await server.call('GET', `/builds?query=${encodeURIComponent(query)}`);
      expect(res.status, res.text).toBe(200);
      return (res.json as { id: number; agentId: number | null }[]).map((b) => b.id);
    };
    expect(await ids('ran on "linux-box-2"')).toEqual([builds[2], builds[1]]);
    expect(await ids('ran on "linux-box-1" and running')).toEqual([builds[0]]);
    expect(await ids('ran on "mac-mini"')).toEqual([]);
    expect(await ids('not(ran on "linux-box-2")')).toEqual([builds[3], builds[0]]);
    expect((await server.call('GET', `/builds/${builds[1]}`)).json.agentId).toBe(agents.two.id);
    const unknown = await server.call('GET', `/builds?query=${encodeURIComponent('ran on "LINUX-BOX-2"')}`);
    expect(unknown.status).toBe(400);
    expect(unknown.json.detail).toBe('Unable to find agent: LINUX-BOX-2');
  });

  it("documents exactly the paths of OneDev's resources in the OpenAPI document", async () => {
    const doc = (await server.call('GET', '/openapi.json')).json as { paths: Record<string, Record<string, unknown>> };
    const paths = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/~api/agent'))
      .map(([path, methods]) => `${path} ${Object.keys(methods).sort().join(',')}`)
      .sort();
    expect(paths).toEqual([
      '/~api/agent-tokens get,post',
      '/~api/agent-tokens/{tokenId} delete,get',
      '/~api/agent-tokens/{tokenId}/agent get',
      '/~api/agents get',
      '/~api/agents/{agentId} get',
      '/~api/agents/{agentId}/attributes get,post',
    ]);
  });

  it('deletes a token with its agent and attributes; the builds it ran no longer name it', async () => {
    const db = server.server.services.db;
    const statuses = await db.selectFrom('builds').select(['id', 'status']).where('id', 'in', [builds[1], builds[2]]).orderBy('id').execute();
    expect((await server.call('DELETE', `/agent-tokens/${agents.two.tokenId}`)).status).toBe(200);
    expect((await server.call('GET', `/agents/${agents.two.id}`)).status).toBe(404);
    expect(await names('')).toEqual(['linux-box-1', 'mac-mini']);
    expect(await db.selectFrom('agentAttributes').select('name').where('agentId', '=', agents.two.id).execute()).toEqual([]);
    const rows = await db.selectFrom('builds').select(['id', 'agentId', 'status']).where('id', 'in', [builds[1], builds[2]]).orderBy('id').execute();
    expect(rows).toEqual(statuses.map((b) => ({ ...b, agentId: null })));
    expect((await server.call('GET', `/builds/${builds[0]}`)).json.agentId).toBe(agents.one.id);
    const gone = await server.call('GET', `/builds?query=${encodeURIComponent('ran on "linux-box-2"')}`);
    expect(gone.json.detail).toBe('Unable to find agent: linux-box-2');
  });
});
