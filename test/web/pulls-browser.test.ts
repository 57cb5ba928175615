import { describe, expect, it } from 'vitest';
import { browserTests, DESKTOP } from '../helpers/browser.js';
import { givenRepo, givenUsers, grantRole, type Repo, type TestUser } from '../helpers/fixtures.js';
import { git } from '../helpers/server.js';

const DESCRIPTION = 'Adds **greetings**.\n\n<img src="x" onerror="window.pwned = true">\n\n<script>window.pwned = true</script>\n';

/** A pull request from opening to merging, by two people in Chromium against a real server with real git. */
describe('pull requests in a browser', () => {
  let repo: Repo;
  let alice: TestUser;
  let bob: TestUser;
  const web = browserTests(async (server) => {
    [alice, bob] = await givenUsers(server, 'alice', 'bob');
    repo = await givenRepo(server, 'site', { files: { 'README.md': '# site\n', 'hello.txt': 'hello\n' } });
    await grantRole(server, repo.id, alice.id, 'Code Writer');
    await grantRole(server, repo.id, bob.id, 'Code Writer');
    await repo.commitOn('greetings', { 'hello.txt': 'hello\nbonjour\nhola\n' }, 'More greetings');
  });

  it('opens, comments, approves, comments a line, merges — and the target branch moves', async () => {
    const dialogs: string[] = [];
    const page = await web.signedIn('alice', alice.password, { viewport: DESKTOP });
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });

    // open the request from the list's "New pull request"
    await page.goto(`${web.server.url}/site/~pulls`);
    await page.getByRole('link', { name: 'New pull request' }).click();
    await page.getByLabel('Source branch').selectOption({ label: 'greetings' });
    await page.getByRole('button', { name: 'Compare' }).click();
    expect(await page.getByRole('heading', { name: /^Commits/ }).textContent()).toBe('Commits (1)');
    expect(await page.locator('.diff-add .diff-code').allTextContents()).toEqual(['+bonjour', '+hola']);
    await page.getByLabel('Title').fill('Greetings');
    await page.getByLabel('Description (Markdown)').fill(DESCRIPTION);
    await page.getByRole('button', { name: 'Open pull request' }).click();
    await page.waitForURL(/\/site\/~pulls\/\d+$/);
    const prUrl = page.url();
    expect(await page.title()).toMatch(/^#\d+ Greetings · site · Gitloom$/);
    expect(await page.locator('.description .markdown strong').textContent()).toBe('greetings');

    // comment
    await page.getByLabel('Comment (Markdown)').fill('Ready for review');
    await page.getByRole('button', { name: 'Comment', exact: true }).click();
    await page.waitForURL(`${prUrl}#activity`);
    expect(await page.locator('.activity .comment .markdown').last().textContent()).toContain('Ready for review');

    // a second user approves, then comments on a line of the changes tab (at 360 px)
    const bobPage = await web.signedIn('bob', bob.password);
    await bobPage.goto(prUrl);
    expect(await bobPage.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await bobPage.getByRole('button', { name: 'Approve' }).click();
    await bobPage.waitForURL(`${prUrl}#reviewers`);
    expect(await bobPage.locator('.merge-box').textContent()).toContain('bob: approved');
    await bobPage.getByRole('link', { name: 'Changes', exact: true }).click();
    await bobPage.getByRole('link', { name: 'New line 3', exact: true }).click();
    await bobPage.getByLabel('Comment (Markdown)').fill('Add *hallo* too?');
    await bobPage.getByRole('button', { name: 'Add comment' }).click();
    await bobPage.waitForURL(/\/changes#code-comment-\d+$/);
    const thread = bobPage.locator('tr.diff-below .code-comment');
    expect(await thread.locator('.markdown em').textContent()).toBe('hallo');
    const lineAbove = await thread.evaluate((el) => el.closest('tr')?.previousElementSibling?.querySelector('.diff-code')?.textContent);
    expect(lineAbove).toBe('+hola');

    // merge from the page; the target branch moved to a merge commit of main and the request head
    const before = await repo.head('main');
    await page.reload();
    await page.getByRole('button', { name: 'Merge', exact: true }).click();
    await page.waitForURL(`${prUrl}#merge-box`);
    expect(await page.locator('.pr-head .badge').textContent()).toBe('Merged');
    const after = (await git(repo.work, ['ls-remote', repo.remote, 'refs/heads/main'])).split('\t')[0];
    expect(after).not.toBe(before);
    await git(repo.work, ['fetch', '-q', repo.remote, 'main']);
    expect(await git(repo.work, ['show', 'FETCH_HEAD:hello.txt'])).toBe('hello\nbonjour\nhola\n');

    // the description's script and event handler never ran
    expect(await page.evaluate(() => (window as unknown as { pwned?: boolean }).pwned)).toBeUndefined();
    expect(await page.locator('.markdown script, .markdown [onerror]').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });
});
