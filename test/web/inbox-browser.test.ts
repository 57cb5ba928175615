import { describe, expect, it } from 'vitest';
import { browserTests, DESKTOP } from '../helpers/browser.js';
import { eventually, givenProject, givenUsers, grantRole, type TestUser } from '../helpers/fixtures.js';

/** The inbox in Chromium (docs/compatibility.md#notification-inbox): the header count, the list's forms, a thread read by opening it. */
describe('inbox in a browser', () => {
  let alice: TestUser;
  let bob: TestUser;
  const web = browserTests(async (server) => {
    [alice, bob] = await givenUsers(server, 'alice', 'bob');
    const projectId = await givenProject(server, { name: 'tracker' });
    for (const user of [alice, bob]) await grantRole(server, projectId, user.id, 'Code Writer');
    for (const title of ['Crash on start', 'Slow search', 'Typo in docs']) {
      const issue = await server.call('POST', '/issues', { body: { projectId, title, description: `@bob: ${title}` }, auth: alice.auth });
      if (issue.status !== 200) throw new Error(issue.text);
    }
    await eventually(async () => ((await server.call('GET', '/notifications', { auth: bob.auth })).json as unknown[]).length === 3);
  });

  it('counts unread threads in the header, marks them read, unread and done, and reads one by opening it', async () => {
    const page = await web.signedIn('bob', bob.password);
    const inboxLink = page.getByRole('link', { name: /^Inbox/ });
    expect(await inboxLink.textContent()).toBe('Inbox 3 unread');
    await inboxLink.click();
    await page.waitForURL(/\/~inbox$/);
    expect(await page.title()).toBe('Inbox · Gitloom');
    expect(await page.locator('li.notification.unread strong').allTextContents()).toEqual(['Typo in docs', 'Slow search', 'Crash on start']);
    // the list fits a phone screen
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);

    await page.getByRole('button', { name: 'Mark read: Slow search' }).click();
    await page.waitForLoadState();
    expect(await page.locator('.inbox-link').textContent()).toBe('Inbox 2 unread');
    expect(await page.locator('li.notification:not(.unread) a').allTextContents()).toEqual(['Slow search']);
    await page.getByRole('button', { name: 'Mark unread: Slow search' }).click();
    await page.waitForLoadState();
    expect(await page.locator('.inbox-link').textContent()).toBe('Inbox 3 unread');

    await page.getByRole('button', { name: 'Done: Typo in docs' }).click();
    await page.waitForLoadState();
    expect(await page.locator('li.notification a').allTextContents()).toEqual(['Slow search', 'Crash on start']);

    // opening a thread reads it
    await page.getByRole('link', { name: 'Crash on start' }).click();
    await page.waitForURL(/\/tracker\/~issues\/\d+$/);
    expect(await page.locator('.inbox-link').textContent()).toBe('Inbox 1 unread');
    await page.goBack();
    await page.goto(`${web.server.url}/~inbox?query=unread`);
    expect(await page.locator('li.notification a').allTextContents()).toEqual(['Slow search']);

    await page.getByRole('button', { name: 'Mark all read' }).click();
    await page.waitForURL(/\/~inbox\?query=unread$/);
    expect(await page.getByText('No notification.').isVisible()).toBe(true);
    expect(await page.locator('.inbox-link').textContent()).toBe('Inbox');
    expect(await page.locator('.inbox-count').count()).toBe(0);
  }, 60_000);

  it('turns mentions out of the inbox in My settings', async () => {
    const page = await web.signedIn('bob', bob.password, { viewport: DESKTOP });
    await page.goto(`${web.server.url}/~my/notifications`);
    const mentions = page.getByRole('group', { name: 'Mentions' });
    await mentions.getByLabel('Inbox').uncheck();
    await page.getByRole('button', { name: 'Save notification settings' }).click();
    await page.getByText('Notification settings saved.').waitFor();
    expect(await page.getByRole('group', { name: 'Mentions' }).getByLabel('Inbox').isChecked()).toBe(false);
    expect(await page.getByRole('group', { name: 'Mentions' }).getByLabel('Mail').isChecked()).toBe(true);
  }, 60_000);
});
