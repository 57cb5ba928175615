import { describe, expect, it } from 'vitest';
import { browserTests } from '../helpers/browser.js';
import { givenRepo, type Repo } from '../helpers/fixtures.js';
import { ADMIN } from '../helpers/server.js';

/** Browsing code in Chromium: from the project to a file and a line, then a commit's diff. */
describe('code pages in a browser', () => {
  let repo: Repo;
  const web = browserTests(async (server) => {
    repo = await givenRepo(server, 'tool', { files: { 'README.md': '# Tool\n', 'lib/util.js': 'export const one = 1;\nexport const two = 2;\n' } });
    await repo.commitOn('main', { 'lib/util.js': 'export const one = 1;\nexport const two = 3;\n' }, 'Fix two');
  }, 120_000);

  it('opens a file from the tree, links a line, and reads a commit diff', async () => {
    const page = await web.signedIn(ADMIN.name, ADMIN.password);
    await page.goto(`${web.server.url}/tool`);
    await page.getByRole('link', { name: 'lib/' }).click();
    await page.getByRole('link', { name: 'util.js' }).click();
    expect(await page.title()).toBe('lib/util.js at main · tool · Gitloom');
    expect(await page.locator('.file-code .hljs-keyword').first().textContent()).toBe('export');
    await page.locator('#L2').click();
    expect(new URL(page.url()).hash).toBe('#L2');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);

    await page.getByRole('link', { name: 'History' }).click();
    await page.getByRole('link', { name: 'Fix two' }).click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Fix two');
    const deleted = page.locator('tr.diff-delete');
    const added = page.locator('tr.diff-add');
    expect(await deleted.locator('.diff-code').textContent()).toBe('-export const two = 2;');
    expect(await added.locator('.diff-code').textContent()).toBe('+export const two = 3;');
    await added.getByRole('link', { name: 'New line 2' }).click();
    expect(new URL(page.url()).hash).toBe(`#${await added.getAttribute('id')}`);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
  });

  it('blames a file with each commit beside its first line, one click from the commit', async () => {
    const page = await web.signedIn(ADMIN.name, ADMIN.password);
    await page.goto(`${web.server.url}/tool/~files/main/lib/util.js`);
    await page.getByRole('link', { name: 'Blame' }).click();
    expect(await page.title()).toBe('Blame of lib/util.js at main · tool · Gitloom');
    const fix = page.locator('.blame-range[title="Fix two"] a').first();
    const [gutter, line] = [await fix.boundingBox(), await page.locator('#L2').boundingBox()];
    expect(Math.abs(gutter!.y - line!.y)).toBeLessThan(2);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await fix.click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Fix two');
  });
});
