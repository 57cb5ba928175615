import { describe, expect, it } from 'vitest';
import { browserTests, DESKTOP } from '../helpers/browser.js';
import { givenRepo, givenUsers, grantRole, type Repo, type TestUser } from '../helpers/fixtures.js';

const lines = (n: number, edit: (i: number) => string | null = () => null) =>
  `${Array.from({ length: n }, (_, i) => edit(i + 1) ?? `export const v${i + 1} = ${i + 1};`).join('\n')}\n`;

/** The diff view of a pull request's changes in Chromium: the split layout remembered, comments in it, viewed marks, expanded lines. */
describe('diff view in a browser', () => {
  let repo: Repo;
  let alice: TestUser;
  let changesUrl: string;
  const web = browserTests(async (server) => {
    [alice] = await givenUsers(server, 'alice');
    repo = await givenRepo(server, 'site', { files: { 'src/app.ts': lines(40), 'notes.md': 'one\n' } });
    await grantRole(server, repo.id, alice.id, 'Code Writer');
    await repo.commitOn(
      'work',
      { 'src/app.ts': lines(40, (i) => (i === 5 || i === 30 ? `export const v${i} = ${i * 10};` : null)), 'notes.md': 'two\n' },
      'Work',
    );
    const opened = await server.call('POST', '/pulls', {
      body: { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'work', title: 'Work' },
    });
    changesUrl = `${server.url}/site/~pulls/${(await server.call('GET', `/pulls/${opened.json}`)).json.number}/changes`;
  }, 120_000);

  it('switches to the split layout, keeps it after a reload, and adds a comment on the old side of a line', async () => {
    const page = await web.signedIn('alice', alice.password, { viewport: DESKTOP });
    await page.goto(changesUrl);
    expect(await page.locator('table.diff-split-table').count()).toBe(0);
    await page.getByRole('button', { name: 'Split' }).click();
    await page.waitForURL(changesUrl);
    expect(await page.locator('table.diff-split-table').count()).toBe(2);
    await page.reload();
    expect(await page.locator('table.diff-split-table').count()).toBe(2);
    expect(await page.getByRole('button', { name: 'Split' }).getAttribute('aria-pressed')).toBe('true');

    // a deleted line beside its added line; the click on the old number opens the form for the old side
    const app = page.locator('section.diff-file', { has: page.getByRole('heading', { name: 'src/app.ts' }) });
    await app.getByRole('link', { name: 'Old line 30', exact: true }).click();
    expect(await app.getByLabel('Side').inputValue()).toBe('old');
    expect(await app.getByLabel('Line', { exact: true }).inputValue()).toBe('30');
    expect(await app.locator('tr.line-comment-row td').getAttribute('colspan')).toBe('4');
    await app.getByLabel('Comment (Markdown)').fill('Was *thirty*');
    await app.getByRole('button', { name: 'Add comment' }).click();
    await page.waitForURL(/\/changes#code-comment-\d+$/);
    const thread = page.locator('tr.diff-below .code-comment');
    expect(await thread.locator('.markdown em').textContent()).toBe('thirty');
    const above = await thread.evaluate((el) => el.closest('tr')?.previousElementSibling?.querySelector('td.diff-delete')?.id ?? '');
    expect(above).toMatch(/L30$/);
    expect(await page.locator('table.diff-split-table').count()).toBe(2);

    // back to unified for the other tests
    await page.getByRole('button', { name: 'Unified' }).click();
    await page.waitForURL(changesUrl);
    expect(await page.locator('table.diff-split-table').count()).toBe(0);
  });

  it('marks a file viewed in place, and shows it unviewed again once a later push changes it', async () => {
    const page = await web.signedIn('alice', alice.password, { viewport: DESKTOP });
    await page.goto(changesUrl);
    const notes = page.locator('section.diff-file', { has: page.getByRole('heading', { name: 'notes.md' }) });
    // with JavaScript the box saves itself: no button
    expect(await notes.getByRole('button', { name: 'Save' }).isVisible()).toBe(false);
    expect(await page.locator('.diff-viewed-count').textContent()).toBe('0 of 2 files viewed');
    await notes.getByRole('checkbox', { name: 'Viewed' }).check();
    await page.waitForFunction(() => document.querySelector('.diff-viewed-count')?.textContent === '1 of 2 files viewed');
    expect(await notes.locator('.diff-body').isVisible()).toBe(false);
    expect(await page.locator('.diff-tree-viewed a').textContent()).toBe('notes.md');
    expect(page.url()).toBe(changesUrl);

    await page.reload();
    expect(await page.locator('.diff-viewed-count').textContent()).toBe('1 of 2 files viewed');
    expect(await notes.getByRole('checkbox', { name: 'Viewed' }).isChecked()).toBe(true);
    expect(await notes.locator('details.diff-body').getAttribute('open')).toBeNull();

    await repo.commitOn('work', { 'notes.md': 'three\n' }, 'Edit the notes');
    await web.server.settled();
    await page.reload();
    expect(await page.locator('.diff-viewed-count').textContent()).toBe('0 of 2 files viewed');
    expect(await notes.getByRole('checkbox', { name: 'Viewed' }).isChecked()).toBe(false);
    expect(await notes.locator('.diff-body table').isVisible()).toBe(true);
  });

  it('expands the unchanged lines between two hunks in place', async () => {
    const page = await web.signedIn('alice', alice.password, { viewport: DESKTOP });
    await page.goto(changesUrl);
    const app = page.locator('section.diff-file', { has: page.getByRole('heading', { name: 'src/app.ts' }) });
    expect(await app.getByRole('link', { name: 'New line 20', exact: true }).count()).toBe(0);
    await app.getByRole('link', { name: 'Show 18 unchanged lines' }).click();
    await app.getByRole('link', { name: 'New line 20', exact: true }).waitFor();
    expect(await app.locator('tbody.diff-expanded tr.diff-line').count()).toBe(18);
    expect(await app.locator('tbody.diff-expanded .hljs-keyword').first().textContent()).toBe('export');
    // in place: the page did not move, the other gaps stay links
    expect(page.url()).toBe(changesUrl);
    expect(await app.getByRole('link', { name: /^Show \d+ unchanged lines?$/ }).count()).toBe(2);
    // a click on an inserted line number still opens the comment form there
    await app.getByRole('link', { name: 'New line 20', exact: true }).click();
    expect(await app.getByLabel('Line', { exact: true }).inputValue()).toBe('20');
  });
});
