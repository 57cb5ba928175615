import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { givenProject, givenUsers, type TestUser } from '../helpers/fixtures.js';
import { ADMIN, basic, startTestServer, type TestServer } from '../helpers/server.js';

/** An OpenSSH public key line for an ed25519 key made here: `ssh-ed25519 <base64> <comment>`. */
function publicKeyLine(comment: string): string {
  const der = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'der' });
  const raw = der.subarray(der.length - 32);
  const part = (b: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(b.length);
    return Buffer.concat([len, b]);
  };
  return `ssh-ed25519 ${Buffer.concat([part(Buffer.from('ssh-ed25519')), part(raw)]).toString('base64')} ${comment}`;
}

/** The personal settings pages over plain HTTP, each change checked through the API. */
describe('personal settings pages', () => {
  let server: TestServer;
  let bob: TestUser;
  let session: WebSession;

  beforeAll(async () => {
    server = await startTestServer();
    [bob] = await givenUsers(server, 'bob');
    session = await signInByFetch(server, 'bob', bob.password);
  });
  afterAll(async () => {
    await server?.close();
  });

  const get = (path: string, s: WebSession | null = session) => fetch(`${server.url}${path}`, { redirect: 'manual', headers: s ? { cookie: s.cookie } : {} });
  const post = (path: string, fields: Record<string, string>, s: WebSession = session) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: s.cookie },
      body: new URLSearchParams({ _csrf: s.csrfToken, ...fields }).toString(),
    });

  it('needs a signed-in user and links to it from the header', async () => {
    for (const path of ['/~my', '/~my/access-tokens', '/~my/saved-queries']) {
      const anonymous = await get(path, null);
      expect(anonymous.status).toBe(302);
      expect(new URL(anonymous.headers.get('location')!, server.url).searchParams.get('redirect')).toBe(path);
    }
    const html = await (await get('/~my')).text();
    expect(html).toContain('<title>Profile · My settings · Gitloom</title>');
    expect(html).toContain('href="/~my"');
    expect(html).toContain('bob@example.com');
    expect(html).not.toContain('href="/~administration"');
  });

  it('serves every personal settings page with its title', async () => {
    for (const [path, title] of [
      ['profile', 'Profile'],
      ['password', 'Password'],
      ['access-tokens', 'Access tokens'],
      ['ssh-keys', 'SSH keys'],
      ['saved-queries', 'Saved queries'],
      ['watches', 'Watches'],
    ]) {
      const response = await get(`/~my/${path}`);
      expect(response.status, path).toBe(200);
      const html = await response.text();
      expect(html).toContain(`<title>${title} · My settings · Gitloom</title>`);
      expect(html).toContain(`href="/~my/${path}" aria-current="page"`);
    }
  });

  it("edits the profile, showing the domain's message on a refusal", async () => {
    expect((await post('/~my/profile', { name: 'bob', fullName: 'Robert' })).status).toBe(303);
    expect((await server.call('GET', `/users/${bob.id}`)).json).toEqual({ id: bob.id, name: 'bob', fullName: 'Robert' });
    const reserved = await post('/~my/profile', { name: 'new', fullName: 'Robert B' });
    expect(reserved.status).toBe(400);
    const html = await reserved.text();
    expect(html).toContain("'new' is a reserved name");
    expect(html).toContain('value="Robert B"');
  });

  it('chooses the primary and git address among the verified ones and removes the others', async () => {
    const admin = await signInByFetch(server, ADMIN.name, ADMIN.password);
    expect((await post(`/~administration/users/${bob.id}/email-addresses`, { value: 'bob@work.example' }, admin)).status).toBe(303);
    // an address waiting for verification (none of the server's own paths adds one yet)
    await server.server.services.db
      .insertInto('emailAddresses')
      .values({ ownerId: bob.id, value: 'bob@pending.example', primary: 0, git: 0, verificationCode: 'code' })
      .execute();
    const addresses = async () =>
      (await server.call('GET', `/users/${bob.id}/email-addresses`)).json as { id: number; value: string; primary: boolean; git: boolean }[];
    const idOf = async (value: string) => (await addresses()).find((a) => a.value === value)!.id;
    const [home, work, pending] = await Promise.all(['bob@example.com', 'bob@work.example', 'bob@pending.example'].map(idOf));

    const html = await (await get('/~my/profile')).text();
    expect(html).toContain('aria-label="Make bob@work.example primary"');
    expect(html).not.toContain('aria-label="Make bob@pending.example primary"');
    expect(html).toContain('aria-label="Remove bob@pending.example"');
    expect(html).not.toContain('aria-label="Remove bob@example.com"');

    expect((await post('/~my/email-addresses/git', { id: String(work) })).status).toBe(303);
    expect((await post('/~my/email-addresses/primary', { id: String(work) })).status).toBe(303);
    expect((await addresses()).map((a) => [a.value, a.primary, a.git])).toEqual([
      ['bob@example.com', false, false],
      ['bob@work.example', true, true],
      ['bob@pending.example', false, false],
    ]);

    const unverified = await post('/~my/email-addresses/primary', { id: String(pending) });
    expect(unverified.status).toBe(400);
    expect(await unverified.text()).toContain('Email address is not verified: bob@pending.example');
    const primary = await post('/~my/email-addresses/delete', { id: String(work) });
    expect(primary.status).toBe(400);
    expect(await primary.text()).toContain('Can not delete the primary email address');
    // another user's address is not found among one's own
    const adminAddress = ((await server.call('GET', '/users/1/email-addresses')).json as { id: number }[])[0].id;
    expect((await post('/~my/email-addresses/delete', { id: String(adminAddress) })).status).toBe(404);
    expect((await post('/~my/email-addresses/rename', { id: String(work) })).status).toBe(404);

    for (const id of [home, pending]) expect((await post('/~my/email-addresses/delete', { id: String(id) })).status).toBe(303);
    expect((await addresses()).map((a) => a.value)).toEqual(['bob@work.example']);
  });

  it('changes the password only with the current one and matching new ones', async () => {
    const wrong = await post('/~my/password', { current: 'nope', password: 'next-pass', confirm: 'next-pass' });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain('The current password is not right');
    const differ = await post('/~my/password', { current: bob.password, password: 'next-pass', confirm: 'other' });
    expect(differ.status).toBe(400);
    expect(await differ.text()).toContain('The two new passwords differ');
    expect((await server.call('GET', '/users/me', { auth: bob.auth })).status).toBe(200);

    const changed = await post('/~my/password', { current: bob.password, password: 'next-pass', confirm: 'next-pass' });
    expect(changed.status).toBe(200);
    expect(await changed.text()).toContain('Password changed.');
    expect((await server.call('GET', '/users/me', { auth: basic('bob', 'next-pass') })).status).toBe(200);
    expect((await server.call('GET', '/users/me', { auth: bob.auth })).status).toBe(401);
    bob.password = 'next-pass';
    bob.auth = basic('bob', 'next-pass');
  });

  it('creates an access token shown once, lists it masked and deletes it', async () => {
    const created = await post('/~my/access-tokens', { description: 'ci', expireDate: '' });
    expect(created.status).toBe(200);
    const html = await created.text();
    const value = /id="new-token" value="([A-Za-z0-9]{40})"/.exec(html)![1];
    expect((await server.call('GET', '/users/me', { auth: `Bearer ${value}` })).json).toMatchObject({ name: 'bob' });

    const list = await (await get('/~my/access-tokens')).text();
    expect(list).not.toContain(value);
    expect(list).toContain(`${value.slice(0, 4)}…`);
    expect(list).toContain('ci');
    const api = (await server.call('GET', `/users/${bob.id}/access-tokens`, { auth: bob.auth })).json as { value: string }[];
    expect(api.map((t) => t.value)).toEqual([`${value.slice(0, 4)}…`]);

    const badDate = await post('/~my/access-tokens', { description: 'later', expireDate: 'tomorrow' });
    expect(badDate.status).toBe(400);
    expect(await badDate.text()).toContain('value="later"');
    const expiring = await post('/~my/access-tokens', { description: 'dated', expireDate: '2999-01-31' });
    expect(expiring.status).toBe(200);
    const dated = (await server.call('GET', `/users/${bob.id}/access-tokens`, { auth: bob.auth })).json as { description: string; expireDate: string }[];
    expect(dated.find((t) => t.description === 'dated')!.expireDate).toBe('2999-01-31T23:59:59.999+00:00');

    const id = /name="id" value="(\d+)"/.exec(list)![1];
    expect((await post('/~my/access-tokens/delete', { id })).status).toBe(303);
    expect((await server.call('GET', '/users/me', { auth: `Bearer ${value}` })).status).toBe(401);
    const missing = await post('/~my/access-tokens/delete', { id });
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('No access token found');
  });

  it('adds and deletes SSH keys', async () => {
    const line = publicKeyLine('bob@laptop');
    expect((await post('/~my/ssh-keys', { content: line })).status).toBe(303);
    const keys = (await server.call('GET', `/users/${bob.id}/ssh-keys`, { auth: bob.auth })).json as { id: number; content: string }[];
    expect(keys).toMatchObject([{ content: line }]);
    expect(await (await get('/~my/ssh-keys')).text()).toContain('bob@laptop');
    const twice = await post('/~my/ssh-keys', { content: line });
    expect(twice.status).toBe(400);
    expect(await twice.text()).toContain('This key is already in use');
    const invalid = await post('/~my/ssh-keys', { content: 'ssh-rsa not-a-key' });
    expect(invalid.status).toBe(400);
    const html = await invalid.text();
    expect(html).toContain('Invalid OpenSSH public key');
    expect(html).toContain('ssh-rsa not-a-key</textarea>');
    // /~my changes one's own keys only, even for an administrator
    const admin = await signInByFetch(server, ADMIN.name, ADMIN.password);
    expect((await post('/~my/ssh-keys/delete', { id: String(keys[0].id) }, admin)).status).toBe(404);
    expect((await server.call('GET', `/users/${bob.id}/ssh-keys`, { auth: bob.auth })).json).toHaveLength(1);
    expect((await post('/~my/ssh-keys/delete', { id: String(keys[0].id) })).status).toBe(303);
    expect((await server.call('GET', `/users/${bob.id}/ssh-keys`, { auth: bob.auth })).json).toEqual([]);
  });

  it('lists saved queries of every kind and deletes them through the personalizations', async () => {
    const projectId = await givenProject(server, { name: 'queried' });
    await server.call('POST', '/user-authorizations', { body: { projectId, userId: bob.id, roleId: 1 } });
    await server.call('POST', `/users/${bob.id}/queries-and-watches`, {
      auth: bob.auth,
      body: { projectQueries: [{ name: 'Mine', query: 'owned by me' }], buildQueries: [{ name: 'Failed', query: 'failed' }] },
    });
    for (const [resource, name] of [
      ['issue', 'Open bugs'],
      ['pull-request', 'Open mine'],
      ['build', 'Nightly'],
      ['commit', 'Recent'],
      ['code-comment', 'Unresolved'],
    ]) {
      const res = await server.call('POST', `/${resource}-query-personalizations`, {
        auth: bob.auth,
        body: { projectId, userId: bob.id, queries: [{ name, query: null }] },
      });
      expect(res.status).toBe(200);
    }
    const html = await (await get('/~my/saved-queries')).text();
    for (const text of ['Mine', 'Failed', 'Open bugs', 'Open mine', 'Nightly', 'Recent', 'Unresolved', 'Pull requests of queried'])
      expect(html).toContain(text);
    expect(html).toContain(`href="/~projects?${new URLSearchParams({ query: 'owned by me' })}"`);

    const deleted = await post('/~saved-queries', {
      op: 'delete',
      kind: 'codeComment',
      project: String(projectId),
      name: 'Unresolved',
      return: '/~my/saved-queries',
    });
    expect(deleted.status).toBe(303);
    expect(deleted.headers.get('location')).toBe('/~my/saved-queries');
    const left = (await server.call('GET', `/users/${bob.id}/project-code-comment-query-personalizations`, { auth: bob.auth })).json as {
      queries: unknown[];
    }[];
    expect(left.flatMap((p) => p.queries)).toEqual([]);
    expect((await post('/~saved-queries', { op: 'delete', kind: 'build', project: '', name: 'Failed', return: '/~my/saved-queries' })).status).toBe(303);
    expect((await server.call('GET', `/users/${bob.id}/queries-and-watches`, { auth: bob.auth })).json).toMatchObject({ buildQueries: [] });
    expect(await (await get('/~my/saved-queries')).text()).not.toContain('Unresolved');
  });

  it('lists watched issues and toggles a watch', async () => {
    const projectId = await givenProject(server, { name: 'watched' });
    await server.call('POST', '/user-authorizations', { body: { projectId, userId: bob.id, roleId: 1 } });
    const issueId = (await server.call('POST', '/issues', { body: { projectId, title: 'Crash on start' } })).json as number;
    expect(typeof issueId).toBe('number');
    const watchId = (await server.call('POST', '/issue-watches', { auth: bob.auth, body: { issueId, userId: bob.id, watching: true } })).json as number;
    expect(typeof watchId).toBe('number');
    const html = await (await get('/~my/watches')).text();
    expect(html).toContain('watched#1 Crash on start');
    expect(html).toContain('href="/watched/~issues/1"');
    expect((await post('/~my/watches', { kind: 'issue', id: String(watchId), watching: 'false' })).status).toBe(303);
    expect((await server.call('GET', `/issue-watches/${watchId}`, { auth: bob.auth })).json).toMatchObject({ watching: false });
    expect(await (await get('/~my/watches')).text()).toContain('ignored');
    const bad = await post('/~my/watches', { kind: 'repo', id: String(watchId), watching: 'true' });
    expect(bad.status).toBe(400);
  });
});
