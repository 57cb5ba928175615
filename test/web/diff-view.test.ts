import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { git, startTestServer, type TestServer } from '../helpers/server.js';
import { diffFileKey } from '../../src/web/components/diff.js';

const COMMENTED = [
  '/*',
  ...Array.from({ length: 19 }, (_, i) => ` comment line ${i + 2}`),
  '*/',
  ...Array.from({ length: 19 }, (_, i) => `export const v${i + 22} = ${i + 22};`),
];
const lines = (list: string[]) => `${list.join('\n')}\n`;
/** The file tree's "N of M files viewed", or null. */
const viewedCount = (html: string) => /<span class="diff-viewed-n">(\d+)<\/span> of (\d+) files viewed/.exec(html)?.slice(1).join(' of ') ?? null;
const key = (path: string) => diffFileKey({ oldPath: path, newPath: path });

/**
 * The diff view of the commit, compare and pull request changes pages over plain HTTP, with real
 * git: highlighting, intra-line marks, the two layouts and the remembered choice, unchanged lines
 * expanded, the file tree, collapsed files, renames/binaries/LFS, viewed marks.
 */
describe('diff view', () => {
  let server: TestServer;
  let repo: Repo;
  let alice: TestUser;
  let bob: TestUser;
  let asAlice: WebSession;
  let asBob: WebSession;
  let changesUrl: string;
  let requestId: number;

  beforeAll(async () => {
    server = await startTestServer();
    [alice, bob] = await givenUsers(server, 'alice', 'bob');
    repo = await givenRepo(server, 'app', {
      files: {
        'src/code.ts': lines(COMMENTED),
        'package-lock.json': '{ "lockfileVersion": 3 }\n',
        'old-name.txt': lines(Array.from({ length: 10 }, (_, i) => `text line ${i + 1}`)),
        'pic.bin': 'x\0y',
        'docs/deep/nested/readme.md': 'first\n',
      },
    });
    await grantRole(server, repo.id, alice.id, 'Code Writer');
    await grantRole(server, repo.id, bob.id, 'Code Writer');
    // the branch: two edits in a block comment and in code, a lockfile, a rename with an edit, a binary, a nested file
    const changed = [...COMMENTED];
    changed[9] = ' comment line ten';
    changed[34] = 'export const v35 = 350;';
    await git(repo.work, ['checkout', '-q', '-B', 'review', 'main']);
    await git(repo.work, ['mv', 'old-name.txt', 'new-name.txt']);
    await repo.commitOn(
      'review',
      {
        'src/code.ts': lines(changed),
        'package-lock.json': '{ "lockfileVersion": 3, "packages": {} }\n',
        'new-name.txt': lines(Array.from({ length: 10 }, (_, i) => (i === 9 ? 'text line 10, edited' : `text line ${i + 1}`))),
        'pic.bin': 'x\0z',
        'docs/deep/nested/readme.md': 'second\n',
      },
      'Review me',
    );
    [asAlice, asBob] = await Promise.all([signInByFetch(server, 'alice', alice.password), signInByFetch(server, 'bob', bob.password)]);
    const opened = await server.call('POST', '/pulls', {
      body: { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'review', title: 'Review me' },
    });
    expect(opened.status).toBe(200);
    requestId = opened.json as number;
    const number = (await server.call('GET', `/pulls/${requestId}`)).json.number;
    changesUrl = `/app/~pulls/${number}/changes`;
  }, 120_000);
  afterAll(async () => {
    await removeWorkTrees();
    await server?.close();
  });

  const get = async (path: string, session?: WebSession) => {
    const response = await fetch(`${server.url}${path}`, { redirect: 'manual', headers: session ? { cookie: session.cookie } : {} });
    return { status: response.status, html: await response.text(), location: response.headers.get('location') };
  };
  const post = (path: string, fields: Record<string, string>, session: WebSession) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      body: new URLSearchParams({ _csrf: session.csrfToken, ...fields }).toString(),
    });

  it('highlights whole blobs and marks what changed within paired lines', async () => {
    const { status, html } = await get(changesUrl, asAlice);
    expect(status).toBe(200);
    // line 10 sits in a block comment opened on line 1, outside the hunk: highlighted as a comment all the same
    expect(html).toContain('<span class="hljs-comment"> comment line <del>10</del></span>');
    expect(html).toContain('<span class="hljs-comment"> comment line <ins>ten</ins></span>');
    expect(html).toMatch(/<span class="hljs-number"><del>35<\/del><\/span>|<del>35<\/del>/);
    expect(html).toMatch(/<ins>350<\/ins>/);
  });

  it('lists the changed files as a tree with their counts, linking to their sections', async () => {
    const { html } = await get(changesUrl, asAlice);
    const tree = html.slice(html.indexOf('<nav class="diff-tree"'), html.indexOf('</nav>', html.indexOf('<nav class="diff-tree"')));
    // a directory holding only a directory is one node
    expect(tree).toContain('<span class="diff-tree-dir-name">docs/deep/nested/</span>');
    expect(tree).toContain(`<a href="#diff-${key('src/code.ts')}">code.ts</a>`);
    expect(tree).toMatch(/code\.ts<\/a>.*?\+2<\/span> <span class="diff-deletions">−2</);
    expect(viewedCount(tree)).toBe('0 of 5');
    expect(html).toContain(`<section class="diff-file" id="diff-${key('src/code.ts')}"`);
    // anonymous visitors (public project reads) get the tree without the viewed count
    const anonymous = await get(changesUrl);
    if (anonymous.status === 200) expect(anonymous.html).not.toContain('files viewed');
  });

  it('collapses generated files behind "Load diff", and says what renames, and binaries are', async () => {
    const { html } = await get(changesUrl, asAlice);
    const lock = key('package-lock.json');
    expect(html).toContain('Generated file: its diff is not shown.');
    expect(html).toContain(`href="${changesUrl}?load=${lock}#diff-${lock}"`);
    expect(html).not.toContain('&#34;packages&#34;');
    const loaded = await get(`${changesUrl}?load=${lock}`, asAlice);
    expect(loaded.html).toMatch(/<tr id="diff-[0-9a-f]{12}R1" class="diff-line diff-add"/);
    expect(loaded.html).toContain('packages');
    expect(loaded.html).not.toContain('Generated file: its diff is not shown.');

    expect(html).toContain('old-name.txt → new-name.txt');
    expect(html).toMatch(/renamed, \d{2}% similar/);
    expect(html).toContain('Binary file not shown.');
    // Git LFS pointers: test/http/lfs.test.ts (the push needs the objects)
  });

  it('expands the unchanged lines between hunks with ?expand=', async () => {
    const file = key('src/code.ts');
    const { html } = await get(changesUrl, asAlice);
    // before the first hunk (lines 1–6), between the hunks (14–31), after the last (39–40)
    expect(html).toContain(`href="${changesUrl}?expand=${file}.0#diff-${file}-gap0"`);
    expect(html).toContain('Show 6 unchanged lines');
    expect(html).toContain('Show 18 unchanged lines');
    expect(html).toContain('Show 2 unchanged lines');
    expect(html).not.toContain(`id="diff-${file}R20"`);
    const expanded = await get(`${changesUrl}?expand=${file}.1,${file}.2`, asAlice);
    expect(expanded.html).toContain(`<tbody id="diff-${file}-gap1" class="diff-gap diff-expanded">`);
    for (const n of [14, 20, 31, 39, 40]) expect(expanded.html).toContain(`id="diff-${file}R${n}"`);
    expect(expanded.html).toContain('Show 6 unchanged lines');
    // the expanded lines are highlighted from the blob: line 20 is in the comment
    expect(expanded.html).toContain('<span class="hljs-comment"> comment line 20</span>');
    // later links keep what is expanded
    expect(expanded.html).toContain(`?expand=${file}.1%2C${file}.2%2C${file}.0#diff-${file}-gap0`);
    // malformed tokens are ignored
    expect((await get(`${changesUrl}?expand=zz,${file}.x,1.2`, asAlice)).status).toBe(200);
  });

  it('shows the split layout by ?view=, remembers a user’s choice, and refuses an unknown layout', async () => {
    const file = key('src/code.ts');
    const split = await get(`${changesUrl}?view=split`, asAlice);
    expect(split.html).toContain('<table class="diff diff-split-table">');
    expect(split.html).toContain('<th scope="col">Old text</th>');
    // a deleted line beside its added line: each side's anchor on its number cell
    expect(split.html).toContain(`<td class="diff-num diff-delete" id="diff-${file}L10"><a href="#diff-${file}L10" aria-label="Old line 10">10</a></td>`);
    expect(split.html).toContain(`<td class="diff-num diff-add" id="diff-${file}R10"><a href="#diff-${file}R10" aria-label="New line 10">10</a></td>`);
    expect(split.html).toMatch(/<button type="submit" aria-pressed="true">Split<\/button>/);

    // without ?view=, alice's default is unified until she chooses
    expect((await get(changesUrl, asAlice)).html).not.toContain('diff-split-table');
    const chosen = await post('/~diff-layout', { layout: 'split', back: changesUrl }, asAlice);
    expect(chosen.status).toBe(303);
    expect(chosen.headers.get('location')).toBe(changesUrl);
    expect((await get(changesUrl, asAlice)).html).toContain('diff-split-table');
    expect((await get(`/app/~commits/${await repo.head('review')}`, asAlice)).html).toContain('diff-split-table');
    // per user: bob still sees unified
    expect((await get(changesUrl, asBob)).html).not.toContain('diff-split-table');
    // a foreign back address goes home
    expect((await post('/~diff-layout', { layout: 'unified', back: 'https://evil.example/' }, asAlice)).headers.get('location')).toBe('/');
    expect((await get(changesUrl, asAlice)).html).not.toContain('diff-split-table');

    const bad = await post('/~diff-layout', { layout: 'sideways', back: changesUrl }, asAlice);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('Unknown diff layout: sideways');
    // anonymous visitors get links, and must sign in to store a choice
    const anonymous = await fetch(`${server.url}/~diff-layout`, { method: 'POST', redirect: 'manual' });
    expect(anonymous.status).toBeGreaterThanOrEqual(300);
    expect(anonymous.status).toBeLessThan(500);
  });

  it('keeps code comments under their line in the split layout', async () => {
    const { html } = await get(changesUrl, asBob);
    const old = /name="old" value="([0-9a-f]{40})"/.exec(html)![1];
    const head = await repo.head('review');
    const added = await post(
      `${changesUrl}/comments`,
      { old, new: head, newPath: 'src/code.ts', oldPath: 'src/code.ts', side: 'old', line: '35', content: 'Why **350**?' },
      asBob,
    );
    expect(added.status, await added.clone().text()).toBe(303);
    const split = (await get(`${changesUrl}?view=split`, asBob)).html;
    const row = split.indexOf(`id="diff-${key('src/code.ts')}L35"`);
    const thread = split.indexOf('Why <strong>350</strong>?');
    expect(row).toBeGreaterThan(0);
    expect(thread).toBeGreaterThan(row);
    expect(split.slice(row, thread)).toContain('<tr class="diff-below"><td colspan="4">');
  });

  it('marks files viewed per user and blob: collapsed, ticked in the tree, reset when a later update changes the file', async () => {
    const file = key('docs/deep/nested/readme.md');
    const { html } = await get(changesUrl, asAlice);
    const blob = new RegExp(`name="path" value="docs/deep/nested/readme.md"/><input type="hidden" name="blob" value="([0-9a-f]{40})"/>`).exec(html)![1];
    const marked = await post(`${changesUrl}/viewed`, { path: 'docs/deep/nested/readme.md', blob, viewed: 'true' }, asAlice);
    expect(marked.status).toBe(303);
    expect(marked.headers.get('location')).toBe(`${changesUrl}#diff-${file}`);
    const after = (await get(changesUrl, asAlice)).html;
    expect(viewedCount(after)).toBe('1 of 5');
    expect(after).toContain(`<li class="diff-tree-file diff-tree-viewed" data-file="diff-${file}">`);
    expect(after).toContain(`id="viewed-${file}" name="viewed" value="true" checked`);
    const section = after.slice(after.indexOf(`id="diff-${file}"`));
    expect(section.slice(0, section.indexOf('</section>'))).toContain('<details class="diff-body"><summary>Viewed: show the diff</summary>');
    // bob's marks are his own
    expect(viewedCount((await get(changesUrl, asBob)).html)).toBe('0 of 5');

    // a later update that changes another file keeps the mark; one that changes the file resets it
    await repo.commitOn('review', { 'docs/other.md': 'other\n' }, 'Another file');
    await server.settled();
    expect(viewedCount((await get(changesUrl, asAlice)).html)).toBe('1 of 6');
    await repo.commitOn('review', { 'docs/deep/nested/readme.md': 'third\n' }, 'Change the viewed file');
    await server.settled();
    const reset = (await get(changesUrl, asAlice)).html;
    expect(viewedCount(reset)).toBe('0 of 6');
    expect(reset).not.toContain(`id="viewed-${file}" name="viewed" value="true" checked`);

    // unticking removes the mark
    expect((await post(`${changesUrl}/viewed`, { path: 'docs/other.md', blob, viewed: 'true' }, asAlice)).status).toBe(303);
    expect((await post(`${changesUrl}/viewed`, { path: 'docs/other.md', blob }, asAlice)).status).toBe(303);

    // refusals: a malformed blob, no path, no CSRF token, a user who cannot see the project
    const malformed = await post(`${changesUrl}/viewed`, { path: 'docs/other.md', blob: 'nope', viewed: 'true' }, asAlice);
    expect(malformed.status).toBe(400);
    expect(await malformed.text()).toContain('Malformed blob id: nope');
    expect((await post(`${changesUrl}/viewed`, { path: '', blob, viewed: 'true' }, asAlice)).status).toBe(400);
    const noToken = await fetch(`${server.url}${changesUrl}/viewed`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: asAlice.cookie },
      body: new URLSearchParams({ path: 'docs/other.md', blob, viewed: 'true' }).toString(),
    });
    expect(noToken.status).toBe(403);
    const [carol] = await givenUsers(server, 'carol');
    const asCarol = await signInByFetch(server, 'carol', carol.password);
    expect((await post(`${changesUrl}/viewed`, { path: 'docs/other.md', blob, viewed: 'true' }, asCarol)).status).toBe(404);
    expect((await get(changesUrl, asCarol)).status).toBe(404);
    // an anonymous visitor is sent to sign in, and nothing is stored
    const anonymous = await fetch(`${server.url}${changesUrl}/viewed`, { method: 'POST', redirect: 'manual' });
    expect([302, 303, 401, 403]).toContain(anonymous.status);
    expect(viewedCount((await get(changesUrl, asAlice)).html)).toBe('0 of 6');
  });

  it('leaves out the files past 300 of a large commit: only in the tree, each loaded on its own with ?load=', async () => {
    const files = Object.fromEntries(Array.from({ length: 305 }, (_, i) => [`many/f${String(i).padStart(3, '0')}.txt`, `file ${i}\n`]));
    const head = await repo.commitOn('many', files, 'add 305 files');
    const page = await get(`/app/~commits/${head}`, asBob);
    expect(page.html).toContain('305 files changed');
    expect(page.html.match(/<section class="diff-file"/g)).toHaveLength(300);
    expect(page.html).toContain('5 more files are not shown: the diff is large. Choose a file in the tree to load its diff.');
    const last = key('many/f304.txt');
    expect(page.html).not.toContain(`id="diff-${last}"`);
    const link = new RegExp(`<a href="([^"]*\\?load=${last}#diff-${last})">f304.txt</a>`).exec(page.html);
    expect(link).not.toBeNull();
    const loaded = await get(link![1].replaceAll('&amp;', '&').replace(/#.*/, ''), asBob);
    expect(loaded.html).toContain(`id="diff-${last}"`);
    expect(loaded.html).toContain(`id="diff-${last}R1"`);
    expect(loaded.html).toContain('4 more files are not shown');
    expect(loaded.html.match(/<section class="diff-file"/g)).toHaveLength(301);
  });

  it('draws the commit and compare pages with the same view', async () => {
    const head = await repo.head('review');
    const commit = await get(`/app/~commits/${head}?view=split`, asBob);
    expect(commit.html).toContain('<nav class="diff-tree" aria-label="Changed files">');
    expect(commit.html).toContain('diff-split-table');
    expect(commit.html).not.toContain('files viewed');
    const compare = await get('/app/~compare?left=main&right=review', asBob);
    expect(compare.html).toContain('<span class="hljs-comment"> comment line <ins>ten</ins></span>');
    expect(compare.html).toContain('aria-label="Diff layout"');
    expect(compare.html).toContain('Show 18 unchanged lines');
  });
});
