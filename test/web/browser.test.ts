import { describe, expect, it } from 'vitest';
import { browserTests } from '../helpers/browser.js';
import { givenRepo, givenUsers, type TestUser } from '../helpers/fixtures.js';
import { ADMIN } from '../helpers/server.js';

const README = ['# Widget', '', 'A **small** library.', '', '<img src="x" onerror="window.pwned = true">', '', '<script>window.pwned = true</script>', ''].join(
  '\n',
);

/** A person's first steps in the web UI, in Chromium against a real server. */
describe('web UI in a browser', () => {
  let bob: TestUser;
  const web = browserTests(async (server) => {
    [bob] = await givenUsers(server, 'bob');
    await givenRepo(server, 'widget', { files: { 'README.md': README, 'lib/index.js': 'export const x = 1;\n' } });
  });

  it('sends an anonymous visitor to sign in, refuses a bad password, then lands where asked', async () => {
    const page = await (await web.newContext()).newPage();
    await page.goto(`${web.server.url}/`);
    expect(new URL(page.url()).pathname).toBe('/~login');
    await page.getByLabel('User name or email').fill('bob');
    await page.getByLabel('Password or access token').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Invalid credentials');
    expect(await page.getByLabel('User name or email').inputValue()).toBe('bob');
    await page.getByLabel('Password or access token').fill(bob.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${web.server.url}/`);
    expect(await page.title()).toBe('Dashboard · Gitloom');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Dashboard');
  });

  it('renders a pushed README without running the script it smuggles, and signs out', async () => {
    const page = await web.signedIn(ADMIN.name, ADMIN.password);
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.goto(`${web.server.url}/widget`);
    expect(await page.title()).toBe('widget · Gitloom');
    expect(await page.locator('.markdown h1').textContent()).toBe('Widget');
    expect(await page.locator('.markdown strong').textContent()).toBe('small');
    expect(await page.getByRole('link', { name: 'lib/' }).count()).toBe(1);
    expect(await page.evaluate(() => (window as unknown as { pwned?: boolean }).pwned)).toBeUndefined();
    expect(await page.locator('.markdown script, .markdown [onerror]').count()).toBe(0);
    expect(dialogs).toEqual([]);
    // the page fits a 360 px screen
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);

    await page.getByText(ADMIN.name, { exact: true }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${web.server.url}/~login`);
    await page.goto(`${web.server.url}/widget`);
    expect(new URL(page.url()).pathname).toBe('/~login');
  });
});
