import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { givenProject, givenUsers, type TestUser } from '../helpers/fixtures.js';

describe('query personalizations and queries-and-watches', () => {
  let server: TestServer;
  let project: number;
  let hidden: number;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    server = await startTestServer();
    [alice, bob] = await givenUsers(server, 'alice', 'bob');
    project = await givenProject(server, { name: 'saved', defaultRoleId: 4 });
    hidden = await givenProject(server, { name: 'hidden' });
  });
  afterAll(async () => server.close());

  it('issue personalizations: create, shape, key pruning, duplicates, update, delete', async () => {
    const res = await server.call('POST', '/issue-query-personalizations', {
      auth: alice.auth,
      body: {
        projectId: project,
        queries: [
          { name: 'Mine', query: 'submitted by me' },
          { name: 'Everything', query: null },
        ],
        queryWatches: { 'p:Mine': true, 'p:Gone': true, 'g:Open': false, 'g:Nope': true, 'x:Mine': true },
      },
    });
    expect(res.status, res.text).toBe(200);
    const id = res.json as number;
    const got = (await server.call('GET', `/issue-query-personalizations/${id}`, { auth: alice.auth })).json;
    expect(got).toEqual({
      id,
      projectId: project,
      userId: alice.id,
      queries: [
        { name: 'Mine', query: 'submitted by me' },
        { name: 'Everything', query: null },
      ],
      queryWatches: { 'p:Mine': true, 'g:Open': false },
    });
    expect((await server.call('GET', `/issue-query-personalizations/${id}`, { auth: bob.auth })).status).toBe(403);
    expect((await server.call('GET', `/issue-query-personalizations/${id}`)).status).toBe(200);
    expect((await server.call('POST', '/issue-query-personalizations', { auth: alice.auth, body: { projectId: project, queries: [] } })).status).toBe(409);
    // dropping the query drops its watch
    expect(
      (await server.call('POST', `/issue-query-personalizations/${id}`, { auth: alice.auth, body: { queries: [{ name: 'Other', query: 'confidential' }] } }))
        .status,
    ).toBe(200);
    expect((await server.call('GET', `/issue-query-personalizations/${id}`, { auth: alice.auth })).json.queryWatches).toEqual({ 'g:Open': false });
    expect((await server.call('POST', `/issue-query-personalizations/${id}`, { auth: bob.auth, body: { queries: [] } })).status).toBe(403);
    expect((await server.call('POST', `/issue-query-personalizations/${id}`, { auth: alice.auth, body: { userId: bob.id } })).status).toBe(403);
    expect((await server.call('GET', `/users/${alice.id}/project-issue-query-personalizations`, { auth: alice.auth })).json.map((p: any) => p.id)).toEqual([
      id,
    ]);
    expect((await server.call('GET', `/users/${alice.id}/project-issue-query-personalizations`, { auth: bob.auth })).status).toBe(403);
    expect((await server.call('DELETE', `/issue-query-personalizations/${id}`, { auth: bob.auth })).status).toBe(403);
    expect((await server.call('DELETE', `/issue-query-personalizations/${id}`, { auth: alice.auth })).status).toBe(200);
    expect((await server.call('GET', `/issue-query-personalizations/${id}`)).status).toBe(404);
  });

  it('validates input (400), access (404) and ownership (403)', async () => {
    const post = (body: unknown, auth = alice.auth) => server.call('POST', '/pull-request-query-personalizations', { body, auth });
    expect((await post({ projectId: project, queries: [{ name: '', query: 'open' }] })).status).toBe(400);
    expect(
      (
        await post({
          projectId: project,
          queries: [
            { name: 'a', query: 'open' },
            { name: 'a', query: 'merged' },
          ],
        })
      ).status,
    ).toBe(400);
    expect((await post({ projectId: project, queries: [{ name: 'bad', query: 'opened widely' }] })).status).toBe(400);
    expect((await post({ projectId: project, queries: [], unknown: 1 })).status).toBe(400);
    expect((await post({ projectId: 999, queries: [] })).status).toBe(400);
    expect((await post({ projectId: hidden, queries: [] })).status).toBe(404);
    expect((await post({ projectId: project, userId: bob.id, queries: [] })).status).toBe(403);
    expect((await server.call('POST', '/pull-request-query-personalizations', { body: { projectId: project, queries: [] }, auth: null })).status).toBe(401);
    const id = (
      await post({ projectId: project, queries: [{ name: 'Reviews', query: 'to be reviewed by me' }], queryWatches: { 'p:Reviews': true, 'g:Merged': true } })
    ).json;
    expect((await server.call('GET', `/pull-request-query-personalizations/${id}`, { auth: alice.auth })).json.queryWatches).toEqual({
      'p:Reviews': true,
      'g:Merged': true,
    });
  });

  it('build, commit and code comment personalizations have their own shapes', async () => {
    const build = (
      await server.call('POST', '/build-query-personalizations', {
        auth: bob.auth,
        body: { projectId: project, queries: [{ name: 'Red', query: 'failed' }], querySubscriptions: ['p:Red', 'g:Failed', 'p:Nope', 'p:Red'] },
      })
    ).json;
    expect((await server.call('GET', `/build-query-personalizations/${build}`, { auth: bob.auth })).json).toEqual({
      id: build,
      projectId: project,
      userId: bob.id,
      queries: [{ name: 'Red', query: 'failed' }],
      querySubscriptions: ['p:Red', 'g:Failed'],
    });
    const commit = (
      await server.call('POST', '/commit-query-personalizations', {
        auth: bob.auth,
        body: { projectId: project, queries: [{ name: 'Recent', query: 'after(yesterday)' }], querySubscriptions: ['g:Default branch', 'g:Nope'] },
      })
    ).json;
    expect((await server.call('GET', `/commit-query-personalizations/${commit}`, { auth: bob.auth })).json.querySubscriptions).toEqual(['g:Default branch']);
    const cc = await server.call('POST', '/code-comment-query-personalizations', {
      auth: bob.auth,
      body: { projectId: project, queries: [{ name: 'Open', query: 'unresolved' }] },
    });
    expect(cc.status).toBe(200);
    expect((await server.call('GET', `/code-comment-query-personalizations/${cc.json}`, { auth: bob.auth })).json).toEqual({
      id: cc.json,
      projectId: project,
      userId: bob.id,
      queries: [{ name: 'Open', query: 'unresolved' }],
    });
    expect(
      (await server.call('POST', '/code-comment-query-personalizations', { auth: bob.auth, body: { projectId: project, queries: [], queryWatches: {} } }))
        .status,
    ).toBe(400);
    expect((await server.call('GET', `/users/${bob.id}/project-build-query-personalizations`, { auth: bob.auth })).json.map((p: any) => p.id)).toEqual([build]);
    expect((await server.call('GET', `/users/${bob.id}/project-commit-query-personalizations`, { auth: bob.auth })).json.map((p: any) => p.id)).toEqual([
      commit,
    ]);
    expect((await server.call('GET', `/users/${bob.id}/project-code-comment-query-personalizations`)).json.map((p: any) => p.id)).toEqual([cc.json]);
    expect((await server.call('GET', `/users/${bob.id}/project-pull-request-query-personalizations`, { auth: bob.auth })).json).toEqual([]);
  });

  it('queries-and-watches: defaults, partial set, pruning, ownership', async () => {
    const empty = (await server.call('GET', `/users/${alice.id}/queries-and-watches`, { auth: alice.auth })).json;
    expect(empty).toEqual({
      projectQueries: [],
      issueQueries: [],
      issueQueryWatches: {},
      pullRequestQueries: [],
      pullRequestQueryWatches: {},
      buildQueries: [],
      buildQuerySubscriptions: [],
    });
    expect(Object.keys(empty)).toEqual([
      'projectQueries',
      'issueQueries',
      'issueQueryWatches',
      'pullRequestQueries',
      'pullRequestQueryWatches',
      'buildQueries',
      'buildQuerySubscriptions',
    ]);
    const set = await server.call('POST', `/users/${alice.id}/queries-and-watches`, {
      auth: alice.auth,
      body: {
        projectQueries: [{ name: 'Roots', query: 'roots' }],
        issueQueries: [{ name: 'Bugs', query: '"Type" is "Bug"' }],
        issueQueryWatches: { 'p:Bugs': true, 'g:Open': true, 'p:Gone': false },
        pullRequestQueries: [],
        pullRequestQueryWatches: { 'g:Open': false },
        buildQueries: [{ name: 'All', query: null }],
        buildQuerySubscriptions: ['p:All', 'g:Nope'],
      },
    });
    expect(set.status, set.text).toBe(200);
    let got = (await server.call('GET', `/users/${alice.id}/queries-and-watches`, { auth: alice.auth })).json;
    expect(got).toEqual({
      projectQueries: [{ name: 'Roots', query: 'roots' }],
      issueQueries: [{ name: 'Bugs', query: '"Type" is "Bug"' }],
      issueQueryWatches: { 'p:Bugs': true, 'g:Open': true },
      pullRequestQueries: [],
      pullRequestQueryWatches: { 'g:Open': false },
      buildQueries: [{ name: 'All', query: null }],
      buildQuerySubscriptions: ['p:All'],
    });
    // a partial set keeps the rest, and removing a query prunes its watch
    expect((await server.call('POST', `/users/${alice.id}/queries-and-watches`, { auth: alice.auth, body: { issueQueries: [] } })).status).toBe(200);
    got = (await server.call('GET', `/users/${alice.id}/queries-and-watches`)).json;
    expect(got.issueQueryWatches).toEqual({ 'g:Open': true });
    expect(got.projectQueries).toEqual([{ name: 'Roots', query: 'roots' }]);
    expect(
      (
        await server.call('POST', `/users/${alice.id}/queries-and-watches`, {
          auth: alice.auth,
          body: { issueQueries: [{ name: 'x', query: '"Nope" is "1"' }] },
        })
      ).status,
    ).toBe(400);
    expect((await server.call('POST', `/users/${alice.id}/queries-and-watches`, { auth: alice.auth, body: { extra: [] } })).status).toBe(400);
    expect((await server.call('GET', `/users/${alice.id}/queries-and-watches`, { auth: bob.auth })).status).toBe(403);
    expect((await server.call('POST', `/users/${alice.id}/queries-and-watches`, { auth: bob.auth, body: {} })).status).toBe(403);
    expect((await server.call('GET', '/users/999/queries-and-watches')).status).toBe(404);
  });
});
