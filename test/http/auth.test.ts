import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, basic, startTestServer, type TestServer } from '../helpers/server.js';

/** Authentication (docs/compatibility.md#gitloom-differs-authentication, docs/compatibility.md#platform-authentication). */
describe('authentication', () => {
  let server: TestServer;
  let user: Awaited<ReturnType<TestServer['createUser']>>;
  let token: string;

  beforeAll(async () => {
    server = await startTestServer();
    user = await server.createUser('ivan', 'ivan-secret');
    token = (await server.call('POST', `/users/${user.id}/access-tokens`, { body: { description: 'auth test' }, auth: user.auth })).text;
  });
  afterAll(async () => {
    await server.close();
  });

  const me = async (auth: string | null, headers?: Record<string, string>) => server.call('GET', '/users/me', { auth, headers });

  function expectUnauthorized(res: { status: number; headers: Headers; json: any }) {
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="Gitloom"');
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.json).toMatchObject({ type: 'about:blank', title: 'Unauthorized', status: 401, detail: expect.any(String) });
  }

  describe('Basic', () => {
    it('accepts the login name and password, in any case of the name', async () => {
      expect((await me(basic('ivan', 'ivan-secret'))).json).toEqual({ id: user.id, name: 'ivan', fullName: 'ivan Full' });
      expect((await me(basic('IVAN', 'ivan-secret'))).json.id).toBe(user.id);
      expect((await me(basic(ADMIN.name, ADMIN.password))).json.id).toBe(1);
    });

    it('accepts an email address as the name, case-insensitively', async () => {
      expect((await me(basic('ivan@example.com', 'ivan-secret'))).json.id).toBe(user.id);
      expect((await me(basic('Ivan@EXAMPLE.com', 'ivan-secret'))).json.id).toBe(user.id);
      expect((await me(basic(ADMIN.email.toUpperCase(), ADMIN.password))).json.id).toBe(1);
    });

    it('trims the name and the secret', async () => {
      expect((await me(basic(' ivan ', ' ivan-secret '))).json.id).toBe(user.id);
    });

    it('accepts an access token as the password, whatever the name', async () => {
      expect((await me(basic('ivan', token))).json.id).toBe(user.id);
      expect((await me(basic('somebody-else', token))).json.id).toBe(user.id);
      expect((await me(basic(ADMIN.name, token))).json.id).toBe(user.id);
    });

    it('refuses a wrong password, an unknown user and built-in users with 401', async () => {
      expectUnauthorized(await me(basic('ivan', 'wrong')));
      expectUnauthorized(await me(basic('ivan', 'IVAN-SECRET')));
      expectUnauthorized(await me(basic('nobody', 'ivan-secret')));
      expectUnauthorized(await me(basic('unknown', 'x')));
      expectUnauthorized(await me(basic('gitloom', 'x')));
      expectUnauthorized(await me(basic('ivan@example.com', 'wrong')));
    });

    it('refuses malformed or incomplete credentials instead of treating them as anonymous', async () => {
      expectUnauthorized(await me('Basic !!!not-base64'));
      expectUnauthorized(await me(`Basic ${Buffer.from('no-colon').toString('base64')}`));
      expectUnauthorized(await me(basic('ivan', '')));
      expectUnauthorized(await me(basic('', 'ivan-secret')));
      expect((await me(basic('', token))).json.id).toBe(user.id);
    });

    it('refuses a wrong password even on endpoints anonymous callers may use', async () => {
      expectUnauthorized(await server.call('GET', '/projects', { auth: basic('ivan', 'wrong') }));
    });
  });

  describe('Bearer', () => {
    it('authenticates with an access token; the scheme is case-insensitive', async () => {
      expect((await me(`Bearer ${token}`)).json.id).toBe(user.id);
      expect((await me(`bearer ${token}`)).json.id).toBe(user.id);
      expect((await me(`basic ${Buffer.from(`ivan:ivan-secret`).toString('base64')}`)).json.id).toBe(user.id);
    });

    it('refuses unknown and expired tokens with 401', async () => {
      expectUnauthorized(await me('Bearer 0123456789012345678901234567890123456789'));
      expectUnauthorized(await me('Bearer short'));
      const expired = (await server.call('POST', `/users/${user.id}/access-tokens`, { body: { expireDate: '2000-01-01T00:00:00Z' }, auth: user.auth })).text;
      expect(expired).toMatch(/^[A-Za-z0-9]{40}$/);
      expectUnauthorized(await me(`Bearer ${expired}`));
      expectUnauthorized(await me(basic('ivan', expired)));
    });

    it('refuses an unsupported scheme with 401', async () => {
      expectUnauthorized(await me('Digest username="ivan"'));
    });
  });

  it('honours the OneDevAuthorization header', async () => {
    expect((await me(null, { OneDevAuthorization: basic('ivan', 'ivan-secret') })).json.id).toBe(user.id);
    expect((await me(null, { OneDevAuthorization: `Bearer ${token}` })).json.id).toBe(user.id);
    // it wins over Authorization
    expect((await me(basic(ADMIN.name, ADMIN.password), { OneDevAuthorization: `Bearer ${token}` })).json.id).toBe(user.id);
  });

  describe('anonymous access', () => {
    let publicId: number;
    let privateId: number;

    beforeAll(async () => {
      // a project everyone may read (default role "Code Reader", id 3) and a private one
      publicId = (await server.call('POST', '/projects', { body: { name: 'public', defaultRoleId: 3 } })).json;
      privateId = (await server.call('POST', '/projects', { body: { name: 'private' } })).json;
    });

    it('is off by default: every anonymous call is 401', async () => {
      expect((await server.call('GET', '/settings/security')).json.enableAnonymousAccess).toBe(false);
      expectUnauthorized(await server.call('GET', '/projects', { auth: null }));
      expectUnauthorized(await server.call('GET', `/projects/${publicId}`, { auth: null }));
      expectUnauthorized(await server.call('GET', '/users/me', { auth: null }));
      expectUnauthorized(await server.call('POST', '/projects', { body: { name: 'anon' }, auth: null }));
    });

    it('when on, allows anonymous GETs the permissions allow, never writes', async () => {
      expect((await server.call('POST', '/settings/security', { body: { enableAnonymousAccess: true } })).status).toBe(200);
      try {
        expect((await server.call('GET', '/settings/security')).json.enableAnonymousAccess).toBe(true);
        const list = await server.call('GET', '/projects', { auth: null });
        expect(list.status).toBe(200);
        expect(list.json.map((p: { name: string }) => p.name)).toEqual(['public']);
        expect((await server.call('GET', `/projects/${publicId}`, { auth: null })).json.name).toBe('public');
        expect((await server.call('GET', `/projects/${publicId}/path`, { auth: null })).text).toBe('public');
        expect((await server.call('GET', `/projects/${privateId}`, { auth: null })).status).toBe(404);
        expectUnauthorized(await server.call('GET', '/users/me', { auth: null }));
        expectUnauthorized(await server.call('GET', `/users/${user.id}`, { auth: null }));
        expectUnauthorized(await server.call('GET', '/users', { auth: null }));
        expectUnauthorized(await server.call('GET', '/settings/security', { auth: null }));
        expectUnauthorized(await server.call('POST', '/projects', { body: { name: 'anon' }, auth: null }));
        expectUnauthorized(await server.call('POST', `/projects/${publicId}`, { body: { description: 'defaced' }, auth: null }));
        expectUnauthorized(await server.call('DELETE', `/projects/${publicId}`, { auth: null }));
        expectUnauthorized(await server.call('POST', '/settings/security', { body: { enableAnonymousAccess: false }, auth: null }));
        expect((await server.call('GET', `/projects/${publicId}`)).json.description).toBeNull();
      } finally {
        expect((await server.call('POST', '/settings/security', { body: { enableAnonymousAccess: false } })).status).toBe(200);
      }
      expectUnauthorized(await server.call('GET', '/projects', { auth: null }));
    });

    it('the security setting is for administrators only', async () => {
      expect((await server.call('GET', '/settings/security', { auth: user.auth })).status).toBe(403);
      expect((await server.call('POST', '/settings/security', { body: { enableAnonymousAccess: true }, auth: user.auth })).status).toBe(403);
      expect((await server.call('POST', '/settings/security', { body: { enableAnonymousAcess: true } })).status).toBe(400);
      expect((await server.call('GET', '/settings/security')).json.enableAnonymousAccess).toBe(false);
    });
  });
});
