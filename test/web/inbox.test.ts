import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { eventually, givenProject, givenUsers, grantRole, type TestUser } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** The inbox page (`/~inbox`, docs/compatibility.md#notification-inbox) and its forms over plain HTTP. */
describe('inbox page', () => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let session: WebSession;
  let threads: { id: string; subject: { title: string }; reason: string; unread: boolean }[];

  beforeAll(async () => {
    server = await startTestServer();
    [alice, bob] = await givenUsers(server, 'alice', 'bob');
    const projectId = await givenProject(server, { name: 'paged' });
    for (const user of [alice, bob]) await grantRole(server, projectId, user.id, 'Code Writer');
    for (const title of ['First <thing>', 'Second thing', 'Third thing']) {
      const issue = await server.call('POST', '/issues', { body: { projectId, title, description: title === 'Second thing' ? 'cc @bob' : '' } });
      expect(issue.status, issue.text).toBe(200);
      if (title !== 'Second thing')
        expect((await server.call('POST', '/issue-comments', { body: { issueId: issue.json, content: 'ping @bob' }, auth: alice.auth })).status).toBe(200);
    }
    threads = (await eventually(async () => {
      const list = (await server.call('GET', '/notifications?all=true', { auth: bob.auth })).json as typeof threads;
      return list.length === 3 ? list : null;
    }))!;
    session = await signInByFetch(server, 'bob', bob.password);
  });
  afterAll(async () => {
    await server?.close();
  });

  const get = (path: string, s: WebSession | null = session) => fetch(`${server.url}${path}`, { redirect: 'manual', headers: s ? { cookie: s.cookie } : {} });
  const post = (path: string, fields: Record<string, string>, s: WebSession = session) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: s.cookie },
      body: new URLSearchParams({ _csrf: s.csrfToken, ...fields }).toString(),
    });
  const idOf = (title: string) => threads.find((t) => t.subject.title === title)!.id;
  const unreadTitles = async () => ((await server.call('GET', '/notifications', { auth: bob.auth })).json as typeof threads).map((t) => t.subject.title).sort();

  it('needs a signed-in user', async () => {
    const anonymous = await get('/~inbox', null);
    expect(anonymous.status).toBe(302);
    expect(anonymous.headers.get('location')).toBe('/~login?redirect=%2F%7Einbox');
  });

  it('lists the threads, unread ones in bold, with the unread count in the header and the filters', async () => {
    const response = await get('/~inbox');
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('<title>Inbox · Gitloom</title>');
    expect(html).toContain('<span class="inbox-count">3</span>');
    expect(html).toContain('<strong>First &lt;thing></strong>');
    expect(html.match(/<li class="notification unread"/g)).toHaveLength(3);
    expect(html).toContain('href="/~inbox?query=all" aria-current="page"');
    expect(html).toContain('href="/paged/~issues/1"');
    const mentions = await (await get('/~inbox?query=mentions')).text();
    expect(mentions).toContain('href="/~inbox?query=mentions" aria-current="page"');
    expect(mentions.match(/<li class="notification/g)).toHaveLength(3);
    const reviews = await (await get('/~inbox?query=review-requests')).text();
    expect(reviews).toContain('No notification.');
  });

  it('refuses an unknown filter and page with a message', async () => {
    const bad = await get('/~inbox?query=starred');
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('Unknown inbox filter: starred');
    expect((await get('/~inbox?page=0')).status).toBe(400);
  });

  it('marks a thread read, unread and done, and all read, coming back to the list', async () => {
    const first = idOf('First <thing>');
    const read = await post(`/~inbox/threads/${first}`, { op: 'read', return: '/~inbox?query=unread' });
    expect(read.status).toBe(303);
    expect(read.headers.get('location')).toBe('/~inbox?query=unread');
    expect(await unreadTitles()).toEqual(['Second thing', 'Third thing']);
    const page = await (await get('/~inbox?query=unread')).text();
    expect(page).not.toContain('First &lt;thing>');
    expect(page).toContain('<span class="inbox-count">2</span>');

    expect((await post(`/~inbox/threads/${first}`, { op: 'unread', return: 'https://evil.example/' })).headers.get('location')).toBe('/~inbox');
    expect(await unreadTitles()).toEqual(['First <thing>', 'Second thing', 'Third thing']);
    expect((await post(`/~inbox/threads/${first}`, { op: 'done' })).status).toBe(303);
    expect(await (await get('/~inbox')).text()).not.toContain('First &lt;thing>');

    expect((await post('/~inbox/read-all', { return: '/~inbox' })).status).toBe(303);
    expect(await unreadTitles()).toEqual([]);
    expect(await (await get('/~inbox')).text()).toMatch(/href="\/~inbox">Inbox<\/a>/);
  });

  it('refuses unknown marks, foreign or unknown threads and posts without the CSRF token', async () => {
    const second = idOf('Second thing');
    const bad = await post(`/~inbox/threads/${second}`, { op: 'star' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('Unknown mark: star');
    const alices = await signInByFetch(server, 'alice', alice.password);
    expect((await post(`/~inbox/threads/${second}`, { op: 'read' }, alices)).status).toBe(404);
    expect((await post('/~inbox/threads/99999', { op: 'read' })).status).toBe(404);
    expect((await post('/~inbox/threads/x1', { op: 'read' })).status).toBe(404);
    const forged = await fetch(`${server.url}/~inbox/read-all`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      body: 'return=%2F~inbox',
    });
    expect(forged.status).toBe(403);
  });

  it('shows and saves the notification settings', async () => {
    const html = await (await get('/~my/notifications')).text();
    expect(html).toContain('href="/~my/notifications" aria-current="page"');
    for (const group of ['participating', 'mentions', 'review_requests', 'assignments', 'watching', 'builds']) {
      expect(html).toContain(`name="${group}-inbox" value="on" checked`);
      expect(html).toContain(`name="${group}-mail" value="on" checked`);
    }
    const saved = await post('/~my/notifications', { 'mentions-mail': 'on' });
    expect(saved.status).toBe(200);
    const after = await saved.text();
    expect(after).toContain('Notification settings saved.');
    expect(after).toContain('name="mentions-mail" value="on" checked');
    expect(after).toMatch(/name="mentions-inbox" value="on"\/>/);
  });
});
