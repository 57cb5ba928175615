import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { givenProject, givenUsers, type TestUser } from '../helpers/fixtures.js';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server.js';

/** The administration pages over plain HTTP: each change checked through the API. */
describe('administration pages', () => {
  let server: TestServer;
  let alice: TestUser;
  let admin: WebSession;
  let aliceSession: WebSession;

  beforeAll(async () => {
    server = await startTestServer();
    [alice] = await givenUsers(server, 'alice');
    admin = await signInByFetch(server, ADMIN.name, ADMIN.password);
    aliceSession = await signInByFetch(server, 'alice', alice.password);
  });
  afterAll(async () => {
    await server?.close();
  });

  const get = (path: string, session?: WebSession) => fetch(`${server.url}${path}`, { redirect: 'manual', headers: session ? { cookie: session.cookie } : {} });
  const post = (path: string, fields: Record<string, string>, session: WebSession = admin) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      body: new URLSearchParams({ _csrf: session.csrfToken, ...fields }).toString(),
    });
  const userByName = async (name: string) =>
    ((await server.call('GET', `/users?term=${name}`)).json as { id: number; name: string; fullName: string | null }[]).find((u) => u.name === name);

  it('is for administrators only: others get the 404 page, anonymous visitors the sign-in page', async () => {
    for (const path of ['/~administration', '/~administration/users', '/~administration/roles/1', '/~administration/security']) {
      const refused = await get(path, aliceSession);
      expect(refused.status).toBe(404);
      expect(await refused.text()).not.toContain('Administration</p>');
      const anonymous = await get(path);
      expect(anonymous.status).toBe(302);
      expect(anonymous.headers.get('location')).toMatch(/^\/~login\?redirect=/);
    }
    const post404 = await post('/~administration/users/new', { name: 'mallory', emailAddress: 'm@example.com', password: 'x' }, aliceSession);
    expect(post404.status).toBe(404);
    expect(await userByName('mallory')).toBeUndefined();
    const home = await get('/~administration', admin);
    expect(home.status).toBe(302);
    expect(home.headers.get('location')).toBe('/~administration/users');
  });

  it('serves every administration page with its title and section', async () => {
    const pages: [string, string][] = [
      ['users', 'Users'],
      ['users/new', 'New user'],
      [`users/${alice.id}`, 'User alice'],
      ['groups', 'Groups'],
      ['roles', 'Roles'],
      ['roles/new', 'New role'],
      ['roles/1', 'Role Project Owner'],
      ['security', 'Security'],
      ['label-specs', 'Labels'],
    ];
    for (const [path, title] of pages) {
      const response = await get(`/~administration/${path}`, admin);
      expect(response.status, path).toBe(200);
      const html = await response.text();
      expect(html).toContain(`<title>${title} · Administration · Gitloom</title>`);
      expect(html).toContain(`<h1>${title}</h1>`);
    }
    expect((await get('/~administration/roles/999999', admin)).status).toBe(404);
    expect((await get('/~administration/groups/999999', admin)).status).toBe(404);
  });

  it('shows the Administration link only to administrators', async () => {
    expect(await (await get('/', admin)).text()).toContain('href="/~administration"');
    expect(await (await get('/', aliceSession)).text()).not.toContain('href="/~administration"');
  });

  it('refuses a form without the CSRF token', async () => {
    const response = await fetch(`${server.url}/~administration/users/new`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: admin.cookie },
      body: new URLSearchParams({ name: 'nocsrf', emailAddress: 'n@example.com', password: 'x' }).toString(),
    });
    expect(response.status).toBe(403);
    expect(await userByName('nocsrf')).toBeUndefined();
  });

  it('lists and searches users', async () => {
    const all = await (await get('/~administration/users', admin)).text();
    expect(all).toContain('<title>Users · Administration · Gitloom</title>');
    expect(all).toContain(`href="/~administration/users/${alice.id}"`);
    const found = await (await get('/~administration/users?term=alice', admin)).text();
    expect(found).toContain('>alice</a>');
    expect(found).not.toContain('>admin</a>');
  });

  it("creates a user, and keeps the values with the domain's message when refused", async () => {
    const refused = await post('/~administration/users/new', { name: 'carol', fullName: 'Carol C', emailAddress: 'alice@example.com', password: 'pw' });
    expect(refused.status).toBe(409);
    const html = await refused.text();
    expect(html).toContain('Email address is already used by another user');
    expect(html).toContain('value="Carol C"');
    expect(html).toContain('value="carol"');
    const bad = await post('/~administration/users/new', { name: '-bad', emailAddress: 'b@example.com', password: 'pw' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('Should start with alphanumeric or underscore');

    const created = await post('/~administration/users/new', { name: 'Carol', fullName: 'Carol C', emailAddress: 'carol@example.com', password: 'carol-pw' });
    expect(created.status).toBe(303);
    const carol = await userByName('carol');
    expect(carol).toMatchObject({ name: 'carol', fullName: 'Carol C' });
    expect(created.headers.get('location')).toBe(`/~administration/users/${carol!.id}`);
    const emails = await server.call('GET', `/users/${carol!.id}/email-addresses`);
    expect(emails.json).toMatchObject([{ value: 'carol@example.com', primary: true, git: true }]);
    const page = await (await get(`/~administration/users/${carol!.id}`, admin)).text();
    expect(page).toContain('carol@example.com');
  });

  it('edits a profile, resets a password and deletes a user', async () => {
    const { id } = (await givenUsers(server, 'dave'))[0];
    expect((await post(`/~administration/users/${id}`, { op: 'profile', name: 'david', fullName: '' })).status).toBe(303);
    expect((await server.call('GET', `/users/${id}`)).json).toEqual({ id, name: 'david', fullName: null });
    const clash = await post(`/~administration/users/${id}`, { op: 'profile', name: 'alice', fullName: 'D' });
    expect(clash.status).toBe(409);
    expect(await clash.text()).toContain('Login name is already used by another user');

    const reset = await post(`/~administration/users/${id}/password`, { password: 'brand-new' });
    expect(reset.status).toBe(200);
    expect(await reset.text()).toContain('Password changed.');
    expect((await server.call('GET', '/users/me', { auth: `Basic ${Buffer.from('david:brand-new').toString('base64')}` })).status).toBe(200);
    const empty = await post(`/~administration/users/${id}/password`, { password: '' });
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain('Password is required');

    const token = (await server.call('POST', `/users/${id}/access-tokens`, { body: { description: 'laptop' } })).text;
    const tokenPage = await (await get(`/~administration/users/${id}`, admin)).text();
    expect(tokenPage).toContain(`${token.slice(0, 4)}…`);
    expect(tokenPage).not.toContain(token);
    const tokenId = /action="\/~administration\/users\/\d+\/access-tokens\/delete"[^]*?name="id" value="(\d+)"/.exec(tokenPage)![1];
    expect((await post(`/~administration/users/${id}/access-tokens/delete`, { id: tokenId })).status).toBe(303);
    expect((await server.call('GET', '/users/me', { auth: `Bearer ${token}` })).status).toBe(401);

    const root = await post('/~administration/users/1/delete', {});
    expect(root.status).toBe(409);
    expect(await root.text()).toContain('Root user can not be deleted');
    const deleted = await post(`/~administration/users/${id}/delete`, {});
    expect(deleted.status).toBe(303);
    expect((await server.call('GET', `/users/${id}`)).status).toBe(404);
    expect((await get(`/~administration/users/${id}`, admin)).status).toBe(404);
    expect((await get('/~administration/users/abc', admin)).status).toBe(404);
  });

  it("adds a user's email addresses verified, moves the primary and git roles, and removes them", async () => {
    const [erin] = await givenUsers(server, 'erin');
    const base = `/~administration/users/${erin.id}`;
    const emails = async () =>
      ((await server.call('GET', `/users/${erin.id}/email-addresses`)).json as { id: number; value: string; primary: boolean; git: boolean }[]).map(
        ({ value, primary, git }) => ({ value, primary, git }),
      );
    const before = await emails();
    const first = before[0].value;

    const added = await post(`${base}/email-addresses`, { value: ' Erin.Work@Example.COM ' });
    expect(added.status).toBe(303);
    expect(added.headers.get('location')).toBe(base);
    expect(await emails()).toEqual([
      { value: first, primary: true, git: true },
      { value: 'erin.work@example.com', primary: false, git: false },
    ]);
    // added by an administrator: verified at once (no "unverified" badge)
    expect(await (await get(base, admin)).text()).not.toContain('unverified');

    for (const [value, status, message] of [
      ['erin.work@example.com', 409, 'Email address is already used by another user'],
      [first, 409, 'Email address is already used by another user'],
      ['not an address', 400, 'Malformed email address'],
    ] as const) {
      const refused = await post(`${base}/email-addresses`, { value, op: 'email' });
      expect(refused.status, value).toBe(status);
      const html = await refused.text();
      expect(html).toContain(message);
      expect(html).toContain(`value="${value}"`);
    }

    const work = (await server.call('GET', `/users/${erin.id}/email-addresses`)).json.find((e: { value: string }) => e.value === 'erin.work@example.com')
      .id as number;
    expect((await post(`${base}/email-addresses/git`, { id: String(work) })).status).toBe(303);
    expect(await emails()).toEqual([
      { value: first, primary: true, git: false },
      { value: 'erin.work@example.com', primary: false, git: true },
    ]);
    expect((await post(`${base}/email-addresses/primary`, { id: String(work) })).status).toBe(303);
    expect(await emails()).toEqual([
      { value: first, primary: false, git: false },
      { value: 'erin.work@example.com', primary: true, git: true },
    ]);

    const primaryRefused = await post(`${base}/email-addresses/delete`, { id: String(work) });
    expect(primaryRefused.status).toBe(400);
    expect(await primaryRefused.text()).toContain('Can not delete the primary email address');
    // another user's address, a malformed id and an unknown operation change nothing
    const aliceEmail = (await server.call('GET', `/users/${alice.id}/email-addresses`)).json[0].id as number;
    expect((await post(`${base}/email-addresses/delete`, { id: String(aliceEmail) })).status).toBe(404);
    expect((await post(`${base}/email-addresses/primary`, { id: 'x' })).status).toBe(400);
    expect((await post(`${base}/email-addresses/verify`, { id: String(work) })).status).toBe(404);
    expect((await server.call('GET', `/users/${alice.id}/email-addresses`)).json).toHaveLength(1);

    const old = (await server.call('GET', `/users/${erin.id}/email-addresses`)).json.find((e: { value: string }) => e.value === first).id as number;
    expect((await post(`${base}/email-addresses/git`, { id: String(old) })).status).toBe(303);
    // removing the git address hands that role to the primary one
    expect((await post(`${base}/email-addresses/delete`, { id: String(old) })).status).toBe(303);
    expect(await emails()).toEqual([{ value: 'erin.work@example.com', primary: true, git: true }]);
    // ordinary users change nobody's addresses here
    expect((await post(`${base}/email-addresses`, { value: 'x@example.com' }, aliceSession)).status).toBe(404);
  });

  it('creates a group, adds and removes members, edits and deletes it', async () => {
    const created = await post('/~administration/groups', { name: 'devs', description: 'Developers', createRootProjects: 'on' });
    expect(created.status).toBe(303);
    const groups = (await server.call('GET', '/groups?name=devs')).json as { id: number }[];
    const groupId = groups[0].id;
    expect((await server.call('GET', `/groups/${groupId}`)).json).toMatchObject({
      name: 'devs',
      description: 'Developers',
      administrator: false,
      createRootProjects: true,
    });
    const twin = await post('/~administration/groups', { name: 'DEVS' });
    expect(twin.status).toBe(409);
    expect(await twin.text()).toContain('Group name already used: DEVS');

    expect((await post(`/~administration/groups/${groupId}/members`, { user: 'alice' })).status).toBe(303);
    const members = (await server.call('GET', `/groups/${groupId}/memberships`)).json as { id: number; userId: number }[];
    expect(members).toMatchObject([{ userId: alice.id }]);
    const nobody = await post(`/~administration/groups/${groupId}/members`, { user: 'nobody' });
    expect(nobody.status).toBe(400);
    expect(await nobody.text()).toContain('Unable to find user: nobody');
    const again = await post(`/~administration/groups/${groupId}/members`, { user: 'alice' });
    expect(again.status).toBe(409);
    expect(await (await get(`/~administration/groups/${groupId}`, admin)).text()).toContain(`href="/~administration/users/${alice.id}"`);
    expect((await post(`/~administration/groups/${groupId}/members/delete`, { membership: String(members[0].id) })).status).toBe(303);
    expect((await server.call('GET', `/groups/${groupId}/memberships`)).json).toEqual([]);

    expect((await post(`/~administration/groups/${groupId}`, { op: 'group', name: 'developers', administrator: 'on' })).status).toBe(303);
    expect((await server.call('GET', `/groups/${groupId}`)).json).toMatchObject({
      name: 'developers',
      description: null,
      administrator: true,
      createRootProjects: false,
    });
    expect((await post(`/~administration/groups/${groupId}/delete`, {})).status).toBe(303);
    expect((await server.call('GET', `/groups/${groupId}`)).status).toBe(404);
  });

  it('creates and edits a role with its privileges, and refuses to delete one in use', async () => {
    const created = await post('/~administration/roles/new', {
      name: 'Triager',
      manageIssues: 'on',
      codePrivilege: 'READ',
      fieldSet: 'ExcludeIssueFields',
      fields: 'Assignees, Priority',
      'job0.jobNames': 'ci -release',
      'job0.runJob': 'on',
      'job0.accessibleReports': '',
    });
    expect(created.status).toBe(303);
    const roleId = Number(created.headers.get('location')!.split('/').pop());
    expect((await server.call('GET', `/roles/${roleId}`)).json).toMatchObject({
      name: 'Triager',
      manageProject: false,
      manageIssues: true,
      codePrivilege: 'READ',
      editableIssueFields: { '@type': 'ExcludeIssueFields', excludeFields: ['Assignees', 'Priority'] },
      jobPrivileges: [{ jobNames: 'ci -release', manageJob: false, runJob: true, accessLog: false, accessibleReports: null }],
    });
    const page = await (await get(`/~administration/roles/${roleId}`, admin)).text();
    expect(page).toContain('value="ci -release"');

    // the job row emptied is dropped; the blank row adds one
    const edited = await post(`/~administration/roles/${roleId}`, {
      name: 'Triager',
      codePrivilege: 'WRITE',
      fieldSet: 'AllIssueFields',
      fields: '',
      'job0.jobNames': '',
      'job1.jobNames': 'deploy',
      'job1.accessLog': 'on',
    });
    expect(edited.status).toBe(303);
    expect((await server.call('GET', `/roles/${roleId}`)).json).toMatchObject({
      manageIssues: false,
      codePrivilege: 'WRITE',
      editableIssueFields: { '@type': 'AllIssueFields' },
      jobPrivileges: [{ jobNames: 'deploy', accessLog: true, runJob: false }],
    });
    const badName = await post(`/~administration/roles/${roleId}`, { name: 'Code Writer', codePrivilege: 'NONE', fieldSet: 'AllIssueFields' });
    expect(badName.status).toBe(409);
    const html = await badName.text();
    expect(html).toContain('Role name already used: Code Writer');
    expect(html).toContain('value="Code Writer"');
    const badPrivilege = await post(`/~administration/roles/${roleId}`, { name: 'Triager', codePrivilege: 'ALL', fieldSet: 'AllIssueFields' });
    expect(badPrivilege.status).toBe(400);

    const projectId = await givenProject(server, { name: 'roleapp' });
    expect((await server.call('POST', '/user-authorizations', { body: { projectId, userId: alice.id, roleId } })).status).toBe(200);
    const inUse = await post(`/~administration/roles/${roleId}/delete`, {});
    expect(inUse.status).toBe(409);
    expect(await inUse.text()).toContain('is still being used');
    expect((await server.call('GET', `/roles/${roleId}`)).status).toBe(200);
  });

  it('saves the security setting', async () => {
    const group = (await server.call('POST', '/groups', { body: { name: 'everyone' } })).json as number;
    const saved = await post('/~administration/security', {
      enableAnonymousAccess: 'on',
      defaultLoginGroupId: String(group),
      sessionTimeoutDays: '7',
      maxTokenLifetimeDays: '30',
    });
    expect(saved.status).toBe(200);
    expect(await saved.text()).toContain('Security setting saved.');
    expect((await server.call('GET', '/settings/security')).json).toEqual({
      enableAnonymousAccess: true,
      enableSelfRegister: false,
      enableSelfDeregister: false,
      defaultLoginGroupId: group,
      enforce2FA: false,
      sessionTimeoutDays: 7,
      maxTokenLifetimeDays: 30,
    });
    const badDays = await post('/~administration/security', { sessionTimeoutDays: '0' });
    expect(badDays.status).toBe(400);
    expect(await badDays.text()).toContain('whole number of days');
    expect((await server.call('GET', '/settings/security')).json.sessionTimeoutDays).toBe(7);
    // anonymous visitors are now let in
    expect((await get('/~projects')).status).toBe(200);
    const unknown = await post('/~administration/security', { defaultLoginGroupId: '999999' });
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain('Group not found: 999999');
    expect((await post('/~administration/security', { enableSelfRegister: 'on' })).status).toBe(200);
    expect((await server.call('GET', '/settings/security')).json).toMatchObject({
      enableAnonymousAccess: false,
      enableSelfRegister: true,
      defaultLoginGroupId: null,
      sessionTimeoutDays: 14,
      maxTokenLifetimeDays: null,
    });
  });

  it('manages label specs', async () => {
    expect((await post('/~administration/label-specs', { op: 'create', name: 'bug', color: '#ff0000' })).status).toBe(303);
    const specs = (await server.call('GET', '/label-specs?name=bug')).json as { id: number }[];
    const id = specs[0].id;
    const badColor = await post('/~administration/label-specs', { op: 'create', name: 'feature', color: 'red' });
    expect(badColor.status).toBe(400);
    const html = await badColor.text();
    expect(html).toContain('Invalid color: &quot;red&quot;');
    expect(html).toContain('value="feature"');
    expect((await post('/~administration/label-specs', { op: 'update', id: String(id), name: 'defect', color: '#00ff00' })).status).toBe(303);
    expect((await server.call('GET', `/label-specs/${id}`)).json).toEqual({ id, name: 'defect', color: '#00ff00' });
    const projectId = await givenProject(server, { name: 'labelled' });
    await server.call('POST', '/project-labels', { body: { projectId, specId: id } });
    const inUse = await post('/~administration/label-specs', { op: 'delete', id: String(id) });
    expect(inUse.status).toBe(409);
    expect(await inUse.text()).toContain('is still being used');
  });
});
