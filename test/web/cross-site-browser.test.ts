import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserTests } from '../helpers/browser.js';
import { givenUsers, type TestUser } from '../helpers/fixtures.js';
import { basic } from '../helpers/server.js';

/**
 * Cross-site requests in Chromium (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input): a page of another site posts a text/plain
 * form to the API while the browser holds the victim's Basic credentials for the server.
 */
describe('cross-site requests in a browser', () => {
  let victim: TestUser;
  let evil: http.Server;
  /** The other site: `localhost` (the server is `127.0.0.1`, another site to the browser). */
  let evilUrl = '';
  const web = browserTests(async (server) => {
    [victim] = await givenUsers(server, 'victim');
  });

  beforeAll(async () => {
    evil = http.createServer((_request, response) => {
      const action = `${web.server.url}/~api/users/${victim.id}/password`;
      response.setHeader('content-type', 'text/html; charset=utf-8');
      response.end(`<!doctype html><title>Win a prize</title>
        <form method="post" enctype="text/plain" action="${action}"><input type="hidden" name="pwned" value="yes"></form>
        <script>document.forms[0].submit()</script>`);
    });
    await new Promise<void>((resolve) => evil.listen(0, 'localhost', resolve));
    evilUrl = `http://localhost:${(evil.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    await new Promise((resolve) => evil?.close(resolve));
  });

  const signsIn = async (password: string) => (await web.server.call('GET', '/users/me', { auth: basic('victim', password) })).status === 200;
  /** A browser that sends the victim's Basic credentials with every request, as one that once answered a Basic prompt does. */
  const victimBrowser = async () => (await web.newContext({ extraHTTPHeaders: { authorization: basic('victim', victim.password) } })).newPage();

  it('refuses the forged form post; the password stays', async () => {
    const page = await victimBrowser();
    const [answer] = await Promise.all([page.waitForResponse((response) => response.url().includes('/~api/users/')), page.goto(evilUrl)]);
    expect(answer.status()).toBe(403);
    expect(await answer.json()).toMatchObject({ status: 403, code: 'GITLOOM_ERR_CROSS_SITE' });
    expect(await signsIn(victim.password)).toBe(true);
    expect(await signsIn('pwned=yes')).toBe(false);
  });

  it('control: a script on a page of the server itself changes the password through the API', async () => {
    const page = await victimBrowser();
    await page.goto(`${web.server.url}/~login`);
    const status = await page.evaluate(
      async (path) => (await fetch(path, { method: 'POST', body: 'changed-in-browser', headers: { 'content-type': 'text/plain' } })).status,
      `/~api/users/${victim.id}/password`,
    );
    expect(status).toBe(200);
    expect(await signsIn('changed-in-browser')).toBe(true);
    victim.password = 'changed-in-browser';
  });

  it('never prompts for Basic credentials: a 401 to the browser has no challenge', async () => {
    const page = await (await web.newContext()).newPage();
    const answer = await page.goto(`${web.server.url}/~api/users/me`);
    expect(answer?.status()).toBe(401);
    expect(answer?.headers()['www-authenticate']).toBeUndefined();
    // control: the same request from a script is challenged
    const script = await fetch(`${web.server.url}/~api/users/me`);
    expect(script.status).toBe(401);
    expect(script.headers.get('www-authenticate')).toBe('Basic realm="Gitloom"');
  });
});
