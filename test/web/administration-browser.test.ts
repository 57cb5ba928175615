import { describe, expect, it } from 'vitest';
import { browserTests, signIn } from '../helpers/browser.js';
import { givenRepo, givenUsers, grantRole, type TestUser } from '../helpers/fixtures.js';
import { ADMIN } from '../helpers/server.js';

/** Administration and personal settings as people use them, in Chromium at 360 px. */
describe('administration and personal settings in a browser', () => {
  let erin: TestUser;
  const web = browserTests(async (server) => {
    [erin] = await givenUsers(server, 'erin');
    const repo = await givenRepo(server, 'shop');
    await grantRole(server, repo.id, erin.id, 'Code Writer');
  });

  it('an administrator creates a user, who then signs in', async () => {
    const page = await web.signedIn(ADMIN.name, ADMIN.password);
    await page.getByText(ADMIN.name, { exact: true }).click();
    await page.getByRole('link', { name: 'Administration' }).click();
    await page.waitForURL(`${web.server.url}/~administration/users`);
    await page.getByRole('link', { name: 'New user' }).click();
    await page.getByLabel('Login name').fill('frank');
    await page.getByLabel('Full name (optional)').fill('Frank Field');
    await page.getByLabel('Email address').fill('frank@example.com');
    await page.getByLabel('Password').fill('frank-secret');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.waitForURL(/\/~administration\/users\/\d+$/);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('User frank');
    // every administration page fits a 360 px screen
    for (const path of ['users', 'users/new', 'users/1', 'groups', 'roles', 'roles/1', 'roles/new', 'security', 'label-specs', 'ssh']) {
      await page.goto(`${web.server.url}/~administration/${path}`);
      expect(await page.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(360);
    }

    await page.getByText(ADMIN.name, { exact: true }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${web.server.url}/~login`);
    await signIn(page, web.server, 'frank', 'frank-secret');
    expect(await page.title()).toBe('Dashboard · Gitloom');
    await page.getByText('frank', { exact: true }).click();
    expect(await page.getByRole('link', { name: 'Administration' }).count()).toBe(0);
    await page.getByRole('link', { name: 'My settings' }).click();
    expect(await page.getByLabel('Full name').inputValue()).toBe('Frank Field');
    for (const path of ['profile', 'password', 'access-tokens', 'ssh-keys', 'saved-queries', 'watches']) {
      await page.goto(`${web.server.url}/~my/${path}`);
      expect(await page.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(360);
    }
  });

  it('an administrator adds a job executor, disables it and moves it, as the API then shows', async () => {
    const page = await web.signedIn(ADMIN.name, ADMIN.password);
    await page.goto(`${web.server.url}/~administration/users`);
    await page.getByRole('link', { name: 'Job executors' }).click();
    await page.getByRole('link', { name: 'New server shell executor' }).click();
    await page.getByLabel('Name (letters, digits and -)').fill('trusted shell');
    await page.getByLabel('Job requirement (a job match; empty for any job)').fill('on branch "main"');
    await page.getByRole('button', { name: 'Save job executor' }).click();
    expect(await page.getByRole('alert').textContent()).toContain("Should only contain alphanumberic characters or '-'");
    expect(await page.getByLabel('Job requirement (a job match; empty for any job)').inputValue()).toBe('on branch "main"');
    await page.getByLabel('Name (letters, digits and -)').fill('trusted-shell');
    await page.getByRole('button', { name: 'Save job executor' }).click();
    await page.waitForURL(`${web.server.url}/~administration/job-executors`);
    await page.getByRole('link', { name: 'New server docker executor' }).click();
    await page.getByLabel('Name (letters, digits and -)').fill('containers');
    await page.getByLabel(/^Memory limit/).fill('2g');
    await page.getByRole('button', { name: 'Save job executor' }).click();
    await page.waitForURL(`${web.server.url}/~administration/job-executors`);
    await page.getByRole('button', { name: 'Disable trusted-shell' }).click();
    await page.getByRole('button', { name: 'Move containers up' }).click();
    expect(await page.getByRole('list', { name: 'Job executors' }).getByRole('link').allTextContents()).toEqual(['containers', 'trusted-shell']);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await page.getByRole('link', { name: 'containers' }).click();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);

    const api = (await web.server.call('GET', '/settings/job-executors')).json;
    expect(api).toMatchObject([
      { '@type': 'ServerDockerExecutor', name: 'containers', enabled: true, memoryLimit: '2g' },
      { '@type': 'ServerShellExecutor', name: 'trusted-shell', enabled: false, jobRequirement: 'on branch "main"' },
    ]);
  });

  it('a token created at /~my/access-tokens works against the REST API', async () => {
    const page = await web.signedIn('erin', erin.password);
    await page.goto(`${web.server.url}/~my/access-tokens`);
    await page.getByLabel('Description (optional)').fill('deploy script');
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = await page.getByRole('textbox', { name: 'Access token', exact: true }).inputValue();
    expect(token).toMatch(/^[A-Za-z0-9]{40}$/);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);

    const me = await fetch(`${web.server.url}/~api/users/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ id: erin.id, name: 'erin' });

    // shown once: the list shows it masked
    await page.goto(`${web.server.url}/~my/access-tokens`);
    expect(await page.getByRole('list', { name: 'Access tokens' }).textContent()).toContain(`${token.slice(0, 4)}…`);
    expect(await page.content()).not.toContain(token);
    await page.getByRole('button', { name: 'Delete access token deploy script' }).click();
    await page.waitForURL(`${web.server.url}/~my/access-tokens`);
    expect((await fetch(`${web.server.url}/~api/users/me`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
  });

  it('a pull request query saved from the list shows in the API and in /~my, and deleting it there removes it', async () => {
    const page = await web.signedIn('erin', erin.password);
    await page.goto(`${web.server.url}/shop/~pulls`);
    await page.getByLabel('Query', { exact: true }).fill('open and submitted by me');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByLabel('Save the current query as').fill('My open');
    await page.getByRole('button', { name: 'Save query' }).click();
    await page.waitForURL(/\/shop\/~pulls\?query=/);

    const personalizations = async () =>
      (await web.server.call('GET', `/users/${erin.id}/project-pull-request-query-personalizations`, { auth: erin.auth })).json as {
        queries: { name: string; query: string | null }[];
      }[];
    expect((await personalizations()).flatMap((p) => p.queries)).toEqual([{ name: 'My open', query: 'open and submitted by me' }]);

    await page.goto(`${web.server.url}/~my/saved-queries`);
    expect(await page.getByRole('heading', { name: 'Pull requests of shop' }).count()).toBe(1);
    expect(await page.getByRole('link', { name: 'My open' }).getAttribute('href')).toBe(
      `/shop/~pulls?${new URLSearchParams({ query: 'open and submitted by me' })}`,
    );
    await page.getByRole('button', { name: 'Delete saved query My open of Pull requests of shop' }).click();
    await page.waitForURL(`${web.server.url}/~my/saved-queries`);
    expect(await page.getByRole('link', { name: 'My open' }).count()).toBe(0);
    expect((await personalizations()).flatMap((p) => p.queries)).toEqual([]);
  });
});
