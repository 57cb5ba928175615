import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { givenRepo, givenUsers, removeWorkTrees, type TestUser } from '../helpers/fixtures.js';
import { cookiesOf, csrfTokenOf, signInByFetch } from '../helpers/browser.js';
import { shippedBytes } from '../../src/web/assets.js';
import { ADMIN, git, gitUrl, startTestServer, type TestServer } from '../helpers/server.js';

const XSS_README = [
  '# Safe title',
  '',
  '<script>window.pwned = 1</script>',
  '<img src="x" onerror="window.pwned = 2">',
  '',
  '[click](javascript:window.pwned=3)',
  '',
  '<a href="https://example.com" onclick="window.pwned=4">link</a>',
  '',
].join('\n');

/** The web UI over plain HTTP: sessions, CSRF, permissions, routing next to git and the API. */
describe('web pages', () => {
  let server: TestServer;
  let alice: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    [alice] = await givenUsers(server, 'alice');
    await givenRepo(server, 'app', { files: { 'README.md': XSS_README, 'src/main.ts': 'export {};\n' } });
  });
  afterAll(async () => {
    await removeWorkTrees();
    await server?.close();
  });

  const get = (path: string, cookie?: string) => fetch(`${server.url}${path}`, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  const post = (path: string, fields: Record<string, string>, cookie?: string) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie && { cookie }) },
      body: new URLSearchParams(fields).toString(),
    });

  it('redirects anonymous visitors to the sign-in page with the way back', async () => {
    const response = await get('/app?x=1');
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe(`/~login?redirect=${encodeURIComponent('/app?x=1')}`);
  });

  it('answers wrong credentials sent with a page request with the 401 page, not a sign-in redirect the sign-in page would refuse too', async () => {
    for (const path of ['/app', '/~login']) {
      const response = await fetch(`${server.url}${path}`, { redirect: 'manual', headers: { authorization: 'Bearer not-a-token' } });
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toContain('text/html');
      expect(await response.text()).toContain('Invalid or expired access token');
    }
  });

  it("refuses wrong credentials with the API's message and signs in with good ones", async () => {
    const form = await get('/~login');
    const preSession = cookiesOf(form);
    const csrf = csrfTokenOf(await form.text());
    const refused = await post('/~login', { _csrf: csrf, name: 'alice', password: 'wrong' }, preSession);
    expect(refused.status).toBe(401);
    expect(await refused.text()).toContain('Invalid credentials');

    const accepted = await post('/~login?redirect=%2F~projects', { _csrf: csrf, name: 'alice', password: alice.password }, preSession);
    expect(accepted.status).toBe(303);
    expect(accepted.headers.get('location')).toBe('/~projects');
    const setCookie = accepted.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/gitloom_session=/);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).not.toMatch(/Secure/i);
    const dashboard = await get('/', cookiesOf(accepted));
    expect(dashboard.status).toBe(200);
    expect(await dashboard.text()).toContain('<title>Dashboard · Gitloom</title>');
  });

  it('marks the session cookie Secure behind an https proxy and never redirects off-site', async () => {
    const form = await fetch(`${server.url}/~login`, { headers: { 'x-forwarded-proto': 'https' } });
    expect(form.headers.get('set-cookie')).toMatch(/Secure/);
    const { cookie } = await signInByFetch(server, 'alice', alice.password);
    const away = await get('/~login?redirect=%2F%2Fevil.example', cookie);
    expect(away.headers.get('location')).toBe('/');
  });

  it('accepts an access token pasted as the password', async () => {
    const token = await server.call('POST', `/users/${alice.id}/access-tokens`, { body: { description: 'web' }, auth: alice.auth });
    expect(token.status).toBe(200);
    const { cookie } = await signInByFetch(server, 'anything', token.text);
    expect((await get('/', cookie)).status).toBe(200);
  });

  it('refuses a POST without the CSRF token with a 403 page', async () => {
    const { cookie } = await signInByFetch(server, 'alice', alice.password);
    const response = await post('/~logout', {}, cookie);
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(await response.text()).toContain('CSRF');
    const wrong = await post('/~logout', { _csrf: 'not-the-token' }, cookie);
    expect(wrong.status).toBe(403);
    expect((await get('/', cookie)).status).toBe(200);
  });

  it('ends the session server-side on sign-out: the old cookie no longer works', async () => {
    const { cookie, csrfToken } = await signInByFetch(server, 'alice', alice.password);
    const confirm = await get('/~logout', cookie);
    expect(confirm.status).toBe(200);
    expect(await confirm.text()).toContain('Sign out alice');
    expect((await get('/', cookie)).status).toBe(200);
    const out = await post('/~logout', { _csrf: csrfToken }, cookie);
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/~login');
    const again = await get('/', cookie);
    expect(again.status).toBe(302);
    expect(again.headers.get('location')).toMatch(/^\/~login/);
  });

  it('answers 404 for a project the user cannot see, and for an unknown one', async () => {
    const { cookie } = await signInByFetch(server, 'alice', alice.password);
    const hidden = await get('/app', cookie);
    expect(hidden.status).toBe(404);
    const html = await hidden.text();
    expect(html).toContain('Project not found: app');
    const missing = await get('/no/such/project', cookie);
    expect(missing.status).toBe(404);
    expect((await get('/app/~no-such-page', cookie)).status).toBe(404);
  });

  it('renders the README sanitized: no script, no event handler, no javascript: URL', async () => {
    const { cookie } = await signInByFetch(server, ADMIN.name, ADMIN.password);
    const response = await get('/app', cookie);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await response.text();
    expect(html).toContain('<h1>Safe title</h1>');
    const readme = html.slice(html.indexOf('class="markdown"'));
    expect(readme).not.toMatch(/<script/i);
    expect(readme).not.toMatch(/onerror|onclick/i);
    expect(readme).not.toMatch(/href="javascript:/i);
    expect(readme).toContain('<a href="https://example.com" rel="nofollow noopener">link</a>');
    expect(html).toContain('src/');
    expect(html).toContain(gitUrl(server, 'app'));
    expect(html).toContain('1 branch');
  });

  it('shows push instructions for an empty repository', async () => {
    await server.call('POST', '/projects', { body: { name: 'empty' } });
    const { cookie } = await signInByFetch(server, ADMIN.name, ADMIN.password);
    const html = await (await get('/empty', cookie)).text();
    expect(html).toContain('This repository is empty');
    expect(html).toContain(`git remote add origin ${gitUrl(server, 'empty')}`);
  });

  it('lists projects with the project query language and reports a bad query', async () => {
    const { cookie } = await signInByFetch(server, ADMIN.name, ADMIN.password);
    const found = await (await get(`/~projects?query=${encodeURIComponent('"Name" is "app"')}`, cookie)).text();
    expect(found).toContain('href="/app"');
    expect(found).not.toContain('href="/empty"');
    const bad = await get(`/~projects?query=${encodeURIComponent('"Nope" is')}`, cookie);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('role="alert"');
  });

  it('leaves git smart HTTP and the API where they were', async () => {
    const clone = await import('node:fs/promises').then((fs) => fs.mkdtemp(`${server.dataDir}/clone-`));
    await git(clone, ['clone', '-q', gitUrl(server, 'app.git', ADMIN), '.']);
    expect(await git(clone, ['log', '--format=%s'])).toContain('initial commit');
    const api = await get('/~api/no-such-resource');
    expect(api.headers.get('content-type')).toContain('application/problem+json');
  });

  it('serves the stylesheet at a hashed URL with a long cache', async () => {
    const html = await (await get('/~login')).text();
    const href = /href="(\/~assets\/site\.[0-9a-f]{12}\.css)"/.exec(html)?.[1];
    expect(href).toBeDefined();
    const css = await get(href!);
    expect(css.status).toBe(200);
    expect(css.headers.get('cache-control')).toContain('immutable');
    expect(await css.text()).toContain('prefers-color-scheme: dark');
    expect(shippedBytes().js).toBeLessThan(60 * 1024);
  });

  it('shows the dashboard of a signed-in user with their projects', async () => {
    const { cookie } = await signInByFetch(server, ADMIN.name, ADMIN.password);
    const html = await (await get('/', cookie)).text();
    expect(html).toContain('<h2 id="my-projects">My projects</h2>');
    expect(html).toContain('href="/app"');
    expect(html).toContain('Nothing to review.');
  });

  it('lets anonymous visitors in when anonymous access is on, still hiding private projects', async () => {
    const setting = await server.call('GET', '/settings/security');
    expect((await server.call('POST', '/settings/security', { body: { ...setting.json, enableAnonymousAccess: true } })).status).toBe(200);
    try {
      const list = await get('/~projects');
      expect(list.status).toBe(200);
      expect(await list.text()).toContain('href="/~login?redirect=%2F%7Eprojects"');
      expect((await get('/app')).status).toBe(404);
      expect((await get('/')).headers.get('location')).toBe('/~projects');
    } finally {
      await server.call('POST', '/settings/security', { body: { ...setting.json, enableAnonymousAccess: false } });
    }
  });
});
