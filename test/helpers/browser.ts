/**
 * Browser and page-level helpers for the web UI tests (test/web): Debian's Chromium driven by
 * playwright-core (launch once per test file), the set-up a browser test file shares, a sign-in
 * through the real form, and the same sign-in over plain `fetch` for checks that need no browser.
 */
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { removeWorkTrees } from './fixtures.js';
import { startTestServer, type TestServer } from './server.js';

/** A phone's viewport: every page must fit it. */
const PHONE = { width: 360, height: 740 };
/** A desktop browser's viewport. */
export const DESKTOP = { width: 1280, height: 900 };

/** Launches headless Chromium (`/usr/bin/chromium`); close it in `afterAll`. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** What a browser test file works with (see {@link browserTests}); set once its tests run. */
export interface BrowserTests {
  readonly server: TestServer;
  /** A new browser context — a visitor of their own — at {@link PHONE} size unless `options` say; closed after the test. */
  newContext(options?: BrowserContextOptions): Promise<BrowserContext>;
  /** A page in a new context (see `newContext`), signed in through the form as `name`. */
  signedIn(name: string, password: string, options?: BrowserContextOptions): Promise<Page>;
}

/**
 * Registers the set-up every browser test file shares in the enclosing `describe`: a test
 * server and Chromium started together before its tests, then `given(server)` (the file's users
 * and repositories, within `timeoutMs` when given); each context a test opened through
 * `newContext` closed after that test; Chromium, the work trees and the server closed after the
 * last test.
 */
export function browserTests(given?: (server: TestServer) => Promise<void>, timeoutMs?: number): BrowserTests {
  let server: TestServer | undefined;
  let browser: Browser | undefined;
  const opened: BrowserContext[] = [];
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the browser tests have not started');
    return value;
  };
  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
    await given?.(server);
  }, timeoutMs);
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((context) => context.close()));
  });
  afterAll(async () => {
    await browser?.close();
    await removeWorkTrees();
    await server?.close();
  });
  const tests: BrowserTests = {
    get server() {
      return started(server);
    },
    async newContext(options = {}) {
      const context = await started(browser).newContext({ viewport: PHONE, ...options });
      opened.push(context);
      return context;
    },
    async signedIn(name, password, options) {
      const page = await (await tests.newContext(options)).newPage();
      await signIn(page, started(server), name, password);
      return page;
    },
  };
  return tests;
}

/** Signs in through the `/~login` form in a page and waits for the page after it. */
export async function signIn(page: Page, server: TestServer, name: string, password: string): Promise<void> {
  await page.goto(`${server.url}/~login`);
  await page.getByLabel('User name or email').fill(name);
  await page.getByLabel('Password or access token').fill(password);
  await Promise.all([page.waitForURL((url) => url.pathname !== '/~login'), page.getByRole('button', { name: 'Sign in' }).click()]);
}

/** A web session opened over plain HTTP: its Cookie header and CSRF token. */
export interface WebSession {
  cookie: string;
  csrfToken: string;
}

/** The value of the hidden `_csrf` field of a page's first form. */
export function csrfTokenOf(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error('no CSRF field in the page');
  return match[1];
}

/** `name=value` pairs of the Set-Cookie headers of a response, joined as a Cookie header. */
export function cookiesOf(response: Response): string {
  return response.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}

/**
 * Signs in over HTTP like a browser (GET the form for its pre-session CSRF cookie, POST the
 * credentials) and returns the session. Throws when the sign-in is refused.
 */
export async function signInByFetch(server: TestServer, name: string, password: string): Promise<WebSession> {
  const form = await fetch(`${server.url}/~login`);
  const preSession = cookiesOf(form);
  const response = await fetch(`${server.url}/~login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: preSession, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrfTokenOf(await form.text()), name, password }).toString(),
  });
  if (response.status !== 303) throw new Error(`sign-in of ${name}: ${response.status}`);
  const cookie = cookiesOf(response);
  const dashboard = await fetch(`${server.url}/`, { headers: { cookie } });
  return { cookie, csrfToken: csrfTokenOf(await dashboard.text()) };
}
