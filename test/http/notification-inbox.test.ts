import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInByFetch } from '../helpers/browser.js';
import { commandSpec, eventually, givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { startSmtpReceiver } from '../helpers/receivers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

interface Thread {
  id: string;
  unread: boolean;
  reason: string;
  updated_at: string;
  last_read_at: string | null;
  subject: { title: string; url: string; type: string };
  project: { id: number; path: string | null };
  url: string;
}

/** The notification inbox (docs/compatibility.md#notification-inbox) through its API, the pages that read threads, and the settings. */
describe('notification inbox', () => {
  let smtp: Awaited<ReturnType<typeof startSmtpReceiver>>;
  let server: TestServer;
  let repo: Repo;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let dave: TestUser;
  let erin: TestUser;

  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    server = await startTestServer({ GITLOOM_SMTP_URL: smtp.url, GITLOOM_SMTP_FROM: 'Gitloom <forge@example.com>', GITLOOM_OUTBOX_BACKOFF_MS: '50' });
    [alice, bob, carol, dave, erin] = await givenUsers(server, 'alice', 'bob', 'carol', 'dave', 'erin');
    repo = await givenRepo(server, 'inboxed', { files: { 'README.md': '# inboxed\n' } });
    for (const user of [alice, bob, carol, dave, erin]) await grantRole(server, repo.id, user.id, 'Code Writer');
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
    await removeWorkTrees();
  });

  const inbox = async (user: TestUser, query = 'all=true') => {
    const res = await server.call('GET', `/notifications?${query}`, { auth: user.auth });
    expect(res.status, res.text).toBe(200);
    return res.json as Thread[];
  };
  const threadOf = async (user: TestUser, type: string, title: string) =>
    (await inbox(user)).filter((t) => t.subject.type === type && t.subject.title === title);
  const page = (user: TestUser, path: string) => fetch(`${server.url}${path}`, { headers: { authorization: user.auth } });
  const subjects = (user: TestUser) => smtp.mails.filter((m) => m.envelopeTo.includes(`${user.name}@example.com`)).map((m) => m.subject ?? '');

  let prId: number;
  let issueId: number;

  it('puts a review request, a mention and a watched comment once in the inbox, never the actor', async () => {
    await repo.commitOn('feature', { 'feature.txt': 'x\n' }, 'feature');
    const pr = await server.call('POST', '/pulls', {
      body: { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'feature', title: 'Inbox me', reviewerIds: [bob.id] },
      auth: alice.auth,
    });
    expect(pr.status, pr.text).toBe(200);
    prId = pr.json as number;
    expect((await server.call('POST', '/pull-request-comments', { body: { requestId: prId, content: 'Have a look @carol' }, auth: bob.auth })).status).toBe(
      200,
    );
    expect((await server.call('POST', '/pull-request-comments', { body: { requestId: prId, content: 'Once more @carol' }, auth: bob.auth })).status).toBe(200);

    const issue = await server.call('POST', '/issues', { body: { projectId: repo.id, title: 'Watched issue' }, auth: alice.auth });
    expect(issue.status, issue.text).toBe(200);
    issueId = issue.json as number;
    // dave comments (and so watches), then erin comments twice
    expect((await server.call('POST', '/issue-comments', { body: { issueId, content: 'Me too' }, auth: dave.auth })).status).toBe(200);
    expect((await server.call('POST', '/issue-comments', { body: { issueId, content: 'First' }, auth: erin.auth })).status).toBe(200);
    expect((await server.call('POST', '/issue-comments', { body: { issueId, content: 'Second' }, auth: erin.auth })).status).toBe(200);

    expect(
      await eventually(
        async () => (await threadOf(dave, 'Issue', 'Watched issue')).length === 1 && (await threadOf(carol, 'PullRequest', 'Inbox me')).length === 1,
      ),
    ).toBe(true);
    const [review] = await threadOf(bob, 'PullRequest', 'Inbox me');
    expect(review).toMatchObject({ unread: true, reason: 'review_requested', last_read_at: null, project: { id: repo.id, path: 'inboxed' } });
    expect(review.subject.url).toBe(`${server.url}/inboxed/~pulls/1`);
    expect(review.url).toBe(`${server.url}/~api/notifications/threads/${review.id}`);
    const mention = await threadOf(carol, 'PullRequest', 'Inbox me');
    expect(mention).toHaveLength(1); // two mentions, one thread
    expect(mention[0]).toMatchObject({ unread: true, reason: 'mention' });
    const watched = await eventually(async () => {
      const rows = await threadOf(dave, 'Issue', 'Watched issue');
      return rows.length === 1 && rows[0].reason === 'comment' ? rows : null;
    });
    expect(watched![0].subject.url).toBe(`${server.url}/inboxed/~issues/1`);
    expect(await threadOf(alice, 'Issue', 'Watched issue')).toMatchObject([{ reason: 'author', unread: true }]);
    // nobody hears of their own actions
    expect(await threadOf(erin, 'Issue', 'Watched issue')).toEqual([]);
    expect(await threadOf(bob, 'PullRequest', 'Inbox me')).toHaveLength(1);
    expect((await inbox(alice)).filter((t) => t.subject.title === 'Inbox me').map((t) => t.reason)).toEqual(['author']);
  }, 60_000);

  it('marks a thread read when its page is opened, and counts unread ones in the header', async () => {
    const before = await page(bob, '/~projects');
    expect(await before.text()).toContain('<span class="inbox-count">1</span>');
    const opened = await page(bob, '/inboxed/~pulls/1');
    expect(opened.status).toBe(200);
    expect(await opened.text()).toMatch(/href="\/~inbox">Inbox<\/a>/);
    const [read] = await threadOf(bob, 'PullRequest', 'Inbox me');
    expect(read.unread).toBe(false);
    expect(read.last_read_at).not.toBeNull();
    expect((await page(carol, '/inboxed/~pulls/1')).status).toBe(200);
    expect((await threadOf(carol, 'PullRequest', 'Inbox me'))[0].unread).toBe(false);
    expect((await page(dave, '/inboxed/~issues/1')).status).toBe(200);
    expect((await threadOf(dave, 'Issue', 'Watched issue'))[0].unread).toBe(false);
    // anonymous visitors have no inbox link
    expect(await (await fetch(`${server.url}/~projects`)).text()).not.toContain('href="/~inbox"');
  });

  it('lists unread threads by default, and filters by participation and date', async () => {
    expect((await inbox(bob, '')).map((t) => t.subject.title)).toEqual([]);
    expect((await inbox(alice, '')).map((t) => t.subject.title)).toEqual(['Watched issue', 'Inbox me']);
    expect((await inbox(dave, 'all=true&participating=true')).map((t) => t.reason)).toEqual([]);
    expect((await inbox(carol, 'all=true&participating=true')).map((t) => t.reason)).toEqual(['mention']);
    const [newest, oldest] = await inbox(alice);
    expect((await inbox(alice, `all=true&since=${encodeURIComponent(newest.updated_at)}`)).map((t) => t.id)).toEqual([newest.id]);
    expect((await inbox(alice, `all=true&before=${encodeURIComponent(newest.updated_at)}`)).map((t) => t.id)).toEqual([oldest.id]);
    expect((await inbox(alice, 'all=true&per_page=1&page=2')).map((t) => t.id)).toEqual([oldest.id]);
    expect(await inbox(alice, 'all=true&per_page=1&page=3')).toEqual([]);
  });

  it('reads, marks read, unread and done one thread, and marks all read', async () => {
    const [thread] = await threadOf(alice, 'Issue', 'Watched issue');
    const get = await server.call('GET', `/notifications/threads/${thread.id}`, { auth: alice.auth });
    expect(get.status).toBe(200);
    expect(get.json).toEqual(thread);

    const read = await server.call('PATCH', `/notifications/threads/${thread.id}`, { auth: alice.auth });
    expect(read.status).toBe(205);
    expect((await server.call('GET', `/notifications/threads/${thread.id}`, { auth: alice.auth })).json).toMatchObject({ unread: false });
    const unread = await server.call('PATCH', `/notifications/threads/${thread.id}`, { body: { unread: true }, auth: alice.auth });
    expect(unread.status).toBe(205);
    expect((await server.call('GET', `/notifications/threads/${thread.id}`, { auth: alice.auth })).json).toMatchObject({ unread: true });

    const done = await server.call('DELETE', `/notifications/threads/${thread.id}`, { auth: alice.auth });
    expect(done.status).toBe(204);
    expect((await inbox(alice)).map((t) => t.id)).not.toContain(thread.id);
    // a new event brings the thread back, unread, as the same thread
    expect((await server.call('POST', '/issue-comments', { body: { issueId, content: 'Back' }, auth: erin.auth })).status).toBe(200);
    expect(await eventually(async () => (await inbox(alice, '')).some((t) => t.id === thread.id))).toBe(true);

    const past = await server.call('PUT', '/notifications', { body: { last_read_at: '2000-01-01T00:00:00Z' }, auth: alice.auth });
    expect(past.status).toBe(205);
    expect((await inbox(alice, '')).length).toBe(2);
    const all = await server.call('PUT', '/notifications', { auth: alice.auth });
    expect(all.status).toBe(205);
    expect(await inbox(alice, '')).toEqual([]);
    expect((await inbox(alice)).length).toBe(2);
  });

  it('answers 404 for unknown and foreign threads, 400 for bad parameters, 401 anonymously', async () => {
    const [foreign] = await threadOf(carol, 'PullRequest', 'Inbox me');
    for (const id of [foreign.id, '999999']) {
      for (const method of ['GET', 'PATCH', 'DELETE']) {
        const res = await server.call(method, `/notifications/threads/${id}`, { auth: alice.auth });
        expect(res.status, `${method} ${id}`).toBe(404);
        expect(res.headers.get('content-type')).toContain('application/problem+json');
      }
    }
    expect((await server.call('GET', `/notifications/threads/${foreign.id}`, { auth: carol.auth })).status).toBe(200);
    for (const query of ['per_page=500', 'per_page=0', 'page=0', 'all=maybe', 'since=yesterday', 'before=2024-13-45', 'sort=asc']) {
      const res = await server.call('GET', `/notifications?${query}`, { auth: alice.auth });
      expect(res.status, query).toBe(400);
      expect(res.headers.get('content-type'), query).toContain('application/problem+json');
    }
    // a path id that is no number names no thread, as everywhere in the API
    expect((await server.call('GET', '/notifications/threads/abc', { auth: alice.auth })).status).toBe(404);
    expect((await server.call('PATCH', `/notifications/threads/${foreign.id}`, { body: { unread: 'yes' }, auth: carol.auth })).status).toBe(400);
    expect((await server.call('PUT', '/notifications', { body: { last_read_at: 'soon' }, auth: alice.auth })).status).toBe(400);
    expect((await server.call('GET', '/notifications', { auth: null })).status).toBe(401);
    const doc = (await (await fetch(`${server.url}/~api/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.paths['/~api/notifications']).sort()).toEqual(['get', 'put']);
    expect(Object.keys(doc.paths['/~api/notifications/threads/{threadId}']).sort()).toEqual(['delete', 'get', 'patch']);
    expect((await server.call('PUT', '/notifications', { auth: null })).status).toBe(401);
  });

  it('follows the settings: inbox off for a reason adds no row, mail off sends no mail but adds the row', async () => {
    const carolSession = await signInByFetch(server, 'carol', carol.password);
    const daveSession = await signInByFetch(server, 'dave', dave.password);
    const save = (session: typeof carolSession, fields: Record<string, string>) =>
      fetch(`${server.url}/~my/notifications`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
        body: new URLSearchParams({ _csrf: session.csrfToken, ...fields }).toString(),
      });
    const everythingBut = (off: string) =>
      Object.fromEntries(
        ['participating', 'mentions', 'review_requests', 'assignments', 'watching', 'builds']
          .flatMap((g) => [`${g}-inbox`, `${g}-mail`])
          .filter((f) => f !== off)
          .map((f) => [f, 'on']),
      );
    expect((await save(carolSession, everythingBut('mentions-inbox'))).status).toBe(200);
    expect((await save(daveSession, everythingBut('watching-mail'))).status).toBe(200);
    const settings = await (await fetch(`${server.url}/~my/notifications`, { headers: { cookie: daveSession.cookie } })).text();
    expect(settings).toContain('<title>Notifications · My settings · Gitloom</title>');
    expect(settings).toMatch(/id="field-watching-mail" name="watching-mail" value="on"\/>/);
    expect(settings).toMatch(/id="field-watching-inbox" name="watching-inbox" value="on" checked/);

    const issue = await server.call('POST', '/issues', {
      body: { projectId: repo.id, title: 'Settings issue', description: 'Hello @carol' },
      auth: alice.auth,
    });
    expect(issue.status).toBe(200);
    // carol is mailed the mention, and has no row of it
    expect(await eventually(async () => subjects(carol).includes('[Issue inboxed#2] (Mentioned You) Settings issue'))).toBe(true);
    expect(await threadOf(carol, 'Issue', 'Settings issue')).toEqual([]);

    expect((await server.call('POST', '/issue-comments', { body: { issueId: issue.json, content: 'Joining' }, auth: dave.auth })).status).toBe(200);
    expect((await server.call('POST', '/issue-comments', { body: { issueId: issue.json, content: 'Welcome' }, auth: erin.auth })).status).toBe(200);
    // alice, the author, is mailed both comments: the second, erin's, event was expanded (its mails
    // and inbox rows come of one transaction)
    const commented = () => subjects(alice).filter((s) => s === '[Issue inboxed#2] (Commented) Settings issue').length;
    expect(await eventually(async () => commented() === 2)).toBe(true);
    expect(await threadOf(dave, 'Issue', 'Settings issue')).toMatchObject([{ reason: 'comment', unread: true }]);
    expect(subjects(dave).filter((s) => s.includes('Settings issue'))).toEqual([]);
  }, 60_000);

  it('tells the submitter of a failed build of their pull request, read when the build page is opened', async () => {
    const built = await givenRepo(server, 'built', {
      files: { 'README.md': '# built\n', '.onedev-buildspec.yml': commandSpec({ name: 'Checks', commands: ['exit 1'], trigger: 'PullRequestUpdateTrigger' }) },
    });
    await grantRole(server, built.id, erin.id, 'Code Writer');
    await built.commitOn('fix', { 'fix.txt': 'x\n' }, 'fix');
    const pr = await server.call('POST', '/pulls', {
      body: { targetProjectId: built.id, sourceProjectId: built.id, targetBranch: 'main', sourceBranch: 'fix', title: 'Built me' },
      auth: erin.auth,
    });
    expect(pr.status, pr.text).toBe(200);
    const failed = await eventually(async () => (await inbox(erin)).find((t) => t.subject.type === 'Build') ?? null, 30_000);
    expect(failed).toMatchObject({ reason: 'ci_activity', unread: true, project: { id: built.id, path: 'built' } });
    expect(failed!.subject.title).toMatch(/^Build #\d+ \(Checks\) of pull request #1 failed$/);
    const path = new URL(failed!.subject.url).pathname;
    expect((await page(erin, path)).status).toBe(200);
    expect((await server.call('GET', `/notifications/threads/${failed!.id}`, { auth: erin.auth })).json).toMatchObject({ unread: false });
  }, 60_000);

  it("puts a code comment in its pull request's thread, another one in its own, linked to the file", async () => {
    const main = await repo.head('main');
    const feature = await repo.head('feature');
    const comment = (pullRequestId: number | null, content: string) =>
      server.call('POST', '/code-comments', {
        auth: erin.auth,
        body: {
          projectId: repo.id,
          content,
          mark: { commitHash: feature, path: 'README.md', range: { fromRow: 0, fromColumn: 0, toRow: 0, toColumn: 5 } },
          compareContext: {
            pullRequestId,
            oldCommitHash: main,
            newCommitHash: feature,
            pathFilter: null,
            currentFile: 'README.md',
            whitespaceOption: 'DEFAULT',
          },
        },
      });
    expect((await comment(prId, 'On the request, @dave')).status).toBe(200);
    expect((await comment(null, 'On the file, @dave')).status).toBe(200);
    const [own] = (await eventually(async () => {
      const rows = (await inbox(dave)).filter((t) => t.subject.type === 'CodeComment');
      return rows.length === 1 ? rows : null;
    }))!;
    expect(own).toMatchObject({ reason: 'mention', unread: true, subject: { title: 'Code comment on README.md' } });
    expect(own.subject.url).toBe(`${server.url}/inboxed/~files/${feature}/README.md`);
    expect((await page(dave, new URL(own.subject.url).pathname)).status).toBe(200);
    expect(await threadOf(dave, 'PullRequest', 'Inbox me')).toMatchObject([{ reason: 'mention', unread: true }]);
  });

  it("forgets a deleted pull request's thread", async () => {
    expect(await threadOf(carol, 'PullRequest', 'Inbox me')).toHaveLength(1);
    expect((await server.call('DELETE', `/pulls/${prId}`)).status).toBe(200);
    for (const user of [alice, bob, carol]) expect(await threadOf(user, 'PullRequest', 'Inbox me')).toEqual([]);
  });
});
