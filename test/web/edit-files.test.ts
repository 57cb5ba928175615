import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { csrfTokenOf, signInByFetch, type WebSession } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const APP_TS = 'export const answer = 42;\n';
/** The body limit of this server: small, so an upload over it is cheap to send. */
const BODY_LIMIT = 64 * 1024;

/** The file editor over HTTP (docs/compatibility.md#editing-files-in-the-browser): each rule and each refusal. */
describe('editing files in the browser', () => {
  let server: TestServer;
  let writer: TestUser;
  let reader: TestUser;
  let repo: Repo;
  let writerWeb: WebSession;
  let readerWeb: WebSession;

  beforeAll(async () => {
    server = await startTestServer({ GITLOOM_BODY_LIMIT: String(BODY_LIMIT) });
    [writer, reader] = await givenUsers(server, 'writer', 'reader');
    repo = await givenRepo(server, 'site', {
      files: { 'README.md': '# Site\n', 'src/app.ts': APP_TS, 'pages/guide.md': 'Guide\n', 'win.txt': 'one\r\ntwo\r\n', 'data.bin': 'a\0b' },
    });
    await grantRole(server, repo.id, writer.id, 'Code Writer');
    await grantRole(server, repo.id, reader.id, 'Code Reader');
    writerWeb = await signInByFetch(server, writer.name, writer.password);
    readerWeb = await signInByFetch(server, reader.name, reader.password);
  }, 120_000);
  afterAll(async () => {
    await removeWorkTrees();
    await server?.close();
  });

  const get = (path: string, session = writerWeb) => fetch(`${server.url}${path}`, { redirect: 'manual', headers: { cookie: session.cookie } });
  const post = (path: string, fields: Record<string, string>, session = writerWeb) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      body: new URLSearchParams({ _csrf: session.csrfToken, ...fields }).toString(),
    });
  /** A file's content on a revision through the API, or null when it does not exist. */
  const fileAt = async (revision: string, path: string): Promise<string | null> => {
    const res = await server.call('GET', `/repositories/${repo.id}/files/${revision}/${path}`);
    return res.status === 200 ? Buffer.from(res.json.base64Content, 'base64').toString('utf8') : null;
  };
  const commit = async (hash: string) => (await server.call('GET', `/repositories/${repo.id}/commits/${hash}`)).json;
  /** The hidden `base` field of an editor page. */
  const baseOf = (html: string) => /name="base" value="([0-9a-f]{40})"/.exec(html)![1];

  it('links to the editor from the file and tree views of a branch, for writers only', async () => {
    const file = await (await get('/site/~files/main/src/app.ts')).text();
    expect(file).toContain('href="/site/~edit/main/src/app.ts"');
    expect(file).toContain('href="/site/~delete/main/src/app.ts"');
    const tree = await (await get('/site/~files/main/pages')).text();
    expect(tree).toContain('href="/site/~new/main/pages"');
    expect(tree).toContain('href="/site/~upload/main/pages"');
    const asReader = await (await get('/site/~files/main/src/app.ts', readerWeb)).text();
    expect(asReader).not.toContain('~edit/');
    const atCommit = await (await get(`/site/~files/${await repo.head('main')}/src/app.ts`)).text();
    expect(atCommit).not.toContain('~edit/');
    expect((await get('/site/~edit/main/src/app.ts', readerWeb)).status).toBe(403);
  });

  it('shows the file in a text area with the commit it was read at', async () => {
    const response = await get('/site/~edit/main/src/app.ts');
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain(`<textarea id="field-content" name="content"`);
    expect(html).toContain(APP_TS.trim());
    expect(baseOf(html)).toBe(await repo.head('main'));
    expect(html).toContain('>Update app.ts</textarea>');
    expect((await get('/site/~edit/main/data.bin')).status).toBe(400);
    expect((await get('/site/~edit/main/pages')).status).toBe(400);
    expect((await get('/site/~edit/nope/src/app.ts')).status).toBe(404);
    expect((await get('/site/~new/main/src/app.ts')).status).toBe(400);
    const atCommit = await get(`/site/~edit/${await repo.head('main')}/src/app.ts`);
    expect(atCommit.status).toBe(400);
    expect(await atCommit.text()).toContain('Files can be changed on a branch only');
    const anonymous = await fetch(`${server.url}/site/~edit/main/src/app.ts`, { redirect: 'manual' });
    expect(anonymous.status).toBe(302);
    expect(anonymous.headers.get('location')).toMatch(/^\/~login\?redirect=/);
  });

  it('commits an edit on the branch as the user and goes to the file', async () => {
    const base = await repo.head('main');
    const response = await post('/site/~edit/main/src/app.ts', {
      base,
      path: 'src/app.ts',
      content: 'export const answer = 43;\r\n',
      message: 'Raise the answer',
      target: 'branch',
    });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/site/~files/main/src/app.ts');
    const head = await repo.head('main');
    expect(head).not.toBe(base);
    expect(await fileAt('main', 'src/app.ts')).toBe('export const answer = 43;\n');
    const made = await commit(head);
    expect(made.commitMessage.trim()).toBe('Raise the answer');
    expect(made.author.name).toContain('writer');
  });

  it('keeps the CRLF line ends of a file that has them', async () => {
    const html = await (await get('/site/~edit/main/win.txt')).text();
    expect(html).toContain('name="crlf" value="1"');
    const response = await post('/site/~edit/main/win.txt', {
      base: baseOf(html),
      crlf: '1',
      path: 'win.txt',
      content: 'one\r\ntwo\r\nthree\r\n',
      message: 'Three',
    });
    expect(response.status).toBe(303);
    expect(await fileAt('main', 'win.txt')).toBe('one\r\ntwo\r\nthree\r\n');
  });

  it('refuses a missing message, a bad path, an unknown branch and a bad base, changing nothing', async () => {
    const head = await repo.head('main');
    const noMessage = await post('/site/~edit/main/src/app.ts', { base: head, path: 'src/app.ts', content: 'kept text\n', message: '  ' });
    expect(noMessage.status).toBe(400);
    const html = await noMessage.text();
    expect(html).toContain('Commit message is required');
    expect(html).toContain('kept text');
    const traversal = await post('/site/~new/main/src', { base: head, path: 'src/../../etc/passwd', content: 'x', message: 'Escape' });
    expect(traversal.status).toBe(400);
    expect(await traversal.text()).toContain('Invalid path: src/../../etc/passwd');
    const dotGit = await post('/site/~new/main', { base: head, path: '.git/config', content: 'x', message: 'Hook' });
    expect(dotGit.status).toBe(400);
    const unknown = await post('/site/~edit/nope/src/app.ts', { base: head, path: 'src/app.ts', content: 'x', message: 'Lost' });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('Branch not found: nope');
    const badBase = await post('/site/~edit/main/src/app.ts', { base: 'f'.repeat(40), path: 'src/app.ts', content: 'x\n', message: 'Odd base' });
    expect(badBase.status).toBe(400);
    expect(await badBase.text()).toContain(`Invalid base commit: ${'f'.repeat(40)}`);
    const unchanged = await post('/site/~edit/main/src/app.ts', {
      base: head,
      path: 'src/app.ts',
      content: (await fileAt('main', 'src/app.ts'))!,
      message: 'Nothing',
    });
    expect(unchanged.status).toBe(400);
    expect(await unchanged.text()).toContain('No change to commit');
    const noBranchName = await post('/site/~edit/main/src/app.ts', {
      base: head,
      path: 'src/app.ts',
      content: 'y\n',
      message: 'New',
      target: 'new',
      newBranch: '',
    });
    expect(noBranchName.status).toBe(400);
    expect(await repo.head('main')).toBe(head);
  });

  it('refuses a writer-less user and a missing CSRF token', async () => {
    const head = await repo.head('main');
    const asReader = await post('/site/~edit/main/src/app.ts', { base: head, path: 'src/app.ts', content: 'reader was here\n', message: 'Sneak' }, readerWeb);
    expect(asReader.status).toBe(403);
    const noToken = await fetch(`${server.url}/site/~edit/main/src/app.ts`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: writerWeb.cookie },
      body: new URLSearchParams({ base: head, path: 'src/app.ts', content: 'x', message: 'No token' }).toString(),
    });
    expect(noToken.status).toBe(403);
    expect(await repo.head('main')).toBe(head);
  });

  it('creates a new file, refusing an existing path', async () => {
    const form = await (await get('/site/~new/main/pages')).text();
    expect(form).toMatch(/name="path" type="text" value="pages\/"/);
    const base = baseOf(form);
    const created = await post('/site/~new/main/pages', { base, path: 'pages/new.md', content: 'New page\n', message: 'Add a page' });
    expect(created.status).toBe(303);
    expect(created.headers.get('location')).toBe('/site/~files/main/pages/new.md');
    expect(await fileAt('main', 'pages/new.md')).toBe('New page\n');
    const again = await post('/site/~new/main/pages', { base: await repo.head('main'), path: 'pages/guide.md', content: 'Overwrite\n', message: 'Clobber' });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('A file already exists at pages/guide.md');
    expect(await fileAt('main', 'pages/guide.md')).toBe('Guide\n');
  });

  it('renames a file in one commit, refusing a name taken', async () => {
    const base = await repo.head('main');
    const taken = await post('/site/~edit/main/pages/new.md', { base, path: 'README.md', content: 'New page\n', message: 'Rename onto README' });
    expect(taken.status).toBe(409);
    expect(await taken.text()).toContain('A file already exists at README.md');
    const renamed = await post('/site/~edit/main/pages/new.md', { base, path: 'pages/renamed.md', content: 'Renamed page\n', message: 'Rename the page' });
    expect(renamed.status).toBe(303);
    expect(renamed.headers.get('location')).toBe('/site/~files/main/pages/renamed.md');
    expect(await fileAt('main', 'pages/new.md')).toBeNull();
    expect(await fileAt('main', 'pages/renamed.md')).toBe('Renamed page\n');
    expect((await commit(await repo.head('main'))).commitMessage.trim()).toBe('Rename the page');
  });

  it('deletes a file and refuses a missing one', async () => {
    const form = await (await get('/site/~delete/main/pages/renamed.md')).text();
    expect(form).toContain('>Delete renamed.md</textarea>');
    const deleted = await post('/site/~delete/main/pages/renamed.md', { base: baseOf(form), message: 'Delete renamed.md' });
    expect(deleted.status).toBe(303);
    expect(deleted.headers.get('location')).toBe('/site/~files/main/pages');
    expect(await fileAt('main', 'pages/renamed.md')).toBeNull();
    const missing = await post('/site/~delete/main/pages/renamed.md', { base: await repo.head('main'), message: 'Again' });
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('Path not found: pages/renamed.md');
  });

  it('refuses an edit whose file changed in a concurrent push, keeping the text; commits on top when another file changed', async () => {
    const base = await repo.head('main');
    await repo.commitOn('main', { 'src/app.ts': 'export const answer = 44;\n' }, 'Concurrent change');
    const moved = await repo.head('main');
    const stale = await post('/site/~edit/main/src/app.ts', { base, path: 'src/app.ts', content: 'my edit of the answer\n', message: 'Mine' });
    expect(stale.status).toBe(409);
    const html = await stale.text();
    expect(html).toContain(`src/app.ts changed on main since commit ${base.slice(0, 8)} (now at ${moved.slice(0, 8)})`);
    expect(html).toContain('my edit of the answer');
    expect(html).toContain(`href="/site/~compare?left=${base}&amp;right=${moved}">see what changed</a>`);
    const compare = await (await get(`/site/~compare?left=${base}&right=${moved}`)).text();
    // the concurrent change, as the diff view marks it
    expect(compare).toContain('answer = <span class="hljs-number"><ins>44</ins></span>;');
    expect(await repo.head('main')).toBe(moved);
    // the branch moved, but not the edited file: the commit goes on top of the new head
    const onTop = await post('/site/~edit/main/README.md', { base, path: 'README.md', content: '# Site, edited\n', message: 'Edit the README' });
    expect(onTop.status).toBe(303);
    const head = await repo.head('main');
    expect((await commit(head)).commitMessage.trim()).toBe('Edit the README');
    expect(await fileAt('main', 'src/app.ts')).toBe('export const answer = 44;\n');
    expect(await fileAt('main', 'README.md')).toBe('# Site, edited\n');
  });

  it('uploads files into a directory as multipart, one commit, within the body limit', async () => {
    const form = await (await get('/site/~upload/main/pages')).text();
    expect(form).toContain('enctype="multipart/form-data"');
    const upload = async (files: { name: string; content: Buffer }[], fields: Record<string, string> = {}) => {
      const body = new FormData();
      body.append('_csrf', writerWeb.csrfToken);
      body.append('base', baseOf(form));
      body.append('message', fields.message ?? 'Upload two files');
      for (const [name, value] of Object.entries(fields)) if (name !== 'message') body.append(name, value);
      for (const file of files) body.append('files', new Blob([new Uint8Array(file.content)]), file.name);
      return fetch(`${server.url}/site/~upload/main/pages`, { method: 'POST', redirect: 'manual', headers: { cookie: writerWeb.cookie }, body });
    };
    const before = await repo.head('main');
    const done = await upload([
      { name: 'a.txt', content: Buffer.from('first\n') },
      { name: 'image.bin', content: Buffer.from([0, 1, 2, 255]) },
    ]);
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/site/~files/main/pages');
    const head = await repo.head('main');
    expect((await commit(head)).commitMessage.trim()).toBe('Upload two files');
    expect(await fileAt('main', 'pages/a.txt')).toBe('first\n');
    const binary = await server.call('GET', `/repositories/${repo.id}/files/main/pages/image.bin`);
    expect(Buffer.from(binary.json.base64Content, 'base64')).toEqual(Buffer.from([0, 1, 2, 255]));
    const git = await fetch(`${server.url}/~api/repositories/${repo.id}/commits/${head}`, { headers: { authorization: writer.auth } });
    expect(git.status).toBe(200);
    expect(before).not.toBe(head);

    const tooLarge = await upload([{ name: 'big.bin', content: Buffer.alloc(BODY_LIMIT + 1, 7) }]);
    expect(tooLarge.status).toBe(413);
    const none = await upload([]);
    expect(none.status).toBe(400);
    expect(await none.text()).toContain('Choose at least one file to upload');
    expect(await repo.head('main')).toBe(head);
  });

  it('refuses a commit on a protected branch with the protection message, and opens a pull request from a new branch', async () => {
    const setting = await server.call('POST', `/projects/${repo.id}/setting`, {
      body: { branchProtections: [{ branches: 'main', reviewRequirement: 'user(admin)' }] },
    });
    expect(setting.status, setting.text).toBe(200);
    try {
      const head = await repo.head('main');
      const refused = await post('/site/~edit/main/pages/guide.md', {
        base: head,
        path: 'pages/guide.md',
        content: 'Better guide\n',
        message: 'Improve the guide',
      });
      expect(refused.status).toBe(409);
      const html = await refused.text();
      expect(html).toContain('Review required for this change. Please submit pull request instead');
      expect(html).toContain('Better guide');
      expect(await repo.head('main')).toBe(head);

      const form = await (await get('/site/~edit/main/pages/guide.md')).text();
      expect(form).toContain('value="writer-patch-1"');
      const proposed = await post('/site/~edit/main/pages/guide.md', {
        base: head,
        path: 'pages/guide.md',
        content: 'Better guide\n',
        message: 'Improve the guide\n\nClearer words.',
        target: 'new',
        newBranch: 'writer-patch-1',
      });
      expect(proposed.status).toBe(303);
      const location = proposed.headers.get('location')!;
      expect(location).toMatch(/^\/site\/~pulls\/\d+$/);
      expect(await repo.head('main')).toBe(head);
      expect(await fileAt('writer-patch-1', 'pages/guide.md')).toBe('Better guide\n');
      const pulls = await server.call('GET', `/pulls?query=${encodeURIComponent('"Source Branch" is "writer-patch-1"')}&offset=0&count=10`);
      expect(pulls.json).toHaveLength(1);
      expect(pulls.json[0]).toMatchObject({ title: 'Improve the guide', description: 'Clearer words.', targetBranch: 'main', sourceBranch: 'writer-patch-1' });
      const taken = await post('/site/~edit/main/pages/guide.md', {
        base: head,
        path: 'pages/guide.md',
        content: 'Again\n',
        message: 'Again',
        target: 'new',
        newBranch: 'writer-patch-1',
      });
      expect(taken.status).toBe(409);
      expect(await taken.text()).toContain('Branch already exists: writer-patch-1');
    } finally {
      await server.call('POST', `/projects/${repo.id}/setting`, { body: { branchProtections: [] } });
    }
  });

  it('refuses a change of a protected file with the file protection message', async () => {
    const setting = await server.call('POST', `/projects/${repo.id}/setting`, {
      body: { branchProtections: [{ branches: 'main', fileProtections: [{ paths: 'src/**', reviewRequirement: 'user(admin)', jobNames: [] }] }] },
    });
    expect(setting.status, setting.text).toBe(200);
    try {
      const head = await repo.head('main');
      const refused = await post('/site/~edit/main/src/app.ts', { base: head, path: 'src/app.ts', content: 'export const answer = 0;\n', message: 'Zero' });
      expect(refused.status).toBe(409);
      expect(await refused.text()).toContain('Review required for this change. Please submit pull request instead');
      expect(await repo.head('main')).toBe(head);
      // a file outside the protected paths commits
      const allowed = await post('/site/~edit/main/README.md', { base: head, path: 'README.md', content: '# Site, again\n', message: 'Again' });
      expect(allowed.status).toBe(303);
    } finally {
      await server.call('POST', `/projects/${repo.id}/setting`, { body: { branchProtections: [] } });
    }
  });

  it('keeps the files API working through the same commit path', async () => {
    const res = await server.call('POST', `/repositories/${repo.id}/files/main/api.txt`, {
      body: { '@type': 'FileCreateOrUpdateRequest', commitMessage: 'Through the API', base64Content: Buffer.from('api\n').toString('base64') },
    });
    expect(res.status, res.text).toBe(200);
    expect(await fileAt('main', 'api.txt')).toBe('api\n');
    const html = await (await get('/site/~files/main')).text();
    expect(csrfTokenOf(html)).toBeTruthy();
  });
});
