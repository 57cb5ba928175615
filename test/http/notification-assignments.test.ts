import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInByFetch } from '../helpers/browser.js';
import { eventually, givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { startHttpReceiver, startSmtpReceiver } from '../helpers/receivers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

interface Thread {
  id: string;
  unread: boolean;
  reason: string;
  subject: { title: string; type: string };
}

/**
 * Assignments tell the assignee (docs/compatibility.md#mentions-and-notifications,
 * docs/compatibility.md#notification-inbox): inbox reason `assign`, an "(Assigned)" mail as the
 * settings say, never the user who assigned; the webhooks get PullRequestAssigned and IssueChanged.
 */
describe('assignment notifications', () => {
  let smtp: Awaited<ReturnType<typeof startSmtpReceiver>>;
  let hooks: Awaited<ReturnType<typeof startHttpReceiver>>;
  let server: TestServer;
  let repo: Repo;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let dave: TestUser;
  let prId: number;

  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    hooks = await startHttpReceiver();
    server = await startTestServer({
      GITLOOM_SMTP_URL: smtp.url,
      GITLOOM_SMTP_FROM: 'Gitloom <forge@example.com>',
      GITLOOM_OUTBOX_BACKOFF_MS: '50',
      GITLOOM_WEBHOOK_ALLOW_PRIVATE: 'true',
    });
    [alice, bob, carol, dave] = await givenUsers(server, 'alice', 'bob', 'carol', 'dave');
    repo = await givenRepo(server, 'assigned', { files: { 'README.md': '# assigned\n' } });
    for (const user of [alice, bob, carol, dave]) await grantRole(server, repo.id, user.id, 'Code Writer');
    const setting = (await server.call('GET', `/projects/${repo.id}/setting`)).json;
    const saved = await server.call('POST', `/projects/${repo.id}/setting`, {
      body: { ...setting, webHooks: [{ postUrl: `${hooks.url}/hook`, eventTypes: ['PULL_REQUEST', 'ISSUE'], secret: 's' }] },
    });
    expect(saved.status, saved.text).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
    await hooks?.close();
    await removeWorkTrees();
  });

  const inbox = async (user: TestUser, query = 'all=true') => {
    const res = await server.call('GET', `/notifications?${query}`, { auth: user.auth });
    expect(res.status, res.text).toBe(200);
    return (res.json as Thread[]).filter((t) => t.subject.title === 'Assign me');
  };
  const subjects = (user: TestUser) => smtp.mails.filter((m) => m.envelopeTo.includes(`${user.name}@example.com`)).map((m) => m.subject ?? '');
  const assign = async (user: TestUser, by: TestUser) => {
    const res = await server.call('POST', '/pull-request-assignments', { body: { requestId: prId, userId: user.id }, auth: by.auth });
    expect(res.status, res.text).toBe(200);
  };
  const SUBJECT = '[Pull Request assigned#1] (Assigned) Assign me';

  it('tells an assignee named at opening, with reason assign and an (Assigned) mail', async () => {
    await repo.commitOn('feature', { 'feature.txt': 'x\n' }, 'feature');
    const pr = await server.call('POST', '/pulls', {
      body: { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'feature', title: 'Assign me', assigneeIds: [bob.id] },
      auth: alice.auth,
    });
    expect(pr.status, pr.text).toBe(200);
    prId = pr.json as number;
    expect(await eventually(async () => subjects(bob).includes(SUBJECT))).toBe(true);
    expect(await inbox(bob)).toMatchObject([{ reason: 'assign', unread: true, subject: { type: 'PullRequest' } }]);
    expect(await inbox(alice)).toEqual([]);
  }, 60_000);

  it('tells a user assigned later once, never the user who assigned, and lists it under the filters', async () => {
    await assign(carol, alice);
    expect(await eventually(async () => subjects(carol).includes(SUBJECT))).toBe(true);
    const mail = smtp.mails.find((m) => m.envelopeTo.includes('carol@example.com') && m.subject === SUBJECT)!;
    expect(mail.text).toContain('alice Full assigned you to pull request #1: Assign me');
    expect(await inbox(carol)).toMatchObject([{ reason: 'assign', unread: true }]);
    expect((await inbox(carol, 'all=true&participating=true')).map((t) => t.reason)).toEqual(['assign']);
    // assigning oneself tells nobody; alice, who assigned, has nothing either
    await assign(alice, alice);
    // the webhook of pull requests announces each assignment made later, as OneDev's PullRequestAssigned
    const assigned = await eventually(async () => {
      const bodies = hooks.received.map((r) => JSON.parse(r.body) as { '@type': string; assigneeId?: number });
      const found = bodies.filter((b) => b['@type'] === 'PullRequestAssigned');
      return found.length === 2 ? found : null;
    });
    expect(assigned!.map((b) => b.assigneeId)).toEqual([carol.id, alice.id]);
    // both events are expanded (their deliveries exist): alice has no row
    expect(await inbox(alice)).toEqual([]);
    // the inbox page's filter
    const session = await signInByFetch(server, 'carol', carol.password);
    const page = await (await fetch(`${server.url}/~inbox?query=assigned`, { headers: { cookie: session.cookie } })).text();
    expect(page).toContain('Assign me');
    expect(page).toContain('<span class="badge">assigned</span>');
    const mentions = await (await fetch(`${server.url}/~inbox?query=mentions`, { headers: { cookie: session.cookie } })).text();
    expect(mentions).not.toContain('Assign me');
    expect(subjects(carol).filter((s) => s === SUBJECT)).toHaveLength(1);
  }, 60_000);

  it('follows the settings of the assignments group: mail off adds the row without a mail, inbox off mails without a row', async () => {
    const daveSession = await signInByFetch(server, 'dave', dave.password);
    const fields = Object.fromEntries(
      ['participating', 'mentions', 'review_requests', 'assignments', 'watching', 'builds']
        .flatMap((g) => [`${g}-inbox`, `${g}-mail`])
        .filter((f) => f !== 'assignments-mail')
        .map((f) => [f, 'on']),
    );
    const saved = await fetch(`${server.url}/~my/notifications`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: daveSession.cookie },
      body: new URLSearchParams({ _csrf: daveSession.csrfToken, ...fields }).toString(),
    });
    expect(saved.status).toBe(200);
    const settings = await saved.text();
    expect(settings).toContain('Assignments (pull requests and issues assigned to you)');
    expect(settings).toMatch(/name="assignments-mail" value="on"\/>/);
    await assign(dave, alice);
    expect(await eventually(async () => (await inbox(dave)).length === 1 || null)).toBe(true);
    expect(await inbox(dave)).toMatchObject([{ reason: 'assign' }]);

    const bobSession = await signInByFetch(server, 'bob', bob.password);
    const bobFields = { ...fields, 'assignments-mail': 'on' } as Record<string, string>;
    delete bobFields['assignments-inbox'];
    await fetch(`${server.url}/~my/notifications`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: bobSession.cookie },
      body: new URLSearchParams({ _csrf: bobSession.csrfToken, ...bobFields }).toString(),
    });
    // a second pull request assigned to bob: a mail, no new row
    await repo.commitOn('second', { 'second.txt': 'x\n' }, 'second');
    const pr = await server.call('POST', '/pulls', {
      body: { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'second', title: 'Second', assigneeIds: [bob.id] },
      auth: alice.auth,
    });
    expect(pr.status, pr.text).toBe(200);
    expect(await eventually(async () => subjects(bob).includes('[Pull Request assigned#2] (Assigned) Second'))).toBe(true);
    const bobs = (await server.call('GET', '/notifications?all=true', { auth: bob.auth })).json as Thread[];
    expect(bobs.map((t) => t.subject.title)).toEqual(['Assign me']);
    // dave was mailed nothing of the assignment, alice nothing of assigning
    expect(subjects(dave)).toEqual([]);
    expect(subjects(alice)).toEqual([]);
  }, 60_000);

  it("tells the users put in an issue's user field: at opening, by a change of fields and by a transition, as their settings say", async () => {
    const threads = async (user: TestUser) =>
      ((await server.call('GET', '/notifications?all=true', { auth: user.auth })).json as Thread[]).filter((t) => t.subject.title === 'Assign issue');
    const SUBJECT_ISSUE = '[Issue assigned#1] (Assignees: You) Assign issue';
    const opened = await server.call('POST', '/issues', {
      body: { projectId: repo.id, title: 'Assign issue', fields: { Assignees: ['carol', 'alice'] } },
      auth: alice.auth,
    });
    expect(opened.status, opened.text).toBe(200);
    const issueId = opened.json as number;
    expect(await eventually(async () => subjects(carol).includes(SUBJECT_ISSUE))).toBe(true);
    expect(await threads(carol)).toMatchObject([{ reason: 'assign', subject: { type: 'Issue' } }]);
    expect(await threads(alice)).toEqual([]);

    // bob (inbox off for assignments) is mailed, carol, already assigned, is not told again
    const changed = await server.call('POST', `/issues/${issueId}/fields`, { body: { Assignees: ['carol', 'bob'] } });
    expect(changed.status, changed.text).toBe(200);
    expect(await eventually(async () => subjects(bob).includes(SUBJECT_ISSUE))).toBe(true);
    expect(await threads(bob)).toEqual([]);
    // the change of fields is OneDev's IssueChanged for the issue webhooks
    const issueChanged = await eventually(async () => {
      const found = hooks.received.map((r) => JSON.parse(r.body) as { '@type': string; issue?: { id: number } }).filter((b) => b['@type'] === 'IssueChanged');
      return found.length > 0 ? found : null;
    });
    expect(issueChanged!.map((b) => b.issue?.id)).toEqual([issueId]);

    // dave (mail off for assignments) gets the row, put in the field by a transition
    const closed = await server.call('POST', `/issues/${issueId}/state-transitions`, {
      body: { state: 'Closed', fields: { Assignees: ['carol', 'bob', 'dave'] } },
    });
    expect(closed.status, closed.text).toBe(200);
    expect(await eventually(async () => (await threads(dave)).length === 1 || null)).toBe(true);
    expect(await threads(dave)).toMatchObject([{ reason: 'assign' }]);
    // carol watches the issue: she hears of the transition as a watcher
    expect(await eventually(async () => subjects(carol).some((s) => s.startsWith('[Issue assigned#1] (State Changed)')))).toBe(true);
    expect(subjects(carol).filter((s) => s === SUBJECT_ISSUE)).toHaveLength(1);
    expect(subjects(dave)).toEqual([]);
  }, 60_000);

  it('lets a user put in a user field of a confidential issue see it', async () => {
    const [frank] = await givenUsers(server, 'frank');
    await grantRole(server, repo.id, frank.id, 'Issue Reporter');
    const open = async (fields: Record<string, string[]>) => {
      const res = await server.call('POST', '/issues', { body: { projectId: repo.id, title: 'Secret', confidential: true, fields } });
      expect(res.status, res.text).toBe(200);
      return res.json as number;
    };
    const hidden = await open({});
    const shown = await open({ Assignees: ['frank'] });
    expect((await server.call('GET', `/issues/${hidden}`, { auth: frank.auth })).status).not.toBe(200);
    expect((await server.call('GET', `/issues/${shown}`, { auth: frank.auth })).status).toBe(200);
  });
});
