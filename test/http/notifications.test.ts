import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandSpec, eventually, givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { startSmtpReceiver } from '../helpers/receivers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const SPEC = commandSpec({ name: 'Checks', commands: ['exit 1'], trigger: 'PullRequestUpdateTrigger' });

describe('email notifications through a real SMTP server', () => {
  let smtp: Awaited<ReturnType<typeof startSmtpReceiver>>;
  let server: TestServer;
  let repo: Repo;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let dave: TestUser;

  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    server = await startTestServer({ GITLOOM_SMTP_URL: smtp.url, GITLOOM_SMTP_FROM: 'Gitloom <forge@example.com>', GITLOOM_OUTBOX_BACKOFF_MS: '50' });
    [alice, bob, carol, dave] = await givenUsers(server, 'alice', 'bob', 'carol', 'dave');
    repo = await givenRepo(server, 'mailed', { files: { 'README.md': '# mailed\n', '.onedev-buildspec.yml': SPEC } });
    for (const user of [alice, bob, carol, dave]) await grantRole(server, repo.id, user.id, 'Code Writer');
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
    await removeWorkTrees();
  });

  const to = (user: { name: string }) => smtp.mails.filter((m) => m.envelopeTo.includes(`${user.name}@example.com`));
  // sorted: mails of different events may be sent concurrently
  const subjects = (user: { name: string }) =>
    to(user)
      .map((m) => m.subject ?? '')
      .sort();

  it('mails watchers, mentioned users and the submitter, never the actor, threaded', async () => {
    await repo.commitOn('feature', { 'feature.txt': 'x\n' }, 'feature');
    const pr = await server.call('POST', '/pulls', {
      body: { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'feature', title: 'Mail me', reviewerIds: [bob.id] },
      auth: alice.auth,
    });
    expect(pr.status, pr.text).toBe(200);
    // dave is asked for a review afterwards
    expect((await server.call('POST', '/pull-request-reviews', { body: { requestId: pr.json, userId: dave.id } })).status).toBe(200);
    const comment = await server.call('POST', '/pull-request-comments', {
      body: { requestId: pr.json, content: 'Looks fine, @carol please check' },
      auth: bob.auth,
    });
    expect(comment.status, comment.text).toBe(200);

    const prefix = '[Pull Request mailed#1]';
    expect(
      await eventually(async () => subjects(carol).includes(`${prefix} (Mentioned You) Mail me`) && subjects(alice).includes(`${prefix} (Commented) Mail me`)),
    ).toBe(true);
    // the build triggered by the request fails: its submitter hears of it
    expect(await eventually(async () => subjects(alice).some((s) => /^\[Build mailed#\d+\] Checks failed for pull request #1$/.test(s)), 30_000)).toBe(true);

    for (const review of (await server.call('GET', `/pulls/${pr.json}/reviews`)).json as { id: number; userId: number }[]) {
      const reviewer = [bob, dave].find((u) => u.id === review.userId)!;
      const approved = await server.call('POST', `/pull-request-reviews/${review.id}`, { body: { status: 'APPROVED' }, auth: reviewer.auth });
      expect(approved.status, approved.text).toBe(200);
    }
    const merged = await server.call('POST', `/pulls/${pr.json}/merge`, { text: '' });
    expect(merged.status, merged.text).toBe(200);
    expect(await eventually(async () => [alice, bob, carol, dave].every((u) => subjects(u).includes(`${prefix} (Merged) Mail me`)))).toBe(true);

    expect(subjects(bob)).toEqual([`${prefix} (Review Requested) Mail me`, `${prefix} (Merged) Mail me`].sort()); // nothing for his own comment
    expect(subjects(dave)).toEqual([`${prefix} (Review Requested) Mail me`, `${prefix} (Commented) Mail me`, `${prefix} (Merged) Mail me`].sort());
    expect(subjects(carol)).toEqual([`${prefix} (Mentioned You) Mail me`, `${prefix} (Merged) Mail me`].sort()); // one mail for the comment, not two
    expect(subjects(alice).filter((s) => s.startsWith(prefix))).toEqual([`${prefix} (Commented) Mail me`, `${prefix} (Merged) Mail me`].sort());
    expect(to({ name: 'admin' })).toEqual([]); // the merger acted

    const opened = to(bob).find((m) => m.subject?.includes('(Review Requested)'))!;
    const mention = to(carol).find((m) => m.subject?.includes('(Mentioned You)'))!;
    expect(opened.from?.value).toEqual([{ name: 'Gitloom', address: 'forge@example.com' }]);
    expect(opened.messageId).toMatch(/^<pull-request-[0-9a-f-]{36}@/);
    expect(mention.inReplyTo).toBe(opened.messageId);
    expect(mention.references).toBe(opened.messageId);
    expect(mention.messageId).not.toBe(opened.messageId);
    expect(mention.text).toContain('Looks fine, @carol please check');
    expect(mention.text).toContain(`${server.url}/mailed/~pulls/1`);
    expect(mention.html).toContain('Looks fine, @carol please check');
  }, 90_000);

  it('mails issue watchers on comments and state changes, and the mentioned user', async () => {
    const issue = await server.call('POST', '/issues', { body: { projectId: repo.id, title: 'Broken <b>thing</b>' }, auth: alice.auth });
    expect(issue.status, issue.text).toBe(200);
    expect((await server.call('POST', '/issue-comments', { body: { issueId: issue.json, content: 'Same here @dave' }, auth: bob.auth })).status).toBe(200);
    expect((await server.call('POST', `/issues/${issue.json}/state-transitions`, { body: { state: 'Closed' } })).status).toBe(200);
    const prefix = '[Issue mailed#1]';
    expect(await eventually(async () => [alice, bob, dave].every((u) => subjects(u).includes(`${prefix} (State Changed) Broken <b>thing</b>`)))).toBe(true);
    expect(subjects(alice).filter((s) => s.startsWith(prefix))).toEqual(
      [`${prefix} (Commented) Broken <b>thing</b>`, `${prefix} (State Changed) Broken <b>thing</b>`].sort(),
    );
    expect(subjects(dave).filter((s) => s.startsWith(prefix))).toEqual(
      [`${prefix} (Mentioned You) Broken <b>thing</b>`, `${prefix} (State Changed) Broken <b>thing</b>`].sort(),
    );
    expect(subjects(carol).filter((s) => s.startsWith(prefix))).toEqual([]);
    const html = to(dave).find((m) => m.subject?.startsWith(prefix))!.html as string;
    expect(html).toContain('Broken &#60;b&#62;thing&#60;/b&#62;');
  }, 60_000);
});
