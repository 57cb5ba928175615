import { describe, expect, it } from 'vitest';
import { browserTests, signInByFetch } from '../helpers/browser.js';
import { givenRepo, givenUsers, grantRole, type TestUser } from '../helpers/fixtures.js';
import { ADMIN } from '../helpers/server.js';

/** The audit log's pages (docs/audit-log.md#page-and-api) as people use them, in Chromium at 360 px. */
describe('audit log pages in a browser', () => {
  let erin: TestUser;
  let frank: TestUser;
  let shop: number;
  let other: number;
  const web = browserTests(async (server) => {
    [erin, frank] = await givenUsers(server, 'erin', 'frank');
    shop = (await givenRepo(server, 'shop')).id;
    other = (await givenRepo(server, 'other')).id;
    await grantRole(server, shop, erin.id, 'Code Writer');
    await grantRole(server, other, frank.id, 'Project Owner');
    await grantRole(server, shop, frank.id, 'Code Reader');
  });

  it('an administrator filters the audit log by action and actor, and sets the retention', async () => {
    const page = await web.signedIn(ADMIN.name, ADMIN.password);
    await page.goto(`${web.server.url}/~administration/users`);
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.waitForURL(`${web.server.url}/~administration/audit-log`);
    const table = page.getByRole('table', { name: 'Audit events' });
    expect(await table.getByRole('row').count()).toBeGreaterThan(5);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);

    await page.getByLabel('Action').fill('userAuthorization.create');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/action=userAuthorization.create/);
    const rows = table.getByRole('row');
    // the header and one row per grant
    expect(await rows.count()).toBe(4);
    expect(await table.textContent()).toContain('erin on shop');
    expect(await table.textContent()).not.toContain('project.create');
    expect(await page.getByLabel('Action').inputValue()).toBe('userAuthorization.create');

    await page.getByLabel('Action').fill('');
    await page.getByLabel('Actor').fill('erin');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/actor=erin/);
    expect(await page.getByText('No audit event found.').count()).toBe(1);

    await page.goto(`${web.server.url}/~administration/audit-log`);
    await page.getByLabel(/Keep audit events for/).fill('x');
    await page.getByRole('button', { name: 'Save retention' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('Retention days must be a whole number');
    await page.getByLabel(/Keep audit events for/).fill('30');
    await page.getByRole('button', { name: 'Save retention' }).click();
    expect(await page.getByText('Retention saved.').count()).toBe(1);
    expect((await web.server.call('GET', '/settings/audit-log')).json).toEqual({ retentionDays: 30 });
    await page.getByLabel('Target type').fill('auditSetting');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/targetType=auditSetting/);
    expect(await table.textContent()).toContain('"retentionDays":30');
  });

  it('a project administrator sees the rows of that project only; others get the 404 or 403 page', async () => {
    const page = await web.signedIn('frank', frank.password);
    await page.goto(`${web.server.url}/other/~settings`);
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.waitForURL(`${web.server.url}/other/~settings/audit-log`);
    const text = (await page.getByRole('table', { name: 'Audit events' }).textContent()) ?? '';
    expect(text).toContain('frank on other');
    expect(text).not.toContain('shop');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);

    const session = await signInByFetch(web.server, 'frank', frank.password);
    expect((await fetch(`${web.server.url}/shop/~settings/audit-log`, { headers: { cookie: session.cookie } })).status).toBe(403);
    expect((await fetch(`${web.server.url}/~administration/audit-log`, { headers: { cookie: session.cookie } })).status).toBe(404);
    const erinSession = await signInByFetch(web.server, 'erin', erin.password);
    expect((await fetch(`${web.server.url}/other/~settings/audit-log`, { headers: { cookie: erinSession.cookie } })).status).toBe(404);
  });
});
