import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { eventually, givenProject, givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server.js';

/** `/<project>/~settings/mirrors` over HTTP: a push mirror into another project of the same server. */
describe('mirrors settings page', () => {
  let server: TestServer;
  let repo: Repo;
  let targetId: number;
  let asOwner: WebSession;
  let asWriter: WebSession;

  beforeAll(async () => {
    server = await startTestServer({ GITLOOM_WEBHOOK_ALLOW_PRIVATE: 'true' });
    let owner: TestUser;
    let writer: TestUser;
    [owner, writer] = await givenUsers(server, 'owner', 'writer');
    repo = await givenRepo(server, 'app');
    targetId = await givenProject(server, { name: 'copy' });
    await grantRole(server, repo.id, owner.id, 'Project Owner');
    await grantRole(server, repo.id, writer.id, 'Code Writer');
    [asOwner, asWriter] = await Promise.all([signInByFetch(server, 'owner', owner.password), signInByFetch(server, 'writer', writer.password)]);
  }, 120_000);
  afterAll(async () => {
    await removeWorkTrees();
    await server?.close();
  });

  const page = async (session: WebSession = asOwner) => (await fetch(`${server.url}/app/~settings/mirrors`, { headers: { cookie: session.cookie } })).text();
  const post = (path: string, fields: Record<string, string>, session: WebSession = asOwner) =>
    fetch(`${server.url}/app/~settings/mirrors${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      body: new URLSearchParams({ _csrf: session.csrfToken, ...fields }).toString(),
    });
  const mirrors = async () => (await server.call('GET', `/projects/${repo.id}/mirrors`)).json as any[];

  it('refuses those who may not manage the project, as the API does', async () => {
    expect((await fetch(`${server.url}/app/~settings/mirrors`, { redirect: 'manual', headers: { cookie: asWriter.cookie } })).status).toBe(403);
    expect((await post('', { form: 'mirror-new-push', mirror: '', direction: 'PUSH', url: 'https://example.com/x.git', enabled: 'on' }, asWriter)).status).toBe(
      403,
    );
    expect(await mirrors()).toEqual([]);
  });

  it("shows the domain's message for a bad URL, keeping the typed values but not the password", async () => {
    const bad = await post('', { form: 'mirror-new-push', mirror: '', direction: 'PUSH', url: 'ftp://example.com/x', password: 'typed-secret', enabled: 'on' });
    expect(bad.status).toBe(400);
    const html = await bad.text();
    expect(html).toContain('url must be an http or https URL');
    expect(html).toContain('value="ftp://example.com/x"');
    expect(html).not.toContain('typed-secret');
  });

  it('adds a push mirror that pushes at once, shows its outcome, syncs on demand, and deletes it', async () => {
    const url = `${server.url}/copy`;
    const added = await post('', {
      form: 'mirror-new-push',
      mirror: '',
      direction: 'PUSH',
      url,
      userName: ADMIN.name,
      password: ADMIN.password,
      enabled: 'on',
    });
    expect(added.status).toBe(303);
    const [mirror] = await mirrors();
    expect(mirror).toMatchObject({ direction: 'PUSH', url, userName: ADMIN.name, passwordSet: true });
    await eventually(async () => (await mirrors())[0].lastSuccessDate !== null);
    expect((await server.call('GET', `/repositories/${targetId}/branches`)).json).toEqual(['main']);
    const html = await page();
    expect(html).toContain(`<code>${url}</code>`);
    expect(html).toContain('Last success');
    expect(html).not.toContain(ADMIN.password);

    const before = (await mirrors())[0].attemptCount;
    expect((await post('/sync', { mirror: String(mirror.id) })).status).toBe(303);
    await eventually(async () => (await mirrors())[0].attemptCount > before);

    // a wrong password: the error shows on the page, without the password
    expect(
      (
        await post('', {
          form: `mirror-${mirror.id}`,
          mirror: String(mirror.id),
          direction: 'PUSH',
          op: 'save',
          url,
          userName: ADMIN.name,
          password: 'wrong-pass-123',
          enabled: 'on',
        })
      ).status,
    ).toBe(303);
    await eventually(async () => (await mirrors())[0].lastError !== null);
    const failing = await page();
    expect(failing).toContain('Last error');
    expect(failing).not.toContain('wrong-pass-123');

    expect((await post('', { form: `mirror-${mirror.id}`, mirror: String(mirror.id), direction: 'PUSH', op: 'delete' })).status).toBe(303);
    expect(await mirrors()).toEqual([]);
  });
});
