/**
 * Saves screenshots of the main pages into docs/screenshots/ (shown in README "Web UI"): a
 * server seeded like the accessibility crawl (test/helpers/showcase.ts), Chromium signed in as
 * the administrator, each page at desktop width (1280 × 800) and at 360 px (360 × 740), in the
 * light and the dark scheme (`-dark`), device scale 1, the first screenful of the page.
 *
 * Run: `npm run screenshots`.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { launchBrowser, signIn } from '../test/helpers/browser.js';
import { ADMIN } from '../test/helpers/server.js';
import { startShowcase } from '../test/helpers/showcase.js';

const OUT = path.resolve('docs/screenshots');
const SIZES = [
  { suffix: '', viewport: { width: 1280, height: 800 } },
  { suffix: '-360', viewport: { width: 360, height: 740 } },
];
const SCHEMES = [
  { suffix: '', colorScheme: 'light' as const },
  { suffix: '-dark', colorScheme: 'dark' as const },
];

const showcase = await startShowcase();
const browser = await launchBrowser();
try {
  const project = `/${showcase.repo.path}`;
  const pages: { name: string; url: string }[] = [
    { name: 'dashboard', url: '/' },
    { name: 'project-home', url: project },
    { name: 'tree', url: `${project}/~files/main/src` },
    { name: 'file', url: `${project}/~files/main/src/app.ts` },
    { name: 'file-edit', url: `${project}/~edit/main/src/app.ts` },
    { name: 'blame', url: `${project}/~blame/greetings/src/greet.ts` },
    { name: 'finder', url: `${project}/~find/main?q=gr` },
    { name: 'commits', url: `${project}/~commits?revision=main&query=` },
    { name: 'commit', url: `${project}/~commits/${showcase.commitHash}` },
    { name: 'pull-request', url: `${project}/~pulls/${showcase.pullNumber}` },
    { name: 'pull-request-changes', url: `${project}/~pulls/${showcase.pullNumber}/changes` },
    { name: 'pull-request-conflicts', url: `${project}/~pulls/${showcase.conflictPullNumber}/conflicts` },
    { name: 'pull-request-changes-split', url: `${project}/~pulls/${showcase.pullNumber}/changes?view=split` },
    { name: 'build', url: `${project}/~builds/${showcase.buildNumber}` },
    { name: 'issues', url: `${project}/~issues` },
    { name: 'issue', url: `${project}/~issues/${showcase.issueNumber}` },
  ];
  await fs.mkdir(OUT, { recursive: true });
  for (const [{ suffix: sizeSuffix, viewport }, { suffix: schemeSuffix, colorScheme }] of SIZES.flatMap((size) =>
    SCHEMES.map((scheme) => [size, scheme] as const),
  )) {
    const suffix = `${sizeSuffix}${schemeSuffix}`;
    const context = await browser.newContext({ viewport, deviceScaleFactor: 1, colorScheme });
    try {
      const page = await context.newPage();
      await signIn(page, showcase.server, ADMIN.name, ADMIN.password);
      for (const { name, url } of pages) {
        const response = await page.goto(`${showcase.server.url}${url}`);
        if (response?.status() !== 200) throw new Error(`${url}: ${response?.status()}`);
        const file = path.join(OUT, `${name}${suffix}.png`);
        await page.screenshot({ path: file });
        console.log(`${path.relative(process.cwd(), file)}  ${url}`);
      }
    } finally {
      await context.close();
    }
  }
} finally {
  await browser.close();
  await showcase.close();
}
