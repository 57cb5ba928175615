import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git, gitUrl, makeWorkTree, startTestServer, ADMIN, type TestServer } from '../helpers/server.js';
import { eventually, givenUsers, type TestUser } from '../helpers/fixtures.js';

const OWNER = 1;
const CODE_READER = 3;

/** The project query language (docs/compatibility.md#projects-endpoints item 9, docs/compatibility.md#projects-query-language; docs/compatibility.md#gitloom-differs-errors, docs/compatibility.md#gitloom-differs-pagination-and-query-parameters). */
describe('project query', () => {
  let server: TestServer;
  let quinn: TestUser;
  let stranger: TestUser;
  const ids: Record<string, number> = {};
  const cleanup: string[] = [];

  /** Runs a query; returns the paths of the result in order. */
  async function paths(query: string | null, auth?: string | null): Promise<string[]> {
    const res = await server.call('GET', query === null ? '/projects' : `/projects?query=${encodeURIComponent(query)}`, { auth });
    if (res.status !== 200) throw new Error(`${query}: ${res.status} ${res.text}`);
    const pathById = new Map(Object.entries(ids).map(([path, id]) => [id, path]));
    return res.json.map((p: { id: number }) => pathById.get(p.id) ?? `#${p.id}`);
  }

  async function create(path: string, extra: Record<string, unknown> = {}, auth?: string): Promise<number> {
    const segments = path.split('/');
    const name = segments.pop()!;
    const parentId = segments.length > 0 ? ids[segments.join('/')] : undefined;
    const res = await server.call('POST', '/projects', { body: { name, ...(parentId && { parentId }), ...extra }, auth });
    if (res.status !== 200) throw new Error(`create ${path}: ${res.status} ${res.text}`);
    ids[path] = res.json;
    // distinct creation instants, so "Last Activity Date" orders are strict
    await new Promise((r) => setTimeout(r, 3));
    return res.json;
  }

  const ALL = ['acme', 'acme/api', 'acme/web', 'acme/web/ui-kit', 'forkling', 'lone', 'tools', 'tools/cli', 'tools/orphan'];
  /** Creation order: the order of equal sort values (ties are broken by id). */
  const CREATED = ['acme', 'acme/web', 'acme/web/ui-kit', 'acme/api', 'tools', 'tools/cli', 'lone', 'forkling', 'tools/orphan'];

  beforeAll(async () => {
    server = await startTestServer();
    [quinn, stranger] = await givenUsers(server, 'quinn', 'stranger');
    await create('acme', { description: 'Main company repository' });
    await create('acme/web', { description: 'Web UI frontend' });
    await create('acme/web/ui-kit');
    await create('acme/api', { description: 'REST api' });
    await create('tools');
    await create('tools/cli');
    await create('lone', { defaultRoleId: CODE_READER });
    await create('forkling', { forkedFromId: ids['acme/web'] });
    const grant = async (projectId: number, userId: number, roleId: number) => {
      const res = await server.call('POST', '/user-authorizations', { body: { projectId, userId, roleId } });
      if (res.status !== 200) throw new Error(`grant: ${res.status} ${res.text}`);
    };
    await grant(ids.tools, quinn.id, OWNER);
    // a project whose only owner is gone: owned by none
    const temp = await server.createUser('temp');
    await grant(ids.tools, temp.id, OWNER);
    await create('tools/orphan', {}, temp.auth);
    expect((await server.call('DELETE', `/users/${temp.id}`)).status).toBe(200);
    // labels and service desks
    const backend = (await server.call('POST', '/label-specs', { body: { name: 'backend', color: '#ff0000' } })).json;
    expect((await server.call('POST', '/label-specs', { body: { name: 'frontend', color: '#00ff00' } })).status).toBe(200);
    for (const path of ['acme/api', 'tools/cli']) {
      expect((await server.call('POST', '/project-labels', { body: { projectId: ids[path], specId: backend } })).status).toBe(200);
    }
    for (const [path, serviceDeskName] of [
      ['acme', 'help-desk'],
      ['tools', 'support'],
    ]) {
      expect((await server.call('POST', `/projects/${ids[path]}/setting`, { body: { serviceDeskName } })).status).toBe(200);
    }
  });
  afterAll(async () => {
    await server.close();
    for (const dir of cleanup) await fs.rm(dir, { recursive: true, force: true });
  });

  it('returns every accessible project by path without a query, or with an empty one', async () => {
    for (const [path, id] of Object.entries(ids)) expect((await server.call('GET', `/projects/${id}/path`)).text).toBe(path);
    expect(await paths(null)).toEqual(ALL);
    expect(await paths('')).toEqual(ALL);
  });

  it.each([
    ['roots', ['acme', 'forkling', 'lone', 'tools']],
    ['ROOTS', ['acme', 'forkling', 'lone', 'tools']],
    ['leafs', ['acme/api', 'acme/web/ui-kit', 'forkling', 'lone', 'tools/cli', 'tools/orphan']],
    ['fork roots', ALL.filter((p) => p !== 'forkling')],
    ['owned by me', ALL.filter((p) => p !== 'tools/orphan')],
    ['owned by "quinn"', ['tools']],
    ['owned by "QUINN"', ['tools']],
    ['owned by none', ['tools/orphan']],
    ['children of "acme"', ['acme/api', 'acme/web']],
    ['children of "ACME/*"', ['acme/web/ui-kit']],
    ['children of "**"', ['acme/api', 'acme/web', 'acme/web/ui-kit', 'tools/cli', 'tools/orphan']],
    ['children of "nothing"', []],
    ['forks of "acme/web"', ['forkling']],
    ['forks of "tools"', []],
    ['"Name" is "web"', ['acme/web']],
    ['"Name" is "WEB"', ['acme/web']],
    ['"Name" is "*i*"', ['acme/api', 'acme/web/ui-kit', 'forkling', 'tools/cli']],
    ['"Path" is "acme"', ['acme']],
    ['"Path" is "acme/*"', ['acme/api', 'acme/web', 'acme/web/ui-kit']],
    ['"Path" is "Tools/C*"', ['tools/cli']],
    ['"Path" is "acme_web"', []],
    ['"Description" contains "web ui"', ['acme/web']],
    ['"Description" contains "RE"', ['acme', 'acme/api']],
    ['"Description" contains "re*ory"', ['acme']],
    ['"Service Desk Name" is "*"', ['acme', 'tools']],
    ['"Service Desk Name" is "HELP*"', ['acme']],
    ['"Service Desk Name" is "help"', []],
    ['"Label" is "backend"', ['acme/api', 'tools/cli']],
    ['"Label" is "frontend"', []],
    ['"Label" is "backend" and children of "tools"', ['tools/cli']],
    ['"Last Activity Date" is since "1 hour ago"', ALL],
    ['"Last Activity Date" is until "1 hour ago"', []],
    ['"Last Commit Date" is until "tomorrow"', []],
    ['~web ui~', ['acme/web/ui-kit']],
    ['~ACME~', ['acme', 'acme/api', 'acme/web', 'acme/web/ui-kit']],
    ['~orph~', ['tools/orphan']],
    ['"Name" is "web" or "Name" is "tools" and roots', ['acme/web', 'tools']],
    ['roots and "Name" is "tools" or "Name" is "web"', ['acme/web', 'tools']],
    ['("Name" is "web" or "Name" is "tools") and roots', ['tools']],
    ['not(roots) and not (leafs)', ['acme/web']],
    ['not("Path" is "acme*") and roots', ['forkling', 'lone', 'tools']],
    ['not(not(roots))', ['acme', 'forkling', 'lone', 'tools']],
    ['children of "tools" and owned by none or forks of "acme/web"', ['forkling', 'tools/orphan']],
    ['  roots   and\tleafs ', ['forkling', 'lone']],
  ])('%s', async (query, expected) => {
    expect(await paths(query)).toEqual(expected);
  });

  it.each([
    ['order by "Name"', ['acme', 'acme/api', 'tools/cli', 'forkling', 'lone', 'tools/orphan', 'tools', 'acme/web/ui-kit', 'acme/web']],
    ['order by "Name" desc', ['acme/web', 'acme/web/ui-kit', 'tools', 'tools/orphan', 'lone', 'forkling', 'tools/cli', 'acme/api', 'acme']],
    ['order by "Path" desc', [...ALL].reverse()],
    ['order by "Path" asc', ALL],
    ['order by "Last Activity Date"', CREATED],
    ['order by "Last Activity Date" desc', [...CREATED].reverse()],
    ['order by "Service Desk Name"', ['acme', 'tools', ...CREATED.filter((p) => p !== 'acme' && p !== 'tools')]],
    ['order by "Service Desk Name" desc', ['tools', 'acme', ...CREATED.filter((p) => p !== 'acme' && p !== 'tools')]],
    ['order by "Last Commit Date" desc', CREATED],
    ['"Path" is "acme*" order by "Name" desc and "Path"', ['acme/web', 'acme/web/ui-kit', 'acme/api', 'acme']],
    ['roots order by "Name" desc', ['tools', 'lone', 'forkling', 'acme']],
  ])('%s', async (query, expected) => {
    expect(await paths(query)).toEqual(expected);
  });

  it('pages the sorted result', async () => {
    const res = await server.call('GET', `/projects?query=${encodeURIComponent('order by "Name" desc')}&offset=2&count=3`);
    expect(res.json.map((p: { name: string }) => p.name)).toEqual(['tools', 'orphan', 'lone']);
  });

  it.each([
    ['"Foo" is "x"', 'Field not found: Foo'],
    ['"Name" contains "x"', "Field 'Name' is not applicable for operator 'contains'"],
    ['"Description" is "x"', "Field 'Description' is not applicable for operator 'is'"],
    ['"Name" is', 'Unexpected end of query at column 10'],
    ['roots foo', /^Unexpected 'foo' at column 7$/],
    ['not roots', /^Unexpected .* at column \d+$/],
    ['"Name" is "x" order by "Description"', 'Can not order by field: Description'],
    ['owned by "ghost"', 'Unable to find user with login: ghost'],
    ['"Last Commit Date" is since "garbage"', 'Unrecognized date: garbage'],
    ['"Label" is "nope"', 'Undefined label: nope'],
  ])('refuses %s with 400', async (query, detail) => {
    const res = await server.call('GET', `/projects?query=${encodeURIComponent(query)}`);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    if (typeof detail === 'string') expect(res.json.detail).toBe(detail);
    else expect(res.json.detail).toMatch(detail);
  });

  describe('permissions', () => {
    it('shows a user only the projects they can access', async () => {
      expect(await paths(null, quinn.auth)).toEqual(['lone', 'tools', 'tools/cli', 'tools/orphan']);
      expect(await paths('roots', quinn.auth)).toEqual(['lone', 'tools']);
      expect(await paths('owned by me', quinn.auth)).toEqual(['tools']);
      expect(await paths('~acme~', quinn.auth)).toEqual([]);
      expect(await paths(null, stranger.auth)).toEqual(['lone']);
      expect(await paths('owned by me', stranger.auth)).toEqual([]);
    });

    it('anonymous callers: 401 unless anonymous access is on, then only public projects; no "me"', async () => {
      expect((await server.call('GET', '/projects', { auth: null })).status).toBe(401);
      await server.call('POST', '/settings/security', { body: { enableAnonymousAccess: true } });
      try {
        expect(await paths(null, null)).toEqual(['lone']);
        const me = await server.call('GET', `/projects?query=${encodeURIComponent('owned by me')}`, { auth: null });
        expect(me.status).toBe(400);
        expect(me.json.detail).toBe('Please login to perform this query');
      } finally {
        await server.call('POST', '/settings/security', { body: { enableAnonymousAccess: false } });
      }
    });
  });

  it('tracks the last commit date and last activity of pushes', async () => {
    const work = await makeWorkTree({ 'index.html': '<p>hi</p>\n' });
    cleanup.push(work);
    const date = '2020-06-15T12:00:00Z';
    await git(work, ['commit', '-q', '--amend', '--no-edit', '--date', date], { GIT_COMMITTER_DATE: date });
    await git(work, ['push', '-q', gitUrl(server, 'acme/web', { name: ADMIN.name, password: ADMIN.password }), 'main']);
    expect(await eventually(async () => (await paths('"Last Commit Date" is until "2021-01-01"')).length > 0)).toBe(true);
    expect(await paths('"Last Commit Date" is until "2021-01-01"')).toEqual(['acme/web']);
    expect(await paths('"Last Commit Date" is since "2020-01-01"')).toEqual(['acme/web']);
    expect(await paths('"Last Commit Date" is since "2021-01-01"')).toEqual([]);
    expect((await paths('order by "Last Commit Date" desc'))[0]).toBe('acme/web');
    expect((await paths('order by "Last Commit Date"'))[0]).toBe('acme/web');
    expect((await paths('order by "Last Activity Date" desc'))[0]).toBe('acme/web');
  });
});
