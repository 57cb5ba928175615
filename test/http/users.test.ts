import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, basic, commitFiles, git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';
import { givenProject, givenUsers, type TestUser } from '../helpers/fixtures.js';

/** Users (docs/compatibility.md#users-json-and-names, docs/compatibility.md#users-endpoints, docs/compatibility.md#gitloom-differs-authentication). */
describe('users', () => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  const cleanup: string[] = [];

  beforeAll(async () => {
    server = await startTestServer();
    [alice, bob] = await givenUsers(server, 'alice', 'bob');
  });
  afterAll(async () => {
    await server.close();
    for (const dir of cleanup) await fs.rm(dir, { recursive: true, force: true });
  });

  function expectProblem(res: { status: number; headers: Headers; json: any }, status: number, detail?: string | RegExp) {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.json).toMatchObject({ type: 'about:blank', status });
    if (typeof detail === 'string') expect(res.json.detail).toBe(detail);
    else if (detail) expect(res.json.detail).toMatch(detail);
  }

  describe('Get Profile / Get My Profile', () => {
    it('lets an administrator read any profile', async () => {
      const res = await server.call('GET', `/users/${alice.id}`);
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ id: alice.id, name: 'alice', fullName: 'alice Full' });
      expect(Object.keys(res.json)).toEqual(['id', 'name', 'fullName']);
    });

    it('lets a user read their own profile, not another one', async () => {
      expect((await server.call('GET', `/users/${alice.id}`, { auth: alice.auth })).json.name).toBe('alice');
      expectProblem(await server.call('GET', `/users/${bob.id}`, { auth: alice.auth }), 403);
      expectProblem(await server.call('GET', '/users/1', { auth: alice.auth }), 403);
    });

    it('refuses anonymous callers with 401', async () => {
      const res = await server.call('GET', `/users/${alice.id}`, { auth: null });
      expectProblem(res, 401);
      expect(res.headers.get('www-authenticate')).toBe('Basic realm="Gitloom"');
      expectProblem(await server.call('GET', '/users/me', { auth: null }), 401);
    });

    it('answers 404 for a missing user', async () => {
      expectProblem(await server.call('GET', '/users/99999'), 404);
    });

    it('returns the caller as /users/me', async () => {
      expect((await server.call('GET', '/users/me')).json).toEqual({ id: 1, name: ADMIN.name, fullName: null });
      expect((await server.call('GET', '/users/me', { auth: bob.auth })).json).toEqual({ id: bob.id, name: 'bob', fullName: 'bob Full' });
    });
  });

  describe('Query Profile', () => {
    beforeAll(async () => {
      for (const [name, fullName, email] of [
        ['zed', 'Zed Zebra', 'zed@zoo.example'],
        ['yolanda', 'Yolanda Quux', 'yo@corp.example'],
        ['xavier', null, 'xavier@quux.example'],
      ] as const) {
        const res = await server.call('POST', '/users', { body: { name, fullName, emailAddress: email, password: 'pw' } });
        expect(res.status).toBe(200);
      }
    });

    it('lists ordinary users ordered by name, hiding the system and unknown users', async () => {
      const res = await server.call('GET', '/users');
      expect(res.status).toBe(200);
      const names = res.json.map((u: { name: string }) => u.name);
      expect(names).toEqual([...names].sort());
      expect(names).toEqual(expect.arrayContaining([ADMIN.name, 'alice', 'bob', 'zed']));
      expect(names).not.toContain('gitloom');
      expect(names).not.toContain('unknown');
      expect(res.json.every((u: { id: number }) => u.id > 0)).toBe(true);
    });

    it('matches term against name, full name and email, case-insensitively', async () => {
      const names = async (term: string) => (await server.call('GET', `/users?term=${encodeURIComponent(term)}`)).json.map((u: { name: string }) => u.name);
      expect(await names('ZEB')).toEqual(['zed']);
      expect(await names('quux')).toEqual(['xavier', 'yolanda']);
      expect(await names('corp.example')).toEqual(['yolanda']);
      expect(await names('nobody-matches')).toEqual([]);
      expect(await names('%')).toEqual([]);
    });

    it('pages with offset and count', async () => {
      const all = (await server.call('GET', '/users')).json;
      const page = await server.call('GET', '/users?offset=1&count=2');
      expect(page.json).toEqual(all.slice(1, 3));
      expectProblem(await server.call('GET', '/users?count=101'), 400, 'Count should not be greater than 100');
    });

    it('is for administrators only', async () => {
      expectProblem(await server.call('GET', '/users', { auth: alice.auth }), 403);
      expectProblem(await server.call('GET', '/users', { auth: null }), 401);
    });
  });

  describe('Create', () => {
    const create = (body: unknown, auth?: string | null) => server.call('POST', '/users', { body, auth });

    it('returns the id as a bare number and stores name and email lower-cased', async () => {
      const res = await create({ name: 'MixedCase', password: 'pw', emailAddress: 'Mixed.Case@Example.COM', fullName: 'Mixed Case' });
      expect(res.status).toBe(200);
      expect(res.text).toMatch(/^\d+$/);
      const id = res.json as number;
      expect((await server.call('GET', `/users/${id}`)).json).toEqual({ id, name: 'mixedcase', fullName: 'Mixed Case' });
      const emails = await server.call('GET', `/users/${id}/email-addresses`);
      expect(emails.json).toEqual([{ id: expect.any(Number), value: 'mixed.case@example.com', primary: true, git: true, ownerId: id }]);
      // the new user can log in with the name in any case
      expect((await server.call('GET', '/users/me', { auth: basic('MIXEDCASE', 'pw') })).json.id).toBe(id);
    });

    it('accepts a missing full name', async () => {
      const res = await create({ name: 'nofull', password: 'pw', emailAddress: 'nofull@example.com' });
      expect(res.status).toBe(200);
      expect((await server.call('GET', `/users/${res.json}`)).json.fullName).toBeNull();
    });

    it.each([
      ['-dash', 'Should start with alphanumeric or underscore, and contains only alphanumeric, underscore, dash, or dot'],
      ['.dot', 'Should start with alphanumeric or underscore, and contains only alphanumeric, underscore, dash, or dot'],
      ['has space', 'Should start with alphanumeric or underscore, and contains only alphanumeric, underscore, dash, or dot'],
      ['a/b', 'Should start with alphanumeric or underscore, and contains only alphanumeric, underscore, dash, or dot'],
      ['héllo', 'Should start with alphanumeric or underscore, and contains only alphanumeric, underscore, dash, or dot'],
      ['new', "'new' is a reserved name"],
      ['onedev', "'onedev' is a reserved name"],
      ['unknown', "'unknown' is a reserved name"],
      ['gitloom', "'gitloom' is a reserved name"],
      ['', /required/i],
    ])('refuses the name %j', async (name, detail) => {
      expectProblem(await create({ name, password: 'pw', emailAddress: `x${Math.random()}@example.com` }), 400, detail);
    });

    it('accepts names with underscores, dashes and dots after the first character', async () => {
      expect((await create({ name: '_a.b-c', password: 'pw', emailAddress: 'abc@example.com' })).status).toBe(200);
    });

    it.each(['not-an-email', '', 'a b@example.com'])('refuses the email %j', async (emailAddress) => {
      expectProblem(await create({ name: `mail${Math.floor(Math.random() * 1e9)}`, password: 'pw', emailAddress }), 400);
    });

    it('refuses a used name or email, case-insensitively, with 409 and creates nothing', async () => {
      const before = (await server.call('GET', '/users')).json.length;
      expectProblem(await create({ name: 'ALICE', password: 'pw', emailAddress: 'other@example.com' }), 409, 'Login name is already used by another user');
      expectProblem(await create({ name: 'alice2', password: 'pw', emailAddress: 'ALICE@example.com' }), 409, 'Email address is already used by another user');
      expect((await server.call('GET', '/users')).json.length).toBe(before);
    });

    it('answers 409, never 500, to concurrent creates of the same user', async () => {
      const results = await Promise.all(
        ['Racer', 'racer', 'RACER', 'racer', 'Racer', 'racer'].map((name, i) => create({ name, password: 'pw', emailAddress: `racer${i}@example.com` })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
      for (const res of results.filter((r) => r.status === 409)) expect(res.json.detail).toBe('Login name is already used by another user');
      const sameEmail = await Promise.all([1, 2, 3, 4].map((i) => create({ name: `mailracer${i}`, password: 'pw', emailAddress: 'Shared@Example.com' })));
      expect(sameEmail.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
      for (const res of sameEmail.filter((r) => r.status === 409)) expect(res.json.detail).toBe('Email address is already used by another user');
    });

    it('refuses an empty password, unknown fields and an id', async () => {
      expectProblem(await create({ name: 'nopw', password: '', emailAddress: 'nopw@example.com' }), 400);
      expectProblem(await create({ name: 'extra', password: 'pw', emailAddress: 'extra@example.com', admin: true }), 400, /admin/);
      expectProblem(await create({ id: alice.id, name: 'withid', password: 'pw', emailAddress: 'withid@example.com' }), 400, /"id"/);
      expectProblem(await create({ name: 'missing-email', password: 'pw' }), 400, /emailAddress/);
      expect((await server.call('GET', '/users?term=withid')).json).toEqual([]);
    });

    it('is for administrators only', async () => {
      expectProblem(await create({ name: 'byalice', password: 'pw', emailAddress: 'byalice@example.com' }, alice.auth), 403);
      expectProblem(await create({ name: 'byanon', password: 'pw', emailAddress: 'byanon@example.com' }, null), 401);
    });
  });

  describe('Update Profile', () => {
    it('merges partially: absent fields keep their value, null clears the full name', async () => {
      const carol = await server.createUser('carol');
      expect((await server.call('POST', `/users/${carol.id}`, { body: { fullName: 'Carol C' } })).status).toBe(200);
      expect((await server.call('GET', `/users/${carol.id}`)).json).toEqual({ id: carol.id, name: 'carol', fullName: 'Carol C' });
      const res = await server.call('POST', `/users/${carol.id}`, { body: { fullName: null } });
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
      expect((await server.call('GET', `/users/${carol.id}`)).json).toEqual({ id: carol.id, name: 'carol', fullName: null });
      expect((await server.call('POST', `/users/${carol.id}`, { body: {} })).status).toBe(200);
      expect((await server.call('GET', `/users/${carol.id}`)).json.fullName).toBeNull();
    });

    it('renames (lower-cased), and the new name logs in', async () => {
      const dave = await server.createUser('dave');
      const token = (await server.call('POST', `/users/${dave.id}/access-tokens`, { body: {}, auth: dave.auth })).text;
      const bearer = `Bearer ${token}`;
      expect((await server.call('GET', '/users/me', { auth: bearer })).json.name).toBe('dave');
      expect((await server.call('POST', `/users/${dave.id}`, { body: { name: 'David', fullName: 'David D' }, auth: dave.auth })).status).toBe(200);
      expect((await server.call('GET', `/users/${dave.id}`)).json.name).toBe('david');
      // the same token, just used, sees the new profile at once
      expect((await server.call('GET', '/users/me', { auth: bearer })).json).toEqual({ id: dave.id, name: 'david', fullName: 'David D' });
      expect((await server.call('GET', '/users/me', { auth: basic('david', dave.password) })).json.id).toBe(dave.id);
      expectProblem(await server.call('GET', '/users/me', { auth: basic('dave', dave.password) }), 401);
      // renaming to the same name in another case is not a clash with oneself
      expect((await server.call('POST', `/users/${dave.id}`, { body: { name: 'DAVID' } })).status).toBe(200);
    });

    it('refuses invalid and used names', async () => {
      expectProblem(await server.call('POST', `/users/${bob.id}`, { body: { name: 'Alice' } }), 409, 'Login name is already used by another user');
      expectProblem(
        await server.call('POST', `/users/${bob.id}`, { body: { name: 'bad name' } }),
        400,
        'Should start with alphanumeric or underscore, and contains only alphanumeric, underscore, dash, or dot',
      );
      expectProblem(await server.call('POST', `/users/${bob.id}`, { body: { name: 'new' } }), 400, "'new' is a reserved name");
      expectProblem(await server.call('POST', `/users/${bob.id}`, { body: { email: 'x@example.com' } }), 400, /email/);
      expect((await server.call('GET', `/users/${bob.id}`)).json.name).toBe('bob');
    });

    it('is for administrators and the user themself', async () => {
      expectProblem(await server.call('POST', `/users/${bob.id}`, { body: { fullName: 'hacked' }, auth: alice.auth }), 403);
      expectProblem(await server.call('POST', `/users/${bob.id}`, { body: { fullName: 'hacked' }, auth: null }), 401);
      expectProblem(await server.call('POST', '/users/99999', { body: { fullName: 'x' } }), 404);
      expect((await server.call('GET', `/users/${bob.id}`)).json.fullName).toBe('bob Full');
    });
  });

  describe('Set Password', () => {
    it('takes the raw text body; the old password stops working', async () => {
      const erin = await server.createUser('erin', 'old-pass');
      const res = await server.call('POST', `/users/${erin.id}/password`, { text: 'new pass with spaces', auth: erin.auth });
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
      expectProblem(await server.call('GET', '/users/me', { auth: erin.auth }), 401);
      expect((await server.call('GET', '/users/me', { auth: basic('erin', 'new pass with spaces') })).json.id).toBe(erin.id);
    });

    it('decodes a JSON string literal body, whatever the content type', async () => {
      const frank = await server.createUser('frank');
      const res = await server.call('POST', `/users/${frank.id}/password`, {
        text: JSON.stringify('quoted "secret"'),
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(200);
      expect((await server.call('GET', '/users/me', { auth: basic('frank', 'quoted "secret"') })).status).toBe(200);
    });

    it('refuses an empty password and other users', async () => {
      expectProblem(await server.call('POST', `/users/${bob.id}/password`, { text: '' }), 400);
      expectProblem(await server.call('POST', `/users/${bob.id}/password`, { text: '""', headers: { 'content-type': 'application/json' } }), 400);
      expectProblem(await server.call('POST', `/users/${bob.id}/password`, { text: 'mine', auth: alice.auth }), 403);
      expectProblem(await server.call('POST', `/users/${bob.id}/password`, { text: 'mine', auth: null }), 401);
      expect((await server.call('GET', '/users/me', { auth: bob.auth })).status).toBe(200);
    });
  });

  describe('Access tokens', () => {
    it('creates a token shown once as raw text, lists it masked, deletes it by value', async () => {
      const created = await server.call('POST', `/users/${alice.id}/access-tokens`, {
        body: { description: 'ci', expireDate: '2999-01-01' },
        auth: alice.auth,
      });
      expect(created.status).toBe(200);
      expect(created.headers.get('content-type')).toMatch(/^text\/plain/);
      const token = created.text;
      expect(token).toMatch(/^[A-Za-z0-9]{40}$/);
      expect((await server.call('GET', '/users/me', { auth: `Bearer ${token}` })).json.id).toBe(alice.id);

      const list = await server.call('GET', `/users/${alice.id}/access-tokens`, { auth: alice.auth });
      expect(list.status).toBe(200);
      const entry = list.json.find((t: { description: string }) => t.description === 'ci');
      expect(entry).toEqual({
        value: `${token.slice(0, 4)}…`,
        description: 'ci',
        createDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/),
        expireDate: '2999-01-01T00:00:00.000+00:00',
        // Gitloom's own (docs/compatibility.md#gitloom-differs-sessions-and-tokens); the last use is recorded as the request ends
        readOnly: false,
        projectIds: null,
        lastUsedDate: expect.toSatisfy((date: string | null) => date === null || /^\d{4}-\d{2}-\d{2}T/.test(date)),
        lastUsedAddress: expect.toSatisfy((address: string | null) => address === null || /127\.0\.0\.1|::1/.test(address)),
      });
      expect(list.text).not.toContain(token);

      expectProblem(await server.call('DELETE', `/users/${alice.id}/access-tokens/${token.slice(0, 4)}`, { auth: alice.auth }), 404);
      const deleted = await server.call('DELETE', `/users/${alice.id}/access-tokens/${token}`, { auth: alice.auth });
      expect(deleted.status).toBe(200);
      expectProblem(await server.call('GET', '/users/me', { auth: `Bearer ${token}` }), 401);
      expectProblem(
        await server.call('DELETE', `/users/${alice.id}/access-tokens/${token}`, { auth: alice.auth }),
        404,
        'No access token found with specified value',
      );
    });

    it('accepts an empty body and no expiry', async () => {
      const res = await server.call('POST', `/users/${bob.id}/access-tokens`, { auth: bob.auth });
      expect(res.status).toBe(200);
      const list = (await server.call('GET', `/users/${bob.id}/access-tokens`, { auth: bob.auth })).json;
      expect(list.at(-1)).toMatchObject({ value: `${res.text.slice(0, 4)}…`, description: null, expireDate: null });
    });

    it('does not authenticate with an expired token', async () => {
      const res = await server.call('POST', `/users/${bob.id}/access-tokens`, { body: { expireDate: Date.now() - 1000 }, auth: bob.auth });
      expect(res.status).toBe(200);
      expectProblem(await server.call('GET', '/users/me', { auth: `Bearer ${res.text}` }), 401);
      expectProblem(await server.call('GET', '/users/me', { auth: basic('bob', res.text) }), 401);
    });

    it('refuses tokens for the built-in users, who never log in', async () => {
      for (const id of [-1, -2]) {
        expectProblem(await server.call('POST', `/users/${id}/access-tokens`, { body: {} }), 409, 'This user can not log in');
        expectProblem(await server.call('POST', `/users/${id}/password`, { text: 'let me in' }), 409, 'This user can not log in');
      }
      expectProblem(await server.call('GET', '/users/me', { auth: basic('unknown', 'let me in') }), 401);
    });

    it("lets administrators manage anyone's tokens, users only their own", async () => {
      const byAdmin = await server.call('POST', `/users/${bob.id}/access-tokens`, { body: { description: 'by admin' } });
      expect(byAdmin.status).toBe(200);
      expect((await server.call('GET', '/users/me', { auth: `Bearer ${byAdmin.text}` })).json.id).toBe(bob.id);
      expectProblem(await server.call('GET', `/users/${bob.id}/access-tokens`, { auth: alice.auth }), 403);
      expectProblem(await server.call('POST', `/users/${bob.id}/access-tokens`, { body: {}, auth: alice.auth }), 403);
      expectProblem(await server.call('DELETE', `/users/${bob.id}/access-tokens/${byAdmin.text}`, { auth: alice.auth }), 403);
      // a token of another user cannot be deleted through one's own collection
      expectProblem(await server.call('DELETE', `/users/${alice.id}/access-tokens/${byAdmin.text}`, { auth: alice.auth }), 404);
      expect((await server.call('DELETE', `/users/${bob.id}/access-tokens/${byAdmin.text}`)).status).toBe(200);
      expectProblem(await server.call('POST', `/users/${bob.id}/access-tokens`, { body: {}, auth: null }), 401);
      expectProblem(await server.call('POST', `/users/${bob.id}/access-tokens`, { body: { scope: 'x' } }), 400, /scope/);
    });
  });

  describe('Email addresses', () => {
    it('lists the primary, git, verified address for admin and self only', async () => {
      const res = await server.call('GET', `/users/${alice.id}/email-addresses`, { auth: alice.auth });
      expect(res.status).toBe(200);
      expect(res.json).toEqual([{ id: expect.any(Number), value: 'alice@example.com', primary: true, git: true, ownerId: alice.id }]);
      expectProblem(await server.call('GET', `/users/${alice.id}/email-addresses`, { auth: bob.auth }), 403);
      expect((await server.call('GET', '/users/1/email-addresses')).json[0].value).toBe(ADMIN.email);
    });
  });

  describe('Delete', () => {
    it('refuses to delete the root user, and non-administrators', async () => {
      expectProblem(await server.call('DELETE', '/users/1'), 409, 'Root user can not be deleted');
      expectProblem(await server.call('DELETE', `/users/${bob.id}`, { auth: alice.auth }), 403);
      expectProblem(await server.call('DELETE', `/users/${bob.id}`, { auth: null }), 401);
      expectProblem(await server.call('DELETE', '/users/99999'), 404);
      expectProblem(await server.call('DELETE', '/users/-2'), 409);
      expect((await server.call('GET', `/users/${bob.id}`)).status).toBe(200);
    });

    it('refuses an administrator deleting themself', async () => {
      const admins = await server.call('POST', '/groups', { body: { name: 'admins', administrator: true } });
      expect(admins.status).toBe(200);
      const grace = await server.createUser('grace');
      expect((await server.call('POST', '/memberships', { body: { userId: grace.id, groupId: admins.json } })).status).toBe(200);
      expectProblem(await server.call('DELETE', `/users/${grace.id}`, { auth: grace.auth }), 409, 'Can not delete yourself');
      expect((await server.call('GET', '/users', { auth: grace.auth })).status).toBe(200);
    });

    it('moves authored pull requests to the unknown user and removes the login', async () => {
      const henry = await server.createUser('henry');
      // every logged-in user writes code here (default role "Code Writer", id 2)
      const project = await givenProject(server, { name: 'shared', defaultRoleId: 2 });
      const token = (await server.call('POST', `/users/${henry.id}/access-tokens`, { body: {}, auth: henry.auth })).text;
      const work = await makeWorkTree({ 'a.txt': 'a\n' });
      cleanup.push(work);
      const remote = gitUrl(server, 'shared', { name: henry.name, password: henry.password });
      await git(work, ['push', '-q', remote, 'main']);
      await git(work, ['checkout', '-q', '-b', 'topic']);
      await commitFiles(work, { 'b.txt': 'b\n' }, 'topic');
      await git(work, ['push', '-q', remote, 'topic']);
      const pr = await server.call('POST', '/pulls', {
        auth: henry.auth,
        body: { targetProjectId: project, sourceProjectId: project, targetBranch: 'main', sourceBranch: 'topic', title: 'By henry' },
      });
      expect(pr.status).toBe(200);
      expect((await server.call('GET', `/pulls/${pr.json}`)).json.submitterId).toBe(henry.id);

      const res = await server.call('DELETE', `/users/${henry.id}`);
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
      expectProblem(await server.call('GET', `/users/${henry.id}`), 404);
      const after = (await server.call('GET', `/pulls/${pr.json}`)).json;
      expect(after.submitterId).toBe(-2);
      expect(after.lastActivity.userId).toBe(-2);
      expectProblem(await server.call('GET', '/users/me', { auth: henry.auth }), 401);
      expectProblem(await server.call('GET', '/users/me', { auth: `Bearer ${token}` }), 401);
      // the name and email are free again
      expect((await server.call('POST', '/users', { body: { name: 'henry', password: 'pw', emailAddress: 'henry@example.com' } })).status).toBe(200);
    });
  });
});
