import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { eventually, givenRepo, grantRole, givenUsers, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { ADMIN, git, startTestServer, type TestServer } from '../helpers/server.js';

const XSS = ['# Plan', '', '<script>window.pwned = 1</script>', '<img src="x" onerror="window.pwned = 2">', '', '[click](javascript:window.pwned=3)'].join(
  '\n',
);

/** The pull request pages over plain HTTP, with real git: open, comment, review, merge, discard/reopen, refusals. */
describe('pull request pages', () => {
  let server: TestServer;
  let repo: Repo;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let asAlice: WebSession;
  let asBob: WebSession;

  beforeAll(async () => {
    server = await startTestServer();
    [alice, bob, carol] = await givenUsers(server, 'alice', 'bob', 'carol');
    repo = await givenRepo(server, 'app', { files: { 'README.md': '# app\n', 'src/a.txt': 'one\ntwo\nthree\n' } });
    await grantRole(server, repo.id, alice.id, 'Code Writer');
    await grantRole(server, repo.id, bob.id, 'Code Writer');
    [asAlice, asBob] = await Promise.all([signInByFetch(server, 'alice', alice.password), signInByFetch(server, 'bob', bob.password)]);
  });
  afterAll(async () => {
    await removeWorkTrees();
    await server?.close();
  });

  const get = (path: string, session?: WebSession) => fetch(`${server.url}${path}`, { redirect: 'manual', headers: session ? { cookie: session.cookie } : {} });
  const post = (path: string, fields: Record<string, string>, session: WebSession, csrf = true) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      body: new URLSearchParams({ ...(csrf && { _csrf: session.csrfToken }), ...fields }).toString(),
    });
  const pull = async (number: number) =>
    (await server.call('GET', `/pulls?query=${encodeURIComponent(`"Number" is "app#${number}"`)}&offset=0&count=1`)).json[0];

  /** Opens a request from `branch` through the form of `/app/~pulls/new`; returns its number. */
  async function openThroughForm(branch: string, title: string, description: string, session = asAlice): Promise<number> {
    const form = await get(`/app/~pulls/new?target=main&source=${repo.id}%3A${branch}`, session);
    expect(form.status).toBe(200);
    const html = await form.text();
    expect(html).toContain('Open the pull request');
    const opened = await post('/app/~pulls/new', { target: 'main', source: `${repo.id}:${branch}`, title, description }, session);
    expect(opened.status, await opened.clone().text()).toBe(303);
    const match = /^\/app\/~pulls\/(\d+)$/.exec(opened.headers.get('location') ?? '');
    expect(match).not.toBeNull();
    return Number(match![1]);
  }

  it('opens a request from /~pulls/new: branches, the commits to bring, then title and description', async () => {
    await repo.commitOn('feature', { 'src/a.txt': 'one\n2\nthree\n' }, 'Change line two');
    const chooser = await (await get('/app/~pulls/new', asAlice)).text();
    expect(chooser).toContain('<title>New pull request · app · Gitloom</title>');
    expect(chooser).toContain('<label for="field-target">Target branch</label>');
    expect(chooser).toContain(`value="${repo.id}:feature"`);

    const compared = await (await get(`/app/~pulls/new?target=main&source=${repo.id}%3Afeature`, asAlice)).text();
    expect(compared).toContain('Change line two');
    expect(compared).toContain('value="Change line two"');
    // the diff the request would bring
    expect(compared).toContain('1 file changed');
    expect(compared).toMatch(/class="diff-line diff-add"[^>]*>.*?<\/span>2<\/td>/);
    // the diff view of the other pages: its layouts
    expect(compared).toContain('aria-label="Diff layout"');
    const split = await (await get(`/app/~pulls/new?target=main&source=${repo.id}%3Afeature&view=split`, asAlice)).text();
    expect(split).toContain('class="diff diff-split-table"');

    const number = await openThroughForm('feature', 'Second line as a digit', 'Makes **line two** a digit.');
    const page = await get(`/app/~pulls/${number}`, asAlice);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`<title>#${number} Second line as a digit · app · Gitloom</title>`);
    expect(html).toContain('<strong>line two</strong>');
    expect(html).toContain('Change line two');
    const pr = await pull(number);
    expect(pr).toMatchObject({ title: 'Second line as a digit', sourceBranch: 'feature', targetBranch: 'main', status: 'OPEN', submitterId: alice.id });

    // the same change again: the page says a request is open, and the API's message refuses it
    expect(await (await get(`/app/~pulls/new?target=main&source=${repo.id}%3Afeature`, asAlice)).text()).toContain(
      'A pull request is already open for this change',
    );
    const again = await post('/app/~pulls/new', { target: 'main', source: `${repo.id}:feature`, title: 'again' }, asAlice);
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('Another pull request already open for this change');

    const list = await (await get('/app/~pulls', asAlice)).text();
    expect(list).toContain('Second line as a digit');
    const all = await (await get('/~pulls?query=%22Title%22+contains+%22digit%22', asAlice)).text();
    expect(all).toContain(`app#${number}`);
    const bad = await get('/app/~pulls?query=%22Nope%22+is+%22x%22', asAlice);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('Field not found: Nope');
  });

  it("opens a request from a branch of a fork, with the fork's commits and diff", async () => {
    const fork = await givenRepo(server, 'app-fork', { forkOf: repo });
    await grantRole(server, fork.id, alice.id, 'Code Writer');
    await fork.commitOn('from-fork', { 'fork.txt': 'forked\n' }, 'Work done in the fork');
    const chooser = await (await get('/app/~pulls/new', asAlice)).text();
    expect(chooser).toContain(`<option value="${fork.id}:from-fork">app-fork:from-fork</option>`);
    const compared = await (await get(`/app/~pulls/new?target=main&source=${fork.id}%3Afrom-fork`, asAlice)).text();
    expect(compared).toContain('Work done in the fork');
    expect(compared).toContain('fork.txt');
    const opened = await post('/app/~pulls/new', { target: 'main', source: `${fork.id}:from-fork`, title: 'From the fork' }, asAlice);
    expect(opened.status, await opened.clone().text()).toBe(303);
    const number = Number(/(\d+)$/.exec(opened.headers.get('location')!)![1]);
    expect(await pull(number)).toMatchObject({ sourceProjectId: fork.id, sourceBranch: 'from-fork', targetProjectId: repo.id });
    const page = await (await get(`/app/~pulls/${number}`, asAlice)).text();
    expect(page).toContain('<code>app-fork:from-fork</code>');
    expect(await (await get(`/app/~pulls/${number}/changes`, asAlice)).text()).toContain('forked');
  });

  it('comments, a second user approves, the merge moves the target branch, the source branch is deleted', async () => {
    await repo.commitOn('to-merge', { 'b.txt': 'b\n' }, 'Add b');
    const number = await openThroughForm('to-merge', 'Add b', '');
    const url = `/app/~pulls/${number}`;

    const commented = await post(`${url}/comment`, { content: 'Looks *fine* to me' }, asAlice);
    expect(commented.status).toBe(303);
    expect(commented.headers.get('location')).toBe(`${url}#activity`);
    expect(await (await get(url, asBob)).text()).toContain('<em>fine</em>');

    expect((await post(`${url}/review`, { status: 'APPROVED' }, asBob)).status).toBe(303);
    const reviews = (await server.call('GET', `/pulls/${(await pull(number)).id}/reviews`)).json;
    expect(reviews).toMatchObject([{ userId: bob.id, status: 'APPROVED' }]);
    const approved = await (await get(url, asAlice)).text();
    expect(approved).toContain('bob: approved');
    expect(approved).toMatch(/<strong>bob<\/strong> approved/);

    const before = await repo.head('main');
    const merged = await post(`${url}/merge`, { message: 'Merges the b file' }, asAlice);
    expect(merged.status, await merged.clone().text()).toBe(303);
    const after = await repo.head('main');
    expect(after).not.toBe(before);
    expect((await git(repo.work, ['ls-remote', repo.remote, 'refs/heads/main'])).split('\t')[0]).toBe(after);
    await git(repo.work, ['fetch', '-q', repo.remote, 'main']);
    expect((await git(repo.work, ['log', '-1', '--format=%s%n%P', 'FETCH_HEAD'])).trim().split('\n')).toEqual([
      'Merges the b file',
      `${before} ${await repo.head('to-merge')}`,
    ]);
    expect((await pull(number)).status).toBe('MERGED');

    const page = await (await get(url, asAlice)).text();
    expect(page).toContain('Delete source branch to-merge');
    expect((await post(`${url}/delete-source-branch`, {}, asAlice)).status).toBe(303);
    expect(await repo.head('to-merge')).toBe('');
  });

  it("discards and reopens a request, and shows the domain's refusal on the page", async () => {
    await repo.commitOn('to-discard', { 'c.txt': 'c\n' }, 'Add c');
    const number = await openThroughForm('to-discard', 'Add c', '');
    const url = `/app/~pulls/${number}`;
    expect((await post(`${url}/discard`, {}, asAlice)).status).toBe(303);
    expect((await pull(number)).status).toBe('DISCARDED');
    const twice = await post(`${url}/discard`, {}, asAlice);
    expect(twice.status).toBe(409);
    const html = await twice.text();
    expect(html).toContain('role="alert">Pull request already closed</p>');
    expect(html).toContain(`<title>#${number} Add c · app · Gitloom</title>`);
    expect((await post(`${url}/reopen`, {}, asAlice)).status).toBe(303);
    expect((await pull(number)).status).toBe('OPEN');
    expect(await (await get(url, asAlice)).text()).toMatch(/<strong>alice<\/strong> reopened/);
  });

  it('disables the merge button with the reason while required reviews are missing, and the merge action refuses', async () => {
    const saved = await server.call('POST', `/projects/${repo.id}/setting`, {
      body: { branchProtections: [{ branches: 'main', reviewRequirement: 'user(bob)' }] },
    });
    expect(saved.status, saved.text).toBe(200);
    try {
      await repo.commitOn('needs-review', { 'd.txt': 'd\n' }, 'Add d');
      const number = await openThroughForm('needs-review', 'Add d', '');
      const url = `/app/~pulls/${number}`;
      const html = await (await get(url, asAlice)).text();
      expect(html).toContain('<p id="merge-blocker" class="flash error">Waiting for approvals</p>');
      expect(html).toMatch(
        /<button type="submit" class="primary" disabled="" aria-describedby="merge-blocker">Merge<\/button>|<button type="submit" class="primary" disabled aria-describedby="merge-blocker">Merge<\/button>/,
      );
      expect(html).toContain('bob: pending');
      const main = await repo.head('main');
      const refused = await post(`${url}/merge`, { message: '' }, asAlice);
      expect(refused.status).toBe(409);
      expect(await refused.text()).toContain('Waiting for approvals');
      expect(await repo.head('main')).toBe(main);
      expect((await post(`${url}/review`, { status: 'APPROVED' }, asBob)).status).toBe(303);
      expect(await (await get(url, asAlice)).text()).not.toContain('merge-blocker');
    } finally {
      await server.call('POST', `/projects/${repo.id}/setting`, { body: { branchProtections: [] } });
    }
  });

  it('refuses a form without the CSRF token (403) and hides the request from users who cannot see the project (404)', async () => {
    await repo.commitOn('guarded', { 'e.txt': 'e\n' }, 'Add e');
    const number = await openThroughForm('guarded', 'Add e', '');
    const url = `/app/~pulls/${number}`;
    const forged = await post(`${url}/comment`, { content: 'forged' }, asAlice, false);
    expect(forged.status).toBe(403);
    expect(await forged.text()).toContain('CSRF');
    expect((await pull(number)).commentCount).toBe(0);

    const asCarol = await signInByFetch(server, 'carol', carol.password);
    for (const path of [url, `${url}/changes`, '/app/~pulls', '/app/~pulls/new']) expect((await get(path, asCarol)).status, path).toBe(404);
    const hidden = await post(`${url}/comment`, { content: 'sneaky' }, asCarol);
    expect(hidden.status).toBe(404);
    expect((await pull(number)).commentCount).toBe(0);
    expect(await (await get('/~pulls?query=', asCarol)).text()).not.toContain('Add e');
    expect((await get('/app/~pulls/99999', asAlice)).status).toBe(404);
    expect((await get(url)).status).toBe(302);
  });

  it('renders a Markdown description without its script, event handlers or javascript: links', async () => {
    await repo.commitOn('xss', { 'f.txt': 'f\n' }, 'Add f');
    const number = await openThroughForm('xss', 'Add f', XSS);
    const html = await (await get(`/app/~pulls/${number}`, asAlice)).text();
    const description = html.slice(html.indexOf('id="description"'), html.indexOf('id="activity"'));
    expect(description).toContain('<h1>Plan</h1>');
    expect(description).not.toMatch(/<script/i);
    expect(description).not.toMatch(/onerror/i);
    expect(description).not.toMatch(/href="javascript:/i);
    expect(description).toContain('click');
  });

  it('adds an inline code comment on the changes tab, replies to it, resolves it, and lists it', async () => {
    await repo.commitOn('commented', { 'src/a.txt': 'one\ntwo\nthree\nfour\n' }, 'Add line four');
    const number = await openThroughForm('commented', 'Line four', '');
    const url = `/app/~pulls/${number}`;
    const changes = await get(`${url}/changes`, asAlice);
    expect(changes.status).toBe(200);
    const html = await changes.text();
    expect(html).toContain(`<title>Changes · #${number} Line four · app · Gitloom</title>`);
    expect(html).toContain('src/a.txt');
    const head = await repo.head('commented');
    const old = /name="old" value="([0-9a-f]{40})"/.exec(html)![1];
    expect(html).toContain(`name="new" value="${head}"`);

    const added = await post(
      `${url}/changes/comments`,
      { old, new: head, newPath: 'src/a.txt', oldPath: 'src/a.txt', side: 'new', line: '4', content: 'Why **four**?' },
      asBob,
    );
    expect(added.status, await added.clone().text()).toBe(303);
    const [comment] = (await server.call('GET', `/code-comments?pullRequestId=${(await pull(number)).id}&offset=0&count=10`)).json;
    expect(comment).toMatchObject({
      userId: bob.id,
      content: 'Why **four**?',
      mark: { commitHash: head, path: 'src/a.txt', range: { fromRow: 3, toRow: 3, fromColumn: 0, toColumn: 4 } },
    });
    expect(added.headers.get('location')).toBe(`${url}/changes#code-comment-${comment.id}`);

    const outside = await post(`${url}/changes/comments`, { old, new: head, newPath: 'src/a.txt', side: 'new', line: '99', content: 'nowhere' }, asBob);
    expect(outside.status).toBe(400);
    expect(await outside.text()).toContain('Line 99 is outside of file src/a.txt (4 lines)');

    const shown = await (await get(`${url}/changes`, asAlice)).text();
    const row = shown.indexOf('>four</td>');
    const thread = shown.indexOf(`id="code-comment-${comment.id}"`);
    expect(row).toBeGreaterThan(0);
    expect(thread).toBeGreaterThan(row);
    expect(shown.slice(thread, thread + 600)).toContain('Why <strong>four</strong>?');

    expect((await post(`${url}/code-comments/${comment.id}/replies`, { content: 'Because.' }, asAlice)).status).toBe(303);
    const refused = await post(`${url}/code-comments/${comment.id}/resolve`, { resolved: 'true' }, asAlice);
    expect(refused.status).toBe(403);
    expect((await post(`${url}/code-comments/${comment.id}/resolve`, { resolved: 'true' }, asBob)).status).toBe(303);
    const after = (await server.call('GET', `/code-comments/${comment.id}`)).json;
    expect(after).toMatchObject({ resolved: true, replyCount: 1 });

    const list = await (await get(`${url}/code-comments?query=resolved`, asAlice)).text();
    expect(list).toContain('src/a.txt:4');
    expect(list).toContain('1 reply');
    expect(await (await get(`${url}/code-comments?query=unresolved`, asAlice)).text()).toContain('No code comment found.');
    const updates = await (await get(`${url}/changes?update=999999`, asAlice)).status;
    expect(updates).toBe(404);
  });

  it('lets an administrator add a reviewer and a modifier assign by name', async () => {
    await repo.commitOn('people', { 'g.txt': 'g\n' }, 'Add g');
    const number = await openThroughForm('people', 'Add g', '');
    const url = `/app/~pulls/${number}`;
    const asAdmin = await signInByFetch(server, ADMIN.name, ADMIN.password);
    expect((await post(`${url}/reviewers`, { reviewer: 'bob' }, asAdmin)).status).toBe(303);
    expect((await post(`${url}/assignees`, { assignee: 'bob' }, asAlice)).status).toBe(303);
    const unknown = await post(`${url}/assignees`, { assignee: 'nobody' }, asAlice);
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain('Unable to find user: nobody');
    const html = await (await get(url, asAlice)).text();
    expect(html).toContain('bob: pending');
    expect(html).toContain('Unassign bob');
  });

  it('a page view reads its caller permissions once, takes no lock and writes nothing; a stale preview shows as updating', async () => {
    await repo.commitOn('quiet', { 'q.txt': 'q\n' }, 'Add q');
    const number = await openThroughForm('quiet', 'Add q', '');
    const url = `/app/~pulls/${number}`;
    const { id } = await pull(number);
    const db = server.server.services.db;
    // once the check that opening started is done, the request as an outdated preview leaves it
    await eventually(
      async () => (await db.selectFrom('pullRequests').select('previewMergeCommitHash').where('id', '=', id).executeTakeFirstOrThrow()).previewMergeCommitHash,
    );
    await server.settled();
    await db
      .updateTable('pullRequests')
      .set({ previewTargetHeadCommitHash: '0'.repeat(40) })
      .where('id', '=', id)
      .execute();

    const counted = { roles: 0, writes: 0 };
    type Method = (this: unknown, table: string) => unknown;
    const methods = db as unknown as Record<'selectFrom' | 'updateTable' | 'insertInto' | 'deleteFrom', Method>;
    const original = { selectFrom: methods.selectFrom, updateTable: methods.updateTable, insertInto: methods.insertInto, deleteFrom: methods.deleteFrom };
    // the server's background loops share the handle: only writes of pull request tables count
    const writing = (method: Method): Method =>
      function (table) {
        if (table.startsWith('pullRequest')) counted.writes++;
        return method.call(this, table);
      };
    Object.assign(db, {
      selectFrom(this: unknown, table: string) {
        if (table === 'roles') counted.roles++;
        return original.selectFrom.call(this, table);
      },
      updateTable: writing(original.updateTable),
      insertInto: writing(original.insertInto),
      deleteFrom: writing(original.deleteFrom),
    });
    let html: string;
    try {
      html = await (await get(url, asBob)).text();
    } finally {
      // the prototype's methods again
      for (const name of Object.keys(original)) delete (db as unknown as Record<string, unknown>)[name];
    }
    expect(html).toContain('Updating the merge preview');
    expect(counted).toEqual({ roles: 1, writes: 0 });
    const row = await db.selectFrom('pullRequests').select('previewTargetHeadCommitHash').where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.previewTargetHeadCommitHash).toBe('0'.repeat(40));
    // the merge computes a current preview itself
    expect((await post(`${url}/merge`, { message: '' }, asBob)).status).toBe(303);
    expect((await pull(number)).status).toBe('MERGED');
  });
});
