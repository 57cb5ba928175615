import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, signIn } from '../helpers/browser.js';
import { ADMIN } from '../helpers/server.js';
import { startShowcase, type Showcase } from '../helpers/showcase.js';

const AXE_SOURCE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
/** At most this many distinct page URL patterns are checked. */
const MAX_PATTERNS = 120;
/** The first pages crawled are also checked at this width (light and dark). */
const NARROW = { width: 360, count: 12 };

/** Links that are not pages (raw bytes, downloads, logs, the API) or that change state. */
const SKIPPED = [
  /\/~raw\//,
  /\/artifacts\//,
  /\/~builds\/\d+\/log/,
  /^\/~logout/,
  /^\/~api/,
  /^\/~help/,
  /^\/~assets\//,
  /\/(delete|remove|cancel|rebuild|merge|discard|reopen|reset|disable)$/,
];

/**
 * The pattern a URL stands for: numbers and hashes become placeholders, query values are
 * dropped, and a path inside a revision counts as a directory or a file of its extension — so
 * the crawl visits each kind of page once, whatever new pages link to.
 */
function patternOf(url: URL): string {
  let path = url.pathname.replace(/\/[0-9a-f]{40}(?=\/|$)/g, '/:hash').replace(/\/\d+(?=\/|$)/g, '/:number');
  // one profile stands for every user's
  path = path.replace(/^\/~users\/[^/]+$/, '/~users/:name');
  const inRevision = /^(.*\/~(?:files|edit|new|upload|delete))\/[^/]+(\/.*)?$/.exec(path);
  if (inRevision) {
    const last = inRevision[2]?.split('/').pop() ?? '';
    path = `${inRevision[1]}/:revision/${last.includes('.') ? `*.${last.split('.').pop()}` : last ? '*/' : ''}`;
  }
  const keys = [...new Set(url.searchParams.keys())].sort();
  return keys.length ? `${path}?${keys.join('&')}` : path;
}

interface Violation {
  rule: string;
  impact: string;
  page: string;
  mode: string;
  nodes: string[];
}

/** Runs axe-core in the page and returns its serious and critical violations. */
async function seriousViolations(page: Page, mode: string): Promise<Violation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE_SOURCE });
  const results = await page.evaluate(() => (window as unknown as { axe: { run(options: object): Promise<any> } }).axe.run({ resultTypes: ['violations'] }));
  const url = new URL(page.url());
  return (results.violations as { id: string; impact: string; help: string; nodes: { target: string[]; failureSummary: string }[] }[])
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      rule: `${v.id}: ${v.help}`,
      impact: v.impact,
      page: `${url.pathname}${url.search}`,
      mode,
      nodes: v.nodes.slice(0, 5).map((n) => `${n.target.join(' ')} — ${n.failureSummary.replace(/\s+/g, ' ')}`),
    }));
}

/** Checks the page open in `page` in the light and the dark scheme. */
async function checkSchemes(page: Page, width: number): Promise<Violation[]> {
  const found: Violation[] = [];
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    found.push(...(await seriousViolations(page, `${colorScheme}, ${width} px`)));
  }
  return found;
}

/**
 * Every page passes axe-core with no serious or critical violation, in the light and dark
 * schemes, and the first pages also at 360 px: an administrator's crawl of a seeded server,
 * breadth-first from `/` over same-origin links, one page per URL pattern.
 */
describe('accessibility of every page', () => {
  let showcase: Showcase;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    [showcase, browser] = await Promise.all([startShowcase(), launchBrowser()]);
  }, 180_000);
  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await showcase?.close();
  });

  async function signedInPage(width: number): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 800 }, bypassCSP: true });
    contexts.push(context);
    const page = await context.newPage();
    await signIn(page, showcase.server, ADMIN.name, ADMIN.password);
    return page;
  }

  it('has no serious or critical violation on any page crawled from /', async () => {
    const { server, repo } = showcase;
    const origin = new URL(server.url).origin;
    const wide = await signedInPage(1280);
    const narrow = await signedInPage(NARROW.width);
    // pages reached through forms rather than links
    const queue = [
      '/',
      `/${repo.path}/~pulls/new?target=main&source=greetings`,
      `/${repo.path}/~compare?left=main&right=greetings`,
      // the diff view's split layout and its file tree, at both widths
      `/${repo.path}/~pulls/${showcase.pullNumber}/changes?view=split`,
      `/${repo.path}/~issues/new`,
      `/${repo.path}/~pulls/${showcase.conflictPullNumber}/conflicts`,
      `/${repo.path}/~no-such-page`,
      `/~search?q=${repo.path}`,
      '/~code?q=greet&mode=symbol',
      '/~inbox',
      '/~my/notifications',
      '/~users/admin',
      '/~my/avatar',
    ].map((p) => new URL(p, origin));
    const seen = new Set(queue.map(patternOf));
    const visited: string[] = [];
    const violations: Violation[] = [];
    const serverErrors: string[] = [];

    while (queue.length > 0 && visited.length < MAX_PATTERNS) {
      const url = queue.shift()!;
      const response = await wide.goto(url.href);
      if (!response || response.status() >= 500) serverErrors.push(`${url.pathname}${url.search}: ${response?.status()}`);
      visited.push(patternOf(url));
      violations.push(...(await checkSchemes(wide, 1280)));
      if (visited.length <= NARROW.count) {
        await narrow.goto(url.href);
        violations.push(...(await checkSchemes(narrow, NARROW.width)));
      }
      const hrefs = await wide.locator('a[href]:not([download])').evaluateAll((links) => links.map((a) => (a as HTMLAnchorElement).href));
      for (const href of hrefs) {
        const next = new URL(href);
        next.hash = '';
        if (next.origin !== origin || SKIPPED.some((re) => re.test(next.pathname))) continue;
        const pattern = patternOf(next);
        if (seen.has(pattern)) continue;
        seen.add(pattern);
        queue.push(next);
      }
    }

    // the crawl reached the seeded things, not only the first page
    for (const expected of [
      '/demo/~pulls/:number/changes',
      '/demo/~pulls/:number/conflicts',
      '/demo/~builds/:number',
      '/demo/~issues/:number',
      '/demo/~commits/:hash',
      '/demo/~files/:revision/*.ts',
      '/demo/~edit/:revision/*.md',
      '/demo/~upload/:revision/',
      '/~users/:name',
      '/~my/avatar',
    ]) {
      expect(visited).toContain(expected);
    }
    expect(serverErrors).toEqual([]);
    const report = violations.map((v) => `${v.impact} ${v.rule}\n  page ${v.page} (${v.mode})\n  ${v.nodes.join('\n  ')}`);
    expect(report, `${violations.length} violations on ${visited.length} pages`).toEqual([]);
  }, 600_000);

  it('has no serious or critical violation on the sign-in page', async () => {
    const context = await browser.newContext({ viewport: { width: NARROW.width, height: 800 }, bypassCSP: true });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${showcase.server.url}/~login`);
    expect(await checkSchemes(page, NARROW.width)).toEqual([]);
  }, 60_000);
});
