import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, commitFiles, git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';
import { eventually } from '../helpers/fixtures.js';

describe('first hour: push, pull request, merge, clone', () => {
  let server: TestServer;
  let work: string;
  const cleanup: string[] = [];

  beforeAll(async () => {
    server = await startTestServer();
    work = await makeWorkTree({ 'README.md': '# app\n', 'src/main.txt': 'one\n' });
    cleanup.push(work);
  });
  afterAll(async () => {
    await server.close();
    for (const dir of cleanup) await fs.rm(dir, { recursive: true, force: true });
  });

  it('runs the whole flow with a token', async () => {
    const tokenRes = await server.call('POST', '/users/1/access-tokens', { body: { description: 'cli' } });
    expect(tokenRes.status).toBe(200);
    expect(tokenRes.headers.get('content-type')).toMatch(/^text\/plain/);
    const token = tokenRes.text;
    expect(token).toMatch(/^[A-Za-z0-9]{40}$/);
    const bearer = `Bearer ${token}`;

    expect((await server.call('POST', '/users/1', { body: { fullName: 'Ada Admin' } })).status).toBe(200);
    const group = (await server.call('POST', '/projects', { body: { name: 'group' }, auth: bearer })).json as number;
    const app = (await server.call('POST', '/projects', { body: { name: 'app', parentId: group }, auth: bearer })).json as number;
    expect((await server.call('GET', `/projects/${app}/path`, { auth: bearer })).text).toBe('group/app');
    const noDefault = await server.call('GET', `/projects/${app}/clone-url`, { auth: bearer });
    expect(noDefault.json.http).toBe(`${server.url}/group/app`);

    // history on main, then a feature branch with two commits
    await commitFiles(work, { 'src/main.txt': 'one\ntwo\n' }, 'second commit on main');
    await git(work, ['checkout', '-q', '-b', 'feature']);
    await commitFiles(work, { 'feature.txt': 'feature\n' }, 'add feature');
    await commitFiles(work, { 'feature.txt': 'feature v2\n' }, 'improve feature');
    const remote = gitUrl(server, 'group/app.git', { name: 'anything', password: token });
    await git(work, ['push', '-q', remote, 'main', 'feature']);
    await git(work, ['checkout', '-q', 'main']);
    await commitFiles(work, { 'other.txt': 'main moves on\n' }, 'main moves on');
    await git(work, ['push', '-q', remote, 'main']);
    const mainHead = (await git(work, ['rev-parse', 'main'])).trim();

    const prId = (
      await server.call('POST', '/pulls', {
        auth: bearer,
        body: { targetProjectId: app, sourceProjectId: app, targetBranch: 'main', sourceBranch: 'feature', title: 'Add feature' },
      })
    ).json as number;
    expect(typeof prId).toBe('number');

    const found = await server.call('GET', `/pulls?query=${encodeURIComponent('"Number" is "group/app#1"')}`, { auth: bearer });
    expect(found.status).toBe(200);
    expect(found.json.map((p: { id: number }) => p.id)).toEqual([prId]);
    const byHash = await server.call('GET', `/pulls?query=${encodeURIComponent('#1 and open')}`, { auth: bearer });
    expect(byHash.json).toHaveLength(1);
    expect(byHash.json[0]).toMatchObject({ number: 1, status: 'OPEN', title: 'Add feature', targetBranch: 'main', sourceBranch: 'feature', submitterId: 1 });

    // a push to the source branch adds an update
    await git(work, ['checkout', '-q', 'feature']);
    const featureHead = await commitFiles(work, { 'feature.txt': 'feature v3\n' }, 'polish feature');
    await git(work, ['push', '-q', remote, 'feature']);
    const updates = await eventually(async () => {
      const res = await server.call('GET', `/pulls/${prId}/updates`, { auth: bearer });
      return res.json.length === 2 ? res.json : null;
    });
    expect(updates[1]).toMatchObject({ requestId: prId, headCommitHash: featureHead, targetHeadCommitHash: mainHead });

    const preview = await server.call('GET', `/pulls/${prId}/merge-preview`, { auth: bearer });
    expect(preview.status).toBe(200);
    expect(preview.json).toMatchObject({ targetHeadCommitHash: mainHead, headCommitHash: featureHead, mergeStrategy: 'CREATE_MERGE_COMMIT' });
    expect(preview.json.mergeCommitHash).toMatch(/^[0-9a-f]{40}$/);

    const merged = await server.call('POST', `/pulls/${prId}/merge`, { auth: bearer, text: 'Merge the feature\n\nAll of it.' });
    expect(merged.status).toBe(200);
    expect(merged.text).toBe('');
    const after = await server.call('GET', `/pulls/${prId}`, { auth: bearer });
    expect(after.json.status).toBe('MERGED');
    expect(after.json.lastActivity).toMatchObject({ userId: 1, description: 'merged' });
    const again = await server.call('POST', `/pulls/${prId}/merge`, { auth: bearer });
    expect(again.status).toBe(409);
    expect(again.json.detail).toBe('Pull request already closed');

    const clone = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-clone-'));
    cleanup.push(clone);
    await git(clone, ['clone', '-q', gitUrl(server, 'group/app', { name: ADMIN.name, password: ADMIN.password }), 'app']);
    const dir = path.join(clone, 'app');
    const format = await git(dir, ['log', '-1', '--format=%P%n%an <%ae>%n%cn <%ce>%n%B']);
    const [parents, author, committer, ...message] = format.split('\n');
    expect(parents.split(' ')).toEqual([mainHead, featureHead]);
    expect(author).toBe(`Ada Admin <${ADMIN.email}>`);
    expect(committer).toBe(`Ada Admin <${ADMIN.email}>`);
    expect(message.join('\n').trim()).toBe('Merge the feature\n\nAll of it.');
    expect(await fs.readFile(path.join(dir, 'feature.txt'), 'utf8')).toBe('feature v3\n');
    expect((await git(dir, ['rev-parse', '--abbrev-ref', 'HEAD'])).trim()).toBe('main');
  });

  it('marks a request merged when its head reaches the target by a push', async () => {
    const bearer = null;
    const app = (await server.call('POST', '/projects', { body: { name: 'auto' }, auth: bearer ?? undefined })).json as number;
    const dir = await makeWorkTree({ 'a.txt': 'a\n' });
    cleanup.push(dir);
    const remote = gitUrl(server, 'auto', { name: ADMIN.name, password: ADMIN.password });
    await git(dir, ['checkout', '-q', '-b', 'topic']);
    await commitFiles(dir, { 'b.txt': 'b\n' }, 'topic work');
    await git(dir, ['push', '-q', remote, 'main', 'topic']);
    const prId = (
      await server.call('POST', '/pulls', {
        body: { targetProjectId: app, sourceProjectId: app, targetBranch: 'main', sourceBranch: 'topic', title: 'Topic' },
      })
    ).json as number;
    const duplicate = await server.call('POST', '/pulls', {
      body: { targetProjectId: app, sourceProjectId: app, targetBranch: 'main', sourceBranch: 'topic', title: 'Topic again' },
    });
    expect(duplicate.status).toBe(409);
    expect(duplicate.json.detail).toBe('Another pull request already open for this change');
    await git(dir, ['push', '-q', remote, 'topic:main']);
    const pr = await eventually(async () => {
      const res = await server.call('GET', `/pulls/${prId}`);
      return res.json.status === 'MERGED' ? res.json : null;
    });
    expect(pr.lastActivity.description).toBe('merged pull request');
    const reopenedChange = await server.call('POST', '/pulls', {
      body: { targetProjectId: app, sourceProjectId: app, targetBranch: 'main', sourceBranch: 'topic', title: 'Topic' },
    });
    expect(reopenedChange.status).toBe(409);
    expect(reopenedChange.json.detail).toBe('Change already merged');
  });
});
