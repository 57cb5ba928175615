import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookiesOf, csrfTokenOf, signInByFetch, type WebSession } from '../helpers/browser.js';
import { givenProject, givenUsers, grantRole, type TestUser } from '../helpers/fixtures.js';
import { ADMIN, basic, startTestServer, type TestServer } from '../helpers/server.js';

/** `/~my/sessions`, session lifetimes, and tokens made on `/~my/access-tokens` (docs/compatibility.md#gitloom-differs-sessions-and-tokens). */
describe('web sessions and token limits on the pages', () => {
  let server: TestServer;
  let erin: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    [erin] = await givenUsers(server, 'erin');
  });
  afterAll(async () => {
    await server?.close();
  });

  const page = (session: WebSession, path: string) => fetch(`${server.url}${path}`, { redirect: 'manual', headers: { cookie: session.cookie } });
  const post = (session: WebSession, path: string, fields: Record<string, string>) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      body: new URLSearchParams({ _csrf: session.csrfToken, ...fields }).toString(),
    });
  const signedIn = async (session: WebSession) => (await page(session, '/~my')).status === 200;
  const signIn = (as: 'firefox' | 'curl') =>
    // each "browser" has its own User-Agent: the list names them
    signInWithAgent(as === 'firefox' ? 'Mozilla/5.0 Firefox/140.0' : 'curl/8.5.0');
  async function signInWithAgent(userAgent: string): Promise<WebSession> {
    const form = await fetch(`${server.url}/~login`, { headers: { 'user-agent': userAgent } });
    const response = await fetch(`${server.url}/~login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: cookiesOf(form), 'content-type': 'application/x-www-form-urlencoded', 'user-agent': userAgent },
      body: new URLSearchParams({ _csrf: csrfTokenOf(await form.text()), name: erin.name, password: erin.password }).toString(),
    });
    expect(response.status).toBe(303);
    const cookie = cookiesOf(response);
    const home = await fetch(`${server.url}/`, { headers: { cookie, 'user-agent': userAgent } });
    return { cookie, csrfToken: csrfTokenOf(await home.text()) };
  }

  it('lists the sessions with their browser and address, and ends another one', async () => {
    const here = await signIn('firefox');
    const there = await signIn('curl');
    const html = await (await page(here, '/~my/sessions')).text();
    expect(html).toContain('Mozilla/5.0 Firefox/140.0');
    expect(html).toContain('curl/8.5.0');
    expect(html).toContain('this session');
    const ids = [...html.matchAll(/name="id" value="([0-9a-f]{16})"/g)].map((m) => m[1]);
    // only the other session has an end button
    expect(ids).toHaveLength(1);
    expect((await post(here, '/~my/sessions/end', { id: ids[0] })).status).toBe(303);
    expect(await signedIn(there)).toBe(false);
    expect(await signedIn(here)).toBe(true);
    // an unknown id is refused and ends nothing
    const refused = await post(here, '/~my/sessions/end', { id: '0123456789abcdef' });
    expect(refused.status).toBe(404);
    expect(await signedIn(here)).toBe(true);
  });

  it('ends all other sessions at once, and nobody else’s', async () => {
    const here = await signIn('firefox');
    const others = [await signIn('curl'), await signIn('curl')];
    const admin = await signInByFetch(server, ADMIN.name, ADMIN.password);
    expect((await post(here, '/~my/sessions/end-others', {})).status).toBe(303);
    for (const other of others) expect(await signedIn(other)).toBe(false);
    expect(await signedIn(here)).toBe(true);
    expect(await signedIn(admin)).toBe(true);
  });

  it('a session lasts the security setting’s sessionTimeoutDays', async () => {
    const adminAuth = basic(ADMIN.name, ADMIN.password);
    expect((await server.call('POST', '/settings/security', { body: { sessionTimeoutDays: 3 }, auth: adminAuth })).status).toBe(200);
    try {
      const form = await fetch(`${server.url}/~login`);
      const response = await fetch(`${server.url}/~login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: cookiesOf(form), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: csrfTokenOf(await form.text()), name: erin.name, password: erin.password }).toString(),
      });
      const sessionCookie = response.headers.getSetCookie().find((c) => c.startsWith('gitloom_session='));
      const maxAge = Number(/Max-Age=(\d+)/i.exec(sessionCookie ?? '')?.[1]);
      expect(maxAge).toBeGreaterThan(3 * 86_400 - 60);
      expect(maxAge).toBeLessThanOrEqual(3 * 86_400);
    } finally {
      await server.call('POST', '/settings/security', { body: { sessionTimeoutDays: 14 }, auth: adminAuth });
    }
  });

  it('creates a read-only token limited to a project from the page; such a token cannot sign in to the pages', async () => {
    const projectId = await givenProject(server, { name: 'erins' });
    await grantRole(server, projectId, erin.id, 'Code Reader');
    await givenProject(server, { name: 'elsewhere' });
    const here = await signIn('firefox');
    const created = await post(here, '/~my/access-tokens', { description: 'deploy', readOnly: 'on', projects: 'erins' });
    expect(created.status).toBe(200);
    const token = /id="new-token" value="([A-Za-z0-9]{40})"/.exec(await created.text())?.[1];
    expect(token).toBeDefined();
    const listing = await (await page(here, '/~my/access-tokens')).text();
    expect(listing).toContain('read-only');
    expect(listing).toContain('only erins');
    const listed = await server.call('GET', `/users/${erin.id}/access-tokens`, { auth: erin.auth });
    expect(listed.json[0]).toMatchObject({ readOnly: true, projectIds: [projectId] });

    const unknown = await post(here, '/~my/access-tokens', { description: 'bad', projects: 'elsewhere' });
    expect(unknown.status).toBe(404);
    expect((await server.call('GET', `/users/${erin.id}/access-tokens`, { auth: erin.auth })).json).toHaveLength(1);

    const form = await fetch(`${server.url}/~login`);
    const signInWithToken = await fetch(`${server.url}/~login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: cookiesOf(form), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrfTokenOf(await form.text()), name: erin.name, password: token! }).toString(),
    });
    expect(signInWithToken.status).toBe(403);
    expect(await signInWithToken.text()).toContain('cannot sign in to the pages');
  });
});
