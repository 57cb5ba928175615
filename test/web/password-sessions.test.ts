import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { givenUsers, type TestUser } from '../helpers/fixtures.js';
import { ADMIN, basic, startTestServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

/** A password change ends the user's other web sessions (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input); access tokens stay. */
describe('password changes and web sessions', () => {
  let server: TestServer;
  let bob: TestUser;
  let bobToken: string;

  beforeAll(async () => {
    server = await startTestServer();
    [bob] = await givenUsers(server, 'bob');
    const token = await server.call('POST', `/users/${bob.id}/access-tokens`, { body: { description: 'ci' }, auth: bob.auth });
    expect(token.status).toBe(200);
    bobToken = token.text;
  });
  afterAll(async () => {
    await server?.close();
  });

  /** Whether a session's next page load is still signed in (its personal settings page opens). */
  const signedIn = async (session: WebSession) => {
    const response = await fetch(`${server.url}/~my`, { redirect: 'manual', headers: { cookie: session.cookie } });
    if (response.status === 302) {
      expect(response.headers.get('location')).toMatch(/^\/~login\?/);
      return false;
    }
    expect(response.status).toBe(200);
    return true;
  };
  const post = (session: WebSession, path: string, fields: Record<string, string>) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      body: new URLSearchParams({ _csrf: session.csrfToken, ...fields }).toString(),
    });
  const tokenWorks = async () => (await server.call('GET', '/users/me', { auth: `Bearer ${bobToken}` })).json?.id === bob.id;
  /** Signs bob in twice, as from two browsers; both are signed in. */
  const twoSessions = async () => {
    const sessions = [await signInByFetch(server, 'bob', bob.password), await signInByFetch(server, 'bob', bob.password)];
    for (const session of sessions) expect(await signedIn(session)).toBe(true);
    return sessions;
  };

  it('a change in My settings ends the other session; the one it was made from stays', async () => {
    const [here, elsewhere] = await twoSessions();
    // control: a refused change ends nothing
    const refused = await post(here, '/~my/password', { current: 'wrong', password: 'bob-2', confirm: 'bob-2' });
    expect(refused.status).toBe(400);
    expect(await signedIn(elsewhere)).toBe(true);

    const changed = await post(here, '/~my/password', { current: bob.password, password: 'bob-2', confirm: 'bob-2' });
    expect(changed.status).toBe(200);
    expect(await changed.text()).toContain('Password changed.');
    bob.password = 'bob-2';
    expect(await signedIn(elsewhere)).toBe(false);
    expect(await signedIn(here)).toBe(true);
    // the session that changed it goes on working: its forms still post
    expect((await post(here, '/~my/profile', { name: 'bob', fullName: 'Bob After' })).status).toBe(303);
    expect(await tokenWorks()).toBe(true);
  });

  it('a change through the API by the user ends every web session', async () => {
    const sessions = await twoSessions();
    const res = await server.call('POST', `/users/${bob.id}/password`, { text: 'bob-3', auth: basic('bob', bob.password) });
    expect(res.status).toBe(200);
    bob.password = 'bob-3';
    for (const session of sessions) expect(await signedIn(session)).toBe(false);
    expect(await tokenWorks()).toBe(true);
    // control: signing in again with the new password works
    expect(await signedIn(await signInByFetch(server, 'bob', 'bob-3'))).toBe(true);
  });

  it("an administrator's reset through the API ends all of the user's sessions, and no one else's", async () => {
    const sessions = await twoSessions();
    const admin = await signInByFetch(server, ADMIN.name, ADMIN.password);
    const res = await server.call('POST', `/users/${bob.id}/password`, { text: 'bob-4' });
    expect(res.status).toBe(200);
    bob.password = 'bob-4';
    for (const session of sessions) expect(await signedIn(session)).toBe(false);
    expect(await signedIn(admin)).toBe(true);
    expect(await tokenWorks()).toBe(true);
  });

  it("an administrator's reset in the administration pages ends all of the user's sessions; the administrator stays", async () => {
    const sessions = await twoSessions();
    const admin = await signInByFetch(server, ADMIN.name, ADMIN.password);
    const res = await post(admin, `/~administration/users/${bob.id}/password`, { password: 'bob-5' });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('Password changed.');
    bob.password = 'bob-5';
    for (const session of sessions) expect(await signedIn(session)).toBe(false);
    expect(await signedIn(admin)).toBe(true);
    expect(await tokenWorks()).toBe(true);
  });

  it('an administrator changing their own password there keeps the session it was made from', async () => {
    const [here, elsewhere] = [await signInByFetch(server, ADMIN.name, ADMIN.password), await signInByFetch(server, ADMIN.name, ADMIN.password)];
    expect((await post(here, '/~administration/users/1/password', { password: ADMIN.password })).status).toBe(200);
    expect(await signedIn(elsewhere)).toBe(false);
    expect(await signedIn(here)).toBe(true);
  });

  it("a reset from the command line ends all of the user's sessions", async () => {
    const sessions = await twoSessions();
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'admin', 'reset-password', 'bob', '--password', 'bob-6'], {
      cwd: root,
      env: { ...process.env, GITLOOM_DATA_DIR: server.dataDir, GITLOOM_DATABASE_URL: server.server.services.config.databaseUrl ?? '' },
    });
    expect(stdout).toContain("Password of 'bob' changed");
    bob.password = 'bob-6';
    for (const session of sessions) expect(await signedIn(session)).toBe(false);
    expect(await tokenWorks()).toBe(true);
    expect(await signedIn(await signInByFetch(server, 'bob', 'bob-6'))).toBe(true);
  }, 60_000);
});
