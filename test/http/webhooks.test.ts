import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, commitFiles, git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';
import { commandSpec, eventually, givenProject, removeWorkTrees, runJobOnCommit } from '../helpers/fixtures.js';
import { startHttpReceiver } from '../helpers/receivers.js';

const ALL = ['CODE_PUSH', 'PULL_REQUEST', 'ISSUE', 'CODE_COMMENT', 'BUILD'];
const SPEC = commandSpec({ name: 'Broken', commands: ['exit 1'] });

async function setWebHooks(server: TestServer, projectId: number, webHooks: unknown[]): Promise<void> {
  const setting = (await server.call('GET', `/projects/${projectId}/setting`)).json;
  const res = await server.call('POST', `/projects/${projectId}/setting`, { body: { ...setting, webHooks } });
  expect(res.status, res.text).toBe(200);
}

describe('webhooks: signed, durable, retried deliveries', () => {
  let server: TestServer;
  let receiver: Awaited<ReturnType<typeof startHttpReceiver>>;
  let parent: number;
  let child: number;
  let work: string;
  const remote = () => gitUrl(server, 'hooks/app', ADMIN);

  beforeAll(async () => {
    // requests to /flaky fail three times, then succeed
    let flaky = 0;
    receiver = await startHttpReceiver((req) => (req.path === '/flaky' && ++flaky <= 3 ? 503 : 200));
    server = await startTestServer({ GITLOOM_WEBHOOK_ALLOW_PRIVATE: 'true', GITLOOM_OUTBOX_BACKOFF_MS: '50' });
    parent = await givenProject(server, { name: 'hooks' });
    child = await givenProject(server, { name: 'app', parentId: parent });
    // set on the parent, inherited by the child
    await setWebHooks(server, parent, [{ postUrl: `${receiver.url}/all`, eventTypes: ALL, secret: 'sesame' }]);
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
    await removeWorkTrees();
  });

  const deliveriesOf = (type: string) => receiver.received.filter((r) => r.path === '/all' && r.headers['x-gitloom-event'] === type);

  it('validates the setting and generates a missing secret', async () => {
    const bad = await server.call('POST', `/projects/${child}/setting`, { body: { webHooks: [{ postUrl: 'ftp://x', eventTypes: ['ISSUE'] }] } });
    expect(bad.status).toBe(400);
    expect(bad.json.detail).toContain('postUrl');
    const unknownType = await server.call('POST', `/projects/${child}/setting`, {
      body: { webHooks: [{ postUrl: 'http://example.com', eventTypes: ['NOPE'] }] },
    });
    expect(unknownType.status).toBe(400);
    await setWebHooks(server, child, [{ postUrl: 'http://example.com/x', eventTypes: [] }]);
    const stored = (await server.call('GET', `/projects/${child}/setting`)).json.webHooks;
    expect(stored[0].secret).toMatch(/^[\w-]{20,}$/);
    await setWebHooks(server, child, []);
  });

  it('posts each event type, signed, to the hook inherited from the parent project', async () => {
    work = await makeWorkTree({ 'README.md': '# app\n', '.onedev-buildspec.yml': SPEC });
    const head = (await git(work, ['rev-parse', 'HEAD'])).trim();
    await git(work, ['push', '-q', remote(), 'main']);
    await git(work, ['checkout', '-q', '-b', 'feature']);
    await commitFiles(work, { 'feature.txt': 'new\n' }, 'feature');
    await git(work, ['push', '-q', remote(), 'feature']);

    const pr = await server.call('POST', '/pulls', {
      body: { targetProjectId: child, sourceProjectId: child, targetBranch: 'main', sourceBranch: 'feature', title: 'Add feature' },
    });
    expect(pr.status, pr.text).toBe(200);
    expect((await server.call('POST', '/pull-request-comments', { body: { requestId: pr.json, content: 'looks good' } })).status).toBe(200);
    const issue = await server.call('POST', '/issues', { body: { projectId: child, title: 'A bug', description: 'it breaks' } });
    expect(issue.status, issue.text).toBe(200);
    const comment = await server.call('POST', '/code-comments', {
      body: {
        projectId: child,
        content: 'why?',
        mark: { commitHash: head, path: 'README.md', range: { fromRow: 0, fromColumn: 0, toRow: 0, toColumn: 3 } },
        compareContext: {
          pullRequestId: null,
          oldCommitHash: '0'.repeat(40),
          newCommitHash: head,
          pathFilter: null,
          currentFile: null,
          whitespaceOption: 'DEFAULT',
        },
      },
    });
    expect(comment.status, comment.text).toBe(200);
    const build = await runJobOnCommit(server, { projectId: child, commitHash: head, jobName: 'Broken', reason: 'hook test' });
    expect(build.status, build.text).toBe(200);

    const got = await eventually(async () => {
      const builds = deliveriesOf('BUILD').map((d) => JSON.parse(d.body).build.status);
      return ALL.every((t) => deliveriesOf(t).length > 0) && builds.includes('FAILED') ? true : null;
    }, 30_000);
    expect(got, JSON.stringify(receiver.received.map((r) => r.headers['x-gitloom-event']))).toBe(true);

    for (const delivery of receiver.received.filter((r) => r.path === '/all')) {
      expect(delivery.headers['content-type']).toBe('application/json');
      expect(delivery.headers['x-onedev-signature']).toBe('sesame');
      const hmac = createHmac('sha256', 'sesame').update(delivery.body).digest('hex');
      expect(delivery.headers['x-gitloom-signature-256']).toBe(`sha256=${hmac}`);
      expect(delivery.headers['x-gitloom-delivery']).toMatch(/^[0-9a-f-]{36}$/);
    }
    const push = deliveriesOf('CODE_PUSH').map((d) => JSON.parse(d.body));
    expect(push).toContainEqual(
      expect.objectContaining({ '@type': 'RefUpdated', projectId: child, refName: 'refs/heads/main', oldCommitId: null, newCommitId: head }),
    );
    const pulls = deliveriesOf('PULL_REQUEST').map((d) => JSON.parse(d.body));
    expect(pulls.map((p) => p['@type'])).toEqual(expect.arrayContaining(['PullRequestOpened', 'PullRequestCommentCreated']));
    expect(pulls.find((p) => p['@type'] === 'PullRequestCommentCreated')).toMatchObject({
      text: 'looks good',
      pullRequest: { id: pr.json, title: 'Add feature' },
    });
    expect(JSON.parse(deliveriesOf('ISSUE')[0].body)).toMatchObject({ '@type': 'IssueOpened', issue: { id: issue.json, title: 'A bug' }, text: 'it breaks' });
    expect(JSON.parse(deliveriesOf('CODE_COMMENT')[0].body)).toMatchObject({ '@type': 'CodeCommentCreated', codeComment: { id: comment.json } });
    expect(deliveriesOf('BUILD').map((d) => JSON.parse(d.body).build.id)).toContain(build.json);

    const merged = await server.call('POST', `/pulls/${pr.json}/merge`, { text: '' });
    expect(merged.status, merged.text).toBe(200);
    const mergeDelivery = await eventually(async () =>
      deliveriesOf('PULL_REQUEST')
        .map((d) => JSON.parse(d.body))
        .find((p) => p['@type'] === 'PullRequestMerged'),
    );
    expect(mergeDelivery).toMatchObject({ pullRequest: { id: pr.json, status: 'MERGED' } });

    // the deliveries are listed with their attempts; the secret is not shown (the merge's own
    // push event may still be on its way: wait until every listed delivery was tried)
    await server.settled();
    const tried = await eventually(async () => {
      const res = await server.call('GET', `/projects/${child}/webhook-deliveries`);
      return (res.json as { attemptCount: number }[]).every((d) => d.attemptCount > 0) ? res : null;
    });
    expect(tried, 'every delivery tried').not.toBeNull();
    const listed = tried!;
    expect(listed.status).toBe(200);
    expect(listed.json.length).toBeGreaterThanOrEqual(7);
    expect(listed.json[0]).toMatchObject({ projectId: child, postUrl: `${receiver.url}/all`, attemptCount: 1 });
    expect(listed.text).not.toContain('sesame');
    const delivered = listed.json.find((d: any) => d.status === 'DELIVERED');
    expect(delivered.attempts).toEqual([expect.objectContaining({ successful: true, responseStatus: 200, responseExcerpt: 'thanks' })]);
  });

  it('retries a failing receiver with backoff and records every attempt; redelivers on request', async () => {
    await setWebHooks(server, child, [{ postUrl: `${receiver.url}/flaky`, eventTypes: ['ISSUE'], secret: 'x' }]);
    const issue = await server.call('POST', '/issues', { body: { projectId: child, title: 'Flaky' } });
    expect(issue.status).toBe(200);
    const delivery = await eventually(async () => {
      const list = (await server.call('GET', `/projects/${child}/webhook-deliveries`)).json as any[];
      return list.find((d) => d.postUrl.endsWith('/flaky') && d.status === 'DELIVERED');
    }, 30_000);
    expect(delivery).toMatchObject({ attemptCount: 4 });
    expect(delivery.attempts.map((a: any) => [a.successful, a.responseStatus])).toEqual([
      [false, 503],
      [false, 503],
      [false, 503],
      [true, 200],
    ]);
    expect(delivery.attempts[0].responseExcerpt).toBe('not now');
    const flakyBodies = receiver.received.filter((r) => r.path === '/flaky');
    expect(flakyBodies).toHaveLength(4);
    expect(new Set(flakyBodies.map((r) => r.headers['x-gitloom-delivery']))).toEqual(new Set([delivery.deliveryId]));

    const again = await server.call('POST', `/webhook-deliveries/${delivery.id}/redeliver`);
    expect(again.status, again.text).toBe(200);
    const redelivered = await eventually(async () => {
      const list = (await server.call('GET', `/projects/${child}/webhook-deliveries`)).json as any[];
      return list.find((d) => d.id === again.json && d.status === 'DELIVERED');
    });
    expect(redelivered).toMatchObject({ redeliveryOfId: delivery.id, body: delivery.body });
    expect(redelivered.deliveryId).not.toBe(delivery.deliveryId);
    expect((await server.call('POST', '/webhook-deliveries/999999/redeliver')).status).toBe(404);
  });

  it('documents the delivery endpoints in OpenAPI', async () => {
    const spec = await (await fetch(`${server.url}/~api/openapi.json`)).json();
    expect(Object.keys(spec.paths)).toEqual(
      expect.arrayContaining(['/~api/projects/{projectId}/webhook-deliveries', '/~api/webhook-deliveries/{deliveryId}/redeliver']),
    );
  });

  it('is restricted to project managers', async () => {
    const bob = await server.createUser('bob');
    expect((await server.call('GET', `/projects/${child}/webhook-deliveries`, { auth: bob.auth })).status).toBe(404);
    const list = (await server.call('GET', `/projects/${child}/webhook-deliveries`)).json;
    expect((await server.call('POST', `/webhook-deliveries/${list[0].id}/redeliver`, { auth: bob.auth })).status).toBe(404);
  });
});

