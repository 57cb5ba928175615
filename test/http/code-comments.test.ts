import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, commitFiles, git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';
import { givenProject, givenUsers, type TestUser } from '../helpers/fixtures.js';

const ZERO = '0'.repeat(40);

describe('code comments and replies', () => {
  let server: TestServer;
  let project: number;
  let hidden: number;
  let head: string;
  let feature: string;
  let requestId: number;
  let work: string;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    [alice, bob] = await givenUsers(server, 'alice', 'bob');
    // Code Reader (role 3) for every logged-in user
    project = await givenProject(server, { name: 'code', defaultRoleId: 3 });
    hidden = await givenProject(server, { name: 'hidden' });
    work = await makeWorkTree({ 'src/a.txt': 'line one\nline two\nthree\n', 'README.md': '# readme\n' });
    head = (await git(work, ['rev-parse', 'HEAD'])).trim();
    const remote = gitUrl(server, 'code.git', { name: ADMIN.name, password: ADMIN.password });
    await git(work, ['push', '-q', remote, 'main']);
    await git(work, ['checkout', '-q', '-b', 'feature']);
    feature = await commitFiles(work, { 'src/b.txt': 'bee\n' }, 'feature');
    await git(work, ['push', '-q', remote, 'feature']);
    const pr = await server.call('POST', '/pulls', {
      body: { targetProjectId: project, sourceProjectId: project, targetBranch: 'main', sourceBranch: 'feature', title: 'Feature' },
    });
    expect(pr.status, pr.text).toBe(200);
    requestId = pr.json;
  });
  afterAll(async () => {
    await server.close();
    await fs.rm(work, { recursive: true, force: true });
  });

  const body = (over: Record<string, unknown> = {}) => ({
    projectId: project,
    content: 'nit @bob',
    mark: { commitHash: head, path: 'src/a.txt', range: { fromRow: 0, fromColumn: 0, toRow: 1, toColumn: 4 } },
    compareContext: { pullRequestId: null, oldCommitHash: ZERO, newCommitHash: head, pathFilter: null, currentFile: null, whitespaceOption: 'DEFAULT' },
    ...over,
  });
  const create = async (over: Record<string, unknown> = {}, auth?: string | null) => server.call('POST', '/code-comments', { body: body(over), auth });

  it('creates and reads a code comment in the shape of OneDev', async () => {
    const res = await create({}, alice.auth);
    expect(res.status, res.text).toBe(200);
    const comment = (await server.call('GET', `/code-comments/${res.json}`, { auth: bob.auth })).json;
    expect(Object.keys(comment)).toEqual([
      'id',
      'projectId',
      'userId',
      'content',
      'createDate',
      'lastActivity',
      'replyCount',
      'mark',
      'compareContext',
      'resolved',
      'uuid',
    ]);
    expect(comment).toMatchObject({
      projectId: project,
      userId: alice.id,
      content: 'nit @bob',
      replyCount: 0,
      resolved: false,
      mark: { commitHash: head, path: 'src/a.txt', range: { fromRow: 0, fromColumn: 0, toRow: 1, toColumn: 4, tabWidth: 1 } },
      compareContext: { pullRequestId: null, oldCommitHash: ZERO, newCommitHash: head, pathFilter: null, currentFile: null, whitespaceOption: 'DEFAULT' },
      lastActivity: { userId: alice.id, description: 'added' },
    });
    const mentioned = await server.call('GET', `/code-comments?projectId=${project}&query=${encodeURIComponent('mentioned me')}`, { auth: bob.auth });
    expect(mentioned.json.map((c: any) => c.id)).toEqual([res.json]);
  });

  it('validates the commit, the path, the range and the context (400)', async () => {
    const bad = [
      { mark: { commitHash: 'f'.repeat(40), path: 'src/a.txt', range: { fromRow: 0, fromColumn: 0, toRow: 0, toColumn: 1 } } },
      { mark: { commitHash: 'nothex', path: 'src/a.txt', range: { fromRow: 0, fromColumn: 0, toRow: 0, toColumn: 1 } } },
      { mark: { commitHash: head, path: 'src/none.txt', range: { fromRow: 0, fromColumn: 0, toRow: 0, toColumn: 1 } } },
      { mark: { commitHash: head, path: 'src', range: { fromRow: 0, fromColumn: 0, toRow: 0, toColumn: 1 } } },
      { mark: { commitHash: head, path: 'src/a.txt', range: { fromRow: 0, fromColumn: 0, toRow: 3, toColumn: 1 } } },
      { mark: { commitHash: head, path: 'src/a.txt', range: { fromRow: 2, fromColumn: 0, toRow: 1, toColumn: 1 } } },
      { mark: { commitHash: head, path: 'src/a.txt', range: { fromRow: 2, fromColumn: 0, toRow: 2, toColumn: 6 } } },
      { mark: { commitHash: head, path: 'src/a.txt', range: { fromRow: -1, fromColumn: 0, toRow: 0, toColumn: 1 } } },
      { mark: { commitHash: feature, path: 'src/b.txt', range: { fromRow: 0, fromColumn: 0, toRow: 0, toColumn: 1 } }, projectId: hidden },
      { compareContext: { oldCommitHash: 'x', newCommitHash: head } },
      { compareContext: { oldCommitHash: ZERO, newCommitHash: head, whitespaceOption: 'SOMETIMES' } },
      { compareContext: { oldCommitHash: ZERO, newCommitHash: head, pullRequestId: 999 } },
      { compareContext: undefined },
      { content: '' },
      { projectId: 999 },
      { id: 3 },
    ];
    for (const over of bad) {
      const res = await create(over);
      expect(res.status, JSON.stringify(over)).toBe(400);
    }
    // a valid range ending at the end of the last line, and the feature commit (on another branch)
    expect((await create({ mark: { commitHash: head, path: 'src/a.txt', range: { fromRow: 2, fromColumn: 0, toRow: 2, toColumn: 5 } } })).status).toBe(200);
    expect((await create({ mark: { commitHash: feature, path: 'src/b.txt', range: { fromRow: 0, fromColumn: 1, toRow: 0, toColumn: 2 } } })).status).toBe(200);
    expect((await create({}, null)).status).toBe(401);
    expect((await create({ userId: alice.id }, bob.auth)).status).toBe(403);
    const outsider = await server.call('POST', '/code-comments', { body: body({ projectId: hidden }), auth: bob.auth });
    expect(outsider.status).toBe(404);
  });

  it('replies keep replyCount and lastActivity exact', async () => {
    const id = (await create({ content: 'root' }, alice.auth)).json;
    const reply = (content: string, auth?: string, over: Record<string, unknown> = {}) =>
      server.call('POST', '/code-comment-replies', {
        body: { commentId: id, content, compareContext: { oldCommitHash: ZERO, newCommitHash: head }, ...over },
        auth,
      });
    const r1 = await reply('first', bob.auth);
    expect(r1.status, r1.text).toBe(200);
    let comment = (await server.call('GET', `/code-comments/${id}`)).json;
    expect(comment.replyCount).toBe(1);
    expect(comment.lastActivity).toMatchObject({ userId: bob.id, description: 'replied' });
    const r2 = (await reply('second', alice.auth)).json;
    expect((await server.call('GET', `/code-comments/${id}`)).json.replyCount).toBe(2);
    const got = (await server.call('GET', `/code-comment-replies/${r1.json}`)).json;
    expect(Object.keys(got)).toEqual(['id', 'date', 'userId', 'content', 'commentId', 'compareContext']);
    expect(got).toMatchObject({ userId: bob.id, content: 'first', commentId: id });
    expect((await server.call('GET', `/code-comments/${id}/replies`)).json.map((r: any) => r.content)).toEqual(['first', 'second']);
    expect((await reply('x', bob.auth, { userId: alice.id })).status).toBe(403);
    expect((await reply('', bob.auth)).status).toBe(400);
    expect((await reply('x', bob.auth, { commentId: 999 })).status).toBe(400);
    expect((await server.call('POST', `/code-comment-replies/${r1.json}`, { body: { content: 'first!' }, auth: alice.auth })).status).toBe(403);
    expect((await server.call('POST', `/code-comment-replies/${r1.json}`, { body: { content: 'first!' }, auth: bob.auth })).status).toBe(200);
    comment = (await server.call('GET', `/code-comments/${id}`)).json;
    expect(comment.lastActivity).toMatchObject({ userId: bob.id, description: 'reply edited' });
    expect((await server.call('DELETE', `/code-comment-replies/${r2}`, { auth: bob.auth })).status).toBe(403);
    expect((await server.call('DELETE', `/code-comment-replies/${r2}`, { auth: alice.auth })).status).toBe(200);
    comment = (await server.call('GET', `/code-comments/${id}`)).json;
    expect(comment.replyCount).toBe(1);
    expect(comment.lastActivity.description).toBe('reply deleted');
    expect((await server.call('GET', `/code-comment-replies/${r2}`)).status).toBe(404);
    const replied = await server.call('GET', `/code-comments?projectId=${project}&query=${encodeURIComponent('replied by "bob"')}`);
    expect(replied.json.map((c: any) => c.id)).toEqual([id]);
  });

  it('edits by the author or an administrator, deletes by the author or a code comment manager', async () => {
    const id = (await create({ content: 'editable' }, alice.auth)).json;
    expect((await server.call('POST', `/code-comments/${id}`, { body: { content: 'by bob' }, auth: bob.auth })).status).toBe(403);
    expect((await server.call('POST', `/code-comments/${id}`, { body: { resolved: true }, auth: alice.auth })).status).toBe(200);
    let comment = (await server.call('GET', `/code-comments/${id}`)).json;
    expect(comment).toMatchObject({ resolved: true, content: 'editable', lastActivity: { description: 'resolved' } });
    expect((await server.call('POST', `/code-comments/${id}`, { body: { content: 'admin edit' } })).status).toBe(200);
    comment = (await server.call('GET', `/code-comments/${id}`)).json;
    expect(comment).toMatchObject({ content: 'admin edit', lastActivity: { userId: 1, description: 'edited' } });
    expect((await server.call('POST', `/code-comments/${id}`, { body: { projectId: hidden } })).status).toBe(400);
    expect(
      (
        await server.call('POST', `/code-comments/${id}`, {
          body: { mark: { commitHash: head, path: 'src/a.txt', range: { fromRow: 9, fromColumn: 0, toRow: 9, toColumn: 0 } } },
        })
      ).status,
    ).toBe(400);
    expect((await server.call('DELETE', `/code-comments/${id}`, { auth: bob.auth })).status).toBe(403);
    expect((await server.call('DELETE', `/code-comments/${id}`, { auth: alice.auth })).status).toBe(200);
    expect((await server.call('GET', `/code-comments/${id}`)).status).toBe(404);
  });

  it('queries by project and by pull request with the code comment query language', async () => {
    const onPr = (
      await create(
        {
          content: 'on the pull request @alice',
          mark: { commitHash: feature, path: 'src/b.txt', range: { fromRow: 0, fromColumn: 0, toRow: 0, toColumn: 3 } },
          compareContext: { pullRequestId: requestId, oldCommitHash: head, newCommitHash: feature },
        },
        bob.auth,
      )
    ).json;
    const ids = async (params: string, query?: string, auth?: string) => {
      const res = await server.call('GET', `/code-comments?${params}${query === undefined ? '' : `&query=${encodeURIComponent(query)}`}`, { auth });
      expect(res.status, `${params} ${query}: ${res.text}`).toBe(200);
      return res.json.map((c: any) => c.id) as number[];
    };
    expect(await ids(`pullRequestId=${requestId}`)).toEqual([onPr]);
    expect((await server.call('GET', `/pulls/${requestId}`)).json.codeCommentsUpdateDate).not.toBeNull();
    expect(await ids(`projectId=${project}&pullRequestId=${requestId}`)).toEqual([onPr]);
    const all = await ids(`projectId=${project}`);
    expect(all[0]).toBe(onPr);
    const onB = await ids(`projectId=${project}`, '"Path" is "src/b.txt"');
    expect(onB).toContain(onPr);
    expect(await ids(`projectId=${project}`, '"Path" is "SRC/B*"')).toEqual(onB);
    expect(onB.length).toBeLessThan(all.length);
    expect(await ids(`projectId=${project}`, '"Path" is "src/"')).toEqual(all);
    expect(await ids(`projectId=${project}`, '"Content" contains "pull*request"')).toEqual([onPr]);
    expect(await ids(`projectId=${project}`, '~PULL~')).toEqual([onPr]);
    expect(await ids(`projectId=${project}`, 'created by "bob"')).toEqual([onPr]);
    expect(await ids(`projectId=${project}`, 'created by me', bob.auth)).toEqual([onPr]);
    // a comment on a pull request records a pull request mention, not a code comment mention
    expect(await ids(`projectId=${project}`, 'mentioned "alice"')).toEqual([]);
    const prMentioned = await server.call('GET', `/pulls?query=${encodeURIComponent('mentioned "alice"')}`);
    expect(prMentioned.json.map((p: any) => p.id)).toEqual([requestId]);
    expect(await ids(`projectId=${project}`, `on commit "code:${feature}"`)).toEqual(onB);
    expect(await ids(`projectId=${project}`, `on commit "code:main"`)).toEqual(all.filter((id) => !onB.includes(id)));
    expect(await ids(`projectId=${project}`, '"Reply Count" is greater than "0"')).toHaveLength(1);
    expect(await ids(`projectId=${project}`, 'unresolved and "Create Date" is since "2000-01-01" order by "Reply Count" desc')).toHaveLength(all.length);
    expect(await ids(`projectId=${project}`, 'resolved')).toEqual([]);
    const byCount = await ids(`projectId=${project}`, 'order by "Reply Count" desc');
    expect(byCount[0]).not.toBe(onPr);
    expect(await ids(`projectId=${project}`, 'not(created by "admin") and "Last Activity Date" is until "2000-01-01"')).toEqual([]);
    for (const [params, status] of [
      ['', 400],
      [`projectId=${hidden}`, 404],
      [`projectId=${hidden}&pullRequestId=${requestId}`, 400],
      ['pullRequestId=999', 400],
      [`projectId=${project}&query=${encodeURIComponent('"Title" contains "x"')}`, 400],
      [`projectId=${project}&query=${encodeURIComponent('order by "Path"')}`, 400],
      [`projectId=${project}&query=${encodeURIComponent('created by "ghost"')}`, 400],
      [`projectId=${project}&query=${encodeURIComponent('on commit "nope"')}`, 400],
      [`projectId=${project}&query=${encodeURIComponent('"Reply Count" is "many"')}`, 400],
      [`projectId=${project}&count=101`, 400],
    ] as const) {
      expect((await server.call('GET', `/code-comments?${params}`, { auth: bob.auth })).status, params).toBe(status);
    }
  });
});
