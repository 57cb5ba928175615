import { describe, expect, it } from 'vitest';
import { browserTests } from '../helpers/browser.js';
import { eventually, givenRepo, givenUsers, type Repo } from '../helpers/fixtures.js';
import { ADMIN } from '../helpers/server.js';

/** An issue's life in Chromium: create, comment with a preview, close, watch and vote, fixed by a push. */
describe('issues in a browser', () => {
  let repo: Repo;
  const web = browserTests(async (server) => {
    await givenUsers(server, 'bob');
    repo = await givenRepo(server, 'widget');
  });

  it('creates, discusses, closes, reopens and sees a fixing push close an issue', async () => {
    const page = await web.signedIn(ADMIN.name, ADMIN.password);
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });

    await page.goto(`${web.server.url}/widget/~issues`);
    expect(await page.title()).toBe('Issues · widget · Gitloom');
    await page.getByRole('link', { name: 'New issue' }).click();
    await page.getByLabel('Title').fill('Widget wobbles');
    await page.getByLabel('Description').fill('It wobbles on **Tuesdays**.');
    await page.getByLabel('Type').selectOption('Bug');
    await Promise.all([page.waitForURL(`${web.server.url}/widget/~issues/1`), page.getByRole('button', { name: 'Create issue' }).click()]);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Widget wobbles');
    expect(await page.locator('.markdown strong').first().textContent()).toBe('Tuesdays');

    // a second issue to reference
    await web.server.call('POST', '/issues', { body: { projectId: repo.id, title: 'Widget rattles' } });
    const comment = 'Ping @bob, related to #2 <img src=x onerror="alert(1)">';
    await page.getByLabel('Comment', { exact: true }).fill(comment);
    await page.getByRole('button', { name: 'Preview' }).click();
    const preview = page.locator('.markdown-preview');
    await expect.poll(() => preview.locator('.mention').textContent()).toBe('@bob');
    expect(await preview.locator('a.reference').getAttribute('href')).toBe('/widget/~issues/2');
    expect(new URL(page.url()).pathname).toBe('/widget/~issues/1');
    await Promise.all([page.waitForURL(`${web.server.url}/widget/~issues/1`), page.getByRole('button', { name: 'Add comment' }).click()]);
    const posted = page.locator('article.comment');
    expect(await posted.locator('.mention').textContent()).toBe('@bob');
    await posted.getByRole('link', { name: '#2' }).click();
    await page.waitForURL(`${web.server.url}/widget/~issues/2`);
    expect(await page.getByRole('link', { name: 'issue widget#1' }).count()).toBe(1);
    await page.goBack();

    await page.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => page.locator('.issue-side').getByText('Closed', { exact: true }).count()).toBe(1);
    await page.getByRole('button', { name: 'Reopen' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Close' }).count()).toBe(1);

    await page.getByRole('button', { name: 'Vote' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Unvote' }).count()).toBe(1);
    await page.getByRole('button', { name: 'Unwatch' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Watch', exact: true }).count()).toBe(1);
    expect((await web.server.call('GET', '/issues/1')).json.voteCount).toBe(1);

    const hash = await repo.commitOn('main', { 'fix.txt': 'steady\n' }, 'Steady the widget\n\nfixes #1');
    expect(await eventually(async () => (await web.server.call('GET', '/issues/1')).json.state === 'Closed')).toBe(true);
    await page.reload();
    expect(await page.locator('.fixing-commits code').getAttribute('title')).toBe(hash);
    expect(await page.getByText(`Fixed by commit ${hash}`).count()).toBe(1);

    expect(dialogs).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
  });
});
