import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookiesOf, csrfTokenOf, signInByFetch, type WebSession } from '../helpers/browser.js';
import { givenUsers, type TestUser } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { safeRedirect } from '../../src/web/page.js';

/**
 * Hostile redirect targets, as written in a link's query string (already URL-encoded): each
 * would send the browser to evil.example if taken as the Location.
 */
const HOSTILE = [
  '/%09/evil.example/x', // a tab: browsers drop it, leaving //evil.example/x
  '/%0a/evil.example/x', // a newline, dropped as well
  '/%0d%0a/evil.example/x',
  '%5C%5Cevil.example/x', // \\evil.example
  '/%5Cevil.example/x', // /\evil.example
  '%5C/evil.example/x',
  '//evil.example/x',
  '%2F%2Fevil.example%2Fx', // //evil.example/x, encoded
  '/..//evil.example/x',
  '/.%2E//evil.example/x',
  'https://evil.example/x',
  'https:evil.example/x',
  'HTTPS://evil.example',
  '%20//evil.example/x',
  'javascript:alert(document.domain)',
  'data:text/html,<script>alert(1)</script>',
  'http://gitloom.invalid@evil.example/',
];

/** Where a browser goes when it follows `location` from a page of `base`. */
const followed = (location: string, base: string) => new URL(location, base);

/** Redirect targets of the web pages (`?redirect=` of the sign-in page, a form's `return`). */
describe('web redirects stay on this server', () => {
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

  /** Signs in through the form with `?redirect=<encoded>`; returns the Location of the answer. */
  async function signInTo(encoded: string): Promise<string | null> {
    const form = await fetch(`${server.url}/~login?redirect=${encoded}`);
    const response = await fetch(`${server.url}/~login?redirect=${encoded}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: cookiesOf(form), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrfTokenOf(await form.text()), name: 'bob', password: bob.password }).toString(),
    });
    expect(response.status).toBe(303);
    return response.headers.get('location');
  }

  /** Opens the sign-in page already signed in: it redirects at once. */
  async function signedInTo(encoded: string): Promise<string | null> {
    const response = await fetch(`${server.url}/~login?redirect=${encoded}`, { redirect: 'manual', headers: { cookie: session.cookie } });
    expect(response.status).toBe(302);
    return response.headers.get('location');
  }

  it('sends every hostile target to /, on sign-in and when already signed in', async () => {
    for (const target of HOSTILE) {
      for (const location of [await signedInTo(target), await signInTo(target)]) {
        expect(location, target).toBe('/');
      }
    }
  });

  it('control: a path of this server is kept, with its query and fragment', async () => {
    for (const [target, expected] of [
      [encodeURIComponent('/some/page?x=1'), '/some/page?x=1'],
      [encodeURIComponent('/~pulls?query="Status" is "Open"#list'), '/~pulls?query=%22Status%22%20is%20%22Open%22#list'],
      ['/app/~files/main/docs', '/app/~files/main/docs'],
      // an encoded slash is a character of a path segment, not a host
      ['%252F%252Fevil.example', '/%2F%2Fevil.example'],
    ]) {
      for (const location of [await signedInTo(target), await signInTo(target)]) {
        expect(location, target).toBe(expected);
        expect(followed(location!, server.url).origin).toBe(new URL(server.url).origin);
      }
    }
  });

  it('the sign-in form carries only the checked target', async () => {
    const html = await (await fetch(`${server.url}/~login?redirect=/%09/evil.example/x`)).text();
    expect(html).toContain('action="/~login?redirect=%2F"');
    const kept = await (await fetch(`${server.url}/~login?redirect=${encodeURIComponent('/some/page?x=1')}`)).text();
    expect(kept).toContain(`action="/~login?redirect=${encodeURIComponent('/some/page?x=1').replace(/%20/g, '+')}"`);
  });

  it('a saved-query form returns to a path of this server only', async () => {
    const post = (back: string) =>
      fetch(`${server.url}/~saved-queries`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
        body: new URLSearchParams({ _csrf: session.csrfToken, op: 'delete', kind: 'issue', project: '', name: 'none', return: back }).toString(),
      });
    for (const back of ['/\t/evil.example/x', '/\\evil.example', '//evil.example', 'https://evil.example/']) {
      const response = await post(back);
      expect(response.status, back).toBe(303);
      expect(response.headers.get('location'), back).toBe('/');
    }
    // control
    const kept = await post('/~issues');
    expect(kept.status).toBe(303);
    expect(kept.headers.get('location')).toBe('/~issues');
  });

  it('safeRedirect, the one check of every redirect the pages send', () => {
    for (const target of HOSTILE.map(decodeURIComponent)) {
      expect(safeRedirect(target), JSON.stringify(target)).toBe('/');
      expect(followed(safeRedirect(target), 'https://forge.example/a/b').host).toBe('forge.example');
    }
    expect(safeRedirect(undefined)).toBe('/');
    expect(safeRedirect('')).toBe('/');
    expect(safeRedirect('/some/page?x=1')).toBe('/some/page?x=1');
    expect(safeRedirect('/ci/~builds/3#log')).toBe('/ci/~builds/3#log');
    expect(safeRedirect('relative/path')).toBe('/relative/path');
  });
});
