import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { browserTests, DESKTOP } from '../helpers/browser.js';
import { givenProject, givenRepo, type Repo } from '../helpers/fixtures.js';
import { ADMIN, git, gitUrl } from '../helpers/server.js';

/**
 * A history of `commits` commits written with `git fast-import` into a new bare repository: a
 * root commit adding LICENSE and `other/`, then each commit changing one file of `other/` — so
 * the last commit of LICENSE is found only at the end of a long walk.
 */
async function longHistory(commits: number): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-long-'));
  await git(dir, ['init', '-q', '--bare', '-b', 'main']);
  const lines: string[] = [];
  for (let n = 0; n <= commits; n++) {
    const message = n === 0 ? 'root' : `change ${n}`;
    lines.push('commit refs/heads/main', `committer T <t@example.com> ${1_600_000_000 + n} +0000`, `data ${message.length}`, message);
    const files = n === 0 ? ['LICENSE', ...Array.from({ length: 50 }, (_, i) => `other/file-${i}.txt`)] : [`other/file-${n % 50}.txt`];
    for (const file of files) lines.push(`M 100644 inline ${file}`, `data ${String(n).length + 1}`, String(n));
    lines.push('');
  }
  // not spawnSync: the server runs in this process, and a blocked event loop let its keep-alive
  // timeout close the client's pooled connection as the next request went out on it
  const importer = spawn('git', [`--git-dir=${dir}`, 'fast-import', '--quiet'], { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  importer.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const status = new Promise<number | null>((resolve, reject) => {
    importer.on('error', reject);
    importer.on('close', resolve);
  });
  importer.stdin.end(lines.join('\n'));
  if ((await status) !== 0) throw new Error(`fast-import: ${stderr}`);
  return dir;
}

const LINES = Array.from({ length: 6 }, (_, i) => `export const n${i} = ${i};`).join('\n');

/** Code browsing in Chromium: the switcher, the finder, blame prior to a change, `y`, a mermaid diagram. */
describe('code browsing in a browser', () => {
  let repo: Repo;
  let root: string;
  let head: string;
  const web = browserTests(async (server) => {
    repo = await givenRepo(server, 'kit', {
      files: {
        'README.md': '# Kit\n\n```mermaid\ngraph LR\n  Build --> Test\n```\n\nArea $\\pi r^2$.\n',
        'src/old-name.ts': `${LINES}\n`,
        'src/components/button.tsx': 'export const Button = 1;\n',
        'docs/setup.md': '# Setup\n',
      },
    });
    root = await repo.head('main');
    await git(repo.work, ['mv', 'src/old-name.ts', 'src/new-name.ts']);
    await fs.writeFile(path.join(repo.work, 'src/new-name.ts'), `${LINES.replace('n2 = 2', 'n2 = 22')}\n`);
    await git(repo.work, ['commit', '-q', '-am', 'Rename and change n2']);
    await git(repo.work, ['push', '-q', repo.remote, 'main']);
    head = await repo.head('main');
    for (const name of ['release/1.0', 'release/2.0', 'topic']) await repo.commitOn(name, { [`${name.replace('/', '-')}.txt`]: 'x\n' }, name);
  }, 120_000);

  it('switches branches through a filtered menu, keeping the path', async () => {
    const page = await web.signedIn(ADMIN.name, ADMIN.password, { viewport: DESKTOP });
    await page.goto(`${web.server.url}/kit/~files/main/src`);
    await page.getByText('Branch: main').click();
    const filter = page.getByLabel('Branch, tag or commit');
    await expect.poll(() => filter.evaluate((e) => e === document.activeElement)).toBe(true);
    await filter.fill('rel');
    const branches = page.getByRole('list', { name: 'Branches' });
    expect(await branches.getByRole('link').allTextContents()).toEqual(['release/1.0', 'release/2.0']);
    await filter.fill('zzz');
    await expect.poll(() => page.getByText('No branch or tag matches.').isVisible()).toBe(true);
    await filter.fill('2.0');
    await filter.press('Enter');
    await page.waitForURL(`${web.server.url}/kit/~files/release/2.0/src`);
    expect(await page.title()).toBe('src at release/2.0 · kit · Gitloom');
    // a commit typed in opens that commit
    await page.getByText('Branch: release/2.0').click();
    await page.getByLabel('Branch, tag or commit').fill(root);
    await page.getByLabel('Branch, tag or commit').press('Enter');
    await page.waitForURL(`${web.server.url}/kit/~files/${root}/src`);
  });

  it('finds a file with t and fuzzy typing', async () => {
    const page = await web.signedIn(ADMIN.name, ADMIN.password);
    await page.goto(`${web.server.url}/kit/~files/main`);
    await page.keyboard.press('t');
    await page.waitForURL(`${web.server.url}/kit/~find/main`);
    const input = page.getByLabel('File name');
    await input.pressSequentially('btn');
    const results = page.getByRole('list', { name: 'Files' });
    await expect.poll(() => results.getByRole('link').allTextContents()).toEqual(['src/components/button.tsx']);
    expect(await results.locator('mark').allTextContents()).toEqual(['b', 't', 'n']);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${web.server.url}/kit/~files/main/src/components/button.tsx`);
    // typing in a field never triggers a shortcut
    await page.getByText('Branch: main').click();
    await page.getByLabel('Branch, tag or commit').press('t');
    expect(new URL(page.url()).pathname).toBe('/kit/~files/main/src/components/button.tsx');
  });

  it('blames the lines before a change, following the rename', async () => {
    const page = await web.signedIn(ADMIN.name, ADMIN.password, { viewport: DESKTOP });
    await page.goto(`${web.server.url}/kit/~blame/main/src/new-name.ts`);
    await page.getByRole('link', { name: `Blame prior to ${head.slice(0, 8)} (lines 3–3)` }).click();
    await page.waitForURL(`${web.server.url}/kit/~blame/${root}/src/old-name.ts`);
    expect(await page.locator('#L3').textContent()).toBe('3\n');
    expect(await page.locator('.file-code').textContent()).toContain('n2 = 2;');
  });

  it('turns the address into the permalink with y, keeping the line', async () => {
    const page = await web.signedIn(ADMIN.name, ADMIN.password);
    await page.goto(`${web.server.url}/kit/~files/main/src/new-name.ts#L3`);
    await page.keyboard.press('y');
    expect(page.url()).toBe(`${web.server.url}/kit/~files/${head}/src/new-name.ts#L3`);
    await page.reload();
    expect(await page.title()).toBe(`src/new-name.ts at ${head} · kit · Gitloom`);
    expect(await page.getByRole('link', { name: 'Permalink' }).getAttribute('href')).toBe(`/kit/~files/${head}/src/new-name.ts`);
  });

  it('shows a tree at once and fills in the last commits a long walk finds', async () => {
    const history = await longHistory(60_000);
    try {
      await givenProject(web.server, { name: 'long' });
      await git(history, ['push', '-q', gitUrl(web.server, 'long', { name: ADMIN.name, password: ADMIN.password }), 'main']);
    } finally {
      await fs.rm(history, { recursive: true, force: true });
    }
    const page = await web.signedIn(ADMIN.name, ADMIN.password, { viewport: DESKTOP });
    const response = await page.goto(`${web.server.url}/long/~files/main`);
    // the walk to the root commit outlasts the page's 300 ms: the names come first
    expect(await response!.text()).toContain('Reading the last commits…');
    expect(await page.getByRole('link', { name: 'LICENSE' }).count()).toBe(1);
    const license = page.getByRole('row', { name: /^LICENSE/ });
    await license.getByRole('link', { name: 'root' }).waitFor({ timeout: 60_000 });
    expect(await page.getByRole('status').count()).toBe(0);
    expect(
      await page
        .getByRole('row', { name: /^other\// })
        .getByRole('link', { name: 'change 60000' })
        .count(),
    ).toBe(1);
  }, 120_000);

  it('draws a mermaid diagram of the README, and its math', async () => {
    const page = await web.signedIn(ADMIN.name, ADMIN.password, { viewport: DESKTOP });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${web.server.url}/kit`);
    const diagram = page.getByRole('figure', { name: 'Diagram' });
    await diagram.locator('svg').waitFor({ timeout: 30_000 });
    expect(await diagram.locator('svg').textContent()).toContain('Build');
    expect((await diagram.locator('svg').boundingBox())!.width).toBeGreaterThan(50);
    expect(await page.locator('pre.mermaid').count()).toBe(0);
    expect(await page.locator('.markdown math').count()).toBe(1);
    expect(errors).toEqual([]);
  });
});
