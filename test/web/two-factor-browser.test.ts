import { Secret, TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { browserTests, signIn } from '../helpers/browser.js';
import { givenUsers, type TestUser } from '../helpers/fixtures.js';
import type { TestServer } from '../helpers/server.js';

/** The code of `secret` for the time step `offset` steps from now, as an authenticator app shows it. */
const codeAt = (secret: string, offset = 0) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: Date.now() + offset * 30_000 });

async function signOut(page: Page, base: string, name: string): Promise<void> {
  await page.goto(`${base}/~logout`);
  await page.getByRole('button', { name: `Sign out ${name}` }).click();
  await page.waitForURL(`${base}/~login`);
}

/** Two-factor authentication as people use it (docs/security.md#two-factor-authentication), in Chromium. */
describe('two-factor authentication in a browser', () => {
  let ada: TestUser;
  let grace: TestUser;
  let linus: TestUser;
  const web = browserTests(async (server) => {
    [ada, grace, linus] = await givenUsers(server, 'ada', 'grace', 'linus');
  });

  it('enrols an authenticator app from its QR code, then signs in with a code and once with a recovery code', async () => {
    const base = web.server.url;
    const page = await web.signedIn('ada', ada.password);
    await page.goto(`${base}/~my/two-factor`);
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    const qr = page.getByRole('img', { name: /^QR code of otpauth:\/\/totp\// });
    // the data: PNG is drawn: the pages' Content-Security-Policy lets it in
    await expect.poll(() => qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBeGreaterThan(0);
    const secret = (await page.getByLabel('Setup key').textContent())!;
    await page.getByLabel('Code from the app').fill(codeAt(secret));
    await page.getByRole('button', { name: 'Confirm' }).click();
    const codes = await page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem').allTextContents();
    expect(codes).toHaveLength(10);

    await signOut(page, base, 'ada');
    await signIn(page, web.server, 'ada', ada.password);
    expect(new URL(page.url()).pathname).toBe('/~login/two-factor');
    await page.getByLabel('Code from your authenticator app').fill(codeAt(secret, 1));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${base}/`);
    expect(await page.title()).toBe('Dashboard · Gitloom');

    for (const attempt of ['first', 'again']) {
      await signOut(page, base, 'ada');
      await signIn(page, web.server, 'ada', ada.password);
      await page.getByText('Use a recovery code').click();
      await page.getByLabel('Recovery code', { exact: true }).fill(codes[0]);
      await page.getByRole('button', { name: 'Use recovery code' }).click();
      if (attempt === 'first') {
        await page.waitForURL(`${base}/`);
      } else {
        await expect.poll(() => page.getByRole('alert').textContent()).toContain('Wrong or used recovery code');
        expect(new URL(page.url()).pathname).toBe('/~login/two-factor');
      }
    }
  });

  it("registers a security key with Chromium's virtual authenticator and signs in with it", async () => {
    // WebAuthn needs a host name, not an address: the relying party is the server's external URL
    const local = web.server.url.replace('127.0.0.1', 'localhost');
    const config = web.server.server.services.config;
    const serverUrl = config.serverUrl;
    config.serverUrl = local;
    const server = { url: local } as TestServer;
    try {
      const context = await web.newContext();
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send('WebAuthn.enable');
      await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
          protocol: 'ctap2',
          transport: 'usb',
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      });
      await signIn(page, server, 'grace', grace.password);
      await page.goto(`${local}/~my/two-factor`);
      await page.getByLabel('Name of the security key').fill('Virtual key');
      await page.getByRole('button', { name: 'Add security key' }).click();
      // the first factor comes with recovery codes
      await expect.poll(() => page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem').count()).toBe(10);
      await page.getByRole('link', { name: 'Done' }).click();
      await expect.poll(() => page.getByRole('list', { name: 'Security keys' }).textContent()).toContain('Virtual key');

      await signOut(page, local, 'grace');
      await signIn(page, server, 'grace', grace.password);
      expect(new URL(page.url()).pathname).toBe('/~login/two-factor');
      await page.getByRole('button', { name: 'Use security key' }).click();
      await page.waitForURL(`${local}/`);
      expect(await page.title()).toBe('Dashboard · Gitloom');
      await page.goto(`${local}/~my/two-factor`);
      expect(await page.getByRole('list', { name: 'Security keys' }).textContent()).toContain('last used');

      // removing it asks for proof; the last factor takes the recovery codes with it
      const removal = page.getByRole('form', { name: 'Remove security key Virtual key' });
      await removal.getByLabel('Current code, recovery code or password').fill(grace.password);
      await removal.getByRole('button', { name: 'Remove Virtual key' }).click();
      await expect.poll(() => page.getByText('No security key yet.').count()).toBe(1);
      const actions = await web.server.server.services.db
        .selectFrom('auditEvents')
        .select('action')
        .where('targetId', '=', String(grace.id))
        .where('action', 'like', 'twoFactor.%')
        .orderBy('id')
        .execute();
      expect(actions.map((a) => a.action)).toEqual(['twoFactor.addSecurityKey', 'twoFactor.removeSecurityKey']);
    } finally {
      config.serverUrl = serverUrl;
    }
  });

  it('sends a user of a group with enforce2FA to enrolment, and keeps them there until they enrol', async () => {
    const base = web.server.url;
    const group = await web.server.call('POST', '/groups', { body: { name: 'must-enrol', enforce2FA: true } });
    expect((await web.server.call('POST', '/memberships', { body: { userId: linus.id, groupId: group.json } })).status).toBe(200);
    const page = await web.signedIn('linus', linus.password);
    expect(new URL(page.url()).pathname).toBe('/~my/two-factor');
    await expect.poll(() => page.getByText('Two-factor authentication is required for your account').count()).toBe(1);
    await page.goto(`${base}/~projects`);
    expect(new URL(page.url()).pathname).toBe('/~my/two-factor');

    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    const secret = (await page.getByLabel('Setup key').textContent())!;
    await page.getByLabel('Code from the app').fill(codeAt(secret));
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('link', { name: 'Done' }).click();
    await page.goto(`${base}/~projects`);
    expect(new URL(page.url()).pathname).toBe('/~projects');
  });
});
