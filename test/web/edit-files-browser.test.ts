import { describe, expect, it } from 'vitest';
import { browserTests, DESKTOP } from '../helpers/browser.js';
import { givenRepo, givenUsers, grantRole, type Repo, type TestUser } from '../helpers/fixtures.js';
import { git } from '../helpers/server.js';

const CALC = Array.from({ length: 6 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

/** Editing files and applying suggested changes in Chromium, against a real server with real git. */
describe('editing in a browser', () => {
  let alice: TestUser;
  let guarded: Repo;
  let site: Repo;
  let review: Repo;
  let requestNumber: number;
  let comments: number[];
  let reviewHead: string;
  const web = browserTests(async (server) => {
    [alice] = await givenUsers(server, 'alice');
    guarded = await givenRepo(server, 'guarded', { files: { 'README.md': '# Guarded\n' } });
    site = await givenRepo(server, 'site', { files: { 'notes.txt': 'first\n' } });
    review = await givenRepo(server, 'review', { files: { 'calc.txt': CALC } });
    for (const repo of [guarded, site, review]) await grantRole(server, repo.id, alice.id, 'Code Writer');
    const protect = await server.call('POST', `/projects/${guarded.id}/setting`, {
      body: { branchProtections: [{ branches: 'main', reviewRequirement: 'user(admin)' }] },
    });
    expect(protect.status, protect.text).toBe(200);

    const base = await review.head('main');
    reviewHead = await review.commitOn('feature', { 'calc.txt': CALC.replace('line 2', 'two') }, 'Two');
    const pr = await server.call('POST', '/pulls', {
      body: { targetProjectId: review.id, sourceProjectId: review.id, targetBranch: 'main', sourceBranch: 'feature', title: 'Feature' },
    });
    requestNumber = (await server.call('GET', `/pulls/${pr.json}`)).json.number;
    comments = [];
    for (const [row, content] of [
      [1, 'Louder\n```suggestion\nTWO\n```'],
      [4, '```suggestion\nFIVE\n```'],
    ] as const) {
      const res = await server.call('POST', '/code-comments', {
        body: {
          projectId: review.id,
          content,
          mark: { commitHash: reviewHead, path: 'calc.txt', range: { fromRow: row, fromColumn: 0, toRow: row, toColumn: 3 } },
          compareContext: {
            pullRequestId: pr.json,
            oldCommitHash: base,
            newCommitHash: reviewHead,
            pathFilter: null,
            currentFile: 'calc.txt',
            whitespaceOption: 'DEFAULT',
          },
        },
      });
      expect(res.status, res.text).toBe(200);
      comments.push(res.json);
    }
  });

  const fileOn = async (repo: Repo, branch: string, path: string) =>
    Buffer.from((await web.server.call('GET', `/repositories/${repo.id}/files/${branch}/${path}`)).json.base64Content, 'base64').toString('utf8');

  it('refuses an edit of a protected branch with the protection message, then opens a pull request from a new branch', async () => {
    const page = await web.signedIn('alice', alice.password);
    await page.goto(`${web.server.url}/guarded/~files/main/README.md`);
    await page.getByRole('link', { name: 'Edit', exact: true }).click();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await page.getByLabel('Content').fill('# Guarded, better\n');
    await page.getByRole('button', { name: 'Commit changes' }).click();
    expect(await page.getByRole('alert').textContent()).toBe('Review required for this change. Please submit pull request instead');
    expect(await page.getByLabel('Content').inputValue()).toBe('# Guarded, better\n');
    expect(await fileOn(guarded, 'main', 'README.md')).toBe('# Guarded\n');

    await page.getByLabel('a new branch, and open a pull request').check();
    expect(await page.getByLabel('New branch name').inputValue()).toBe('alice-patch-1');
    await page.getByRole('button', { name: 'Commit changes' }).click();
    await page.waitForURL(/\/guarded\/~pulls\/\d+$/);
    expect(await page.title()).toMatch(/^#\d+ Update README\.md · guarded · Gitloom$/);
    expect(await fileOn(guarded, 'alice-patch-1', 'README.md')).toBe('# Guarded, better\n');
    expect(await fileOn(guarded, 'main', 'README.md')).toBe('# Guarded\n');
  });

  it('detects a concurrent push of the file edited, keeping the text typed', async () => {
    const page = await web.signedIn('alice', alice.password, { viewport: DESKTOP });
    await page.goto(`${web.server.url}/site/~files/main/notes.txt`);
    await page.getByRole('link', { name: 'Edit', exact: true }).click();
    await page.waitForURL(/~edit\/main\/notes\.txt$/);
    const pushed = await site.commitOn('main', { 'notes.txt': 'first\npushed meanwhile\n' }, 'Meanwhile');
    await page.getByLabel('Content').fill('first\nmine\n');
    await page.getByRole('button', { name: 'Commit changes' }).click();
    expect(await page.getByRole('alert').textContent()).toContain(`notes.txt changed on main since commit`);
    expect(await page.getByLabel('Content').inputValue()).toBe('first\nmine\n');
    expect(await site.head('main')).toBe(pushed);

    // a new file beside it goes on top of the moved branch
    await page.goto(`${web.server.url}/site/~files/main`);
    await page.getByRole('link', { name: 'New file' }).click();
    await page.getByLabel('File path').fill('added.txt');
    await page.getByLabel('Content').fill('added\n');
    await page.getByLabel('Commit message').fill('Add a file');
    await page.getByRole('button', { name: 'Commit new file' }).click();
    await page.waitForURL(/\/site\/~files\/main\/added\.txt$/);
    expect(await fileOn(site, 'main', 'added.txt')).toBe('added\n');
  });

  it('applies two suggestions in one commit from the batch', async () => {
    const page = await web.signedIn('alice', alice.password, { viewport: DESKTOP });
    await page.goto(`${web.server.url}/review/~pulls/${requestNumber}/changes`);
    expect(await page.locator('.suggestion-diff').first().textContent()).toBe('- two\n+ TWO\n');
    const boxes = page.getByLabel('Add to batch');
    expect(await boxes.count()).toBe(2);
    await boxes.nth(0).check();
    await boxes.nth(1).check();
    await page.getByLabel('Commit message (optional)').fill('Apply both suggestions');
    await page.getByRole('button', { name: 'Commit suggestions' }).click();
    await page.waitForURL(new RegExp(`/review/~pulls/${requestNumber}/changes#code-comment-${comments[0]}$`));
    expect(await fileOn(review, 'feature', 'calc.txt')).toBe(['line 1', 'TWO', 'line 3', 'line 4', 'FIVE', 'line 6', ''].join('\n'));
    await git(review.work, ['fetch', '-q', review.remote, 'feature']);
    expect((await git(review.work, ['rev-parse', 'FETCH_HEAD^'])).trim()).toBe(reviewHead);
    expect((await git(review.work, ['log', '-1', '--format=%s', 'FETCH_HEAD'])).trim()).toBe('Apply both suggestions');
    for (const id of comments) expect((await web.server.call('GET', `/code-comments/${id}`)).json.resolved).toBe(true);
    expect(await page.getByRole('button', { name: 'Apply suggestion' }).count()).toBe(0);
  });
});
