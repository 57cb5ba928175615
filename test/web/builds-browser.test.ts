import fs from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { browserTests } from '../helpers/browser.js';
import { givenRepo } from '../helpers/fixtures.js';
import { ADMIN } from '../helpers/server.js';

const SPEC = `version: 25
jobs:
- name: Live
  steps:
  - !CommandStep
    name: talk
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo "live first line"
      - sleep 8
      - echo "live second line"
      - echo "artifact body" > result.txt
  - !PublishArtifactStep
    name: publish
    artifacts: result.txt
`;

/** A person runs a job from the builds list and watches its log arrive, in Chromium at 360 px. */
describe('build pages in a browser', () => {
  const web = browserTests(async (server) => {
    await givenRepo(server, 'live', { files: { 'README.md': '# live\n', '.onedev-buildspec.yml': SPEC } });
  });

  it('runs a job from the list, follows its log while it runs, then downloads its artifact', async () => {
    const page = await web.signedIn(ADMIN.name, ADMIN.password, { acceptDownloads: true });
    await page.goto(`${web.server.url}/live/~builds`);
    expect(await page.title()).toBe('Builds · live · Gitloom');
    await page.getByText('Run job', { exact: true }).click();
    expect(await page.getByLabel('Branch').inputValue()).toBe('main');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await Promise.all([page.waitForURL(/\/live\/~builds\/\d+$/), page.getByRole('button', { name: 'Run Live' }).click()]);
    const number = Number(new URL(page.url()).pathname.split('/').pop());
    const status = async () => {
      const list = (await web.server.call('GET', `/builds?query=${encodeURIComponent(`"Number" is "live#${number}"`)}&offset=0&count=1`)).json;
      return list[0].status as string;
    };

    const log = page.getByLabel('Build log');
    await expect.poll(() => log.textContent(), { timeout: 60_000 }).toContain('live first line');
    // the first line is on screen while the build still runs (it sleeps before the second)
    expect(await status()).toBe('RUNNING');
    // the module follows the log, so the no-script refresh link steps aside
    expect(await page.getByRole('link', { name: 'refresh' }).isVisible()).toBe(false);
    await expect.poll(() => log.textContent(), { timeout: 60_000 }).toContain('live second line');
    // once the build is over the page reloads itself with the final status and the artifact
    await expect.poll(() => page.locator('.build-status').textContent(), { timeout: 60_000 }).toBe('Successful');
    expect(await status()).toBe('SUCCESSFUL');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'result.txt' }).click()]);
    expect(download.suggestedFilename()).toBe('result.txt');
    expect(await fs.readFile((await download.path())!, 'utf8')).toBe('artifact body\n');
  }, 180_000);
});
