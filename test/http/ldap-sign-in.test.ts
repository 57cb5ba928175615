import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookiesOf, csrfTokenOf } from '../helpers/browser.js';
import { givenRepo, removeWorkTrees } from '../helpers/fixtures.js';
import { ADMIN, basic, git, gitFails, gitUrl, startTestServer, type TestServer } from '../helpers/server.js';
import { LDAP_MANAGER, LDAP_SUFFIX, startTestSlapd, type TestSlapd } from '../helpers/slapd.js';

const LDAP_CLASS = 'io.onedev.server.plugin.authenticator.ldap.LdapAuthenticator';
const PEOPLE = `ou=people,${LDAP_SUFFIX}`;
const GROUPS = `ou=groups,${LDAP_SUFFIX}`;

const person = (uid: string, fullName: string, password: string) =>
  `dn: uid=${uid},${PEOPLE}\nobjectClass: inetOrgPerson\nuid: ${uid}\ncn: ${fullName}\nsn: ${fullName.split(' ').pop()}\ndisplayName: ${fullName}\nmail: ${uid}@example.org\nuserPassword: ${password}\n\n`;
const group = (cn: string, ...members: string[]) =>
  `dn: cn=${cn},${GROUPS}\nobjectClass: groupOfNames\ncn: ${cn}\n${members.map((m) => `member: uid=${m},${PEOPLE}\n`).join('')}\n`;

const DIRECTORY =
  `dn: ${PEOPLE}\nobjectClass: organizationalUnit\nou: people\n\n` +
  `dn: ${GROUPS}\nobjectClass: organizationalUnit\nou: groups\n\n` +
  person('alice', 'Alice Liddell', 'alice-pw') +
  person('bob', 'Bob Builder', 'bob-pw') +
  person('carol', 'Carol Danvers', 'carol-pw') +
  group('developers', 'alice') +
  group('ops', 'bob');

/** Search-then-bind as the manager, groups found by a filter on their members. */
const searchSettings = (url: string) => ({
  '@class': LDAP_CLASS,
  ldapUrl: url,
  authenticationRequired: true,
  managerDN: LDAP_MANAGER.dn,
  managerPassword: LDAP_MANAGER.password,
  userSearchBase: PEOPLE,
  userSearchFilter: '(&(uid={0})(objectClass=inetOrgPerson))',
  groupRetrieval: {
    '@type': 'SearchGroupsUsingFilter',
    groupSearchBase: GROUPS,
    groupSearchFilter: '(&(member={0})(objectClass=groupOfNames))',
    groupNameAttribute: 'cn',
  },
});

