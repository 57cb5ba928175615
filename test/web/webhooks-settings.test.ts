import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { eventually, givenProject, givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { startHttpReceiver } from '../helpers/receivers.js';
import { ADMIN, git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';

/** `/<project>/~settings/webhooks` over HTTP, delivering to a real local receiver. */
describe('webhooks settings page', () => {
  let server: TestServer;
  let receiver: Awaited<ReturnType<typeof startHttpReceiver>>;
  let repo: Repo;
  let owner: TestUser;
  let asOwner: WebSession;
  let asWriter: WebSession;
  let asOutsider: WebSession;

  beforeAll(async () => {
    receiver = await startHttpReceiver();
    server = await startTestServer({ GITLOOM_WEBHOOK_ALLOW_PRIVATE: 'true' });
    let writer: TestUser;
    let outsider: TestUser;
    [owner, writer, outsider] = await givenUsers(server, 'owner', 'writer', 'outsider');
    repo = await givenRepo(server, 'app');
    await grantRole(server, repo.id, owner.id, 'Project Owner');
    await grantRole(server, repo.id, writer.id, 'Code Writer');
    [asOwner, asWriter, asOutsider] = await Promise.all([
      signInByFetch(server, 'owner', owner.password),
      signInByFetch(server, 'writer', writer.password),
      signInByFetch(server, 'outsider', outsider.password),
    ]);
  }, 120_000);
  afterAll(async () => {
    await removeWorkTrees();
    await server?.close();
    await receiver?.close();
  });

  const page = async (session: WebSession = asOwner, project = 'app') =>
    (await fetch(`${server.url}/${project}/~settings/webhooks`, { headers: { cookie: session.cookie } })).text();
  const post = (path: string, fields: Record<string, string>, session: WebSession = asOwner, project = 'app') =>
    fetch(`${server.url}/${project}/~settings/webhooks${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      body: new URLSearchParams({ _csrf: session.csrfToken, ...fields }).toString(),
    });
  const webHooks = async (projectId = repo.id) => (await server.call('GET', `/projects/${projectId}/setting`)).json.webHooks;
  const pushes = () => receiver.received.filter((r) => r.headers['x-gitloom-event'] === 'CODE_PUSH');

  it('refuses those who may not manage the project, as the API does', async () => {
    const get = (session: WebSession) => fetch(`${server.url}/app/~settings/webhooks`, { redirect: 'manual', headers: { cookie: session.cookie } });
    expect((await get(asWriter)).status).toBe(403);
    expect((await get(asOutsider)).status).toBe(404);
    expect((await post('', { form: 'hook-new', index: '', postUrl: `${receiver.url}/x`, 'event-CODE_PUSH': 'on' }, asWriter)).status).toBe(403);
    expect((await post('/redeliver', { delivery: '1' }, asWriter)).status).toBe(403);
    expect(await webHooks()).toEqual([]);
  });

  it("shows the domain's message for a bad URL, keeping the typed values", async () => {
    const bad = await post('', { form: 'hook-new', index: '', postUrl: 'ftp://example.com/x', 'event-ISSUE': 'on', secret: 'typed-secret' });
    expect(bad.status).toBe(400);
    const html = await bad.text();
    expect(html).toContain('webHooks[0].postUrl must be an http or https URL');
    expect(html).toContain('value="ftp://example.com/x"');
    expect(html).not.toContain('typed-secret');
    expect(await webHooks()).toEqual([]);
  });

  it('adds, edits and deletes hooks; the secret is never sent back and kept when left empty', async () => {
    expect((await post('', { form: 'hook-new', index: '', postUrl: 'http://example.com/a', 'event-ISSUE': 'on', secret: 'first-secret' })).status).toBe(303);
    expect(await webHooks()).toEqual([{ postUrl: 'http://example.com/a', eventTypes: ['ISSUE'], secret: 'first-secret' }]);
    const html = await page();
    expect(html).toContain('value="http://example.com/a"');
    expect(html).not.toContain('first-secret');
    expect((await post('', { form: 'hook-0', index: '0', op: 'save', postUrl: 'http://example.com/b', 'event-BUILD': 'on', secret: '' })).status).toBe(303);
    expect(await webHooks()).toEqual([{ postUrl: 'http://example.com/b', eventTypes: ['BUILD'], secret: 'first-secret' }]);
    expect((await post('', { form: 'hook-0', index: '0', op: 'delete' })).status).toBe(303);
    expect(await webHooks()).toEqual([]);
  });

  it('a hook added in the page receives a push; the page lists the delivery and redelivers it', async () => {
    // a project whose first push comes after its hook
    const hooked = await givenProject(server, { name: 'hooked' });
    await grantRole(server, hooked, owner.id, 'Project Owner');
    expect(await page(asOwner, 'hooked')).toContain('No delivery yet.');
    expect((await post('', { form: 'hook-new', index: '', postUrl: `${receiver.url}/push`, 'event-CODE_PUSH': 'on' }, asOwner, 'hooked')).status).toBe(303);
    expect((await webHooks(hooked))[0].secret).toMatch(/^[\w-]{20,}$/);
    const work = await makeWorkTree({ 'README.md': '# hooked\n' });
    await git(work, ['push', '-q', gitUrl(server, 'hooked', ADMIN), 'main']);
    await fs.rm(work, { recursive: true, force: true });
    expect(await eventually(async () => pushes().length === 1)).toBe(true);
    const first = pushes()[0];
    expect(first.path).toBe('/push');

    const listed = await eventually(async () => {
      const html = await page(asOwner, 'hooked');
      return html.includes('DELIVERED') ? html : null;
    });
    expect(listed).toContain(`${receiver.url}/push`);
    expect(listed).toContain('CODE_PUSH');
    expect(listed).toMatch(/Succeeded: HTTP 200, \d+ ms, <time datetime="/);
    const id = /name="delivery" value="(\d+)"/.exec(listed!)![1];

    expect((await post('/redeliver', { delivery: id }, asOwner, 'hooked')).status).toBe(303);
    expect(await eventually(async () => pushes().length === 2)).toBe(true);
    const again = pushes()[1];
    expect(again.body).toBe(first.body);
    expect(again.headers['x-gitloom-delivery']).not.toBe(first.headers['x-gitloom-delivery']);
    const after = await eventually(async () => {
      const html = await page(asOwner, 'hooked');
      return (html.match(/Succeeded: HTTP 200/g) ?? []).length === 2 ? html : null;
    });
    expect((after!.match(/name="delivery"/g) ?? []).length).toBe(2);

    const unknown = await post('/redeliver', { delivery: '999999' }, asOwner, 'hooked');
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('Webhook delivery not found: 999999');
  });
});

describe('webhooks settings page: private targets refused without GITLOOM_WEBHOOK_ALLOW_PRIVATE', () => {
  let server: TestServer;
  let receiver: Awaited<ReturnType<typeof startHttpReceiver>>;

  beforeAll(async () => {
    receiver = await startHttpReceiver();
    server = await startTestServer();
  }, 120_000);
  afterAll(async () => {
    await removeWorkTrees();
    await server?.close();
    await receiver?.close();
  });

  it('lists the delivery as failed with the refusal, and the receiver gets nothing', async () => {
    const admin = await signInByFetch(server, ADMIN.name, ADMIN.password);
    const repo = await givenRepo(server, 'app');
    const added = await fetch(`${server.url}/app/~settings/webhooks`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: admin.cookie },
      body: new URLSearchParams({ _csrf: admin.csrfToken, form: 'hook-new', index: '', postUrl: `${receiver.url}/push`, 'event-CODE_PUSH': 'on' }).toString(),
    });
    expect(added.status).toBe(303);
    await repo.commitOn('main', { 'new.txt': 'new\n' }, 'New file');
    const html = await eventually(async () => {
      const text = await (await fetch(`${server.url}/app/~settings/webhooks`, { headers: { cookie: admin.cookie } })).text();
      return text.includes('FAILED') ? text : null;
    });
    expect(html).toContain('Failed: 127.0.0.1 is not a public address');
    expect(receiver.received).toEqual([]);
  });
});
