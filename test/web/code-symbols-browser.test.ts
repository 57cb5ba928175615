import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { browserTests, DESKTOP } from '../helpers/browser.js';
import { eventually, givenRepo, type Repo } from '../helpers/fixtures.js';
import { ADMIN } from '../helpers/server.js';

/** Where on the page the first occurrence of `word` in the code is: the middle of its box. */
async function pointAt(page: Page, word: string): Promise<{ x: number; y: number }> {
  return page.evaluate((w) => {
    const walker = document.createTreeWalker(document.querySelector('.file-code')!, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const at = node.textContent!.indexOf(w);
      if (at < 0) continue;
      const range = document.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + w.length);
      const box = range.getBoundingClientRect();
      return { x: box.left + box.width / 2, y: box.top + box.height / 2 };
    }
    throw new Error(`${w} is not in the code`);
  }, word);
}

/** Clicks at a point with Control held. */
async function ctrlClick(page: Page, x: number, y: number): Promise<void> {
  await page.keyboard.down('Control');
  await page.mouse.click(x, y);
  await page.keyboard.up('Control');
}

/** "Go to definition" in Chromium (docs/compatibility.md#code-search): Ctrl-click, the list of several, `d` and the form. */
describe('go to definition in a browser', () => {
  let repo: Repo;
  let head: string;
  const web = browserTests(async (server) => {
    repo = await givenRepo(server, 'engine', {
      files: {
        'src/engine.ts': 'export class Engine {\n  fluxCapacitor(speed: number) {\n    return speed * 88;\n  }\n}\n\nexport function startEngine() {}\n',
        'lib/flux.py': 'def fluxCapacitor():\n    return 1\n',
        'src/use.ts': "import { Engine, startEngine } from './engine';\nstartEngine();\nnew Engine().fluxCapacitor(1);\nmissingThing();\n",
      },
    });
    head = await repo.head('main');
    const cookie = await web.signedIn(ADMIN.name, ADMIN.password).then((page) => page.context().cookies());
    const header = cookie.map((c) => `${c.name}=${c.value}`).join('; ');
    await eventually(async () => {
      const res = await fetch(`${server.url}/engine/~definitions?name=startEngine`, { headers: { cookie: header } });
      return (await res.json()).definitions.length === 1 || null;
    });
  }, 120_000);

  it('follows a Ctrl-clicked name to its one definition', async () => {
    const page = await web.signedIn(ADMIN.name, ADMIN.password, { viewport: DESKTOP });
    await page.goto(`${web.server.url}/engine/~files/main/src/use.ts`);
    const { x, y } = await pointAt(page, 'startEngine');
    await ctrlClick(page, x, y);
    await page.waitForURL(`${web.server.url}/engine/~files/${head}/src/engine.ts#L7`);
  });

  it('lists several definitions, the same language first, to choose from with the keyboard', async () => {
    const page = await web.signedIn(ADMIN.name, ADMIN.password, { viewport: DESKTOP });
    await page.goto(`${web.server.url}/engine/~files/main/src/use.ts`);
    const { x, y } = await pointAt(page, 'fluxCapacitor');
    await ctrlClick(page, x, y);
    const list = page.getByRole('list', { name: 'Definitions of fluxCapacitor' });
    await expect
      .poll(() => list.getByRole('listitem').allTextContents())
      .toEqual(['method fluxCapacitor in Engine · src/engine.ts:2', 'function fluxCapacitor · lib/flux.py:1']);
    expect(
      await list
        .getByRole('link')
        .first()
        .evaluate((a) => a === document.activeElement),
    ).toBe(true);
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${web.server.url}/engine/~files/${head}/lib/flux.py#L1`);
  });

  it('looks up the selected name with d, and a typed one in the form; none is said', async () => {
    const page = await web.signedIn(ADMIN.name, ADMIN.password, { viewport: DESKTOP });
    await page.goto(`${web.server.url}/engine/~files/main/src/use.ts`);
    // d without a selection focuses the form
    await page.keyboard.press('d');
    const input = page.getByRole('textbox', { name: 'Go to definition' });
    expect(await input.evaluate((e) => e === document.activeElement)).toBe(true);
    await input.fill('missingThing');
    await input.press('Enter');
    await expect.poll(() => page.getByText('No definition of missingThing found').isVisible()).toBe(true);
    // a selected name and d
    await page.locator('.file-code').evaluate((code) => {
      (document.activeElement as HTMLElement).blur();
      const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const at = node.textContent!.indexOf('startEngine');
        if (at < 0) continue;
        const range = document.createRange();
        range.setStart(node, at);
        range.setEnd(node, at + 'startEngine'.length);
        getSelection()!.removeAllRanges();
        getSelection()!.addRange(range);
        return;
      }
    });
    await page.keyboard.press('d');
    await page.waitForURL(`${web.server.url}/engine/~files/${head}/src/engine.ts#L7`);
  });
});
