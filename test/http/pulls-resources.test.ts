import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { openRequest } from './pulls-fixtures.js';

describe('pull request sub-resources (docs/compatibility.md#pull-requests-sub-resources, docs/compatibility.md#gitloom-differs-improved-behaviour, docs/compatibility.md#gitloom-differs-additions-to-the-interface)', () => {
  let server: TestServer;
  let repo: Repo;
  let submitter: TestUser;
  let reviewer: TestUser;
  let manager: TestUser;
  let stranger: TestUser;
  let id: number;

  beforeAll(async () => {
    server = await startTestServer();
    repo = await givenRepo(server, 'subs');
    [submitter, reviewer, manager, stranger] = await givenUsers(server, 'subby', 'revy', 'mandy', 'stranger');
    await grantRole(server, repo.id, submitter.id, 'Code Writer');
    await grantRole(server, repo.id, reviewer.id, 'Code Reader');
    await grantRole(server, repo.id, stranger.id, 'Code Reader');
    const roles = await server.call('GET', '/roles?name=PR%20Manager');
    const roleId =
      roles.json.length > 0
        ? roles.json[0].id
        : (await server.call('POST', '/roles', { body: { name: 'PR Manager', managePullRequests: true, codePrivilege: 'READ' } })).json;
    expect((await server.call('POST', '/user-authorizations', { body: { projectId: repo.id, userId: manager.id, roleId } })).status).toBe(200);
    await repo.commitOn('topic', { 't.txt': 't\n' }, 'topic');
    id = (await openRequest(server, { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'topic' }, submitter.auth)).json;
  });
  afterAll(async () => {
    await server.close();
    await removeWorkTrees();
  });

  it('reviews: yourself unless admin, submitter refused, duplicates 409, status drives changes, EXCLUDED hidden', async () => {
    const forOther = await server.call('POST', '/pull-request-reviews', { body: { requestId: id, userId: stranger.id }, auth: reviewer.auth });
    expect(forOther.status).toBe(403);
    const bySubmitter = await server.call('POST', '/pull-request-reviews', { body: { requestId: id, userId: submitter.id } });
    expect([bySubmitter.status, bySubmitter.json.detail]).toEqual([400, 'Pull request submitter can not be reviewer']);
    expect((await server.call('POST', '/pull-request-reviews', { body: { requestId: 4242, userId: reviewer.id } })).status).toBe(400);
    expect((await server.call('POST', '/pull-request-reviews', { body: { requestId: id, userId: 4242 } })).status).toBe(400);
    const created = await server.call('POST', '/pull-request-reviews', { body: { requestId: id, userId: reviewer.id }, auth: reviewer.auth });
    expect(created.status, created.text).toBe(200);
    const reviewId = created.json as number;
    const dup = await server.call('POST', '/pull-request-reviews', { body: { requestId: id, userId: reviewer.id } });
    expect(dup.status).toBe(409);
    const got = await server.call('GET', `/pull-request-reviews/${reviewId}`, { auth: stranger.auth });
    expect(got.json).toMatchObject({ id: reviewId, userId: reviewer.id, requestId: id, status: 'PENDING' });
    expect(Object.keys(got.json)).toEqual(['id', 'userId', 'requestId', 'status', 'statusDate']);
    expect((await server.call('POST', `/pull-request-reviews/${reviewId}`, { body: { status: 'APPROVED' }, auth: stranger.auth })).status).toBe(403);
    expect((await server.call('POST', `/pull-request-reviews/${reviewId}`, { body: { status: 'REQUESTED_FOR_CHANGES' }, auth: reviewer.auth })).status).toBe(
      200,
    );
    let pr = (await server.call('GET', `/pulls/${id}`)).json;
    expect(pr.lastActivity).toMatchObject({ userId: reviewer.id, description: 'requested for changes' });
    const someone = (await server.call('GET', `/pulls?query=${encodeURIComponent('someone requested for changes')}`)).json;
    expect(someone.map((p: { id: number }) => p.id)).toEqual([id]);
    const merge = await server.call('POST', `/pulls/${id}/merge`, { text: '' });
    expect([merge.status, merge.json.detail]).toEqual([409, 'Waiting for approvals']);
    expect((await server.call('POST', `/pull-request-reviews/${reviewId}`, { body: { status: 'EXCLUDED' }, auth: reviewer.auth })).status).toBe(200);
    expect((await server.call('GET', `/pulls/${id}/reviews`)).json).toEqual([]);
    expect((await server.call('POST', `/pull-request-reviews/${reviewId}`, { body: { status: 'BOGUS' } })).status).toBe(400);
    const changes = (await server.call('GET', `/pulls/${id}/changes`)).json.map((c: { userId: number; data: { '@type': string } }) => [
      c.userId,
      c.data['@type'],
    ]);
    expect(changes).toEqual([[reviewer.id, 'PullRequestRequestedForChangesData']]);
    pr = (await server.call('GET', `/pulls/${id}`)).json;
    expect(pr.status).toBe('OPEN');
  });

  it('assignments: canModify, users must exist, duplicates 409, merged requests refuse changes', async () => {
    expect((await server.call('POST', '/pull-request-assignments', { body: { requestId: id, userId: reviewer.id }, auth: stranger.auth })).status).toBe(403);
    expect((await server.call('POST', '/pull-request-assignments', { body: { requestId: id, userId: 777 } })).status).toBe(400);
    const created = await server.call('POST', '/pull-request-assignments', { body: { requestId: id, userId: reviewer.id }, auth: submitter.auth });
    expect(created.status, created.text).toBe(200);
    expect((await server.call('POST', '/pull-request-assignments', { body: { requestId: id, userId: reviewer.id }, auth: submitter.auth })).status).toBe(409);
    expect((await server.call('GET', `/pull-request-assignments/${created.json}`)).json).toEqual({ id: created.json, userId: reviewer.id, requestId: id });
    const assigned = (await server.call('GET', `/pulls?query=${encodeURIComponent('assigned to "revy"')}`)).json;
    expect(assigned.map((p: { id: number }) => p.id)).toEqual([id]);
    // an assignee may modify the request
    expect((await server.call('POST', `/pulls/${id}/title`, { text: 'Renamed by assignee', auth: reviewer.auth })).status).toBe(200);
    expect((await server.call('DELETE', `/pull-request-assignments/${created.json}`, { auth: stranger.auth })).status).toBe(403);
    expect((await server.call('DELETE', `/pull-request-assignments/${created.json}`, { auth: manager.auth })).status).toBe(200);
    expect((await server.call('GET', `/pull-request-assignments/${created.json}`)).status).toBe(404);
  });

  it('labels: canModify, unknown spec 400, duplicates 409, Label criterion', async () => {
    const spec = (await server.call('POST', '/label-specs', { body: { name: 'needs-docs', color: '#ff0000' } })).json as number;
    expect((await server.call('POST', '/pull-request-labels', { body: { requestId: id, specId: spec }, auth: stranger.auth })).status).toBe(403);
    const unknown = await server.call('POST', '/pull-request-labels', { body: { requestId: id, specId: 9999 } });
    expect(unknown.status).toBe(400);
    const label = await server.call('POST', '/pull-request-labels', { body: { requestId: id, specId: spec }, auth: submitter.auth });
    expect(label.status, label.text).toBe(200);
    expect((await server.call('POST', '/pull-request-labels', { body: { requestId: id, specId: spec } })).status).toBe(409);
    expect((await server.call('GET', `/pulls/${id}/labels`)).json).toEqual([{ id: label.json, requestId: id, specId: spec }]);
    const byLabel = (await server.call('GET', `/pulls?query=${encodeURIComponent('"Label" is "needs-docs"')}`)).json;
    expect(byLabel.map((p: { id: number }) => p.id)).toEqual([id]);
    const undefinedLabel = await server.call('GET', `/pulls?query=${encodeURIComponent('"Label" is "nope"')}`);
    expect([undefinedLabel.status, undefinedLabel.json.detail]).toEqual([400, 'Undefined label: nope']);
    expect((await server.call('DELETE', `/pull-request-labels/${label.json}`, { auth: submitter.auth })).status).toBe(200);
    expect((await server.call('GET', `/pulls/${id}/labels`)).json).toEqual([]);
  });

  it('comments: counts, activity, mentions, owner-only edits, owner or manager deletes', async () => {
    const forOther = await server.call('POST', '/pull-request-comments', { body: { requestId: id, userId: reviewer.id, content: 'x' }, auth: stranger.auth });
    expect(forOther.status).toBe(403);
    expect((await server.call('POST', '/pull-request-comments', { body: { requestId: id, content: ' ' }, auth: stranger.auth })).status).toBe(400);
    expect((await server.call('POST', '/pull-request-comments', { body: { requestId: 5555, content: 'x' } })).status).toBe(400);
    expect((await server.call('POST', '/pull-request-comments', { body: { requestId: id, content: 'x', id: 3 } })).status).toBe(400);
    const created = await server.call('POST', '/pull-request-comments', {
      body: { requestId: id, userId: stranger.id, content: 'Looks good, ping @mandy' },
      auth: stranger.auth,
    });
    expect(created.status, created.text).toBe(200);
    const commentId = created.json as number;
    let pr = (await server.call('GET', `/pulls/${id}`)).json;
    expect(pr).toMatchObject({ commentCount: 1, lastActivity: { userId: stranger.id, description: 'commented' } });
    const watches = (await server.call('GET', `/pulls/${id}/watches`)).json.map((w: { userId: number }) => w.userId);
    expect(watches).toEqual(expect.arrayContaining([stranger.id, manager.id]));
    const comment = (await server.call('GET', `/pull-request-comments/${commentId}`)).json;
    expect(Object.keys(comment)).toEqual(['id', 'date', 'userId', 'content', 'requestId']);
    for (const [query, expected] of [
      ['commented by "stranger"', [id]],
      ['mentioned "mandy"', [id]],
      ['"Comment" contains "ping @MANDY"', [id]],
      ['~looks ping~', [id]],
      ['~looks absent~', []],
    ] as const) {
      const res = await server.call('GET', `/pulls?query=${encodeURIComponent(query)}`);
      expect(
        res.json.map((p: { id: number }) => p.id),
        query,
      ).toEqual(expected);
    }
    expect((await server.call('POST', `/pull-request-comments/${commentId}`, { body: { content: 'edited by manager' }, auth: manager.auth })).status).toBe(403);
    expect((await server.call('POST', `/pull-request-comments/${commentId}`, { body: { content: 'edited' }, auth: stranger.auth })).status).toBe(200);
    expect((await server.call('GET', `/pull-request-comments/${commentId}`)).json.content).toBe('edited');
    expect((await server.call('POST', `/pull-request-comments/${commentId}`, { body: { content: 'by admin' } })).status).toBe(200);
    expect((await server.call('DELETE', `/pull-request-comments/${commentId}`, { auth: reviewer.auth })).status).toBe(403);
    expect((await server.call('DELETE', `/pull-request-comments/${commentId}`, { auth: manager.auth })).status).toBe(200);
    pr = (await server.call('GET', `/pulls/${id}`)).json;
    expect(pr.commentCount).toBe(0);
    expect((await server.call('GET', `/pull-request-comments/${commentId}`)).status).toBe(404);
  });

  it('watches: yourself unless admin, duplicates 409, default watching false, owner or admin deletes', async () => {
    const existing = (await server.call('GET', `/pulls/${id}/watches`)).json.find((w: { userId: number }) => w.userId === stranger.id);
    const dup = await server.call('POST', '/pull-request-watches', { body: { requestId: id, userId: stranger.id, watching: true }, auth: stranger.auth });
    expect(dup.status).toBe(409);
    expect((await server.call('POST', `/pull-request-watches/${existing.id}`, { body: { watching: false }, auth: stranger.auth })).status).toBe(200);
    expect((await server.call('GET', `/pull-request-watches/${existing.id}`)).json).toEqual({
      id: existing.id,
      requestId: id,
      userId: stranger.id,
      watching: false,
    });
    expect((await server.call('POST', `/pull-request-watches/${existing.id}`, { body: { watching: true }, auth: reviewer.auth })).status).toBe(403);
    const viewer = await server.createUser('viewer');
    await grantRole(server, repo.id, viewer.id, 'Code Reader');
    expect((await server.call('POST', '/pull-request-watches', { body: { requestId: id, userId: viewer.id }, auth: reviewer.auth })).status).toBe(403);
    expect((await server.call('POST', '/pull-request-watches', { body: { requestId: id, userId: 4321 } })).status).toBe(400);
    const created = await server.call('POST', '/pull-request-watches', { body: { requestId: id, userId: viewer.id }, auth: viewer.auth });
    expect(created.status, created.text).toBe(200);
    expect((await server.call('GET', `/pull-request-watches/${created.json}`)).json.watching).toBe(false);
    expect((await server.call('DELETE', `/pull-request-watches/${created.json}`, { auth: reviewer.auth })).status).toBe(403);
    expect((await server.call('DELETE', `/pull-request-watches/${created.json}`, { auth: viewer.auth })).status).toBe(200);
    expect((await server.call('GET', `/pull-request-watches/${created.json}`)).status).toBe(404);
  });

  it('merged requests refuse new reviewers and assignments', async () => {
    expect((await server.call('POST', `/pulls/${id}/merge`, { text: '' })).status).toBe(200);
    const review = await server.call('POST', '/pull-request-reviews', { body: { requestId: id, userId: stranger.id }, auth: stranger.auth });
    expect([review.status, review.json.detail]).toEqual([409, 'Pull request is merged']);
    const assignment = await server.call('POST', '/pull-request-assignments', { body: { requestId: id, userId: stranger.id } });
    expect([assignment.status, assignment.json.detail]).toEqual([409, 'Pull request is merged']);
    expect((await server.call('POST', '/pull-request-comments', { body: { requestId: id, content: 'after the merge' }, auth: stranger.auth })).status).toBe(
      200,
    );
  });
});
