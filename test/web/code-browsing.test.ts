import fs from 'node:fs/promises';
import path from 'node:path';
import { h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pendingLastCommits, TreeTable } from '../../src/web/components/tree.js';
import { givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { ADMIN, git, startTestServer, type TestServer } from '../helpers/server.js';

const BODY = Array.from({ length: 8 }, (_, i) => `export const n${i} = ${i};`).join('\n') + '\nexport const two = 2;\n';

/**
 * What a reviewer expects of code browsing, over HTTP: last commits in the tree, the branch
 * and tag switcher, the file finder and its path list, blame prior to a change, permalinks and
 * the commit graph.
 */
describe('code browsing', () => {
  let server: TestServer;
  let outsider: TestUser;
  let reader: TestUser;
  let repo: Repo;
  let root: string;
  let renamed: string;
  let merge: string;
  let admin: WebSession;

  beforeAll(async () => {
    server = await startTestServer();
    [outsider, reader] = await givenUsers(server, 'outsider', 'reader');
    repo = await givenRepo(server, 'lib', {
      files: { LICENSE: 'MIT\n', 'src/util.ts': `// util\n${BODY}`, 'src/deep/x.ts': 'x\n', 'docs/guide.md': '# Guide\n' },
    });
    root = await repo.head('main');
    // renamed and its first line changed: git follows the rename
    await git(repo.work, ['mv', 'src/util.ts', 'src/helpers.ts']);
    await fs.writeFile(path.join(repo.work, 'src/helpers.ts'), `// helpers\n${BODY}`);
    await git(repo.work, ['commit', '-q', '-am', 'Rename util to helpers']);
    await git(repo.work, ['push', '-q', repo.remote, 'main']);
    renamed = await repo.head('main');
    await repo.commitOn('main', { 'src/helpers.ts': `// helpers\n${BODY.replace('two = 2', 'two = 3')}` }, 'Fix two');
    await repo.commitOn('feature/side', { 'docs/side.md': 'side\n' }, 'Side work');
    await git(repo.work, ['checkout', '-q', 'main']);
    await git(repo.work, ['pull', '-q', repo.remote, 'main']);
    await git(repo.work, ['merge', '-q', '--no-ff', '-m', 'Merge side', 'feature/side']);
    await git(repo.work, ['push', '-q', repo.remote, 'main']);
    merge = await repo.head('main');
    await git(repo.work, ['tag', 'v1', root]);
    await git(repo.work, ['push', '-q', repo.remote, 'v1']);
    await grantRole(server, repo.id, reader.id, 'Code Reader');
    admin = await signInByFetch(server, ADMIN.name, ADMIN.password);
  }, 120_000);
  afterAll(async () => {
    await removeWorkTrees();
    await server?.close();
  });

  const get = (path: string, cookie = admin.cookie) => fetch(`${server.url}${path}`, { redirect: 'manual', headers: { cookie } });
  /** The row of a tree entry: its cells' text and links. */
  const rowOf = (html: string, name: string) =>
    new RegExp(`<tr class="(?:dir|file)" data-entry="[^"]*"><th scope="row"><a href="[^"]*">${name}</a></th>([\\s\\S]*?)</tr>`).exec(html)?.[1] ?? '';

  it('shows each tree entry with the subject, author and date of its last commit, linked to the commit', async () => {
    const html = await (await get('/lib/~files/main')).text();
    const license = rowOf(html, 'LICENSE');
    expect(license).toContain(`href="/lib/~commits/${root}">initial commit</a>`);
    expect(license).toContain('Test Author');
    expect(license).toMatch(/<time datetime="[^"]+" title="[^"]+">(just now|\d+ (second|minute)s? ago)<\/time>/);
    expect(rowOf(html, 'src/')).toContain('>Fix two</a>');
    expect(rowOf(html, 'docs/')).toContain('>Side work</a>');
    const src = await (await get('/lib/~files/main/src')).text();
    expect(rowOf(src, 'helpers.ts')).toContain('>Fix two</a>');
    expect(rowOf(src, 'deep/')).toContain('>initial commit</a>');
    // at an older revision, the history of that revision
    const old = await (await get(`/lib/~files/${renamed}/src`)).text();
    expect(rowOf(old, 'helpers.ts')).toContain('>Rename util to helpers</a>');
    expect(rowOf(old, 'deep/')).toContain('>initial commit</a>');
    // the project home's tree too
    const home = await (await get('/lib')).text();
    expect(rowOf(home, 'LICENSE')).toContain('>initial commit</a>');
  });

  it('serves the last-commit cells as JSON for a view shown before they were read, and waits for them on request', async () => {
    const response = await get('/lib/~last-commits/main/src');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const { commit, rows } = await response.json();
    expect(commit).toBe(merge);
    expect(Object.keys(rows)).toEqual(['deep', 'helpers.ts']);
    expect(rows['helpers.ts'].commit).toMatch(/^<a href="\/lib\/~commits\/[0-9a-f]{40}">Fix two<\/a><span class="meta"> Test Author<\/span>$/);
    expect(rows['helpers.ts'].date).toMatch(/^<time datetime="[^"]+" title="[^"]+">/);
    expect((await get(`/lib/~last-commits/${root}`)).status).toBe(200);
    const file = await get('/lib/~last-commits/main/LICENSE');
    expect(file.status).toBe(400);
    expect(await file.text()).toContain('Specified path is not a directory: LICENSE');
    expect((await get('/lib/~last-commits/nope')).status).toBe(404);
    expect((await get('/lib/~last-commits/main', (await signInByFetch(server, outsider.name, outsider.password)).cookie)).status).toBe(404);
    const waited = await (await get('/lib/~files/v1?last-commits=wait')).text();
    expect(rowOf(waited, 'LICENSE')).toContain('>initial commit</a>');
    expect(waited).not.toContain('data-last-commits');
  });

  it('offers a branch and tag switcher keeping the path, whose form opens any revision', async () => {
    const html = await (await get('/lib/~files/main/src')).text();
    const menu = /<details class="revision-switcher"[\s\S]*?<\/details>/.exec(html)![0];
    expect(menu).toContain('Branch: <strong>main</strong>');
    expect(menu).toMatch(/<ul aria-label="Branches" data-filter-list[^>]*><li><a href="\/lib\/~files\/feature\/side\/src">feature\/side<\/a><\/li>/);
    expect(menu).toContain('<a href="/lib/~files/main/src" aria-current="true">main</a>');
    expect(menu).toContain('<a href="/lib/~files/v1/src">v1</a>');
    expect(menu).toMatch(/<form method="get" action="\/lib\/~files"[\s\S]*name="revision"[\s\S]*<input type="hidden" name="path" value="src"\/>/);
    expect((await get(`/lib/~files?revision=${root}&path=src`)).headers.get('location')).toBe(`/lib/~files/${root}/src`);
    const tag = await (await get('/lib/~blame/v1/LICENSE')).text();
    expect(tag).toContain('Tag: <strong>v1</strong>');
    expect(tag).toContain('<a href="/lib/~blame/main/LICENSE">main</a>');
    const commit = await (await get(`/lib/~files/${root}`)).text();
    expect(commit).toContain(`Revision: <strong>${root.slice(0, 8)}</strong>`);
    const home = await (await get('/lib')).text();
    expect(home).toContain('<a href="/lib/~find/main" data-key="t" aria-keyshortcuts="t" title="Go to file (t)">Go to file</a>');
    const commits = await (await get('/lib/~commits?revision=main&query=author(Test*)')).text();
    expect(commits).toContain(`<a href="/lib/~commits?revision=v1&amp;query=author%28Test*%29">v1</a>`);
  });

  it('lists at most 200 branches in the switcher, and says how many more can be typed', async () => {
    const many = await givenRepo(server, 'many');
    const refspecs = Array.from({ length: 205 }, (_, i) => `main:refs/heads/b-${String(i).padStart(3, '0')}`);
    await git(many.work, ['push', '-q', many.remote, ...refspecs]);
    const html = await (await get('/many/~files/main')).text();
    const branches = /<ul aria-label="Branches"[^>]*>([\s\S]*?)<\/ul>/.exec(html)![1];
    expect(branches.match(/<li>/g)).toHaveLength(200);
    expect(html).toContain('<p class="meta">6 more: type the name</p>');
  });

  it('finds files fuzzily without JavaScript, and serves the path list as JSON', async () => {
    const finder = await get('/lib/~find/main?q=hlp');
    expect(finder.status).toBe(200);
    const html = await finder.text();
    expect(html).toContain('<title>Go to file at main · lib · Gitloom</title>');
    expect(html).toContain('<a href="/lib/~files/main/src/helpers.ts">src/helpers.ts</a>');
    expect(html).not.toContain('>LICENSE</a></li>');
    expect(html).toContain('1 matching file');
    const all = await (await get('/lib/~find/feature/side')).text();
    expect(all).toMatch(/<a href="\/lib\/~files\/feature\/side\/docs\/side\.md">docs\/side\.md<\/a>/);
    expect(all).toContain('5 files');
    const files = await (await get('/lib/~files/main/src/helpers.ts')).text();
    expect(files).toContain('<a href="/lib/~find/main" data-key="t"');

    const json = await get('/lib/~paths/main');
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(json.headers.get('cache-control')).toBe('private, no-cache');
    expect(await json.json()).toEqual({
      commit: merge,
      paths: ['LICENSE', 'docs/guide.md', 'docs/side.md', 'src/deep/x.ts', 'src/helpers.ts'],
      truncated: false,
    });
    const pinned = await get(`/lib/~paths/${root}`);
    expect(pinned.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
    expect((await pinned.json()).paths).toContain('src/util.ts');

    expect((await get('/lib/~find/nope')).status).toBe(404);
    expect((await get('/lib/~paths/nope')).status).toBe(404);
    expect((await get('/lib/~paths/main', (await signInByFetch(server, outsider.name, outsider.password)).cookie)).status).toBe(404);
    expect((await get('/lib/~paths/main', (await signInByFetch(server, reader.name, reader.password)).cookie)).status).toBe(200);
  });

  it('links blame prior to a change: the parent commit, under the path the file had there', async () => {
    const html = await (await get('/lib/~blame/main/src/helpers.ts')).text();
    const fixTwo = await (await get('/lib/~commits?revision=main&query=message(Fix*)')).text();
    const fix = /href="\/lib\/~commits\/([0-9a-f]{40})" class="commit-subject">Fix two/.exec(fixTwo)![1];
    expect(html).toContain(`href="/lib/~blame/${renamed}/src/helpers.ts" class="blame-prior" aria-label="Blame prior to ${fix.slice(0, 8)} (lines 10–10)"`);
    // the rename's line: prior is the root commit, where the file was util.ts
    expect(html).toContain(`href="/lib/~blame/${root}/src/util.ts" class="blame-prior" aria-label="Blame prior to ${renamed.slice(0, 8)} (lines 1–1)"`);
    // lines the root commit added have no prior
    const atRoot = await (await get(`/lib/~blame/${root}/src/util.ts`)).text();
    expect(atRoot).toContain(`/lib/~commits/${root}`);
    expect(atRoot).not.toContain('class="blame-prior"');
  });

  it('offers a permalink: the same page at the commit', async () => {
    const file = await (await get('/lib/~files/main/src/helpers.ts')).text();
    expect(file).toContain(`<a href="/lib/~files/${merge}/src/helpers.ts" data-key="y" aria-keyshortcuts="y"`);
    const tree = await (await get('/lib/~files/feature/side/docs')).text();
    expect(tree).toMatch(new RegExp(`<a href="/lib/~files/[0-9a-f]{40}/docs" data-key="y"`));
    const blame = await (await get('/lib/~blame/v1/LICENSE')).text();
    expect(blame).toContain(`<a href="/lib/~blame/${root}/LICENSE" data-key="y"`);
  });

  it('draws the commit graph of the page: a second lane for the merged branch', async () => {
    const html = await (await get('/lib/~commits?revision=main')).text();
    const graphs = [...html.matchAll(/<svg class="commit-graph" aria-hidden="true" viewBox="0 0 (\d) 2"[^>]*>([\s\S]*?)<\/svg>/g)];
    expect(graphs).toHaveLength(5);
    expect(graphs.every((g) => g[1] === '2')).toBe(true);
    // the merge: a line from its dot down to the side lane
    expect(graphs[0][2]).toContain('x1="0.5" y1="1" x2="1.5" y2="2"');
    expect(graphs[0][2]).toContain('<line class="commit-dot lane-0" x1="0.5" y1="1" x2="0.5" y2="1"');
  });
});

describe('tree table before its last commits are read', () => {
  it('names the page that waits for them and the JSON that fills them, with empty cells', () => {
    const entries = [{ name: 'a.ts', type: 'blob' as const, mode: '100644', hash: 'a'.repeat(40) }];
    const pending = pendingLastCommits('g/app', '/g/app/~files/main/src', 'b'.repeat(40), 'src');
    expect(pending).toEqual({ page: '/g/app/~files/main/src?last-commits=wait', json: `/g/app/~last-commits/${'b'.repeat(40)}/src` });
    const html = renderToString(h(TreeTable, { projectPath: 'g/app', revision: 'main', dir: 'src', entries, lastCommits: null, pending }));
    expect(html).toContain(`<p class="meta" role="status" data-last-commits="/g/app/~last-commits/${'b'.repeat(40)}/src">`);
    expect(html).toContain('<a href="/g/app/~files/main/src?last-commits=wait">Show them when read</a>');
    expect(html).toContain('<td class="tree-commit"></td><td class="tree-date meta"></td>');
  });
});
