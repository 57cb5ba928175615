import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import type { TestUser } from '../helpers/fixtures.js';

const OWNER = 1;
const CODE_READER = 3;
const NAME_RULE = 'Should start with alphanumeric or underscore, and contains only alphanumeric, underscore, dash, or dot';

/** Projects (docs/compatibility.md#projects-project-json, docs/compatibility.md#projects-endpoints, docs/compatibility.md#projects-repository-and-default-branch; docs/compatibility.md#gitloom-differs-improved-behaviour). */
describe('projects', () => {
  let server: TestServer;
  let owner: TestUser;
  let reader: TestUser;
  let stranger: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    owner = await server.createUser('olga');
    reader = await server.createUser('rita');
    stranger = await server.createUser('sam');
  });
  afterAll(async () => {
    await server.close();
  });

  function expectProblem(res: { status: number; headers: Headers; json: any }, status: number, detail?: string | RegExp) {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    if (typeof detail === 'string') expect(res.json.detail).toBe(detail);
    else if (detail) expect(res.json.detail).toMatch(detail);
  }

  async function create(body: Record<string, unknown>, auth?: string | null): Promise<number> {
    const res = await server.call('POST', '/projects', { body, auth });
    if (res.status !== 200) throw new Error(`create ${JSON.stringify(body)}: ${res.status} ${res.text}`);
    return res.json as number;
  }

  async function grant(projectId: number, userId: number, roleId: number): Promise<void> {
    const res = await server.call('POST', '/user-authorizations', { body: { projectId, userId, roleId } });
    expect(res.status).toBe(200);
  }

  const pathOf = async (id: number) => (await server.call('GET', `/projects/${id}/path`)).text;
  const repoExists = (id: number) =>
    fs.stat(path.join(server.dataDir, 'repos', `${id}.git`)).then(
      () => true,
      () => false,
    );

  describe('Create', () => {
    it('creates a root project with defaults, a bare repository and an id as a bare number', async () => {
      const res = await server.call('POST', '/projects', { body: { name: 'acme', description: 'The ACME corp' } });
      expect(res.status).toBe(200);
      expect(res.text).toMatch(/^\d+$/);
      const id = res.json as number;
      const project = (await server.call('GET', `/projects/${id}`)).json;
      expect(project).toEqual({
        id,
        forkedFromId: null,
        parentId: null,
        name: 'acme',
        description: 'The ACME corp',
        createDate: expect.stringMatching(/\+00:00$/),
        defaultRoleId: null,
        codeManagement: true,
        issueManagement: true,
        gitPackConfig: { windowMemory: null, packSizeLimit: null, threads: null, window: null },
        codeAnalysisSetting: { analysisFiles: null },
      });
      expect(await repoExists(id)).toBe(true);
      expect(await pathOf(id)).toBe('acme');
    });

    it('stores every Project JSON field it is given', async () => {
      const forkedFromId = await create({ name: 'origin' });
      const id = await create({
        name: 'full',
        forkedFromId,
        description: null,
        defaultRoleId: CODE_READER,
        codeManagement: false,
        issueManagement: false,
        gitPackConfig: { windowMemory: '10m', threads: '2' },
        codeAnalysisSetting: { analysisFiles: '**/*.ts' },
      });
      expect((await server.call('GET', `/projects/${id}`)).json).toMatchObject({
        forkedFromId,
        defaultRoleId: CODE_READER,
        codeManagement: false,
        issueManagement: false,
        gitPackConfig: { windowMemory: '10m', packSizeLimit: null, threads: '2', window: null },
        codeAnalysisSetting: { analysisFiles: '**/*.ts' },
      });
    });

    it.each(['-lead', '.hidden', 'with space', 'a/b', 'naïve', '~api'])('refuses the name %j', async (name) => {
      expectProblem(await server.call('POST', '/projects', { body: { name } }), 400, NAME_RULE);
    });

    it.each(['robots.txt', 'sitemap.xml', 'favicon.ico', 'wicket', 'projects', 'avatars'])('refuses the reserved name %j', async (name) => {
      expectProblem(await server.call('POST', '/projects', { body: { name } }), 400, `'${name}' is a reserved name`);
    });

    it('refuses a missing or empty name', async () => {
      expectProblem(await server.call('POST', '/projects', { body: {} }), 400);
      expectProblem(await server.call('POST', '/projects', { body: { name: '' } }), 400);
    });

    it('accepts names with dots, dashes and underscores', async () => {
      for (const name of ['a..b', 'a-', '_x', 'v1.2.3']) expect(await create({ name })).toBeGreaterThan(0);
    });

    it('refuses a sibling name clash case-insensitively, with the message of OneDev', async () => {
      const parent = await create({ name: 'clash' });
      await create({ name: 'Child', parentId: parent });
      expectProblem(await server.call('POST', '/projects', { body: { name: 'CLASH' } }), 409, "Name 'CLASH' is already used by another root project");
      expectProblem(
        await server.call('POST', '/projects', { body: { name: 'child', parentId: parent } }),
        409,
        "Name 'child' is already used by another project under 'clash'",
      );
      // the same name under another parent is fine
      expect(await create({ name: 'child', parentId: await create({ name: 'clash2' }) })).toBeGreaterThan(0);
    });

    it('answers 409, never 500, to concurrent creates and renames clashing', async () => {
      const results = await Promise.all(['Race', 'race', 'RACE', 'race', 'Race'].map((name) => server.call('POST', '/projects', { body: { name } })));
      expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409]);
      const others = await Promise.all(['r1', 'r2', 'r3', 'r4'].map((name) => create({ name })));
      const renames = await Promise.all(others.map((id) => server.call('POST', `/projects/${id}`, { body: { name: 'renamed-race' } })));
      expect(renames.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
      for (const res of [...results, ...renames].filter((r) => r.status === 409)) expect(res.json.detail).toMatch(/is already used by another root project$/);
    });

    it('refuses an id, unknown fields, and unknown references', async () => {
      expectProblem(await server.call('POST', '/projects', { body: { id: 1, name: 'withid' } }), 400, /"id"/);
      expectProblem(await server.call('POST', '/projects', { body: { name: 'x', key: 'X' } }), 400, /key/);
      expectProblem(await server.call('POST', '/projects', { body: { name: 'orphan', parentId: 999999 } }), 404);
      expectProblem(await server.call('POST', '/projects', { body: { name: 'badrole', defaultRoleId: 999999 } }), 400, /Role/);
      expectProblem(await server.call('POST', '/projects', { body: { name: 'badfork', forkedFromId: 999999 } }), 404);
      const list = (await server.call('GET', `/projects?query=${encodeURIComponent('"Name" is "withid" or "Name" is "orphan" or "Name" is "badrole"')}`)).json;
      expect(list).toEqual([]);
    });

    it('needs create-root-projects for a root project', async () => {
      expectProblem(await server.call('POST', '/projects', { body: { name: 'mine' }, auth: owner.auth }), 403, 'Not authorized to create root project');
      expectProblem(await server.call('POST', '/projects', { body: { name: 'mine' }, auth: null }), 401);
    });

    it('lets members of a group with createRootProjects create root projects, which they then own', async () => {
      const group = await server.call('POST', '/groups', { body: { name: 'creators', createRootProjects: true } });
      expect(group.status).toBe(200);
      const creator = await server.createUser('cora');
      expect((await server.call('POST', '/memberships', { body: { userId: creator.id, groupId: group.json } })).status).toBe(200);
      const id = await create({ name: 'coras' }, creator.auth);
      // the creator holds Project Owner: she can manage it and create children
      expect((await server.call('POST', `/projects/${id}`, { body: { description: 'mine' }, auth: creator.auth })).status).toBe(200);
      const child = await create({ name: 'sub', parentId: id }, creator.auth);
      const owned = await server.call('GET', `/projects?query=${encodeURIComponent('owned by me')}`, { auth: creator.auth });
      expect(owned.json.map((p: { id: number }) => p.id)).toEqual([id, child]);
      expect((await server.call('DELETE', `/projects/${child}`, { auth: creator.auth })).status).toBe(200);
    });

    it('needs create-children on the parent for a child project', async () => {
      const parent = await create({ name: 'parent' });
      // no role: the parent is invisible
      expectProblem(await server.call('POST', '/projects', { body: { name: 'c', parentId: parent }, auth: stranger.auth }), 404);
      await grant(parent, reader.id, CODE_READER);
      expectProblem(
        await server.call('POST', '/projects', { body: { name: 'c', parentId: parent }, auth: reader.auth }),
        403,
        "Not authorized to create project under 'parent'",
      );
      await grant(parent, owner.id, OWNER);
      const child = await create({ name: 'c', parentId: parent }, owner.auth);
      expect(await pathOf(child)).toBe('parent/c');
      // the owner of the parent also owns (and so manages) what she creates below it
      const grandchild = await create({ name: 'g', parentId: child }, owner.auth);
      expect(await pathOf(grandchild)).toBe('parent/c/g');
      const owned = await server.call('GET', `/projects?query=${encodeURIComponent('owned by me')}`, { auth: owner.auth });
      expect(owned.json.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['parent', 'c', 'g']));
    });
  });

  describe('Get Basic Info, Get Path, Get Clone URL', () => {
    let nested: number;

    beforeAll(async () => {
      const top = await create({ name: 'top' });
      nested = await create({ name: 'Nested', parentId: await create({ name: 'mid', parentId: top }) });
      await grant(top, reader.id, CODE_READER);
    });

    it('returns the project to callers with access (roles apply to descendants), 404 to others', async () => {
      expect((await server.call('GET', `/projects/${nested}`, { auth: reader.auth })).json.name).toBe('Nested');
      expectProblem(await server.call('GET', `/projects/${nested}`, { auth: stranger.auth }), 404);
      expectProblem(await server.call('GET', `/projects/${nested}/path`, { auth: stranger.auth }), 404);
      expectProblem(await server.call('GET', `/projects/${nested}/clone-url`, { auth: stranger.auth }), 404);
      expectProblem(await server.call('GET', '/projects/999999'), 404);
    });

    it('returns the path as raw text', async () => {
      const res = await server.call('GET', `/projects/${nested}/path`, { auth: reader.auth });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(res.text).toBe('top/mid/Nested');
    });

    it('returns http and ssh clone URLs; ssh is null while SSH is off', async () => {
      const res = await server.call('GET', `/projects/${nested}/clone-url`, { auth: reader.auth });
      expect(res.status).toBe(200);
      // this server runs without SSH (GITLOOM_SSH_PORT=0)
      expect(res.json).toEqual({ http: `${server.url}/top/mid/Nested`, ssh: null });
      expect(Object.keys(res.json)).toEqual(['http', 'ssh']);
    });

    it('derives the ssh URL from the server URL and the SSH port, or takes the configured SSH root', async () => {
      const config = server.server.services.config;
      const saved = { serverUrl: config.serverUrl, sshRootUrl: config.sshRootUrl, sshPort: config.sshPort };
      try {
        config.serverUrl = 'https://git.example.com';
        config.sshPort = 6611;
        expect((await server.call('GET', `/projects/${nested}/clone-url`)).json).toEqual({
          http: 'https://git.example.com/top/mid/Nested',
          ssh: 'ssh://git.example.com:6611/top/mid/Nested',
        });
        config.sshPort = 22;
        expect((await server.call('GET', `/projects/${nested}/clone-url`)).json.ssh).toBe('ssh://git.example.com/top/mid/Nested');
        config.sshRootUrl = 'ssh://git.example.com:2222';
        expect((await server.call('GET', `/projects/${nested}/clone-url`)).json.ssh).toBe('ssh://git.example.com:2222/top/mid/Nested');
        // a root given while the built-in server is off (an SSH server of one's own) is still named
        config.sshPort = null;
        expect((await server.call('GET', `/projects/${nested}/clone-url`)).json.ssh).toBe('ssh://git.example.com:2222/top/mid/Nested');
      } finally {
        Object.assign(config, saved);
      }
    });
  });

  describe('Update Basic Info', () => {
    it('merges partially: absent fields keep their value, null clears', async () => {
      const id = await create({ name: 'merge', description: 'first', defaultRoleId: CODE_READER });
      expect((await server.call('POST', `/projects/${id}`, { body: { codeManagement: false } })).status).toBe(200);
      expect((await server.call('GET', `/projects/${id}`)).json).toMatchObject({
        name: 'merge',
        description: 'first',
        defaultRoleId: CODE_READER,
        codeManagement: false,
        issueManagement: true,
      });
      expect((await server.call('POST', `/projects/${id}`, { body: { description: null, defaultRoleId: null } })).status).toBe(200);
      expect((await server.call('GET', `/projects/${id}`)).json).toMatchObject({
        name: 'merge',
        description: null,
        defaultRoleId: null,
        codeManagement: false,
      });
      expect((await server.call('POST', `/projects/${id}`, { body: { gitPackConfig: { window: '5' } } })).status).toBe(200);
      expect((await server.call('GET', `/projects/${id}`)).json.gitPackConfig).toEqual({ windowMemory: null, packSizeLimit: null, threads: null, window: '5' });
      expectProblem(await server.call('POST', `/projects/${id}`, { body: { path: 'x' } }), 400, /path/);
      expectProblem(await server.call('POST', '/projects/999999', { body: { description: 'x' } }), 404);
    });

    it('renames and moves, recomputing the paths of the whole subtree', async () => {
      const a = await create({ name: 'ra' });
      const b = await create({ name: 'b', parentId: a });
      const c = await create({ name: 'c', parentId: b });
      const lookalike = await create({ name: 'ra2' });
      const lookalikeChild = await create({ name: 'b', parentId: lookalike });
      const other = await create({ name: 'other' });

      expect((await server.call('POST', `/projects/${a}`, { body: { name: 'renamed' } })).status).toBe(200);
      expect([await pathOf(a), await pathOf(b), await pathOf(c)]).toEqual(['renamed', 'renamed/b', 'renamed/b/c']);
      expect(await pathOf(lookalikeChild)).toBe('ra2/b');

      expect((await server.call('POST', `/projects/${b}`, { body: { parentId: other } })).status).toBe(200);
      expect([await pathOf(b), await pathOf(c)]).toEqual(['other/b', 'other/b/c']);
      expect((await server.call('GET', `/projects/${b}`)).json.parentId).toBe(other);

      expect((await server.call('POST', `/projects/${b}`, { body: { parentId: null, name: 'top-b' } })).status).toBe(200);
      expect([await pathOf(b), await pathOf(c)]).toEqual(['top-b', 'top-b/c']);
      expect((await server.call('GET', `/projects/${b}`)).json.parentId).toBeNull();
      // renaming to a different case of its own name is not a clash
      expect((await server.call('POST', `/projects/${b}`, { body: { name: 'TOP-B' } })).status).toBe(200);
      expect(await pathOf(c)).toBe('TOP-B/c');
    });

    it('refuses the project itself or a descendant as parent', async () => {
      const a = await create({ name: 'cyc' });
      const b = await create({ name: 'b', parentId: a });
      const c = await create({ name: 'c', parentId: b });
      expectProblem(await server.call('POST', `/projects/${a}`, { body: { parentId: a } }), 409, 'Can not use current or descendant project as parent');
      expectProblem(await server.call('POST', `/projects/${a}`, { body: { parentId: c } }), 409, 'Can not use current or descendant project as parent');
      expect(await pathOf(c)).toBe('cyc/b/c');
    });

    it('refuses a name clash among the new siblings, leaving the project unchanged', async () => {
      const a = await create({ name: 'sib-a' });
      const target = await create({ name: 'sib-target' });
      await create({ name: 'Dup', parentId: target });
      const moving = await create({ name: 'dup', parentId: a });
      expectProblem(
        await server.call('POST', `/projects/${moving}`, { body: { parentId: target } }),
        409,
        "Name 'dup' is already used by another project under 'sib-target'",
      );
      expectProblem(
        await server.call('POST', `/projects/${moving}`, { body: { parentId: null, name: 'SIB-A' } }),
        409,
        "Name 'SIB-A' is already used by another root project",
      );
      expectProblem(await server.call('POST', `/projects/${moving}`, { body: { name: 'bad name' } }), 400, NAME_RULE);
      expect(await pathOf(moving)).toBe('sib-a/dup');
    });

    it('needs manage permission, and creation permission at the new place', async () => {
      const team = await create({ name: 'team' });
      const app = await create({ name: 'app', parentId: team });
      const elsewhere = await create({ name: 'elsewhere' });
      await grant(team, reader.id, CODE_READER);
      await grant(app, owner.id, OWNER);
      await grant(elsewhere, owner.id, CODE_READER);
      expectProblem(await server.call('POST', `/projects/${app}`, { body: { description: 'x' }, auth: reader.auth }), 403);
      expectProblem(await server.call('POST', `/projects/${app}`, { body: { description: 'x' }, auth: stranger.auth }), 404);
      expectProblem(await server.call('POST', `/projects/${app}`, { body: { description: 'x' }, auth: null }), 401);
      expect((await server.call('POST', `/projects/${app}`, { body: { description: 'owned' }, auth: owner.auth })).status).toBe(200);
      expectProblem(
        await server.call('POST', `/projects/${app}`, { body: { parentId: null }, auth: owner.auth }),
        403,
        'Not authorized to create root project',
      );
      expectProblem(
        await server.call('POST', `/projects/${app}`, { body: { parentId: elsewhere }, auth: owner.auth }),
        403,
        "Not authorized to create project under 'elsewhere'",
      );
      expect(await pathOf(app)).toBe('team/app');
      expect((await server.call('GET', `/projects/${app}`)).json.description).toBe('owned');
    });
  });

  describe('Delete', () => {
    it('deletes the whole subtree and its repositories', async () => {
      const root = await create({ name: 'doomed' });
      const child = await create({ name: 'child', parentId: root });
      const grandchild = await create({ name: 'grandchild', parentId: child });
      const survivor = await create({ name: 'doomed-not' });
      expect(await repoExists(grandchild)).toBe(true);
      const res = await server.call('DELETE', `/projects/${root}`);
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
      for (const id of [root, child, grandchild]) {
        expectProblem(await server.call('GET', `/projects/${id}`), 404);
        expect(await repoExists(id)).toBe(false);
      }
      expect((await server.call('GET', `/projects/${survivor}`)).status).toBe(200);
      expect(await repoExists(survivor)).toBe(true);
      // the name is free again
      expect(await create({ name: 'doomed' })).toBeGreaterThan(0);
      expectProblem(await server.call('DELETE', `/projects/${root}`), 404);
    });

    it('keeps forks of deleted projects, unlinked', async () => {
      const upstream = await create({ name: 'upstream' });
      const fork = await create({ name: 'downstream', forkedFromId: upstream });
      expect((await server.call('GET', `/projects/${fork}`)).json.forkedFromId).toBe(upstream);
      expect((await server.call('DELETE', `/projects/${upstream}`)).status).toBe(200);
      const after = await server.call('GET', `/projects/${fork}`);
      expect(after.status).toBe(200);
      expect(after.json.forkedFromId).toBeNull();
      expect(await repoExists(fork)).toBe(true);
    });

    it('needs manage permission', async () => {
      const id = await create({ name: 'keep' });
      await grant(id, reader.id, CODE_READER);
      expectProblem(await server.call('DELETE', `/projects/${id}`, { auth: reader.auth }), 403);
      expectProblem(await server.call('DELETE', `/projects/${id}`, { auth: stranger.auth }), 404);
      expectProblem(await server.call('DELETE', `/projects/${id}`, { auth: null }), 401);
      expect((await server.call('GET', `/projects/${id}`)).status).toBe(200);
      await grant(id, owner.id, OWNER);
      expect((await server.call('DELETE', `/projects/${id}`, { auth: owner.auth })).status).toBe(200);
    });
  });
});
