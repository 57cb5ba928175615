import { describe, expect, it } from 'vitest';
import { browserTests, DESKTOP } from '../helpers/browser.js';
import { givenRepo, givenUsers, grantRole, type Repo, type TestUser } from '../helpers/fixtures.js';
import { ADMIN, commitFiles, git, gitFails, gitUrl, makeWorkTree } from '../helpers/server.js';

/** A project owner's settings, project creation and forking in Chromium, checked with the git CLI. */
describe('project settings in a browser', () => {
  let repo: Repo;
  let alice: TestUser;
  let bob: TestUser;
  const web = browserTests(async (server) => {
    [alice, bob] = await givenUsers(server, 'alice', 'bob');
    repo = await givenRepo(server, 'team', { files: { 'README.md': '# team\n' } });
    await grantRole(server, repo.id, alice.id, 'Project Owner');
  });

  it('an owner grants Code Writer in the members page, and that user can then push', async () => {
    const work = await makeWorkTree({ 'bob.txt': 'from bob\n' });
    const asBob = gitUrl(web.server, 'team', { name: 'bob', password: bob.password });
    await git(work, ['fetch', '-q', gitUrl(web.server, 'team', ADMIN), 'main']);
    await git(work, ['checkout', '-q', '-B', 'main', 'FETCH_HEAD']);
    const commit = await commitFiles(work, { 'bob.txt': 'from bob\n' }, 'Bob was here');
    const refused = await gitFails(work, ['push', asBob, 'main']);
    expect(refused).not.toBe('');
    expect(await repo.head('main')).not.toBe(commit);

    const page = await web.signedIn('alice', alice.password);
    await page.goto(`${web.server.url}/team`);
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('link', { name: 'Members' }).click();
    expect(await page.title()).toBe('Members settings · team · Gitloom');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    const form = page.getByRole('form', { name: 'Add a user' });
    await form.getByLabel('User name').fill('bob');
    await form.getByLabel('Role').selectOption({ label: 'Code Writer' });
    await form.getByRole('button', { name: 'Add user' }).click();
    await page.waitForURL(`${web.server.url}/team/~settings/members`);
    expect(await page.getByRole('list', { name: 'Authorized users' }).textContent()).toContain('bob · Code Writer');
    for (const section of ['', '/branch-protection', '/tag-protection', '/build', '/labels', '/milestones']) {
      await page.goto(`${web.server.url}/team/~settings${section}`);
      expect(await page.evaluate(() => document.documentElement.scrollWidth), section).toBeLessThanOrEqual(360);
    }
    await git(work, ['push', '-q', asBob, 'main']);
    expect(await repo.head('main')).toBe(commit);
  });

  it('a branch protection set in the page refuses a force-push from the git CLI with its message', async () => {
    const page = await web.signedIn('alice', alice.password, { viewport: DESKTOP });
    await page.goto(`${web.server.url}/team/~settings/branch-protection`);
    const form = page.getByRole('form', { name: 'New branch protection' });
    await form.getByLabel('Branches (patterns, space-separated)').fill('main');
    expect(await form.getByLabel('Prevent forced push').isChecked()).toBe(true);
    expect(await form.getByLabel('Require signed commits').isChecked()).toBe(false);
    await form.getByRole('button', { name: 'Add branch protection' }).click();
    await page.waitForURL(`${web.server.url}/team/~settings/branch-protection`);
    expect(await page.locator('details.rule-item summary').allTextContents()).toEqual(['main']);
    const before = await repo.head('main');
    await git(repo.work, ['fetch', '-q', repo.remote, 'main']);
    await git(repo.work, ['checkout', '-q', '-B', 'main', 'FETCH_HEAD']);
    await git(repo.work, ['commit', '-q', '--amend', '-m', 'Rewritten history']);
    const stderr = await gitFails(repo.work, ['push', '-f', repo.remote, 'main']);
    expect(stderr).toContain('Can not force-push to this branch');
    expect(await repo.head('main')).toBe(before);
  });

  it('creates a project from the page, then pushes to it', async () => {
    const page = await web.signedIn(ADMIN.name, ADMIN.password, { viewport: DESKTOP });
    await page.goto(`${web.server.url}/~projects`);
    await page.getByRole('link', { name: 'New project' }).click();
    await page.getByLabel('Name').fill('fresh');
    await page.getByLabel('Description').fill('Made in the browser');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.waitForURL(`${web.server.url}/fresh`);
    expect(await page.getByRole('heading', { name: 'This repository is empty' }).isVisible()).toBe(true);
    const work = await makeWorkTree({ 'README.md': '# Fresh *start*\n' });
    await git(work, ['push', '-q', gitUrl(web.server, 'fresh', ADMIN), 'main']);
    await page.reload();
    expect(await page.locator('.readme em').textContent()).toBe('start');
  });

  it('forks a project from the page: the fork holds its branches and names its origin', async () => {
    const page = await web.signedIn(ADMIN.name, ADMIN.password, { viewport: DESKTOP });
    await page.goto(`${web.server.url}/team`);
    await page.getByRole('link', { name: 'Fork', exact: true }).click();
    await page.getByLabel('Name').fill('team-fork');
    await page.getByRole('button', { name: 'Fork project' }).click();
    await page.waitForURL(`${web.server.url}/team-fork`);
    await page.getByText('forked from').getByRole('link', { name: 'team' }).click();
    await page.waitForURL(`${web.server.url}/team`);
    const forkHead = (await git(repo.work, ['ls-remote', gitUrl(web.server, 'team-fork', ADMIN), 'refs/heads/main'])).split('\t')[0];
    expect(forkHead).toBe(await repo.head('main'));
  });
});
