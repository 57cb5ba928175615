import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { eventually, givenRepo, grantRole, givenUsers, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { commitWith, givenConflicts } from '../helpers/conflicts.js';
import { git, startTestServer, type TestServer } from '../helpers/server.js';

/** The conflicts page and its POST over HTTP with real git: the listing, each refusal, a resolution committed to the source or a new branch. */
describe('pull request conflicts page', () => {
  let server: TestServer;
  let repo: Repo;
  let alice: TestUser;
  let carol: TestUser;
  let dave: TestUser;
  let asAlice: WebSession;
  let asCarol: WebSession;

  beforeAll(async () => {
    server = await startTestServer();
    [alice, carol, dave] = await givenUsers(server, 'alice', 'carol', 'dave');
    repo = await givenRepo(server, 'app', { files: { 'README.md': '# app\n' } });
    await grantRole(server, repo.id, alice.id, 'Code Writer');
    await grantRole(server, repo.id, carol.id, 'Code Reader');
    await grantRole(server, repo.id, dave.id, 'Code Writer');
    [asAlice, asCarol] = await Promise.all([signInByFetch(server, 'alice', alice.password), signInByFetch(server, 'carol', carol.password)]);
  });
  afterAll(async () => {
    await removeWorkTrees();
    await server?.close();
  });

  const get = (url: string, session?: WebSession) => fetch(`${server.url}${url}`, { redirect: 'manual', headers: session ? { cookie: session.cookie } : {} });
  const post = (url: string, fields: Record<string, string>, session: WebSession, csrf = true) =>
    fetch(`${server.url}${url}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      body: new URLSearchParams({ ...(csrf && { _csrf: session.csrfToken }), ...fields }).toString(),
    });

  /** Opens a request from `branch` into main (of `source`, default the project) as alice; returns its number and id once checked. */
  async function open(branch: string, source = repo, auth = alice.auth): Promise<{ number: number; id: number; url: string }> {
    const res = await server.call('POST', '/pulls', {
      body: { targetProjectId: repo.id, sourceProjectId: source.id, targetBranch: 'main', sourceBranch: branch, title: `Merge ${branch}` },
      auth,
    });
    expect(res.status, res.text).toBe(200);
    const id = res.json as number;
    await server.settled();
    const number = (await server.call('GET', `/pulls/${id}`)).json.number as number;
    return { number, id, url: `/app/~pulls/${number}` };
  }

  /** The fields the page's form holds: heads, paths, default choices and texts. */
  function formOf(html: string): Record<string, string> {
    const fields: Record<string, string> = {};
    const decode = (s: string) =>
      s
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&amp;/g, '&');
    for (const m of html.matchAll(/<input type="hidden" name="((?:path-\d+)|sourceHead|targetHead)" value="([^"]*)"/g)) fields[m[1]] = decode(m[2]);
    for (const m of html.matchAll(/<textarea id="content-(\d+)" name="content-\d+"[^>]*>\n?([\s\S]*?)<\/textarea>/g)) fields[`content-${m[1]}`] = decode(m[2]);
    return fields;
  }
  const indexOf = (form: Record<string, string>, file: string) =>
    Object.entries(form)
      .find(([k, v]) => k.startsWith('path-') && v === file)![0]
      .slice(5);

  it('lists each conflict with its versions and choices, and the merge box links to it', async () => {
    const { source, target } = await givenConflicts(repo, 'list');
    const { url } = await open('list-feature');
    expect(await (await get(url, asAlice)).text()).toContain(`<a href="${url}/conflicts">Resolve conflicts</a>`);
    const page = await get(`${url}/conflicts`, asAlice);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<title>Conflicts · #');
    for (const file of ['add.txt', 'bin.dat', 'crlf.txt', 'md.txt', 'text.txt']) expect(html).toContain(`<code>list/${file}</code>`);
    expect(html).toContain('added on both sides');
    expect(html).toContain('changed in source, deleted in target');
    expect(html).toContain('CONFLICT (modify/delete): list/md.txt deleted in main (target) and modified in list-feature (source).');
    expect(html).toContain('A binary file: choose a version.');
    expect(html).toContain('Delete it (as main (target) did)');
    expect(html).toContain('TWO-feature');
    expect(html).toContain('TWO-main');
    const form = formOf(html);
    expect(form).toMatchObject({ sourceHead: source, targetHead: target });
    const text = indexOf(form, 'list/text.txt');
    expect(form[`content-${text}`]).toBe(
      'one\n<<<<<<< #1 list-feature (source)\nTWO-feature\n||||||| base\ntwo\n=======\nTWO-main\n>>>>>>> #1 main (target)\nthree\n',
    );
    expect(html).toContain(`name="region-${text}-0" value="both"`);
    expect(html).toContain('Commit resolution');
    // a reader sees the conflicts without a form; an anonymous visitor is sent to sign in
    const read = await (await get(`${url}/conflicts`, asCarol)).text();
    expect(read).toContain('<code>list/text.txt</code>');
    expect(read).not.toContain('Commit resolution');
    expect(read).toContain('You cannot write the code of the source or the target project.');
    expect((await get(`${url}/conflicts`)).status).toBe(302);
    expect((await get('/app/~pulls/9999/conflicts', asAlice)).status).toBe(404);
  });

  it('refuses each bad resolution with its message and writes nothing', async () => {
    const { branch, source, target } = await givenConflicts(repo, 'bad');
    const { url, id } = await open(branch);
    const form = formOf(await (await get(`${url}/conflicts`, asAlice)).text());
    const n = (file: string) => indexOf(form, `bad/${file}`);
    const good = {
      ...form,
      [`choice-${n('text.txt')}`]: 'merge',
      [`region-${n('text.txt')}-0`]: 'ours',
      [`choice-${n('add.txt')}`]: 'ours',
      [`choice-${n('crlf.txt')}`]: 'theirs',
      [`choice-${n('md.txt')}`]: 'theirs',
      [`choice-${n('bin.dat')}`]: 'ours',
    };
    const refused = async (fields: Record<string, string>, status: number, message: string, session = asAlice) => {
      const res = await post(`${url}/conflicts`, fields, session);
      const html = await res.text();
      expect(res.status, html.slice(0, 300)).toBe(status);
      expect(html).toContain(message);
      expect(await repo.head(branch)).toBe(source);
      return html;
    };
    await refused({ ...good, 'path-99': 'bad/nope.txt' }, 400, 'Unknown conflicted file: bad/nope.txt');
    await refused({ ...good, 'path-99': 'bad/add.txt' }, 400, 'bad/add.txt is resolved twice');
    const { [`choice-${n('bin.dat')}`]: _bin, ...noBinary } = good;
    await refused(noBinary, 400, 'No resolution for bad/bin.dat');
    await refused({ ...good, [`choice-${n('bin.dat')}`]: 'merge' }, 400, 'bad/bin.dat cannot be merged as text: choose a side');
    await refused({ ...good, [`choice-${n('md.txt')}`]: 'mine' }, 400, 'Invalid resolution for bad/md.txt: mine');
    await refused({ ...good, [`region-${n('text.txt')}-0`]: 'neither' }, 400, 'Invalid choice for conflict 1 of bad/text.txt: neither');
    await refused({ ...good, [`region-${n('text.txt')}-5`]: 'ours' }, 400, 'bad/text.txt has no conflict 6');
    // no choice and the text unchanged: the markers remain; the submitted values are kept on the page
    const kept = await refused(
      { ...good, [`region-${n('text.txt')}-0`]: '', [`choice-${n('add.txt')}`]: 'merge' },
      400,
      'bad/add.txt still contains conflict markers (lines 1, 3, 4, 6): resolve every conflict',
    );
    expect(kept).toMatch(new RegExp(`id="choice-${n('add.txt')}-merge" name="choice-${n('add.txt')}" value="merge" checked`));
    // an edit that leaves a marker
    await refused(
      { ...good, [`content-${n('text.txt')}`]: 'one\r\nmine\r\n=======\r\nthree\r\n', [`region-${n('text.txt')}-0`]: '' },
      400,
      'bad/text.txt still contains conflict markers (line 3)',
    );
    await refused({ ...good, sourceHead: '0'.repeat(40) }, 409, 'The source branch moved since the conflicts were shown');
    const forged = await post(`${url}/conflicts`, good, asAlice, false);
    expect(forged.status).toBe(403);
    await refused(good, 403, 'Permission denied', asCarol);
    await refused({ ...good, newBranch: 'from-carol' }, 403, 'Permission denied', asCarol);
    await refused({ ...good, newBranch: 'bad name..' }, 400, 'Invalid branch name');
    await refused({ ...good, newBranch: 'main' }, 409, 'Branch already exists: main');
    // the target moves: refused, and the page shows the conflicts of the new target head
    const moved = await commitWith(repo, 'main', { 'other.txt': 'other\n' }, 'Elsewhere');
    expect(moved).not.toBe(target);
    const stale = await refused(good, 409, 'The target branch moved since the conflicts were shown: they are shown again as they are now');
    expect(formOf(stale).targetHead).toBe(moved);
    expect((await server.call('GET', `/pulls/${id}`)).json.status).toBe('OPEN');
  });

  it('commits the resolution as a merge of the target into the source; the request then merges', async () => {
    const { branch, source, target } = await givenConflicts(repo, 'ok');
    const { url, id } = await open(branch);
    const form = formOf(await (await get(`${url}/conflicts`, asAlice)).text());
    const n = (file: string) => indexOf(form, `ok/${file}`);
    const res = await post(
      `${url}/conflicts`,
      {
        ...form,
        // an edit as a browser sends it (CRLF), in an LF file
        [`choice-${n('text.txt')}`]: 'merge',
        [`content-${n('text.txt')}`]: 'one\r\nTWO-both\r\nthree\r\n',
        // the region buttons' result: both versions
        [`choice-${n('add.txt')}`]: 'merge',
        [`region-${n('add.txt')}-0`]: 'both',
        // a region choice in a CRLF file, the text area left as it was
        [`choice-${n('crlf.txt')}`]: 'merge',
        [`region-${n('crlf.txt')}-0`]: 'theirs',
        [`choice-${n('md.txt')}`]: 'ours',
        [`choice-${n('bin.dat')}`]: 'theirs',
        message: 'Resolve the conflicts',
      },
      asAlice,
    );
    expect(res.status, await res.clone().text()).toBe(303);
    expect(res.headers.get('location')).toBe(`${url}#merge-box`);
    const head = await repo.head(branch);
    expect(head).not.toBe(source);
    await git(repo.work, ['fetch', '-q', repo.remote, branch]);
    expect((await git(repo.work, ['log', '-1', '--format=%P%n%s%n%an', 'FETCH_HEAD'])).trim().split('\n')).toEqual([
      `${source} ${target}`,
      'Resolve the conflicts',
      'alice Full',
    ]);
    const show = (file: string) => git(repo.work, ['show', `FETCH_HEAD:ok/${file}`]);
    expect(await show('text.txt')).toBe('one\nTWO-both\nthree\n');
    expect(await show('add.txt')).toBe('feature\nmain\n');
    expect(await show('crlf.txt')).toBe('a\r\nB-main\r\nc\r\n');
    expect(await show('md.txt')).toBe('keep changed\n');
    expect(Buffer.from(await git(repo.work, ['cat-file', 'blob', 'FETCH_HEAD:ok/bin.dat']), 'latin1')).toEqual(Buffer.from([0, 3, 109]));
    // the request is checked at once: a new update and a clean preview
    const preview = (await server.call('GET', `/pulls/${id}/merge-preview`)).json;
    expect(preview).toMatchObject({ headCommitHash: head, targetHeadCommitHash: target });
    expect(preview.mergeCommitHash).toMatch(/^[0-9a-f]{40}$/);
    expect(await (await get(`${url}/conflicts`, asAlice)).text()).toContain('No merge conflicts: the pull request merges cleanly.');
    const merged = await post(`${url}/merge`, { message: '' }, asAlice);
    expect(merged.status, await merged.clone().text()).toBe(303);
    expect((await server.call('GET', `/pulls/${id}`)).json.status).toBe('MERGED');
    const closed = await post(`${url}/conflicts`, form, asAlice);
    expect(closed.status).toBe(409);
    expect(await closed.text()).toContain('Pull request already closed');
  });

  it('shows renames as git reports them, lets each path take a side, and keeps marker-like text of a file', async () => {
    const doc = (last: string) => `# Doc\n<<<<<<< HEAD\nexample\n=======\nother\n>>>>>>> topic\n${last}\n`;
    await commitWith(repo, 'main', { 'ren/a.txt': 'a\nb\nc\nd\n', 'ren/r.txt': 'shared\ncontent\nhere\n', 'ren/doc.md': doc('end') }, 'Base of ren');
    const source = await commitWith(
      repo,
      'ren-feature',
      {
        'ren/a.txt': null,
        'ren/a2.txt': 'a\nb\nc\nd\ne\n',
        'ren/r.txt': null,
        'ren/r-feature.txt': 'shared\ncontent\nhere\n',
        'ren/doc.md': doc('end feature'),
      },
      'Renames',
    );
    const target = await commitWith(
      repo,
      'main',
      { 'ren/a.txt': null, 'ren/r.txt': null, 'ren/r-main.txt': 'shared\ncontent\nhere\n', 'ren/doc.md': doc('end main') },
      'Other renames',
    );
    const { url } = await open('ren-feature');
    const html = await (await get(`${url}/conflicts`, asAlice)).text();
    expect(html).toContain('CONFLICT (rename/delete): ren/a.txt renamed to ren/a2.txt in ren-feature (source), but deleted in main (target).');
    expect(html).toContain('CONFLICT (rename/rename): ren/r.txt renamed to ren/r-feature.txt in ren-feature (source) and to ren/r-main.txt in main (target).');
    expect(html).toContain('Both sides removed this path: it stays deleted.');
    expect(html).toContain('only in source');
    expect(html).toContain('only in target');
    const form = formOf(html);
    const n = (file: string) => indexOf(form, `ren/${file}`);
    // the file's own 7-character markers are text: this file's markers have 8
    expect(form[`content-${n('doc.md')}`]).toContain('\n<<<<<<<< #1 ren-feature (source)\nend feature\n');
    const res = await post(
      `${url}/conflicts`,
      {
        ...form,
        [`choice-${n('a2.txt')}`]: 'ours',
        [`choice-${n('r-feature.txt')}`]: 'theirs',
        [`choice-${n('r-main.txt')}`]: 'theirs',
        [`choice-${n('doc.md')}`]: 'merge',
        [`region-${n('doc.md')}-0`]: 'both',
      },
      asAlice,
    );
    expect(res.status, await res.clone().text()).toBe(303);
    await git(repo.work, ['fetch', '-q', repo.remote, 'ren-feature']);
    expect((await git(repo.work, ['log', '-1', '--format=%P', 'FETCH_HEAD'])).trim()).toBe(`${source} ${target}`);
    expect((await git(repo.work, ['ls-tree', '--name-only', 'FETCH_HEAD', 'ren/'])).trim().split('\n')).toEqual(['ren/a2.txt', 'ren/doc.md', 'ren/r-main.txt']);
    expect(await git(repo.work, ['show', 'FETCH_HEAD:ren/doc.md'])).toBe(doc('end feature\nend main'));
  });

  it('resolves by choosing a version what cannot merge as text: another encoding, a large file, a symbolic link', async () => {
    const large = (line: string) => `${line}\n${'x'.repeat(80)}\n`.repeat(13000);
    const link = async (branch: string, target: string) => {
      await git(repo.work, ['checkout', '-q', branch]);
      await fs.rm(path.join(repo.work, 'kinds/link'), { force: true });
      await fs.symlink(target, path.join(repo.work, 'kinds/link'));
      await git(repo.work, ['add', 'kinds/link']);
      await git(repo.work, ['commit', '-q', '-m', `Link to ${target}`]);
      await git(repo.work, ['push', '-q', repo.remote, branch]);
    };
    await commitWith(repo, 'main', { 'kinds/latin1.txt': Buffer.from('caf\xe9\n', 'latin1'), 'kinds/large.txt': large('base') }, 'Base of kinds');
    await link('main', 'base');
    await commitWith(repo, 'kinds-feature', { 'kinds/latin1.txt': Buffer.from('caf\xe9 feature\n', 'latin1'), 'kinds/large.txt': large('feature') }, 'Feature');
    await link('kinds-feature', 'feature');
    await commitWith(repo, 'main', { 'kinds/latin1.txt': Buffer.from('caf\xe9 main\n', 'latin1'), 'kinds/large.txt': large('main') }, 'Main');
    await link('main', 'main');
    const { url } = await open('kinds-feature');
    const html = await (await get(`${url}/conflicts`, asAlice)).text();
    for (const why of ['Not UTF-8 text', 'Too large to merge here', 'A symbolic link']) expect(html).toContain(`${why}: choose a version.`);
    const form = formOf(html);
    expect(Object.keys(form).filter((k) => k.startsWith('content-'))).toEqual([]);
    const n = (file: string) => indexOf(form, `kinds/${file}`);
    const res = await post(
      `${url}/conflicts`,
      {
        ...form,
        [`choice-${n('latin1.txt')}`]: 'ours',

        [`choice-${n('large.txt')}`]: 'ours',
        [`choice-${n('link')}`]: 'ours',
      },
      asAlice,
    );
    expect(res.status, await res.clone().text()).toBe(303);
    await git(repo.work, ['fetch', '-q', repo.remote, 'kinds-feature']);
    expect(await git(repo.work, ['ls-tree', 'FETCH_HEAD', 'kinds/link'])).toMatch(/^120000 blob /);
    expect(await git(repo.work, ['cat-file', 'blob', 'FETCH_HEAD:kinds/link'])).toBe('feature');
    expect((await git(repo.work, ['show', 'FETCH_HEAD:kinds/large.txt'])).startsWith('feature\n')).toBe(true);
  });

  it("refuses with the source branch's protection message", async () => {
    const { branch, source } = await givenConflicts(repo, 'guarded');
    const { url } = await open(branch);
    const saved = await server.call('POST', `/projects/${repo.id}/setting`, {
      body: { branchProtections: [{ branches: branch, reviewRequirement: 'user(carol)' }] },
    });
    expect(saved.status, saved.text).toBe(200);
    try {
      const form = formOf(await (await get(`${url}/conflicts`, asAlice)).text());
      const choices = Object.fromEntries(Object.entries(form).flatMap(([k]) => (k.startsWith('path-') ? [[`choice-${k.slice(5)}`, 'theirs']] : [])));
      const res = await post(`${url}/conflicts`, { ...form, ...choices }, asAlice);
      expect(res.status).toBe(409);
      const refused = await res.text();
      expect(refused).toContain('Review required for this change. Please submit pull request instead');
      expect(await repo.head(branch)).toBe(source);
      // the refused page offers a new branch instead, which the protection does not cover
      expect(refused).toContain('Commit to a new branch instead');
      const elsewhere = await post(`${url}/conflicts`, { ...form, ...choices, newBranch: 'guarded-resolved' }, asAlice);
      expect(elsewhere.status, await elsewhere.clone().text()).toBe(303);
      expect(elsewhere.headers.get('location')).toBe(`${url}/conflicts?branch=guarded-resolved`);
      expect(await repo.head('guarded-resolved')).toMatch(/^[0-9a-f]{40}$/);
      expect(await repo.head(branch)).toBe(source);
    } finally {
      await server.call('POST', `/projects/${repo.id}/setting`, { body: { branchProtections: [] } });
    }
  });

  it('asks to change a rebase strategy first', async () => {
    const { branch } = await givenConflicts(repo, 'rebased');
    const { url, id } = await open(branch);
    expect(
      (await server.call('POST', `/pulls/${id}/merge-strategy`, { text: '"REBASE_SOURCE_BRANCH_COMMITS"', headers: { 'content-type': 'application/json' } }))
        .status,
    ).toBe(200);
    const html = await (await get(`${url}/conflicts`, asAlice)).text();
    expect(html).toContain('A resolution is a merge commit, which the rebase strategy leaves out');
    expect(html).not.toContain('Commit resolution');
    const res = await post(`${url}/conflicts`, formOf(html), asAlice);
    expect(res.status).toBe(409);
  });

  it('commits to a new branch of the target for whom cannot write the source (a fork)', async () => {
    const fork = await givenRepo(server, 'app-fork', { forkOf: repo });
    await grantRole(server, fork.id, alice.id, 'Code Writer');
    await commitWith(repo, 'main', { 'forked/text.txt': 'one\ntwo\nthree\n' }, 'Base for the fork');
    await git(fork.work, ['fetch', '-q', repo.remote, 'main']);
    await git(fork.work, ['push', '-q', '-f', fork.remote, 'FETCH_HEAD:refs/heads/main']);
    const source = await commitWith(fork, 'from-fork', { 'forked/text.txt': 'one\nfork\nthree\n' }, 'In the fork');
    const target = await commitWith(repo, 'main', { 'forked/text.txt': 'one\nupstream\nthree\n' }, 'Upstream');
    const { url } = await open('from-fork', fork);
    const asDave = await signInByFetch(server, 'dave', dave.password);
    const html = await (await get(`${url}/conflicts`, asDave)).text();
    expect(html).toContain('You cannot write the source branch');
    const form = formOf(html);
    const fields = { ...form, [`choice-${indexOf(form, 'forked/text.txt')}`]: 'merge', [`region-${indexOf(form, 'forked/text.txt')}-0`]: 'theirs' };
    const unnamed = await post(`${url}/conflicts`, fields, asDave);
    expect(unnamed.status).toBe(400);
    expect(await unnamed.text()).toContain('You cannot write the source branch: name a new branch for the resolution');
    const res = await post(`${url}/conflicts`, { ...fields, newBranch: 'resolved-fork' }, asDave);
    expect(res.status, await res.clone().text()).toBe(303);
    expect(res.headers.get('location')).toBe(`${url}/conflicts?branch=resolved-fork`);
    const notice = await (await get(res.headers.get('location')!, asDave)).text();
    expect(notice).toContain('The resolution was committed to the new branch <code>resolved-fork</code>');
    expect(notice).toContain(`/app/~pulls/new?target=main&amp;source=${repo.id}%3Aresolved-fork`);
    await git(repo.work, ['fetch', '-q', repo.remote, 'resolved-fork']);
    expect((await git(repo.work, ['log', '-1', '--format=%P', 'FETCH_HEAD'])).trim()).toBe(`${source} ${target}`);
    expect(await git(repo.work, ['show', 'FETCH_HEAD:forked/text.txt'])).toBe('one\nupstream\nthree\n');
    expect(await fork.head('from-fork')).toBe(source);

    // alice writes the fork: her resolution goes onto the fork's branch
    const asAliceForm = formOf(await (await get(`${url}/conflicts`, asAlice)).text());
    const mine = await post(`${url}/conflicts`, { ...asAliceForm, [`choice-${indexOf(asAliceForm, 'forked/text.txt')}`]: 'ours' }, asAlice);
    expect(mine.status, await mine.clone().text()).toBe(303);
    const head = await fork.head('from-fork');
    await git(fork.work, ['fetch', '-q', fork.remote, 'from-fork']);
    expect((await git(fork.work, ['log', '-1', '--format=%P', 'FETCH_HEAD'])).trim()).toBe(`${source} ${target}`);
    expect(
      await eventually(
        async () =>
          (await server.call('GET', `/pulls?query=${encodeURIComponent('"Source Branch" is "from-fork"')}&offset=0&count=1`)).json[0]?.status === 'OPEN',
      ),
    ).toBe(true);
    expect(head).not.toBe(source);
  });
});
