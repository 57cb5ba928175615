import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { givenRepo, removeWorkTrees } from '../helpers/fixtures.js';
import { basic, startTestServer, type TestServer } from '../helpers/server.js';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
}

/** Sends a request with the path and headers exactly as written (fetch sets Host itself). */
function exact(server: TestServer, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        let json: unknown;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The headers Chromium sends with a form post from a page of another site. */
const EVIL_FORM = { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };

/** Cross-site requests (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input): API writes from other sites, Basic challenges to browsers. */
describe('cross-site requests', () => {
  let server: TestServer;
  let victim: Awaited<ReturnType<TestServer['createUser']>>;

  beforeAll(async () => {
    server = await startTestServer();
    victim = await server.createUser('victim', 'victim-old');
    await givenRepo(server, 'shared');
  });
  afterAll(async () => {
    await server?.close();
    await removeWorkTrees();
  });

  const signsIn = async (password: string) => (await server.call('GET', '/users/me', { auth: basic('victim', password) })).status === 200;
  /** Changes the victim's password with its own Basic credentials, as a text/plain form post would. */
  const changePassword = (password: string, headers: Record<string, string>, current = victim.password) =>
    server.call('POST', `/users/${victim.id}/password`, { text: password, auth: basic('victim', current), headers });

  function expectCrossSite(res: { status: number; headers: Headers | http.IncomingHttpHeaders; json: any }) {
    expect(res.status).toBe(403);
    const type = res.headers instanceof Headers ? res.headers.get('content-type') : res.headers['content-type'];
    expect(type).toMatch(/^application\/problem\+json/);
    expect(res.json).toMatchObject({
      status: 403,
      title: 'Forbidden',
      code: 'GITLOOM_ERR_CROSS_SITE',
      detail: expect.stringMatching(/^Cross-site request refused/),
    });
  }

  describe('API writes', () => {
    it('refuses a text/plain form post from another site carrying valid Basic credentials; the password stays', async () => {
      expectCrossSite(await changePassword('pwned', EVIL_FORM));
      expect(await signsIn('victim-old')).toBe(true);
      expect(await signsIn('pwned')).toBe(false);
    });

    it('refuses on Origin alone, on Sec-Fetch-Site alone, for same-site pages and an opaque origin', async () => {
      for (const headers of [
        { origin: 'http://evil.example' },
        { origin: 'null' },
        { origin: `${server.url}.evil.example` },
        { origin: server.url.replace('http:', 'https:') },
        { 'sec-fetch-site': 'cross-site' },
        // another port or subdomain of the same site is another origin
        { 'sec-fetch-site': 'same-site' },
        { origin: server.url, 'sec-fetch-site': 'cross-site' },
      ] as Record<string, string>[]) {
        expectCrossSite(await changePassword('pwned', headers));
      }
      expect(await signsIn('victim-old')).toBe(true);
    });

    it('refuses before checking credentials: a forged request never counts as a failed sign-in', async () => {
      for (let i = 0; i < 12; i++) expectCrossSite(await changePassword('pwned', EVIL_FORM, 'guess'));
      // twelve wrong passwords would have been limited (429) had they been checked
      expect(await signsIn('victim-old')).toBe(true);
    });

    it('refuses every write method and JSON bodies too, also through an encoded /~api path', async () => {
      expectCrossSite(await server.call('POST', '/projects', { body: { name: 'forged' }, auth: victim.auth, headers: EVIL_FORM }));
      expectCrossSite(await server.call('DELETE', `/users/${victim.id}`, { headers: EVIL_FORM }));
      expectCrossSite(
        await exact(
          server,
          'POST',
          `/%7Eapi/users/${victim.id}/password`,
          {
            ...EVIL_FORM,
            authorization: victim.auth,
            'content-type': 'text/plain',
          },
          'pwned',
        ),
      );
      expectCrossSite(await server.call('POST', '/trigger-job?project=x&job=y&access-token=z', { auth: null, headers: EVIL_FORM }));
      expect((await server.call('GET', '/projects?count=100')).json.map((p: { name: string }) => p.name)).not.toContain('forged');
      expect((await server.call('GET', `/users/${victim.id}`)).status).toBe(200);
      expect(await signsIn('victim-old')).toBe(true);
    });

    it('serves reads from any origin (no CORS: the page cannot read them)', async () => {
      const res = await server.call('GET', '/users/me', { auth: victim.auth, headers: EVIL_FORM });
      expect(res.status).toBe(200);
      expect(res.json.id).toBe(victim.id);
    });

    it('control: a script (no Origin, no Fetch Metadata) changes the password', async () => {
      expect((await changePassword('victim-2', {})).status).toBe(200);
      victim.password = 'victim-2';
      expect(await signsIn('victim-2')).toBe(true);
      expect(await signsIn('victim-old')).toBe(false);
      // the encoded path refused above names the same route
      const encoded = await exact(
        server,
        'POST',
        `/%7Eapi/users/${victim.id}/password`,
        {
          authorization: basic('victim', victim.password),
          'content-type': 'text/plain',
        },
        'victim-2b',
      );
      expect(encoded.status, encoded.text).toBe(200);
      victim.password = 'victim-2b';
      expect(await signsIn('victim-2b')).toBe(true);
    });

    it('control: a page of this server (its own Origin, same-origin) changes the password', async () => {
      const res = await changePassword('victim-3', { origin: server.url, 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' });
      expect(res.status, res.text).toBe(200);
      victim.password = 'victim-3';
      expect(await signsIn('victim-3')).toBe(true);
      // a request typed by the user (Sec-Fetch-Site: none) is no other site's either
      expect((await changePassword('victim-4', { 'sec-fetch-site': 'none' })).status).toBe(200);
      victim.password = 'victim-4';
      expect(await signsIn('victim-4')).toBe(true);
    });

    it('control: behind a reverse proxy, the configured server URL and the Host the request names are this server', async () => {
      const { config } = server.server.services;
      const own = config.serverUrl;
      config.serverUrl = 'https://forge.example.com';
      try {
        const body = 'victim-5';
        const viaConfig = await exact(
          server,
          'POST',
          `/~api/users/${victim.id}/password`,
          {
            origin: 'https://forge.example.com',
            'sec-fetch-site': 'same-origin',
            authorization: basic('victim', victim.password),
            'content-type': 'text/plain',
          },
          body,
        );
        expect(viaConfig.status, viaConfig.text).toBe(200);
        victim.password = body;
        // another name of the server, as the Host header says
        const viaHost = await exact(
          server,
          'POST',
          `/~api/users/${victim.id}/password`,
          {
            host: 'gitloom.internal:8080',
            origin: 'http://gitloom.internal:8080',
            authorization: basic('victim', victim.password),
            'content-type': 'text/plain',
          },
          'victim-6',
        );
        expect(viaHost.status, viaHost.text).toBe(200);
        victim.password = 'victim-6';
        // but not a name the request was not addressed to
        expectCrossSite(
          await exact(
            server,
            'POST',
            `/~api/users/${victim.id}/password`,
            {
              host: 'gitloom.internal:8080',
              origin: 'http://gitloom.internal:9090',
              authorization: basic('victim', victim.password),
              'content-type': 'text/plain',
            },
            'pwned',
          ),
        );
      } finally {
        config.serverUrl = own;
      }
      expect(await signsIn('victim-6')).toBe(true);
    });
  });

  describe('WWW-Authenticate: Basic only for clients that are not browsers', () => {
    it('a browser gets a 401 without a Basic challenge', async () => {
      for (const headers of [
        { 'sec-fetch-mode': 'navigate', 'sec-fetch-site': 'none', 'sec-fetch-dest': 'document' },
        { 'sec-fetch-mode': 'navigate' },
        { 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' },
        { 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'same-origin', 'sec-fetch-dest': 'empty' },
        { 'sec-fetch-site': 'same-origin' },
        { origin: server.url },
      ] as Record<string, string>[]) {
        // node:http, not fetch: Node's fetch replaces Sec-Fetch-Mode with its own
        const anonymous = await exact(server, 'GET', '/~api/users/me', headers);
        expect(anonymous.status).toBe(401);
        expect(anonymous.headers['www-authenticate'], JSON.stringify(headers)).toBeUndefined();
        expect(anonymous.json).toMatchObject({ status: 401, code: 'GITLOOM_ERR_UNAUTHORIZED' });
      }
      const wrong = await exact(server, 'GET', '/~api/users/me', {
        'sec-fetch-mode': 'navigate',
        'sec-fetch-site': 'none',
        authorization: basic('nobody', 'wrong'),
      });
      expect(wrong.status).toBe(401);
      expect(wrong.headers['www-authenticate']).toBeUndefined();
    });

    it('control: curl, scripts and API clients get the challenge', async () => {
      const curl = await exact(server, 'GET', '/~api/users/me', { 'user-agent': 'curl/8.5.0', accept: '*/*' });
      expect(curl.status).toBe(401);
      expect(curl.headers['www-authenticate']).toBe('Basic realm="Gitloom"');
      // Node's fetch sends `Sec-Fetch-Mode: cors` on its own: still a script
      const anonymous = await server.call('GET', '/users/me', { auth: null });
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toBe('Basic realm="Gitloom"');
      const wrong = await server.call('POST', `/users/${victim.id}/password`, { text: 'x', auth: basic('nobody', 'wrong') });
      expect(wrong.status).toBe(401);
      expect(wrong.headers.get('www-authenticate')).toBe('Basic realm="Gitloom"');
    });

    it('git over HTTP: git gets the challenge, a browser does not', async () => {
      const git = await exact(server, 'GET', '/shared.git/info/refs?service=git-receive-pack', { 'user-agent': 'git/2.43.0', 'git-protocol': 'version=2' });
      expect(git.status).toBe(401);
      expect(git.headers['www-authenticate']).toBe('Basic realm="Gitloom"');
      const browser = await exact(server, 'GET', '/shared.git/info/refs?service=git-receive-pack', { 'sec-fetch-mode': 'navigate', 'sec-fetch-site': 'none' });
      expect(browser.status).toBe(401);
      expect(browser.headers['www-authenticate']).toBeUndefined();
    });
  });
});
