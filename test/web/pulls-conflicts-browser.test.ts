import { describe, expect, it } from 'vitest';
import { browserTests, DESKTOP } from '../helpers/browser.js';
import { commitWith } from '../helpers/conflicts.js';
import { givenRepo, givenUsers, grantRole, type Repo, type TestUser } from '../helpers/fixtures.js';
import { git } from '../helpers/server.js';

/** A pull request with three conflicts resolved in Chromium — an add/add, a modify/delete, a text conflict keeping both sides — committed, then merged. */
describe('resolving merge conflicts in a browser', () => {
  let repo: Repo;
  let alice: TestUser;
  let prUrl: string;
  const web = browserTests(async (server) => {
    [alice] = await givenUsers(server, 'alice');
    repo = await givenRepo(server, 'site', { files: { 'README.md': '# site\n', 'notes.txt': 'alpha\nbeta\ngamma\n', 'old.txt': 'old\n' } });
    await grantRole(server, repo.id, alice.id, 'Code Writer');
    await commitWith(repo, 'feature', { 'notes.txt': 'alpha\nbeta from feature\ngamma\n', 'new.txt': 'feature\n', 'old.txt': 'old changed\n' }, 'Feature');
    await commitWith(repo, 'main', { 'notes.txt': 'alpha\nbeta from main\ngamma\n', 'new.txt': 'main\n', 'old.txt': null }, 'Main');
    const res = await server.call('POST', '/pulls', {
      body: { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'feature', title: 'Feature' },
      auth: alice.auth,
    });
    expect(res.status, res.text).toBe(200);
    await server.settled();
    prUrl = `${server.url}/site/~pulls/${(await server.call('GET', `/pulls/${res.json}`)).json.number}`;
  });

  it('chooses per region and per file, edits the text, commits the resolution and merges', async () => {
    const page = await web.signedIn('alice', alice.password, { viewport: DESKTOP });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(prUrl);
    await page.getByRole('link', { name: 'Resolve conflicts' }).click();
    await page.waitForURL(`${prUrl}/conflicts`);
    expect(await page.getByRole('navigation', { name: 'Conflicted files' }).getByRole('link').allTextContents()).toEqual(['new.txt', 'notes.txt', 'old.txt']);

    // the text conflict: keep both sides, the region buttons fill the text
    const notes = page.getByRole('region', { name: /notes\.txt/ });
    const notesText = notes.getByLabel('Result: notes.txt');
    const unresolved = await notesText.inputValue();
    expect(unresolved).toContain('<<<<<<< #1 feature (source)');
    // an edit by hand elsewhere in the file stays: the choice replaces the region's markers only
    await notesText.fill(unresolved.replace('alpha', 'ALPHA'));
    await notes.getByRole('group', { name: 'Keep for conflict 1' }).getByLabel('Both (ours, then theirs)').check();
    expect(await notesText.inputValue()).toBe('ALPHA\nbeta from feature\nbeta from main\ngamma\n');
    await expect.poll(() => notes.getByRole('status').textContent()).toBe('Conflict 1: both versions kept.');

    // the add/add: their version, then the text edited by hand
    const added = page.getByRole('region', { name: /new\.txt/ });
    const addedText = added.getByLabel('Result: new.txt');
    await added.getByRole('group', { name: 'Keep for conflict 1' }).getByLabel('Ours', { exact: true }).check();
    expect(await addedText.inputValue()).toBe('feature\n');
    // another choice rewrites the text the choices made
    await added.getByRole('group', { name: 'Keep for conflict 1' }).getByLabel('Theirs', { exact: true }).check();
    expect(await addedText.inputValue()).toBe('main\n');
    await addedText.fill('main\nand feature\n');

    // the modify/delete: keep the modified file; the other choice would delete it
    const old = page.getByRole('region', { name: /old\.txt/ });
    expect(await old.getByText('CONFLICT (modify/delete)').count()).toBe(1);
    await old.getByRole('radio', { name: /Keep the version of feature \(source\)/ }).check();

    // the page fits a phone
    await page.setViewportSize({ width: 360, height: 740 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await page.setViewportSize(DESKTOP);

    await page.getByRole('button', { name: 'Commit resolution' }).click();
    await page.waitForURL(`${prUrl}#merge-box`);
    expect(await page.getByRole('link', { name: 'Resolve conflicts' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Merge', exact: true }).click();
    await page.waitForURL(`${prUrl}#merge-box`);
    expect(await page.getByText('Merged', { exact: true }).first().textContent()).toBe('Merged');

    await git(repo.work, ['fetch', '-q', repo.remote, 'main']);
    expect(await git(repo.work, ['show', 'FETCH_HEAD:notes.txt'])).toBe('ALPHA\nbeta from feature\nbeta from main\ngamma\n');
    expect(await git(repo.work, ['show', 'FETCH_HEAD:new.txt'])).toBe('main\nand feature\n');
    expect(await git(repo.work, ['show', 'FETCH_HEAD:old.txt'])).toBe('old changed\n');
    expect(errors).toEqual([]);
  });
});