describe('webhooks: private targets refused without GITLOOM_WEBHOOK_ALLOW_PRIVATE', () => {
  it('records a refused delivery and sends nothing', async () => {
    const receiver = await startHttpReceiver();
    const server = await startTestServer({ GITLOOM_OUTBOX_BACKOFF_MS: '50' });
    try {
      const project = await givenProject(server, { name: 'private' });
      await setWebHooks(server, project, [
        { postUrl: `${receiver.url}/direct`, eventTypes: ['ISSUE'], secret: 's' },
        { postUrl: `${receiver.url.replace('127.0.0.1', 'localhost')}/named`, eventTypes: ['ISSUE'], secret: 's' },
      ]);
      expect((await server.call('POST', '/issues', { body: { projectId: project, title: 'Nope' } })).status).toBe(200);
      const failed = await eventually(async () => {
        const list = (await server.call('GET', `/projects/${project}/webhook-deliveries`)).json as any[];
        return list.length === 2 && list.every((d) => d.status === 'FAILED') ? list : null;
      });
      expect(failed).not.toBeNull();
      for (const d of failed!) {
        expect(d.attemptCount).toBe(1);
        expect(d.attempts[0].error).toMatch(/not a public address|non-public address/);
      }
      expect(receiver.received).toHaveLength(0);
    } finally {
      await server.close();
      await receiver.close();
    }
  });
});
