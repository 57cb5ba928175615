/**
 * Browser and page-level helpers for the web UI tests (test/web): Debian's Chromium driven by
 * playwright-core (launch once per test file), a sign-in through the real form, and the same
 * sign-in over plain `fetch` for checks that need no browser.
 */
import { chromium, type Browser, type Page } from 'playwright-core';
import type { TestServer } from './server.js';

/** Launches headless Chromium (`/usr/bin/chromium`); close it in `afterAll`. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
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
  return response.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
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
