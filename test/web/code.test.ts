import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { csrfTokenOf, signInByFetch, type WebSession } from '../helpers/browser.js';
import { rawContentType } from '../../src/web/pages/files.js';
import { ADMIN, git, startTestServer, type TestServer } from '../helpers/server.js';

const MAIN_TS = ['export function add(a: number, b: number): number {', '  return a + b;', '}', ''].join('\n');
const PAGE_HTML = '<!doctype html><script>window.pwned = 1</script><h1>hi</h1>\n';
const LOGO_SVG = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>\n';

/** The code pages over HTTP: files, raw bytes, commits, branches, tags, compare. */
describe('code pages', () => {
  let server: TestServer;
  let reader: TestUser;
  let writer: TestUser;
  let outsider: TestUser;
  let repo: Repo;
  let firstCommit: string;
  let featureHead: string;
  let admin: WebSession;

  beforeAll(async () => {
    server = await startTestServer();
    [reader, writer, outsider] = await givenUsers(server, 'reader', 'writer', 'outsider');
    repo = await givenRepo(server, 'app', {
      files: {
        'README.md': '# App\n',
        'src/main.ts': MAIN_TS,
        'web/page.html': PAGE_HTML,
        'web/logo.svg': LOGO_SVG,
        'data/blob.bin': 'a\0b\0c',
        'docs/a b.md': 'spaced\n',
        'docs/README.md': '# Docs *here*\n',
        'big.txt': Array.from({ length: 10_050 }, (_, i) => `line ${i + 1}`).join('\n') + '\n',
      },
    });
    firstCommit = await repo.head('main');
    featureHead = await repo.commitOn(
      'feature/x',
      { 'src/main.ts': MAIN_TS.replace('a + b', 'b + a'), 'src/new.ts': 'export const n = 1;\n' },
      'Swap the operands\n\nBody of the message.',
    );
    await git(repo.work, ['tag', 'v1.0', firstCommit]);
    await git(repo.work, ['push', '-q', repo.remote, 'v1.0']);
    await grantRole(server, repo.id, reader.id, 'Code Reader');
    await grantRole(server, repo.id, writer.id, 'Code Writer');
    admin = await signInByFetch(server, ADMIN.name, ADMIN.password);
  }, 120_000);
  afterAll(async () => {
    await removeWorkTrees();
    await server?.close();
  });

  const get = (path: string, cookie = admin.cookie) => fetch(`${server.url}${path}`, { redirect: 'manual', headers: { cookie } });
  const post = (path: string, fields: Record<string, string>, session: WebSession) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      body: new URLSearchParams({ _csrf: session.csrfToken, ...fields }).toString(),
    });

  it('lists a directory at a branch with directories first and links into it', async () => {
    const response = await get('/app/~files/main');
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('<title>Files at main · app · Gitloom</title>');
    const order = ['data/', 'docs/', 'src/', 'web/', 'README.md', 'big.txt'].map((n) => html.indexOf(`>${n}</a>`));
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(html).toContain('href="/app/~files/main/src"');
    const src = await (await get('/app/~files/main/src')).text();
    expect(src).toContain('href="/app/~files/main/src/main.ts"');
    const docs = await (await get('/app/~files/main/docs')).text();
    expect(docs).toContain('<h1>Docs <em>here</em></h1>');
    expect((await get('/app/~files')).headers.get('location')).toBe('/app/~files/main');
    expect((await get('/app/~files?revision=feature%2Fx&path=src')).headers.get('location')).toBe('/app/~files/feature/x/src');
  });

  it('shows a file highlighted with numbered line anchors', async () => {
    const response = await get('/app/~files/main/src/main.ts');
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('<span class="hljs-keyword">export</span>');
    for (const n of [1, 2, 3]) expect(html).toContain(`<a id="L${n}" href="#L${n}">${n}\n</a>`);
    expect(html).not.toContain('id="L4"');
    expect(html).toContain('href="/app/~raw/main/src/main.ts"');
    const spaced = await get('/app/~files/main/docs/a%20b.md');
    expect(spaced.status).toBe(200);
    expect(await spaced.text()).toContain('spaced');
  });

  it('caps a long file with a notice and offers a binary file as a download', async () => {
    const big = await (await get('/app/~files/main/big.txt')).text();
    expect(big).toContain('id="L10000"');
    expect(big).not.toContain('id="L10001"');
    expect(big).toContain('Only the first 10,000 lines are shown (50 more lines)');
    const binary = await (await get('/app/~files/main/data/blob.bin')).text();
    expect(binary).toContain('Binary file (5 bytes)');
    expect(binary).toContain('href="/app/~raw/main/data/blob.bin" download="blob.bin"');
  });

  it('serves raw bytes, never HTML or SVG as active content of the site', async () => {
    const text = await get('/app/~raw/main/src/main.ts');
    expect(text.status).toBe(200);
    expect(await text.text()).toBe(MAIN_TS);
    for (const path of ['web/page.html', 'web/logo.svg']) {
      const response = await get(`/app/~raw/main/${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('content-security-policy')).toMatch(/^sandbox; default-src 'none'/);
      expect(response.headers.get('content-disposition')).toBe(`inline; filename="${path.split('/')[1]}"`);
      expect(await response.text()).toBe(path.endsWith('.html') ? PAGE_HTML : LOGO_SVG);
    }
    const binary = await get('/app/~raw/main/data/blob.bin');
    expect(binary.headers.get('content-type')).toBe('application/octet-stream');
    expect(binary.headers.get('content-disposition')).toBe('attachment; filename="blob.bin"');
    expect(Buffer.from(await binary.arrayBuffer())).toEqual(Buffer.from('a\0b\0c'));
    expect((await get('/app/~raw/main/src')).status).toBe(400);
  });

  it('chooses raw types that never run: active types as text/plain, unknown binaries as attachments', () => {
    expect(rawContentType('a.js', false)).toEqual({ contentType: 'text/plain; charset=utf-8', inline: true });
    expect(rawContentType('a.css', false)).toEqual({ contentType: 'text/plain; charset=utf-8', inline: true });
    expect(rawContentType('a.xhtml', false)).toEqual({ contentType: 'text/plain; charset=utf-8', inline: true });
    expect(rawContentType('a.png', true)).toEqual({ contentType: 'image/png', inline: true });
    expect(rawContentType('a.md', false)).toEqual({ contentType: 'text/markdown; charset=utf-8', inline: true });
    expect(rawContentType('a.pdf', true)).toEqual({ contentType: 'application/pdf', inline: false });
    expect(rawContentType('Makefile', false)).toEqual({ contentType: 'text/plain; charset=utf-8', inline: true });
    expect(rawContentType('a.exe', true).inline).toBe(false);
  });

  it('reads a branch whose name holds a slash, a tag and a commit hash', async () => {
    const file = await (await get('/app/~files/feature/x/src/main.ts')).text();
    expect(file).toContain('<title>src/main.ts at feature/x · app · Gitloom</title>');
    expect(file).toContain('b + a');
    const root = await (await get('/app/~files/feature/x')).text();
    expect(root).toContain('href="/app/~files/feature/x/src"');
    expect(await (await get('/app/~raw/feature/x/src/new.ts')).text()).toBe('export const n = 1;\n');
    expect(await (await get('/app/~raw/v1.0/src/main.ts')).text()).toBe(MAIN_TS);
    expect(await (await get(`/app/~raw/${firstCommit}/src/main.ts`)).text()).toBe(MAIN_TS);
  });

  it('blames a file: each line beside the commit that last changed it', async () => {
    const file = await (await get('/app/~files/feature/x/src/main.ts')).text();
    expect(file).toContain('href="/app/~blame/feature/x/src/main.ts">Blame</a>');
    const response = await get('/app/~blame/feature/x/src/main.ts');
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('<title>Blame of src/main.ts at feature/x · app · Gitloom</title>');
    expect(html).toContain('href="/app/~files/feature/x/src/main.ts">Normal view</a>');
    const gutter = /<pre class="blame"[^>]*>([\s\S]*?)<\/pre>/.exec(html)![1];
    // line 2 is the feature commit's, lines 1 and 3 the first commit's: three ranges, three lines
    const ranges = [...gutter.matchAll(/<span class="blame-range" title="([^"]*)"><a href="\/app\/~commits\/([0-9a-f]{40})">/g)].map((m) => [m[1], m[2]]);
    expect(ranges.map(([, hash]) => hash)).toEqual([firstCommit, featureHead, firstCommit]);
    expect(ranges[1][0]).toBe('Swap the operands');
    expect(gutter.replace(/<[^>]+>/g, '').split('\n')).toHaveLength(4);
    for (const n of [1, 2, 3]) expect(html).toContain(`<a id="L${n}" href="#L${n}">${n}\n</a>`);
    expect(html).toContain('<span class="hljs-keyword">export</span>');

    expect((await get('/app/~blame?revision=feature%2Fx&path=src/main.ts')).headers.get('location')).toBe('/app/~blame/feature/x/src/main.ts');
    const binary = await (await get('/app/~blame/main/data/blob.bin')).text();
    expect(binary).toContain('Binary file (5 bytes)');
    expect(binary).not.toContain('class="blame"');
    expect(await (await get('/app/~files/main/data/blob.bin')).text()).not.toContain('>Blame</a>');
    const directory = await get('/app/~blame/main/src');
    expect(directory.status).toBe(400);
    expect(await directory.text()).toContain('Specified path is not a file: src');
    expect((await get('/app/~blame/main/nope.ts')).status).toBe(404);
  });

  it('answers 404 for an unknown revision or path', async () => {
    const revision = await get('/app/~files/no-such-branch/src');
    expect(revision.status).toBe(404);
    expect(await revision.text()).toContain('Revision not found: no-such-branch');
    const path = await get('/app/~files/main/src/missing.ts');
    expect(path.status).toBe(404);
    expect(await path.text()).toContain('Path not found: src/missing.ts');
    expect((await get('/app/~raw/main/nope')).status).toBe(404);
    expect((await get(`/app/~commits/${'0'.repeat(40)}`)).status).toBe(404);
    expect((await get('/app/~commits?revision=nope')).status).toBe(404);
    expect((await get('/app/~compare?left=main&right=nope')).status).toBe(404);
    const gitDirPath = await get('/app/~files/main/.git/config');
    expect(gitDirPath.status).toBe(400);
    expect(await gitDirPath.text()).toContain('Invalid path: .git/config');
    for (const odd of [
      '/app/~files/%00',
      '/app/~files/-x',
      '/app/~raw/main/%0A',
      '/app/~raw/main/src%2F..%2Fx',
      '/app/~commits/%0A',
      '/app/~commits/-x',
      '/app/~commits?revision=-x',
      '/app/~commits?revision=a%0Ab',
      '/app/~compare?left=a%0Ab&right=main',
      '/app/~compare?left=main&right=--all',
      '/app/~commits?query=path(%00)',
      '/app/~files/main/a%0Ab',
    ]) {
      const response = await get(odd);
      expect(response.status, odd).toBeGreaterThanOrEqual(400);
      expect(response.status, odd).toBeLessThan(500);
    }
  });

  it('hides every code page of a project the user cannot see (404)', async () => {
    const { cookie } = await signInByFetch(server, outsider.name, outsider.password);
    for (const path of [
      '/app/~files/main',
      '/app/~files/main/src/main.ts',
      '/app/~blame/main/src/main.ts',
      '/app/~raw/main/src/main.ts',
      '/app/~commits',
      `/app/~commits/${featureHead}`,
      '/app/~branches',
      '/app/~tags',
      '/app/~compare?left=main&right=feature/x',
    ]) {
      const response = await get(path, cookie);
      expect(response.status, path).toBe(404);
      expect(await response.text(), path).toContain('Project not found: app');
    }
  });

  it('logs commits of a revision, with the commit query and pages', async () => {
    const log = await (await get('/app/~commits?revision=feature%2Fx')).text();
    expect(log).toContain(`href="/app/~commits/${featureHead}"`);
    expect(log).toContain('Swap the operands');
    expect(log).toContain(`href="/app/~commits/${firstCommit}"`);
    const main = await (await get('/app/~commits')).text();
    expect(main).not.toContain('Swap the operands');
    const byPath = await (await get(`/app/~commits?revision=feature%2Fx&query=${encodeURIComponent('path(src/new.ts)')}`)).text();
    expect(byPath).toContain('Swap the operands');
    expect(byPath).not.toContain(`href="/app/~commits/${firstCommit}"`);
    const bad = await get(`/app/~commits?query=${encodeURIComponent('author(')}`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('role="alert"');
    const pageTwo = await (await get('/app/~commits?revision=feature%2Fx&page=2')).text();
    expect(pageTwo).toContain('No commits.');
    expect((await get('/app/~commits?page=0')).status).toBe(400);
  });

  it('shows a commit with its message, parents and diff', async () => {
    const response = await get(`/app/~commits/${featureHead}`);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('<h1>Swap the operands</h1>');
    expect(html).toContain('Body of the message.');
    expect(html).toContain(`href="/app/~commits/${firstCommit}"`);
    expect(html).toContain('2 files changed');
    expect(html).toMatch(/<tr id="diff-[0-9a-f]{12}L2" class="diff-line diff-delete" data-old-line="2">/);
    expect(html).toMatch(/<tr id="diff-[0-9a-f]{12}R2" class="diff-line diff-add" data-new-line="2">/);
    expect(html).toContain('data-old-path="src/main.ts" data-new-path="src/main.ts"');
    // highlighted as TypeScript, the swapped operands marked within the line
    expect(html).toContain('  <span class="hljs-keyword">return</span> <ins>b</ins> + <ins>a</ins>;');
    const root = await (await get(`/app/~commits/${firstCommit}`)).text();
    expect(root).toContain('none (root commit)');
    expect(root).toContain('Binary file not shown.');
    expect(root).toContain('This file’s diff is too large: only its beginning is shown.');
  });

  it('compares two branches: commits and the diff from their merge base', async () => {
    const html = await (await get('/app/~compare?left=main&right=feature%2Fx')).text();
    expect(html).toContain('<title>Compare main...feature/x · app · Gitloom</title>');
    expect(html).toContain(`href="/app/~commits/${featureHead}"`);
    expect(html).not.toContain(`href="/app/~commits/${firstCommit}" class="commit-subject"`);
    expect(html).toContain(`Merge base <a href="/app/~commits/${firstCommit}">`);
    expect(html).toContain('Merge base');
    expect(html).toContain('src/new.ts');
    const reverse = await (await get('/app/~compare?left=feature%2Fx&right=main')).text();
    expect(reverse).toContain('main has no commits that feature/x lacks.');
    expect(reverse).toContain('No changes.');
    const form = await (await get('/app/~compare')).text();
    expect(form).toContain('value="main"');
  });

  it('lists branches and tags with their commits; only writers see the forms', async () => {
    const branches = await (await get('/app/~branches')).text();
    expect(branches).toContain('href="/app/~files/feature/x"');
    expect(branches).toContain('<span class="badge">default</span>');
    expect(branches).toContain('Swap the operands');
    expect(branches).toContain('Branch name');
    const tags = await (await get('/app/~tags')).text();
    expect(tags).toContain('href="/app/~files/v1.0"');
    expect(tags).toContain(`href="/app/~commits/${firstCommit}"`);
    const { cookie } = await signInByFetch(server, reader.name, reader.password);
    const asReader = await (await get('/app/~branches', cookie)).text();
    expect(asReader).toContain('feature/x');
    expect(asReader).not.toContain('Branch name');
    expect(asReader).not.toContain('>Delete<');
  });

  it('creates and deletes branches and tags for writers, refusing bad input with the reason', async () => {
    const session = await signInByFetch(server, writer.name, writer.password);
    const created = await post('/app/~branches', { name: 'release/1', revision: 'v1.0' }, session);
    expect(created.status).toBe(303);
    expect(created.headers.get('location')).toBe('/app/~branches');
    expect((await git(repo.work, ['ls-remote', repo.remote, 'refs/heads/release/1'])).split('\t')[0]).toBe(firstCommit);

    const duplicate = await post('/app/~branches', { name: 'release/1', revision: 'main' }, session);
    expect(duplicate.status).toBe(409);
    expect(await duplicate.text()).toContain('Branch already exists: release/1');
    const badRevision = await post('/app/~branches', { name: 'other', revision: 'nope' }, session);
    expect(badRevision.status).toBe(400);
    expect(await badRevision.text()).toContain('Revision not found: nope');

    expect((await post('/app/~branches/delete', { name: 'release/1' }, session)).status).toBe(303);
    expect(await git(repo.work, ['ls-remote', repo.remote, 'refs/heads/release/1'])).toBe('');
    const deleteDefault = await post('/app/~branches/delete', { name: 'main' }, session);
    expect(deleteDefault.status).toBe(409);

    expect((await post('/app/~tags', { name: 'v2.0', revision: 'feature/x', message: '' }, session)).status).toBe(303);
    expect((await git(repo.work, ['ls-remote', repo.remote, 'refs/tags/v2.0'])).split('\t')[0]).toBe(featureHead);
    expect(await (await get('/app/~tags', session.cookie)).text()).toContain('v2.0');
    expect((await post('/app/~tags/delete', { name: 'v2.0' }, session)).status).toBe(303);
    expect(await git(repo.work, ['ls-remote', repo.remote, 'refs/tags/v2.0'])).toBe('');

    const readerSession = await signInByFetch(server, reader.name, reader.password);
    const refused = await post('/app/~branches', { name: 'sneaky', revision: 'main' }, readerSession);
    expect(refused.status).toBe(403);
    expect(await git(repo.work, ['ls-remote', repo.remote, 'refs/heads/sneaky'])).toBe('');
    const noCsrf = await fetch(`${server.url}/app/~branches`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      body: 'name=x&revision=main',
    });
    expect(noCsrf.status).toBe(403);
    expect(csrfTokenOf(await (await get('/app/~branches', session.cookie)).text())).toBe(session.csrfToken);
  });
});
