import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { ADMIN, basic, startTestServer, type TestServer } from '../helpers/server.js';

const admin = basic(ADMIN.name, ADMIN.password);

/** Administration › Authenticator and › Single sign-on (docs/security.md#single-sign-on): the API's settings, secrets write-only. */
describe('single sign-on administration pages', () => {
  let server: TestServer;
  let session: WebSession;
  let staff: number;

  beforeAll(async () => {
    server = await startTestServer();
    session = await signInByFetch(server, ADMIN.name, ADMIN.password);
    staff = (await server.call('POST', '/groups', { body: { name: 'Staff' }, auth: admin })).json;
  });
  afterAll(async () => {
    await server.close();
  });

  const get = (path: string, cookie = session.cookie) => fetch(`${server.url}${path}`, { redirect: 'manual', headers: { cookie } });
  const post = (path: string, fields: Record<string, string>) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: session.csrfToken, ...fields }).toString(),
    });
  const storedSetting = async (key: string) => {
    const row = await server.server.services.db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
    return row && JSON.parse(row.value);
  };

  it('shows the pages to administrators only', async () => {
    for (const path of ['/~administration/authenticator', '/~administration/sso-connectors']) {
      const page = await get(path);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<form');
    }
    const user = await server.createUser('someone');
    const theirs = await signInByFetch(server, user.name, user.password);
    expect((await get('/~administration/authenticator', theirs.cookie)).status).toBe(404);
  });

  it('sets, keeps the manager password of, and removes the authenticator', async () => {
    const fields = {
      op: 'save',
      ldapUrl: 'ldap://directory.example.org',
      userSearchBase: 'ou=people,dc=example,dc=org',
      userSearchFilter: '(uid={0})',
      authenticationRequired: 'on',
      managerDN: 'cn=admin,dc=example,dc=org',
      managerPassword: 'manager-secret',
      groupRetrieval: 'SearchGroupsUsingFilter',
      groupSearchBase: 'ou=groups,dc=example,dc=org',
      groupSearchFilter: '(member={0})',
      groupNameAttribute: 'cn',
      defaultGroup: 'Staff',
      accountPolicy: 'LINK_BY_EMAIL',
      timeout: '30',
    };
    const saved = await post('/~administration/authenticator', fields);
    expect(saved.status).toBe(200);
    const html = await saved.text();
    expect(html).toContain('Authenticator saved.');
    expect(html).not.toContain('manager-secret');
    expect((await server.call('GET', '/settings/authenticator', { auth: admin })).json).toMatchObject({
      ldapUrl: 'ldap://directory.example.org',
      managerDN: 'cn=admin,dc=example,dc=org',
      groupRetrieval: { '@type': 'SearchGroupsUsingFilter', groupSearchBase: 'ou=groups,dc=example,dc=org' },
      defaultGroup: 'Staff',
      accountPolicy: 'LINK_BY_EMAIL',
      timeout: 30,
    });
    const sealed = (await storedSetting('authenticator')).encryptedManagerPassword;
    expect(sealed).toMatch(/^v1:/);

    // saved again with the password field empty: the password stays
    expect((await post('/~administration/authenticator', { ...fields, managerPassword: '', timeout: '60' })).status).toBe(200);
    expect(await storedSetting('authenticator')).toMatchObject({ timeout: 60, encryptedManagerPassword: sealed });

    const refused = await post('/~administration/authenticator', { ...fields, ldapUrl: 'http://nope' });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('ldapUrl');

    expect((await post('/~administration/authenticator', { op: 'remove' })).status).toBe(200);
    expect((await server.call('GET', '/settings/authenticator', { auth: admin })).status).toBe(204);
  });

  it('adds, updates (keeping the client secret) and deletes OpenID Connect providers', async () => {
    const fields = {
      name: 'Corp',
      configurationDiscoveryUrl: 'https://id.example.org/.well-known/openid-configuration',
      clientId: 'gitloom',
      clientSecret: 'client-secret',
      groupsClaim: 'groups',
      accountPolicy: 'CREATE_ACCOUNT',
    };
    expect((await post('/~administration/sso-connectors', { op: 'create', ...fields })).status).toBe(303);
    const page = await (await get('/~administration/sso-connectors')).text();
    expect(page).toContain(`${server.url}/~sso/callback/Corp`);
    expect(page).not.toContain('client-secret');
    const sealed = (await storedSetting('ssoConnectors'))[0].encryptedClientSecret;

    expect((await post('/~administration/sso-connectors', { op: 'update', index: '0', ...fields, clientSecret: '', clientId: 'other' })).status).toBe(303);
    expect((await server.call('GET', '/settings/sso-connectors', { auth: admin })).json).toMatchObject([
      { name: 'Corp', clientId: 'other', groupsClaim: 'groups' },
    ]);
    expect((await storedSetting('ssoConnectors'))[0].encryptedClientSecret).toBe(sealed);
    // the sign-in page offers it
    expect(await (await fetch(`${server.url}/~login`)).text()).toContain('Sign in with Corp');

    const refused = await post('/~administration/sso-connectors', { op: 'create', ...fields, name: 'Corp' });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('is used by another connector');

    expect((await post('/~administration/sso-connectors', { op: 'delete', index: '0' })).status).toBe(303);
    expect((await server.call('GET', '/settings/sso-connectors', { auth: admin })).json).toEqual([]);
  });

  it('follows a renamed default group and keeps one in use from deletion', async () => {
    const authenticator = {
      '@class': 'io.onedev.server.plugin.authenticator.ldap.LdapAuthenticator',
      ldapUrl: 'ldap://127.0.0.1',
      userDNPattern: 'uid={0},dc=example',
      defaultGroup: 'Staff',
    };
    expect((await server.call('POST', '/settings/authenticator', { body: authenticator, auth: admin })).status).toBe(200);
    const connector = {
      '@type': 'OpenIdConnector',
      name: 'Corp',
      configurationDiscoveryUrl: 'https://id.example.org',
      clientId: 'c',
      clientSecret: 's',
      defaultGroup: 'Staff',
    };
    expect((await server.call('POST', '/settings/sso-connectors', { body: [connector], auth: admin })).status).toBe(200);

    expect((await server.call('POST', `/groups/${staff}`, { body: { name: 'Employees' }, auth: admin })).status).toBe(200);
    expect((await server.call('GET', '/settings/authenticator', { auth: admin })).json.defaultGroup).toBe('Employees');
    expect((await server.call('GET', '/settings/sso-connectors', { auth: admin })).json[0].defaultGroup).toBe('Employees');

    const refused = await server.call('DELETE', `/groups/${staff}`, { auth: admin });
    expect(refused.status).toBe(409);
    expect(refused.json.detail).toContain('default group of the external authenticator');
    expect(refused.json.detail).toContain("default group of SSO connector 'Corp'");
  });
});
