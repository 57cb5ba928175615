import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { browserTests } from '../helpers/browser.js';
import { startTestOidcProvider, type OidcAccount, type TestOidcProvider } from '../helpers/oidc-provider.js';
import { ADMIN, basic } from '../helpers/server.js';

const admin = basic(ADMIN.name, ADMIN.password);
const accounts: Record<string, OidcAccount> = {
  dora: { preferred_username: 'dora', name: 'Dora Explorer', email: 'dora@example.org', email_verified: true, groups: ['developers', 'not-a-gitloom-group'] },
  linda: { preferred_username: 'linda.sso', name: 'Linda Linked', email: 'linda@example.org', email_verified: true },
};

/** OpenID Connect sign-in (docs/security.md#openid-connect) against a real provider (oidc-provider), in Chromium. */
describe('OpenID Connect sign-in', () => {
  let provider: TestOidcProvider;
  const t = browserTests(async (server) => {
    provider = await startTestOidcProvider([`${server.url}/~sso/callback/Acme`, `${server.url}/~sso/callback/Beta`], accounts);
    for (const name of ['Developers', 'Ops']) expect((await server.call('POST', '/groups', { body: { name }, auth: admin })).status).toBe(200);
    const connector = {
      '@type': 'OpenIdConnector',
      name: 'Acme',
      configurationDiscoveryUrl: provider.discoveryUrl,
      clientId: provider.clientId,
      clientSecret: provider.clientSecret,
      groupsClaim: 'groups',
    };
    expect(
      (await server.call('POST', '/settings/sso-connectors', { body: [connector, { ...connector, name: 'Beta', groupsClaim: null }], auth: admin })).status,
    ).toBe(200);
  });
  afterAll(async () => {
    await provider?.close();
  });

  const audit = (action: string) =>
    t.server.server.services.db
      .selectFrom('auditEvents')
      .select(['actorId', 'actorName', 'targetName', 'summary'])
      .where('action', '=', action)
      .orderBy('id')
      .execute();
  const groupsOf = async (userId: number) => {
    const memberships = (await t.server.call('GET', `/users/${userId}/memberships`, { auth: admin })).json as { groupId: number }[];
    return (await Promise.all(memberships.map(async (m) => (await t.server.call('GET', `/groups/${m.groupId}`, { auth: admin })).json.name))).sort();
  };
  const userNamed = async (name: string) =>
    ((await t.server.call('GET', `/users?term=${name}&offset=0&count=10`, { auth: admin })).json as { id: number; name: string }[]).find(
      (u) => u.name === name,
    );

  /** A fresh visitor on the sign-in page who pressed "Sign in with Acme" and reached the provider's sign-in form. */
  async function atProvider(): Promise<Page> {
    const context = await t.newContext();
    // the provider's development pages import a web font: nothing leaves this machine
    await context.route(/^https:\/\//, (route) => route.abort());
    const page = await context.newPage();
    await page.goto(`${t.server.url}/~login`);
    await page.getByRole('link', { name: 'Sign in with Acme' }).click();
    await page.waitForURL((url) => url.href.startsWith(provider.issuer));
    return page;
  }

  /** Signs in at the provider as `login` and consents, then waits to be back on Gitloom. */
  async function signInAtProvider(page: Page, login: string): Promise<void> {
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL((url) => url.href.startsWith(t.server.url) && !url.pathname.startsWith('/~sso/'));
  }

  it('keeps the client secret write-only', async () => {
    const connectors = await t.server.call('GET', '/settings/sso-connectors', { auth: admin });
    expect(connectors.json).toMatchObject([
      { '@type': 'OpenIdConnector', name: 'Acme', clientId: provider.clientId, userNameClaim: 'preferred_username', accountPolicy: 'CREATE_ACCOUNT' },
      { name: 'Beta', groupsClaim: null },
    ]);
    expect(connectors.text).not.toContain(provider.clientSecret);
    // an update without the secrets keeps them: the sign-ins below exchange codes with them
    expect((await t.server.call('POST', '/settings/sso-connectors', { body: connectors.json, auth: admin })).status).toBe(200);
    const changes = await audit('settings.ssoConnectors');
    expect(changes).toHaveLength(2);
    expect(changes.map((c) => c.summary).join()).not.toContain(provider.clientSecret);
  });

  it('offers a button per provider, in order', async () => {
    const page = await (await t.newContext()).newPage();
    await page.goto(`${t.server.url}/~login`);
    expect(await page.getByRole('navigation', { name: 'Single sign-on' }).getByRole('link').allTextContents()).toEqual([
      'Sign in with Acme',
      'Sign in with Beta',
    ]);
  });

  it('creates the account on the first sign-in, with its claims and groups', async () => {
    const page = await atProvider();
    await signInAtProvider(page, 'dora');
    // signed in: the header's user menu names the user
    await expect.poll(() => page.locator('summary', { hasText: 'dora' }).count()).toBe(1);

    const dora = await userNamed('dora');
    expect(dora).toMatchObject({ name: 'dora' });
    expect((await t.server.call('GET', `/users/${dora!.id}`, { auth: admin })).json.fullName).toBe('Dora Explorer');
    expect((await t.server.call('GET', `/users/${dora!.id}/email-addresses`, { auth: admin })).json).toMatchObject([
      { value: 'dora@example.org', primary: true },
    ]);
    expect(await groupsOf(dora!.id)).toEqual(['Developers']);
    expect((await audit('user.createBySso')).map((r) => r.targetName)).toEqual(['dora']);
    expect(JSON.parse((await audit('signIn.oidc')).at(-1)!.summary!).after).toMatchObject({
      success: true,
      provider: 'oidc:Acme',
      groupsAdded: ['Developers'],
    });

    // an SSO user changes the password at the provider
    const refused = await t.server.call('POST', `/users/${dora!.id}/password`, { text: 'new-password', auth: admin });
    expect(refused.status).toBe(409);
    expect(refused.json.detail).toBe("The user is currently authenticated via SSO provider 'Acme', please change password there instead");
  });

  it('syncs the memberships to the groups claim at each sign-in', async () => {
    accounts.dora.groups = ['ops'];
    const page = await atProvider();
    await signInAtProvider(page, 'dora');
    const dora = await userNamed('dora');
    expect(await groupsOf(dora!.id)).toEqual(['Ops']);
  });

  it('refuses a response whose state was tampered with, saying so', async () => {
    const page = await atProvider();
    // the sign-in started in this browser; a response carrying another state comes back
    const response = await page.goto(`${t.server.url}/~sso/callback/Acme?code=forged&state=tampered`);
    expect(response!.status()).toBe(401);
    await expect.poll(() => page.getByText('does not match the sign-in started here (state)').count()).toBe(1);
    expect(await page.getByRole('link', { name: 'Sign in with Acme' }).count()).toBe(1);
    const failures = (await audit('signIn.oidc')).filter((r) => r.actorId === null);
    expect(JSON.parse(failures.at(-1)!.summary!).after).toMatchObject({ success: false, connector: 'Acme' });
    // and a response nobody here asked for
    const unsolicited = await (await t.newContext()).newPage();
    expect((await unsolicited.goto(`${t.server.url}/~sso/callback/Acme?code=forged&state=whatever`))!.status()).toBe(401);
    await expect.poll(() => unsolicited.getByText('Unsolicited OIDC authentication response').count()).toBe(1);
  });

  it('links an existing user by verified email when the connector says so', async () => {
    const linda = await t.server.call('POST', '/users', { body: { name: 'linda', password: 'linda-local', emailAddress: 'linda@example.org' }, auth: admin });
    const [connector] = (await t.server.call('GET', '/settings/sso-connectors', { auth: admin })).json;
    expect((await t.server.call('POST', '/settings/sso-connectors', { body: [{ ...connector, accountPolicy: 'LINK_BY_EMAIL' }], auth: admin })).status).toBe(
      200,
    );
    const page = await atProvider();
    await signInAtProvider(page, 'linda');
    expect((await audit('user.linkBySso')).map((r) => r.targetName)).toEqual(['linda']);
    expect(JSON.parse((await audit('signIn.oidc')).at(-1)!.summary!)).toMatchObject({ after: { success: true } });
    expect((await audit('signIn.oidc')).at(-1)!.actorId).toBe(linda.json);
    expect(await userNamed('linda.sso')).toBeUndefined();
  });
});
