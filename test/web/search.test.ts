import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, signIn, signInByFetch, type WebSession } from '../helpers/browser.js';
import { givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server.js';

/** Global search (docs/compatibility.md#global-search) over HTTP and in Chromium. */
describe('global search', () => {
  let server: TestServer;
  let app: Repo;
  let secret: Repo;
  let alice: TestUser;
  let aliceWeb: WebSession;
  let adminWeb: WebSession;
  let issueNumber: number;
  let pullNumber: number;

  beforeAll(async () => {
    server = await startTestServer();
    [alice] = await givenUsers(server, 'alice');
    app = await givenRepo(server, 'app');
    secret = await givenRepo(server, 'secret');
    await grantRole(server, app.id, alice.id, 'Code Reader');
    const issue = (await server.call('POST', '/issues', { body: { projectId: app.id, title: 'Flux capacitor overheats' } })).json as number;
    issueNumber = (await server.call('GET', `/issues/${issue}`)).json.number;
    await server.call('POST', '/issues', { body: { projectId: secret.id, title: 'Flux capacitor secret plan' } });
    await app.commitOn('flux', { 'flux.txt': 'flux\n' }, 'flux');
    const pull = (
      await server.call('POST', '/pulls', {
        body: { targetProjectId: app.id, sourceProjectId: app.id, targetBranch: 'main', sourceBranch: 'flux', title: 'Cool the flux capacitor' },
      })
    ).json as number;
    pullNumber = (await server.call('GET', `/pulls/${pull}`)).json.number;
    [aliceWeb, adminWeb] = await Promise.all([signInByFetch(server, 'alice', alice.password), signInByFetch(server, ADMIN.name, ADMIN.password)]);
  });
  afterAll(async () => {
    await removeWorkTrees();
    await server?.close();
  });

  const search = async (q: string, session?: WebSession) => {
    const res = await fetch(`${server.url}/~search?${new URLSearchParams({ q })}`, { headers: session ? { cookie: session.cookie } : {} });
    return { status: res.status, html: await res.text() };
  };

  it('finds pull requests and issues by words of their titles, only in projects the user can read', async () => {
    const { status, html } = await search('flux capacitor', aliceWeb);
    expect(status).toBe(200);
    expect(html).toContain(`href="/app/~issues/${issueNumber}"`);
    expect(html).toContain('Flux capacitor overheats');
    expect(html).toContain(`href="/app/~pulls/${pullNumber}"`);
    expect(html).toContain('Cool the flux capacitor');
    // the project alice cannot read: neither its rows nor any count of them
    expect(html).not.toContain('secret');
    const admin = await search('flux capacitor', adminWeb);
    expect(admin.html).toContain('Flux capacitor secret plan');
  });

  it('finds by reference: `app#N` is number N of that project, `#N` of every readable one', async () => {
    const { html } = await search(`app#${issueNumber}`, aliceWeb);
    expect(html).toContain(`href="/app/~issues/${issueNumber}"`);
    expect(html).toMatch(/<h2 id="search-projects">Projects<\/h2>[\s\S]*href="\/app"/);
    const anywhere = await search(`#${pullNumber}`, aliceWeb);
    expect(anywhere.html).toContain(`href="/app/~pulls/${pullNumber}"`);
    // a project alice cannot see answers as one that does not exist
    const hidden = await search(`secret#1`, aliceWeb);
    const missing = await search(`nowhere#1`, aliceWeb);
    expect(hidden.status).toBe(200);
    expect(hidden.html).toContain('Nothing matches “secret#1”.');
    expect(missing.html).toContain('Nothing matches “nowhere#1”.');
  });

  it('finds projects by path, and users for administrators only', async () => {
    expect((await search('app', aliceWeb)).html).toMatch(/<h2 id="search-projects">Projects<\/h2>[\s\S]*href="\/app"/);
    expect((await search('alice', aliceWeb)).html).not.toContain('/~administration/users/');
    expect((await search('alice', adminWeb)).html).toContain(`href="/~administration/users/${alice.id}"`);
  });

  it('asks anonymous visitors to sign in where anonymous access is off, showing nothing', async () => {
    const { html } = await search('flux');
    expect(html).toContain('<title>Sign in · Gitloom</title>');
    expect(html).not.toContain('Flux capacitor');
  });

  it('takes search text literally and refuses an over-long one with 400', async () => {
    for (const q of ['~', '"', '\\', '~flux~', 'a" or "b', '%', '_']) {
      const { status } = await search(q, aliceWeb);
      expect(status, q).toBe(200);
    }
    const long = await search('x'.repeat(201), aliceWeb);
    expect(long.status).toBe(400);
    expect(long.html).toContain('The search text is longer than 200 characters');
    // no text: the form alone
    const empty = await search('', aliceWeb);
    expect(empty.status).toBe(200);
    expect(empty.html).not.toContain('Nothing matches');
  });

  it('focuses the header box with / and moves through the results with the arrow keys', async () => {
    const browser = await launchBrowser();
    try {
      const page = await (await browser.newContext()).newPage();
      await signIn(page, server, 'alice', alice.password);
      await page.goto(`${server.url}/app`);
      await page.keyboard.press('/');
      expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('q');
      await page.keyboard.type('flux capacitor');
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/~search\?q=flux/);
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowDown');
      const focused = await page.evaluate(() => document.activeElement?.getAttribute('href'));
      expect(focused).toMatch(/^\/app\/~(pulls|issues)\/\d+$/);
      await page.keyboard.press('Enter');
      await page.waitForURL(new RegExp(`${focused}$`));
    } finally {
      await browser.close();
    }
  });
});
