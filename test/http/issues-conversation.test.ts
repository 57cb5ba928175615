import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { givenProject, givenUsers, type TestUser } from '../helpers/fixtures.js';

describe('issue comments, watches and votes', () => {
  let server: TestServer;
  let project: number;
  let hidden: number;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    [alice, bob, carol] = await givenUsers(server, 'alice', 'bob', 'carol');
    project = await givenProject(server, { name: 'talk', defaultRoleId: 4 });
    hidden = await givenProject(server, { name: 'hidden' });
  });
  afterAll(async () => server.close());

  const issue = async (title = 'An issue', auth?: string) =>
    (await server.call('POST', '/issues', { body: { projectId: project, title }, auth })).json as number;
  const get = async (id: number) => (await server.call('GET', `/issues/${id}`)).json;

  it('comments: counters, last activity, auto-watch, mentions and rights', async () => {
    const id = await issue('Discuss', alice.auth);
    const created = await server.call('POST', '/issue-comments', { body: { issueId: id, userId: bob.id, content: 'I agree @carol' }, auth: bob.auth });
    expect(created.status).toBe(200);
    const commentId = created.json as number;
    let row = await get(id);
    expect(row.commentCount).toBe(1);
    expect(row.lastActivity).toMatchObject({ userId: bob.id, description: 'commented' });
    const comment = (await server.call('GET', `/issue-comments/${commentId}`)).json;
    expect(Object.keys(comment)).toEqual(['id', 'date', 'userId', 'content', 'issueId']);
    expect(comment).toMatchObject({ id: commentId, userId: bob.id, content: 'I agree @carol', issueId: id });
    const watchers = (await server.call('GET', `/issues/${id}/watches`)).json.map((w: any) => w.userId).sort();
    expect(watchers).toEqual([alice.id, bob.id, carol.id].sort());
    const mentioned = (await server.call('GET', `/issues?query=${encodeURIComponent('mentioned me')}`, { auth: carol.auth })).json.map((i: any) => i.id);
    expect(mentioned).toEqual([id]);
    const commented = (await server.call('GET', `/issues?query=${encodeURIComponent('commented by "bob"')}`)).json.map((i: any) => i.id);
    expect(commented).toEqual([id]);

    // userId defaults to the caller; another user's id is refused; anonymous is 401
    const own = (await server.call('POST', '/issue-comments', { body: { issueId: id, content: 'me too' }, auth: carol.auth })).json;
    expect((await server.call('GET', `/issue-comments/${own}`)).json.userId).toBe(carol.id);
    expect((await server.call('POST', '/issue-comments', { body: { issueId: id, userId: alice.id, content: 'x' }, auth: bob.auth })).status).toBe(403);
    expect((await server.call('POST', '/issue-comments', { body: { issueId: id, content: 'x' }, auth: null })).status).toBe(401);
    expect((await server.call('POST', '/issue-comments', { body: { issueId: id, content: ' ' }, auth: bob.auth })).status).toBe(400);
    expect((await server.call('POST', '/issue-comments', { body: { issueId: 999, content: 'x' } })).status).toBe(400);
    expect((await server.call('POST', '/issue-comments', { body: { id: 1, issueId: id, content: 'x' } })).status).toBe(400);
    expect((await get(id)).commentCount).toBe(2);

    // update: author or admin; partial; issue can not move
    expect((await server.call('POST', `/issue-comments/${commentId}`, { body: { content: 'edited' }, auth: alice.auth })).status).toBe(403);
    expect((await server.call('POST', `/issue-comments/${commentId}`, { body: { content: 'edited' }, auth: bob.auth })).status).toBe(200);
    expect((await server.call('POST', `/issue-comments/${commentId}`, { body: { issueId: id + 1000 }, auth: bob.auth })).status).toBe(400);
    expect((await server.call('GET', `/issue-comments/${commentId}`)).json.content).toBe('edited');
    expect((await get(id)).lastActivity.description).toBe('commented');

    // delete: author or issue manager; counter follows
    expect((await server.call('DELETE', `/issue-comments/${commentId}`, { auth: carol.auth })).status).toBe(403);
    expect((await server.call('DELETE', `/issue-comments/${commentId}`, { auth: bob.auth })).status).toBe(200);
    expect((await get(id)).commentCount).toBe(1);
    expect((await server.call('DELETE', `/issue-comments/${own}`)).status).toBe(200);
    row = await get(id);
    expect(row.commentCount).toBe(0);
    expect((await server.call('GET', `/issue-comments/${own}`)).status).toBe(404);
    expect((await server.call('GET', `/issues/${id}/comments`)).json).toEqual([]);
  });

  it('watches: create, 409 on duplicates, update, delete, user list', async () => {
    const id = await issue('Watch me', alice.auth);
    const w = await server.call('POST', '/issue-watches', { body: { issueId: id, userId: bob.id, watching: false }, auth: bob.auth });
    expect(w.status).toBe(200);
    expect((await server.call('GET', `/issue-watches/${w.json}`)).json).toEqual({ id: w.json, issueId: id, userId: bob.id, watching: false });
    expect((await server.call('POST', '/issue-watches', { body: { issueId: id, userId: bob.id, watching: true }, auth: bob.auth })).status).toBe(409);
    // the submitter was auto-watched
    expect((await server.call('POST', '/issue-watches', { body: { issueId: id, userId: alice.id, watching: true }, auth: alice.auth })).status).toBe(409);
    expect((await server.call('POST', '/issue-watches', { body: { issueId: id, userId: carol.id, watching: true }, auth: bob.auth })).status).toBe(403);
    expect((await server.call('POST', `/issue-watches/${w.json}`, { body: { watching: true }, auth: carol.auth })).status).toBe(403);
    expect((await server.call('POST', `/issue-watches/${w.json}`, { body: { watching: true }, auth: bob.auth })).status).toBe(200);
    expect((await server.call('GET', `/issue-watches/${w.json}`)).json.watching).toBe(true);
    // an opted-out watch survives a later comment (auto-watch never changes an existing row)
    expect((await server.call('POST', `/issue-watches/${w.json}`, { body: { watching: false }, auth: bob.auth })).status).toBe(200);
    await server.call('POST', '/issue-comments', { body: { issueId: id, content: 'hi' }, auth: bob.auth });
    expect((await server.call('GET', `/issue-watches/${w.json}`)).json.watching).toBe(false);
    const mine = (await server.call('GET', `/users/${bob.id}/issue-watches`, { auth: bob.auth })).json;
    expect(mine.map((x: any) => x.id)).toContain(w.json);
    expect((await server.call('GET', `/users/${bob.id}/issue-watches`, { auth: carol.auth })).status).toBe(403);
    expect((await server.call('DELETE', `/issue-watches/${w.json}`, { auth: carol.auth })).status).toBe(403);
    expect((await server.call('DELETE', `/issue-watches/${w.json}`, { auth: bob.auth })).status).toBe(200);
    expect((await server.call('GET', `/issue-watches/${w.json}`)).status).toBe(404);
  });

  it('votes: counters exact, 409 on duplicates, no update, user list', async () => {
    const id = await issue('Vote for me', alice.auth);
    const v1 = await server.call('POST', '/issue-votes', { body: { issueId: id, userId: bob.id }, auth: bob.auth });
    expect(v1.status).toBe(200);
    expect((await get(id)).voteCount).toBe(1);
    const v2 = await server.call('POST', '/issue-votes', { body: { issueId: id, date: '2024-01-02T03:04:05.000+00:00' }, auth: carol.auth });
    expect(v2.status).toBe(200);
    expect((await server.call('GET', `/issue-votes/${v2.json}`)).json).toEqual({
      id: v2.json,
      issueId: id,
      userId: carol.id,
      date: '2024-01-02T03:04:05.000+00:00',
    });
    expect((await get(id)).voteCount).toBe(2);
    expect((await server.call('POST', '/issue-votes', { body: { issueId: id }, auth: bob.auth })).status).toBe(409);
    expect((await get(id)).voteCount).toBe(2);
    expect((await server.call('POST', '/issue-votes', { body: { issueId: id, userId: alice.id }, auth: bob.auth })).status).toBe(403);
    expect((await server.call('POST', `/issue-votes/${v1.json}`, { body: { issueId: id } })).status).toBe(404);
    expect((await server.call('GET', `/issues/${id}/votes`)).json.map((v: any) => v.userId)).toEqual([bob.id, carol.id]);
    expect((await server.call('GET', `/users/${carol.id}/issue-votes`, { auth: carol.auth })).json.map((v: any) => v.id)).toEqual([v2.json]);
    expect((await server.call('GET', `/issues?query=${encodeURIComponent('"Vote Count" is greater than "1"')}`)).json.map((i: any) => i.id)).toEqual([id]);
    expect((await server.call('DELETE', `/issue-votes/${v1.json}`, { auth: carol.auth })).status).toBe(403);
    expect((await server.call('DELETE', `/issue-votes/${v1.json}`, { auth: bob.auth })).status).toBe(200);
    expect((await get(id)).voteCount).toBe(1);
    expect((await server.call('DELETE', `/issue-votes/${v1.json}`, { auth: bob.auth })).status).toBe(404);
    expect((await server.call('DELETE', `/issue-votes/${v2.json}`)).status).toBe(200);
    expect((await get(id)).voteCount).toBe(0);
  });

  it('hides issues of invisible projects and deleting an issue removes its conversation', async () => {
    const secret = (await server.call('POST', '/issues', { body: { projectId: hidden, title: 'Hidden' } })).json;
    expect((await server.call('GET', `/issues/${secret}`, { auth: bob.auth })).status).toBe(404);
    expect((await server.call('POST', '/issue-comments', { body: { issueId: secret, content: 'x' }, auth: bob.auth })).status).toBe(404);
    expect((await server.call('POST', '/issue-votes', { body: { issueId: secret }, auth: bob.auth })).status).toBe(404);
    expect((await server.call('GET', `/issues/${secret}/comments`, { auth: bob.auth })).status).toBe(404);
    const id = await issue('Doomed', alice.auth);
    const c = (await server.call('POST', '/issue-comments', { body: { issueId: id, content: 'bye' }, auth: bob.auth })).json;
    const v = (await server.call('POST', '/issue-votes', { body: { issueId: id }, auth: bob.auth })).json;
    expect((await server.call('DELETE', `/issues/${id}`)).status).toBe(200);
    expect((await server.call('GET', `/issue-comments/${c}`)).status).toBe(404);
    expect((await server.call('GET', `/issue-votes/${v}`)).status).toBe(404);
    expect((await server.call('DELETE', `/issues/${id}`)).status).toBe(404);
  });

  it('keeps authored records on user delete', async () => {
    const dave = await server.createUser('dave');
    const id = await issue('By dave', dave.auth);
    const c = (await server.call('POST', '/issue-comments', { body: { issueId: id, content: 'dave says' }, auth: dave.auth })).json;
    expect((await server.call('DELETE', `/users/${dave.id}`)).status).toBe(200);
    expect((await get(id)).submitterId).toBe(-2);
    expect((await server.call('GET', `/issue-comments/${c}`)).json.userId).toBe(-2);
    expect((await server.call('GET', `/issues/${id}/watches`)).json).toEqual([]);
  });
});
