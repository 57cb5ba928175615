import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csrfTokenOf, signInByFetch, type WebSession } from '../helpers/browser.js';
import { eventually, givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server.js';

const XSS_COMMENT = [
  'Look <script>window.pwned = 1</script>',
  '<img src="x" onerror="window.pwned = 2">',
  '[click](javascript:window.pwned=3) <a href="https://e.com" onclick="window.pwned=4">#1</a>',
].join('\n\n');

/** Issue pages and saved queries over plain HTTP, checked against the API. */
describe('issue pages', () => {
  let server: TestServer;
  let repo: Repo;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let aliceWeb: WebSession;
  let adminWeb: WebSession;
  let carolWeb: WebSession;
  let firstId: number;
  let secondId: number;

  beforeAll(async () => {
    server = await startTestServer();
    [alice, bob, carol] = await givenUsers(server, 'alice', 'bob', 'carol');
    repo = await givenRepo(server, 'app');
    await grantRole(server, repo.id, alice.id, 'Code Reader');
    await grantRole(server, repo.id, bob.id, 'Code Reader');
    [aliceWeb, adminWeb, carolWeb] = await Promise.all([
      signInByFetch(server, 'alice', alice.password),
      signInByFetch(server, ADMIN.name, ADMIN.password),
      signInByFetch(server, 'carol', carol.password),
    ]);
  });
  afterAll(async () => {
    await removeWorkTrees();
    await server?.close();
  });

  const get = (path: string, session?: WebSession) => fetch(`${server.url}${path}`, { redirect: 'manual', headers: session ? { cookie: session.cookie } : {} });
  const post = (path: string, fields: Record<string, string>, session: WebSession, csrf: string | null = session.csrfToken) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      body: new URLSearchParams({ ...fields, ...(csrf !== null && { _csrf: csrf }) }).toString(),
    });
  const apiIssue = async (id: number) => (await server.call('GET', `/issues/${id}`)).json;

  it('creates an issue from the page with its fields, refusing a missing title and a missing CSRF token', async () => {
    const form = await get('/app/~issues/new', aliceWeb);
    expect(form.status).toBe(200);
    const html = await form.text();
    expect(html).toContain('<title>New issue · app · Gitloom</title>');
    expect(html).toMatch(/<label for="field-title">Title<\/label>/);

    const forged = await post('/app/~issues/new', { title: 'Forged' }, aliceWeb, null);
    expect(forged.status).toBe(403);
    const untitled = await post('/app/~issues/new', { title: '  ', description: 'kept' }, aliceWeb);
    expect(untitled.status).toBe(400);
    const untitledHtml = await untitled.text();
    expect(untitledHtml).toContain('Title is required');
    expect(untitledHtml).toContain('>kept</textarea>');
    expect((await server.call('GET', '/issues?offset=0&count=10')).json).toEqual([]);

    const created = await post('/app/~issues/new', { title: 'Parser crashes', description: 'It **crashes**.', Type: 'Bug', Priority: 'Major' }, aliceWeb);
    expect(created.status).toBe(303);
    expect(created.headers.get('location')).toBe('/app/~issues/1');
    const [issue] = (await server.call('GET', '/issues?offset=0&count=10')).json;
    firstId = issue.id;
    expect(issue).toMatchObject({ number: 1, title: 'Parser crashes', state: 'Open', submitterId: alice.id });
    const fields = (await server.call('GET', `/issues/${firstId}/fields`)).json;
    expect(fields).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'Type', value: 'Bug' }), expect.objectContaining({ name: 'Priority', value: 'Major' })]),
    );
    secondId = (await server.call('POST', '/issues', { body: { projectId: repo.id, title: 'Second issue' } })).json;

    const page = await (await get('/app/~issues/1', aliceWeb)).text();
    expect(page).toContain('<title>#1 Parser crashes · app · Gitloom</title>');
    expect(page).toContain('<strong>crashes</strong>');
    expect(page).toMatch(/<dt>Type<\/dt><dd>Bug<\/dd>/);
  });

  it('lists issues with the query language, its errors and pages', async () => {
    const list = await (await get(`/app/~issues?query=${encodeURIComponent('"Type" is "Bug"')}`, aliceWeb)).text();
    expect(list).toContain('#1 Parser crashes');
    expect(list).not.toContain('Second issue');
    const bad = await get(`/app/~issues?query=${encodeURIComponent('"Nope" is "x"')}`, aliceWeb);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('role="alert"');
    for (let i = 0; i < 24; i++) await server.call('POST', '/issues', { body: { projectId: repo.id, title: `Filler ${i}` } });
    const first = await (await get('/app/~issues', aliceWeb)).text();
    expect(first).toContain('rel="next"');
    expect((first.match(/class="state state-/g) ?? []).length).toBe(25);
    const second = await (await get('/app/~issues?page=2', aliceWeb)).text();
    expect((second.match(/class="state state-/g) ?? []).length).toBe(1);
    expect(second).toContain('rel="prev"');
    // a page number that is not one is refused, as on every paged list
    for (const page of ['0', 'two', '100001']) expect((await get(`/app/~issues?page=${page}`, aliceWeb)).status).toBe(400);
    const everywhere = await (await get(`/~issues?query=${encodeURIComponent('"Type" is "Bug"')}`, aliceWeb)).text();
    expect(everywhere).toContain('href="/app/~issues/1"');
    expect(everywhere).toContain('app#1 Parser crashes');
  });

  it('comments with a mention and a reference, linked in the page and recorded by the domain', async () => {
    const html = await (await get('/app/~issues/1', aliceWeb)).text();
    const commented = await post(
      '/app/~issues/1/comments',
      { content: 'Thanks @bob, see #2 and `#3`', project: 'app' },
      { cookie: aliceWeb.cookie, csrfToken: csrfTokenOf(html) },
    );
    expect(commented.status).toBe(303);
    const page = await (await get('/app/~issues/1', aliceWeb)).text();
    expect(page).toContain('<span class="mention">@bob</span>');
    expect(page).toMatch(/<a class="reference" href="\/app\/~issues\/2"[^>]*>#2<\/a>/);
    expect(page).toContain('<code>#3</code>');
    // the mention made bob a watcher, the reference left a change on #2
    const watches = (await server.call('GET', `/issues/${firstId}/watches`)).json;
    expect(watches.map((w: any) => w.userId).sort()).toEqual([alice.id, bob.id].sort());
    const second = await (await get('/app/~issues/2', aliceWeb)).text();
    expect(second).toMatch(/<a href="\/app\/~issues\/1">issue app#1<\/a>/);

    const preview = await post('/~markdown-preview', { text: 'Hi @carol, #2', project: 'app' }, aliceWeb);
    expect(preview.status).toBe(200);
    expect(await preview.text()).toContain('<span class="mention">@carol</span>, <a class="reference" href="/app/~issues/2"');
    expect((await post('/app/~issues/1/comments', { content: '' }, aliceWeb)).status).toBe(400);
    expect((await post('/~markdown-preview', { text: 'x' }, aliceWeb, null)).status).toBe(403);
  });

  it('changes the state through a transition for issue managers only', async () => {
    const own = await (await get('/app/~issues/1', aliceWeb)).text();
    expect(own).not.toContain('>Close</button>');
    const refused = await post('/app/~issues/1/state', { state: 'Closed' }, aliceWeb);
    expect(refused.status).toBe(403);
    expect((await apiIssue(firstId)).state).toBe('Open');
    const managed = await (await get('/app/~issues/1', adminWeb)).text();
    expect(managed).toContain('>Close</button>');
    expect((await post('/app/~issues/1/state', { state: 'Closed' }, adminWeb)).status).toBe(303);
    expect((await apiIssue(firstId)).state).toBe('Closed');
    const again = await post('/app/~issues/1/state', { state: 'Closed' }, adminWeb);
    expect(again.status).toBe(409);
    const closed = await (await get('/app/~issues/1', adminWeb)).text();
    expect(closed).toContain('changed the state from Open to Closed');
    expect(closed).toContain('>Reopen</button>');
    expect((await post('/app/~issues/1/state', { state: 'Open' }, adminWeb)).status).toBe(303);
    expect((await apiIssue(firstId)).state).toBe('Open');
  });

  it('schedules the issue into a milestone for those who may schedule issues', async () => {
    const created = await server.call('POST', '/milestones', { body: { projectId: repo.id, name: 'v1.0' } });
    expect(created.status, created.text).toBe(200);
    expect(await (await get('/app/~issues/1', aliceWeb)).text()).not.toContain('<label for="field-milestone">');
    expect((await post('/app/~issues/1/milestones', { milestone: String(created.json) }, aliceWeb)).status).toBe(403);
    expect(await (await get('/app/~issues/1', adminWeb)).text()).toContain('<label for="field-milestone">Milestone</label>');
    expect((await post('/app/~issues/1/milestones', { milestone: String(created.json) }, adminWeb)).status).toBe(303);
    expect((await server.call('GET', `/issues/${firstId}/milestones`)).json.map((m: any) => m.name)).toEqual(['v1.0']);
    expect(await (await get('/app/~issues/1', aliceWeb)).text()).toContain('<li>v1.0</li>');
    expect((await post('/app/~issues/1/milestones', { milestone: 'x' }, adminWeb)).status).toBe(400);
    expect((await post('/app/~issues/1/milestones', { milestone: '' }, adminWeb)).status).toBe(303);
    expect((await server.call('GET', `/issues/${firstId}/milestones`)).json).toEqual([]);
  });

  it('watches, unwatches, votes and unvotes', async () => {
    expect((await post('/app/~issues/1/vote', { vote: 'true' }, aliceWeb)).status).toBe(303);
    expect((await apiIssue(firstId)).voteCount).toBe(1);
    expect(await (await get('/app/~issues/1', aliceWeb)).text()).toContain('>Unvote</button>');
    expect((await post('/app/~issues/1/vote', { vote: 'false' }, aliceWeb)).status).toBe(303);
    expect((await apiIssue(firstId)).voteCount).toBe(0);

    expect((await post('/app/~issues/1/watch', { watching: 'false' }, aliceWeb)).status).toBe(303);
    const watches = (await server.call('GET', `/users/${alice.id}/issue-watches`, { auth: alice.auth })).json;
    expect(watches.find((w: any) => w.issueId === firstId).watching).toBe(false);
    expect(await (await get('/app/~issues/1', aliceWeb)).text()).toContain('>Watch</button>');
    expect((await post('/app/~issues/1/watch', { watching: 'true' }, aliceWeb)).status).toBe(303);
    const after = (await server.call('GET', `/users/${alice.id}/issue-watches`, { auth: alice.auth })).json;
    expect(after.find((w: any) => w.issueId === firstId).watching).toBe(true);
  });

  it('closes the issue when a commit fixing it reaches the default branch, and lists the commit', async () => {
    const hash = await repo.commitOn('main', { 'fix.txt': 'fixed\n' }, 'Handle empty input\n\nfixes #1');
    const closed = await eventually(async () => (await apiIssue(firstId)).state === 'Closed');
    expect(closed).toBe(true);
    const page = await (await get('/app/~issues/1', aliceWeb)).text();
    expect(page).toContain(`title="${hash}"`);
    expect(page).toContain(`(Fixed by commit ${hash})`);
  });

  it('shows the same saved queries in the pages and the API personalizations', async () => {
    const saved = await post(
      '/~saved-queries',
      {
        op: 'save',
        kind: 'issue',
        project: String(repo.id),
        return: '/app/~issues',
        name: 'Bugs',
        query: '"Type" is "Bug"',
      },
      aliceWeb,
    );
    expect(saved.status).toBe(303);
    expect(saved.headers.get('location')).toBe(`/app/~issues?query=${encodeURIComponent('"Type" is "Bug"').replace(/%20/g, '+')}`);
    let mine = (await server.call('GET', `/users/${alice.id}/project-issue-query-personalizations`, { auth: alice.auth })).json;
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ projectId: repo.id, userId: alice.id, queries: [{ name: 'Bugs', query: '"Type" is "Bug"' }] });

    const update = await server.call('POST', `/issue-query-personalizations/${mine[0].id}`, {
      auth: alice.auth,
      body: { queries: [...mine[0].queries, { name: 'Mine', query: 'submitted by me' }] },
    });
    expect(update.status, update.text).toBe(200);
    const list = await (await get('/app/~issues', aliceWeb)).text();
    expect(list).toContain(`href="/app/~issues?${new URLSearchParams({ query: 'submitted by me' }).toString().replace(/&/g, '&amp;')}">Mine</a>`);
    expect(list).toContain('>Bugs</a>');

    expect(
      (await post('/~saved-queries', { op: 'watch', kind: 'issue', project: String(repo.id), return: '/app/~issues', name: 'Mine' }, aliceWeb)).status,
    ).toBe(303);
    mine = (await server.call('GET', `/users/${alice.id}/project-issue-query-personalizations`, { auth: alice.auth })).json;
    expect(mine[0].queryWatches).toEqual({ 'p:Mine': true });
    expect(await (await get('/app/~issues', aliceWeb)).text()).toContain('aria-label="Unwatch saved query Mine"');
    expect(
      (await post('/~saved-queries', { op: 'delete', kind: 'issue', project: String(repo.id), return: '/app/~issues', name: 'Bugs' }, aliceWeb)).status,
    ).toBe(303);
    mine = (await server.call('GET', `/users/${alice.id}/project-issue-query-personalizations`, { auth: alice.auth })).json;
    expect(mine[0].queries.map((q: any) => q.name)).toEqual(['Mine']);

    const bad = await post(
      '/~saved-queries',
      { op: 'save', kind: 'issue', project: String(repo.id), return: '/app/~issues', name: 'Bad', query: '"Nope" is' },
      aliceWeb,
    );
    expect(bad.status).toBe(400);

    // outside projects: the queries-and-watches lists of the cross-project issue and project pages
    expect(
      (await post('/~saved-queries', { op: 'save', kind: 'issue', project: '', return: '/~issues', name: 'Open', query: '"State" is "Open"' }, aliceWeb))
        .status,
    ).toBe(303);
    expect(
      (await post('/~saved-queries', { op: 'save', kind: 'project', project: '', return: '/~projects', name: 'Apps', query: '"Name" is "app*"' }, aliceWeb))
        .status,
    ).toBe(303);
    const all = (await server.call('GET', `/users/${alice.id}/queries-and-watches`, { auth: alice.auth })).json;
    expect(all.issueQueries).toEqual([{ name: 'Open', query: '"State" is "Open"' }]);
    expect(all.projectQueries).toEqual([{ name: 'Apps', query: '"Name" is "app*"' }]);
    const set = await server.call('POST', `/users/${alice.id}/queries-and-watches`, {
      auth: alice.auth,
      body: { ...all, projectQueries: [...all.projectQueries, { name: 'Everything', query: null }] },
    });
    expect(set.status, set.text).toBe(200);
    const projects = await (await get('/~projects', aliceWeb)).text();
    expect(projects).toContain('>Apps</a>');
    expect(projects).toMatch(/<a href="\/~projects"[^>]*>Everything<\/a>/);
    expect(await (await get('/~issues', aliceWeb)).text()).toContain('>Open</a>');
    expect((await post('/~saved-queries', { op: 'watch', kind: 'issue', project: '', return: '/~issues', name: 'Open' }, aliceWeb)).status).toBe(303);
    expect((await server.call('GET', `/users/${alice.id}/queries-and-watches`, { auth: alice.auth })).json.issueQueryWatches).toEqual({ 'p:Open': true });
    expect((await post('/~saved-queries', { op: 'watch', kind: 'issue', project: '', return: '/~issues', name: 'Nope' }, aliceWeb)).status).toBe(400);
    expect((await post('/~saved-queries', { op: 'save', kind: 'issue', project: '', return: '/~issues', name: 'x', query: '' }, aliceWeb, null)).status).toBe(
      403,
    );
  });

  it('answers 404 for the issues of a project the visitor can not see, and sends anonymous visitors to sign in', async () => {
    expect((await get('/app/~issues/1', carolWeb)).status).toBe(404);
    expect((await get('/app/~issues', carolWeb)).status).toBe(404);
    expect((await post('/app/~issues/1/comments', { content: 'sneaky' }, carolWeb)).status).toBe(404);
    expect((await post('/app/~issues/new', { title: 'sneaky' }, carolWeb)).status).toBe(404);
    expect((await get('/app/~issues/999', aliceWeb)).status).toBe(404);
    expect((await get('/app/~issues/abc', aliceWeb)).status).toBe(404);
    expect(await (await get('/~issues', carolWeb)).text()).toContain('No issue found.');
    const anonymous = await get('/app/~issues/1');
    expect(anonymous.status).toBe(302);
    expect(anonymous.headers.get('location')).toMatch(/^\/~login\?redirect=/);
    expect((await server.call('GET', `/issues/${firstId}/comments`)).json.map((c: any) => c.content)).not.toContain('sneaky');
    expect(secondId).toBeGreaterThan(firstId);
  });

  it('renders a comment carrying script, event handlers and javascript: links inert', async () => {
    expect((await post('/app/~issues/2/comments', { content: XSS_COMMENT }, aliceWeb)).status).toBe(303);
    const page = await (await get('/app/~issues/2', aliceWeb)).text();
    const comments = page.slice(page.indexOf('id="activity"'));
    expect(comments).not.toMatch(/<script>window|onerror|onclick|javascript:/);
    expect(comments).toContain('<img src="x" />');
  });
});