/** Password sign-in through an LDAP directory (docs/security.md#ldap-authenticator), against a real slapd. */
describe('LDAP authenticator', () => {
  let server: TestServer;
  let slapd: TestSlapd;
  const admin = basic(ADMIN.name, ADMIN.password);
  let repo: Awaited<ReturnType<typeof givenRepo>>;

  beforeAll(async () => {
    [server, slapd] = await Promise.all([startTestServer(), startTestSlapd(DIRECTORY)]);
    expect((await server.call('POST', '/groups', { body: { name: 'Developers' }, auth: admin })).status).toBe(200);
  });
  afterAll(async () => {
    await removeWorkTrees();
    await slapd?.close();
    await server?.close();
  });

  const me = (name: string, password: string) => server.call('GET', '/users/me', { auth: basic(name, password) });
  const audit = (action: string) =>
    server.server.services.db
      .selectFrom('auditEvents')
      .select(['actorId', 'actorName', 'targetName', 'summary'])
      .where('action', '=', action)
      .orderBy('id')
      .execute();
  const groupsOf = async (userId: number) => {
    const memberships = (await server.call('GET', `/users/${userId}/memberships`, { auth: admin })).json as { groupId: number }[];
    const names = await Promise.all(memberships.map(async (m) => (await server.call('GET', `/groups/${m.groupId}`, { auth: admin })).json.name));
    return names.sort();
  };
  const ldapmodify = (ldif: string) =>
    new Promise<void>((resolve, reject) => {
      const child = execFile('/usr/bin/ldapmodify', ['-x', '-H', slapd.url, '-D', LDAP_MANAGER.dn, '-w', LDAP_MANAGER.password], (error) =>
        error ? reject(error) : resolve(),
      );
      child.stdin!.end(ldif);
    });

  it('is set by administrators through OneDev’s resource, its manager password never answered and kept when omitted', async () => {
    expect((await server.call('GET', '/settings/authenticator', { auth: admin })).status).toBe(204);
    const user = await server.createUser('viewer');
    expect((await server.call('POST', '/settings/authenticator', { body: searchSettings(slapd.url), auth: user.auth })).status).toBe(403);
    expect((await server.call('POST', '/settings/authenticator', { body: searchSettings(slapd.url), auth: admin })).status).toBe(200);

    const stored = await server.call('GET', '/settings/authenticator', { auth: admin });
    expect(stored.status).toBe(200);
    expect(Object.keys(stored.json)[0]).toBe('@class');
    const { managerPassword: _secret, ...shown } = searchSettings(slapd.url);
    expect(stored.json).toMatchObject({ ...shown, timeout: 300, accountPolicy: 'CREATE_ACCOUNT', userDNPattern: null });
    expect(stored.json).not.toHaveProperty('managerPassword');
    expect(stored.text).not.toContain(LDAP_MANAGER.password);

    // an update without the password keeps it: sign-ins below search as the manager
    const { managerPassword: _omitted, ...withoutPassword } = searchSettings(slapd.url);
    expect((await server.call('POST', '/settings/authenticator', { body: { ...withoutPassword, timeout: 20 }, auth: admin })).status).toBe(200);
    expect((await server.call('GET', '/settings/authenticator', { auth: admin })).json.timeout).toBe(20);

    const changes = await audit('settings.authenticator');
    expect(changes).toHaveLength(2);
    expect(changes.map((c) => c.summary).join()).not.toContain(LDAP_MANAGER.password);
    expect(JSON.parse(changes[1].summary!)).toMatchObject({ before: { timeout: 300 }, after: { timeout: 20, managerPasswordChanged: false } });
  });

  it('refuses settings that do not read, naming the field', async () => {
    const refused = async (body: unknown, field: string) => {
      const response = await server.call('POST', '/settings/authenticator', { body, auth: admin });
      expect(response.status).toBe(400);
      expect(response.json.detail).toContain(field);
    };
    await refused({ ...searchSettings(slapd.url), ldapUrl: 'http://example.org' }, 'ldapUrl');
    await refused({ ...searchSettings(slapd.url), userSearchFilter: '(uid=alice)' }, 'userSearchFilter');
    await refused({ ...searchSettings(slapd.url), defaultGroup: 'No such group' }, 'defaultGroup');
    await refused({ ...searchSettings(slapd.url), userSshKeyAttribute: 'sshPublicKey' }, 'userSshKeyAttribute');
    await refused({ ...searchSettings(slapd.url), '@class': 'io.onedev.server.plugin.authenticator.ldap.Other' }, '@class');
    await refused({ ...searchSettings(slapd.url), color: 'red' }, 'color');
  });

  it('searches, binds as the found entry and creates the account on the first sign-in, with its groups', async () => {
    const response = await me('alice', 'alice-pw');
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({ name: 'alice', fullName: 'Alice Liddell' });
    const alice = response.json.id as number;
    expect(await groupsOf(alice)).toEqual(['Developers']);
    expect((await server.call('GET', `/users/${alice}/email-addresses`, { auth: admin })).json).toMatchObject([{ value: 'alice@example.org', primary: true }]);

    const [created] = await audit('user.createBySso');
    expect(created).toMatchObject({ actorId: alice, targetName: 'alice' });
    expect(JSON.parse(created.summary!).after).toMatchObject({ provider: 'ldap', subject: `uid=alice,${PEOPLE}`, email: 'alice@example.org' });
    expect(JSON.parse((await audit('signIn.ldap')).at(-1)!.summary!).after).toMatchObject({ success: true, groupsAdded: ['Developers'] });

    // the same person again: the same account
    expect((await me('ALICE', 'alice-pw')).json.id).toBe(alice);
  });

  it('refuses a wrong password, an unknown name and filter syntax in the name, recording the failures', async () => {
    for (const [name, password] of [
      ['alice', 'wrong'],
      ['nobody', 'alice-pw'],
      ['*', 'alice-pw'],
      ['alice)(uid=*', 'alice-pw'],
    ]) {
      const response = await me(name, password);
      expect(response.status).toBe(401);
      expect(response.json.detail).toBe('Invalid credentials');
    }
    const failures = (await audit('signIn.ldap')).filter((row) => row.actorId === null);
    expect(failures.map((f) => f.actorName)).toEqual(['alice', 'nobody', '*', 'alice)(uid=*']);
    expect(JSON.parse(failures[0].summary!).after).toEqual({ success: false, reason: 'Invalid credentials' });
  });

  it('syncs the memberships at each sign-in', async () => {
    expect((await server.call('POST', '/groups', { body: { name: 'Ops' }, auth: admin })).status).toBe(200);
    await ldapmodify(
      `dn: cn=ops,${GROUPS}\nchangetype: modify\nadd: member\nmember: uid=alice,${PEOPLE}\n\n` +
        `dn: cn=developers,${GROUPS}\nchangetype: modify\ndelete: member\nmember: uid=alice,${PEOPLE}\n-\nadd: member\nmember: uid=bob,${PEOPLE}\n`,
    );
    const response = await me('alice', 'alice-pw');
    expect(response.status).toBe(200);
    expect(await groupsOf(response.json.id)).toEqual(['Ops']);
    expect(JSON.parse((await audit('signIn.ldap')).at(-1)!.summary!).after).toMatchObject({ groupsAdded: ['Ops'], groupsRemoved: ['Developers'] });
  });

  it("refuses an external user's password change with OneDev's message", async () => {
    const alice = (await me('alice', 'alice-pw')).json.id;
    const response = await server.call('POST', `/users/${alice}/password`, { text: 'new-password', auth: admin });
    expect(response.status).toBe(409);
    expect(response.json).toMatchObject({
      code: 'GITLOOM_ERR_EXTERNAL_ACCOUNT',
      detail: 'The user is currently authenticated via external system, please change password there instead',
    });
  });

  it('binds as the user by a DN pattern, without a manager', async () => {
    const body = { '@class': LDAP_CLASS, ldapUrl: slapd.url, userDNPattern: `uid={0},${PEOPLE}`, defaultGroup: 'Developers' };
    expect((await server.call('POST', '/settings/authenticator', { body, auth: admin })).status).toBe(200);
    const response = await me('bob', 'bob-pw');
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({ name: 'bob', fullName: 'Bob Builder' });
    // groups are not retrieved: a new account joins the default group
    expect(await groupsOf(response.json.id)).toEqual(['Developers']);
    expect((await me('bob', 'wrong')).status).toBe(401);
    // DN syntax in the name is escaped: no other entry is reached
    expect((await me('bob,ou=people', 'bob-pw')).status).toBe(401);
  });

  it('links the directory user to the existing user with the same verified email when the administrator chooses so', async () => {
    const carl = await server.call('POST', '/users', { body: { name: 'carl', password: 'carl-local', emailAddress: 'carol@example.org' }, auth: admin });
    expect(carl.status).toBe(200);
    expect(
      (await server.call('POST', '/settings/authenticator', { body: { ...searchSettings(slapd.url), accountPolicy: 'LINK_BY_EMAIL' }, auth: admin })).status,
    ).toBe(200);
    const response = await me('carol', 'carol-pw');
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({ id: carl.json, name: 'carl', fullName: 'Carol Danvers' });
    expect((await audit('user.linkBySso')).map((r) => r.targetName)).toEqual(['carl']);
    // the local password is gone: carl is the directory's now
    expect((await me('carl', 'carl-local')).status).toBe(401);
  });

  it('takes the directory password for git over HTTP', async () => {
    repo = await givenRepo(server, 'directory-repo');
    const alice = (await me('alice', 'alice-pw')).json.id;
    expect((await server.call('POST', '/user-authorizations', { body: { projectId: repo.id, userId: alice, roleId: 1 }, auth: admin })).status).toBe(200);
    expect(await git(repo.work, ['ls-remote', gitUrl(server, 'directory-repo', { name: 'alice', password: 'alice-pw' }), 'refs/heads/main'])).toContain(
      'refs/heads/main',
    );
    expect(await gitFails(repo.work, ['ls-remote', gitUrl(server, 'directory-repo', { name: 'alice', password: 'wrong' })])).toMatch(
      /Authentication failed|401/,
    );
  });

  describe('with the directory down', () => {
    beforeAll(async () => {
      await slapd.stop();
    });
    afterAll(async () => {
      await slapd.start();
    });

    it('signs in local users and the administrator, and tells directory users the directory does not answer', async () => {
      expect((await me(ADMIN.name, ADMIN.password)).status).toBe(200);
      const local = await server.createUser('localuser');
      expect((await me(local.name, local.password)).status).toBe(200);

      for (const name of ['alice', 'someone-new']) {
        const response = await me(name, 'whatever');
        expect(response.status).toBe(503);
        expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(response.json).toMatchObject({
          code: 'GITLOOM_ERR_DIRECTORY_UNAVAILABLE',
          detail: expect.stringContaining('directory server is not available'),
        });
        expect(response.headers.get('retry-after')).toBe('30');
      }
      // git says so too, and the administrator's git still works
      expect(await gitFails(repo.work, ['ls-remote', gitUrl(server, 'directory-repo', { name: 'alice', password: 'alice-pw' })])).toContain('503');
      expect(await git(repo.work, ['ls-remote', gitUrl(server, 'directory-repo', ADMIN), 'refs/heads/main'])).toContain('refs/heads/main');
    });

    it('says so on the sign-in page', async () => {
      const form = await fetch(`${server.url}/~login`);
      const response = await fetch(`${server.url}/~login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: cookiesOf(form), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: csrfTokenOf(await form.text()), name: 'alice', password: 'alice-pw' }).toString(),
      });
      expect(response.status).toBe(503);
      expect(await response.text()).toContain('The directory server is not available');
    });
  });

  it('signs directory users in again once the directory is back', async () => {
    expect((await me('alice', 'alice-pw')).status).toBe(200);
  });

  it('is removed with null: directory users then sign in nowhere', async () => {
    expect((await server.call('POST', '/settings/authenticator', { text: 'null', headers: { 'content-type': 'application/json' }, auth: admin })).status).toBe(
      200,
    );
    expect((await server.call('GET', '/settings/authenticator', { auth: admin })).status).toBe(204);
    const response = await me('alice', 'alice-pw');
    expect(response.status).toBe(401);
    expect(response.json.detail).toBe('Invalid credentials');
  });
});
