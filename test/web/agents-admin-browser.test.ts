import { describe, expect, it } from 'vitest';
import { givenAgent } from '../helpers/agents.js';
import { browserTests } from '../helpers/browser.js';
import { ADMIN } from '../helpers/server.js';

/** Administration › Agents as an administrator uses it, in Chromium at 360 px (docs/compatibility.md#build-agents). */
describe('agents administration in a browser', () => {
  let agentId: number;
  const web = browserTests(async (server) => {
    agentId = (await givenAgent(server, { name: 'rack-7', osName: 'Linux', attributes: { zone: 'east' } })).id;
  });

  it('an administrator creates a token, finds an agent by query, edits its attributes and pauses it', async () => {
    const page = await web.signedIn(ADMIN.name, ADMIN.password);
    await page.goto(`${web.server.url}/~administration/users`);
    await page.getByRole('link', { name: 'Agents', exact: true }).click();
    await page.waitForURL(`${web.server.url}/~administration/agents`);
    await page.getByRole('link', { name: 'Agent tokens' }).click();
    await page.getByRole('button', { name: 'Create token' }).click();
    const notice = await page.getByRole('status').textContent();
    const tokens = (await web.server.call('GET', '/agent-tokens')).json as { id: number; value: string }[];
    expect(notice).toBe(`Token #${tokens[1].id} created: ${tokens[1].value}`);

    await page.goto(`${web.server.url}/~administration/agents`);
    await page.getByLabel('Query').fill('"zone" is "east" and online');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'rack-7' }).click();
    await page.waitForURL(`${web.server.url}/~administration/agents/${agentId}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Agent rack-7');
    await page.getByLabel('Attribute 2 name').fill('gpu');
    await page.getByLabel('Attribute 2 value').fill('nvidia');
    await page.getByRole('button', { name: 'Save attributes' }).click();
    await page.waitForURL(`${web.server.url}/~administration/agents/${agentId}`);
    expect((await web.server.call('GET', `/agents/${agentId}/attributes`)).json).toEqual({ gpu: 'nvidia', zone: 'east' });
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByRole('button', { name: 'Resume' }).waitFor();
    expect((await web.server.call('GET', `/agents/${agentId}`)).json.paused).toBe(true);

    // every agents page fits a 360 px screen
    for (const path of ['agents', `agents/${agentId}`, 'agents/tokens', 'job-executors/new?type=RemoteDockerExecutor']) {
      await page.goto(`${web.server.url}/~administration/${path}`);
      expect(await page.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(360);
    }
  });
});
