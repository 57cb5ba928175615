import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, git, startTestServer, type TestServer } from '../helpers/server.js';
import { eventually, givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { openRequest } from './pulls-fixtures.js';

describe('pull request operations and lifecycle (docs/compatibility.md#pull-requests-endpoints, docs/compatibility.md#pull-requests-lifecycle)', () => {
  let server: TestServer;
  let repo: Repo;
  let reader: TestUser;
  let writer: TestUser;
  let bob: TestUser;
  let outsider: TestUser;

  const bare = (projectId: number) => path.join(server.dataDir, 'repos', `${projectId}.git`);
  const refs = async (projectId: number, prefix: string) =>
    (await git(bare(projectId), ['for-each-ref', '--format=%(refname) %(objectname)', prefix])).trim().split('\n').filter(Boolean);
  const open = async (branch: string, extra: Record<string, unknown> = {}, auth?: string) => {
    const res = await openRequest(server, { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: branch, ...extra }, auth);
    expect(res.status, res.text).toBe(200);
    return res.json as number;
  };
  const get = async (id: number) => (await server.call('GET', `/pulls/${id}`)).json;
  const changeTypes = async (id: number) => (await server.call('GET', `/pulls/${id}/changes`)).json.map((c: { data: { '@type': string } }) => c.data['@type']);

  beforeAll(async () => {
    server = await startTestServer();
    repo = await givenRepo(server, 'ops', { files: { 'a.txt': 'a\n' } });
    [reader, writer, bob, outsider] = await givenUsers(server, 'reader', 'writer', 'bob', 'outsider');
    await grantRole(server, repo.id, reader.id, 'Code Reader');
    await grantRole(server, repo.id, writer.id, 'Code Writer');
    await grantRole(server, repo.id, bob.id, 'Code Reader');
  });
  afterAll(async () => {
    await server.close();
    await removeWorkTrees();
  });

  it('create: validation, permissions and every error of docs/compatibility.md#pull-requests-opening', async () => {
    const head = await repo.commitOn('feature', { 'b.txt': 'b\n' }, 'add b');
    const base = { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main' };
    expect((await openRequest(server, { ...base, sourceBranch: 'feature' }, null as unknown as string)).status).toBe(401);
    expect((await openRequest(server, { ...base, sourceBranch: 'feature' }, outsider.auth)).status).toBe(404);
    const same = await openRequest(server, { ...base, sourceBranch: 'main' });
    expect([same.status, same.json.detail]).toEqual([400, 'Source and target are the same']);
    const noSource = await openRequest(server, { ...base, sourceBranch: 'nope' });
    expect(noSource.status).toBe(404);
    const noTarget = await openRequest(server, { ...base, targetBranch: 'nope', sourceBranch: 'feature' });
    expect(noTarget.status).toBe(404);
    await git(repo.work, ['checkout', '-q', '--orphan', 'orphan']);
    await git(repo.work, ['commit', '-q', '-m', 'unrelated']);
    await git(repo.work, ['push', '-q', repo.remote, 'orphan']);
    const unrelated = await openRequest(server, { ...base, sourceBranch: 'orphan' });
    expect([unrelated.status, unrelated.json.detail]).toEqual([400, 'No common base for target and source']);
    await repo.commitOn('main', { 'main2.txt': 'x\n' }, 'main moves');
    await git(repo.work, ['push', '-q', '-f', repo.remote, 'main~1:refs/heads/old']);
    const merged = await openRequest(server, { ...base, sourceBranch: 'old' });
    expect([merged.status, merged.json.detail]).toEqual([409, 'Change already merged']);
    const selfReview = await openRequest(server, { ...base, sourceBranch: 'feature', reviewerIds: [1] });
    expect([selfReview.status, selfReview.json.detail]).toEqual([400, 'Pull request submitter can not be reviewer']);
    expect((await openRequest(server, { ...base, sourceBranch: 'feature', reviewerIds: [999] })).status).toBe(400);
    expect((await openRequest(server, { ...base, sourceBranch: 'feature', bogus: 1 })).status).toBe(400);
    const blank = await openRequest(server, { ...base, sourceBranch: 'feature', title: '  ' });
    expect(blank.status).toBe(400);

    const id = await open(
      'feature',
      { title: 'x'.repeat(300), description: 'Please review @bob', reviewerIds: [bob.id], assigneeIds: [writer.id] },
      reader.auth,
    );
    const dup = await openRequest(server, { ...base, sourceBranch: 'feature' });
    expect([dup.status, dup.json.detail]).toEqual([409, 'Another pull request already open for this change']);
    const pr = await get(id);
    expect(Object.keys(pr)).toEqual([
      'id',
      'status',
      'title',
      'description',
      'submitterId',
      'numberScopeId',
      'targetProjectId',
      'targetBranch',
      'sourceProjectId',
      'sourceBranch',
      'baseCommitHash',
      'buildCommitHash',
      'submitDate',
      'mergeStrategy',
      'uuid',
      'number',
      'commentCount',
      'lastActivity',
      'codeCommentsUpdateDate',
      'checkError',
    ]);
    expect(pr).toMatchObject({
      status: 'OPEN',
      submitterId: reader.id,
      numberScopeId: repo.id,
      mergeStrategy: 'CREATE_MERGE_COMMIT',
      commentCount: 0,
      lastActivity: { userId: reader.id, description: 'opened' },
    });
    expect(pr.title).toHaveLength(255);
    expect(pr.title.endsWith('...')).toBe(true);
    expect(pr.submitDate).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
    const reviews = (await server.call('GET', `/pulls/${id}/reviews`)).json;
    expect(reviews).toEqual([expect.objectContaining({ userId: bob.id, requestId: id, status: 'PENDING' })]);
    expect((await server.call('GET', `/pulls/${id}/assignments`)).json).toEqual([expect.objectContaining({ userId: writer.id, requestId: id })]);
    const watchers = (await server.call('GET', `/pulls/${id}/watches`)).json.map((w: { userId: number; watching: boolean }) => [w.userId, w.watching]);
    expect(watchers.sort()).toEqual(
      [
        [bob.id, true],
        [reader.id, true],
        [writer.id, true],
      ].sort(),
    );
    const updates = (await server.call('GET', `/pulls/${id}/updates`)).json;
    expect(updates).toEqual([expect.objectContaining({ requestId: id, headCommitHash: head })]);
    expect(await refs(repo.id, `refs/pulls/${pr.number}/`)).toEqual(
      expect.arrayContaining([`refs/pulls/${pr.number}/base ${pr.baseCommitHash}`, `refs/pulls/${pr.number}/head ${head}`]),
    );
    expect(await refs(repo.id, `refs/updates/${updates[0].id}`)).toEqual([`refs/updates/${updates[0].id} ${head}`]);
    const mentioned = (await server.call('GET', `/pulls?query=${encodeURIComponent('mentioned "bob"')}`)).json.map((p: { id: number }) => p.id);
    expect(mentioned).toEqual([id]);
    expect((await server.call('GET', `/pulls/${id}`, { auth: outsider.auth })).status).toBe(404);
    expect((await server.call('GET', '/pulls/99999')).status).toBe(404);
    expect((await server.call('GET', `/pulls/${id}/current-builds`)).json).toEqual([]);
    expect((await server.call('GET', `/pulls/${id}/labels`)).json).toEqual([]);
    expect((await server.call('GET', `/pulls/${id}/fixed-issue-ids`)).json).toEqual([]);
  });

  it('the same change opened concurrently: exactly one request', async () => {
    await repo.commitOn('racing-open', { 'ro.txt': 'ro\n' }, 'racing open');
    const body = { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'racing-open' };
    const results = await Promise.all([0, 1, 2, 3].map(() => openRequest(server, body)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
    const open = (await server.call('GET', `/pulls?query=${encodeURIComponent('open and "Source Branch" is "racing-open"')}`)).json;
    expect(open).toHaveLength(1);
  });

  it('title, description and merge strategy: raw text bodies, changes recorded, canModify enforced', async () => {
    await repo.commitOn('edits', { 'e.txt': 'e\n' }, 'add e');
    const id = await open('edits', { title: 'Before' }, writer.auth);
    expect((await server.call('POST', `/pulls/${id}/title`, { text: 'Hijack', auth: bob.auth })).status).toBe(403);
    expect((await server.call('POST', `/pulls/${id}/title`, { text: 'Hijack', auth: null })).status).toBe(401);
    const empty = await server.call('POST', `/pulls/${id}/title`, { text: '' });
    expect([empty.status, empty.json.detail]).toEqual([400, 'Title is required']);
    expect((await server.call('POST', `/pulls/${id}/title`, { text: 'After: "quoted"', auth: writer.auth })).status).toBe(200);
    expect((await get(id)).title).toBe('After: "quoted"');
    expect((await server.call('POST', `/pulls/${id}/title`, { text: '"Decoded"', auth: writer.auth })).status).toBe(200);
    expect((await get(id)).title).toBe('Decoded');
    expect((await server.call('POST', `/pulls/${id}/title`, { text: 'Decoded', auth: writer.auth })).status).toBe(200);
    const changes = (await server.call('GET', `/pulls/${id}/changes`)).json;
    expect(changes.map((c: { data: unknown }) => c.data)).toEqual([
      { '@type': 'PullRequestTitleChangeData', oldTitle: 'Before', newTitle: 'After: "quoted"' },
      { '@type': 'PullRequestTitleChangeData', oldTitle: 'After: "quoted"', newTitle: 'Decoded' },
    ]);
    expect((await get(id)).lastActivity).toMatchObject({ userId: writer.id, description: 'changed title' });

    expect((await server.call('POST', `/pulls/${id}/description`, { text: 'Now with **markdown** for @bob' })).status).toBe(200);
    const pr = await get(id);
    expect(pr.description).toBe('Now with **markdown** for @bob');
    expect(pr.lastActivity.description).toBe('changed title');
    const tooLong = await server.call('POST', `/pulls/${id}/description`, { text: 'x'.repeat(100_001) });
    expect([tooLong.status, tooLong.json.detail]).toEqual([400, 'Description too long']);
    expect((await server.call('GET', `/pulls/${id}/watches`)).json.some((w: { userId: number }) => w.userId === bob.id)).toBe(true);

    const strategy = await server.call('POST', `/pulls/${id}/merge-strategy`, { body: 'SQUASH_SOURCE_BRANCH_COMMITS' });
    expect(strategy.status, strategy.text).toBe(200);
    expect((await server.call('POST', `/pulls/${id}/merge-strategy`, { body: 'SQUASH_SOURCE_BRANCH_COMMITS' })).status).toBe(200);
    expect((await server.call('POST', `/pulls/${id}/merge-strategy`, { body: 'FAST' })).status).toBe(400);
    expect((await server.call('POST', `/pulls/${id}/merge-strategy`, { text: '' })).status).toBe(400);
    expect((await get(id)).mergeStrategy).toBe('SQUASH_SOURCE_BRANCH_COMMITS');
    const strategyChanges = (await server.call('GET', `/pulls/${id}/changes`)).json.filter(
      (c: { data: { '@type': string } }) => c.data['@type'] === 'PullRequestMergeStrategyChangeData',
    );
    expect(strategyChanges.map((c: { data: unknown }) => c.data)).toEqual([
      { '@type': 'PullRequestMergeStrategyChangeData', oldStrategy: 'CREATE_MERGE_COMMIT', newStrategy: 'SQUASH_SOURCE_BRANCH_COMMITS' },
      { '@type': 'PullRequestMergeStrategyChangeData', oldStrategy: 'SQUASH_SOURCE_BRANCH_COMMITS', newStrategy: 'SQUASH_SOURCE_BRANCH_COMMITS' },
    ]);
    const preview = await eventually(async () => {
      const res = await server.call('GET', `/pulls/${id}/merge-preview`);
      return res.json?.mergeStrategy === 'SQUASH_SOURCE_BRANCH_COMMITS' ? res.json : null;
    });
    expect(Object.keys(preview)).toEqual(['targetHeadCommitHash', 'headCommitHash', 'mergeStrategy', 'mergeCommitHash']);
  });

  it('discard and reopen with notes stored as comments, and every checkReopen rule', async () => {
    await repo.commitOn('life', { 'l.txt': 'l\n' }, 'add l');
    const id = await open('life', {}, writer.auth);
    expect((await server.call('POST', `/pulls/${id}/discard`, { text: 'no', auth: bob.auth })).status).toBe(403);
    expect((await server.call('POST', `/pulls/${id}/discard`, { text: 'Not now', auth: writer.auth })).status).toBe(200);
    let pr = await get(id);
    expect(pr).toMatchObject({ status: 'DISCARDED', commentCount: 1, lastActivity: { userId: writer.id, description: 'discarded' } });
    expect((await server.call('GET', `/pulls/${id}/comments`)).json).toEqual([
      expect.objectContaining({ userId: writer.id, content: 'Not now', requestId: id }),
    ]);
    const again = await server.call('POST', `/pulls/${id}/discard`, { text: '' });
    expect([again.status, again.json.detail]).toEqual([409, 'Pull request already closed']);
    const mergeClosed = await server.call('POST', `/pulls/${id}/merge`, { text: '' });
    expect([mergeClosed.status, mergeClosed.json.detail]).toEqual([409, 'Pull request already closed']);
    expect(
      (await server.call('GET', `/pulls?query=${encodeURIComponent('"Close Date" is since "yesterday"')}`)).json.map((p: { id: number }) => p.id),
    ).toContain(id);

    const other = await open('life', { title: 'Second try' }, writer.auth);
    const blocked = await server.call('POST', `/pulls/${id}/reopen`, { text: '' });
    expect([blocked.status, blocked.json.detail]).toEqual([409, 'Another pull request already open for this change']);
    expect((await server.call('POST', `/pulls/${other}/discard`, { text: '' })).status).toBe(200);

    expect((await server.call('POST', `/pulls/${id}/reopen`, { text: 'Back', auth: writer.auth })).status).toBe(200);
    pr = await get(id);
    expect(pr).toMatchObject({ status: 'OPEN', commentCount: 2, lastActivity: { description: 'reopened' } });
    const opened = await server.call('POST', `/pulls/${id}/reopen`, { text: '' });
    expect([opened.status, opened.json.detail]).toEqual([409, 'Pull request already opened']);
    expect(await changeTypes(id)).toEqual(['PullRequestDiscardData', 'PullRequestReopenData']);

    expect((await server.call('POST', `/pulls/${id}/discard`, { text: '' })).status).toBe(200);
    await git(repo.work, ['push', '-q', repo.remote, ':life']);
    const noSource = await server.call('POST', `/pulls/${id}/reopen`, { text: '' });
    expect([noSource.status, noSource.json.detail]).toEqual([409, 'Source branch no longer exists']);
    await repo.commitOn('life', { 'l.txt': 'l\n' }, 'again', 'main');
    await git(repo.work, ['push', '-q', '-f', repo.remote, 'life:main']);
    const inTarget = await server.call('POST', `/pulls/${id}/reopen`, { text: '' });
    expect([inTarget.status, inTarget.json.detail]).toEqual([409, 'Source branch already merged into target branch']);

    await repo.commitOn('to-gone', { 'g.txt': 'g\n' }, 'add g');
    await repo.commitOn('gone-target', { 'h.txt': 'h\n' }, 'add h', 'main');
    const gone = (await openRequest(server, { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'gone-target', sourceBranch: 'to-gone' })).json;
    expect((await server.call('POST', `/pulls/${gone}/discard`, { text: '' })).status).toBe(200);
    await git(repo.work, ['push', '-q', repo.remote, ':gone-target']);
    const noTarget = await server.call('POST', `/pulls/${gone}/reopen`, { text: '' });
    expect([noTarget.status, noTarget.json.detail]).toEqual([409, 'Target branch no longer exists']);
  });

  it('pushes add updates with activity; deleting the source branch discards; reaching the target marks merged', async () => {
    await repo.commitOn('pushy', { 'p.txt': 'p1\n' }, 'p1');
    const id = await open('pushy', {}, writer.auth);
    const adminCommitter = { GIT_COMMITTER_NAME: 'admin', GIT_COMMITTER_EMAIL: ADMIN.email };
    await git(repo.work, ['checkout', '-q', 'pushy']);
    await git(repo.work, ['commit', '-q', '--allow-empty', '-m', 'p2'], adminCommitter);
    await git(repo.work, ['push', '-q', repo.remote, 'pushy']);
    const head = (await git(repo.work, ['rev-parse', 'HEAD'])).trim();
    const updates = await eventually(async () => {
      const res = (await server.call('GET', `/pulls/${id}/updates`)).json;
      return res.length === 2 ? res : null;
    });
    expect(updates[0].id).toBeLessThan(updates[1].id);
    expect(updates[1].headCommitHash).toBe(head);
    expect((await get(id)).lastActivity).toMatchObject({ userId: 1, description: 'added commits' });
    const number = (await get(id)).number;
    expect(await refs(repo.id, `refs/pulls/${number}/head`)).toEqual([`refs/pulls/${number}/head ${head}`]);
    await repo.commitOn('pushy', { 'p.txt': 'p3\n' }, 'p3');
    await eventually(async () => (await server.call('GET', `/pulls/${id}/updates`)).json.length === 3);
    expect((await get(id)).lastActivity).toMatchObject({ userId: null, description: 'Commits added' });
    const includes = (await server.call('GET', `/pulls?query=${encodeURIComponent(`includes commit "ops:${head.slice(0, 10)}"`)}`)).json.map(
      (p: { id: number }) => p.id,
    );
    expect(includes).toEqual([id]);

    await git(repo.work, ['push', '-q', repo.remote, ':pushy']);
    const discarded = await eventually(async () => ((await get(id)).status === 'DISCARDED' ? get(id) : null));
    expect(discarded.lastActivity.description).toBe('discarded');
    expect(await changeTypes(id)).toEqual(['PullRequestDiscardData']);
  });

  it('merge needs write code and approvals; reviews drive approval; source branch delete and restore', async () => {
    await repo.commitOn('reviewed', { 'r.txt': 'r\n' }, 'add r');
    const id = await open('reviewed', { reviewerIds: [bob.id] }, reader.auth);
    const asReader = await server.call('POST', `/pulls/${id}/merge`, { text: '', auth: reader.auth });
    expect(asReader.status).toBe(403);
    const waiting = await server.call('POST', `/pulls/${id}/merge`, { text: '', auth: writer.auth });
    expect([waiting.status, waiting.json.detail, waiting.json.code]).toEqual([409, 'Waiting for approvals', 'GITLOOM_ERR_MERGE_REVIEW_REQUIRED']);
    const notMerged = await server.call('POST', `/pulls/${id}/delete-source-branch`, { text: '' });
    expect([notMerged.status, notMerged.json.detail]).toEqual([409, 'Pull request not merged']);
    const restoreOpen = await server.call('POST', `/pulls/${id}/restore-source-branch`, { text: '' });
    expect([restoreOpen.status, restoreOpen.json.detail]).toEqual([409, 'Pull request is open']);
    const review = (await server.call('GET', `/pulls/${id}/reviews`)).json[0];
    expect((await server.call('POST', `/pull-request-reviews/${review.id}`, { body: { status: 'APPROVED' }, auth: bob.auth })).status).toBe(200);
    expect((await get(id)).lastActivity).toMatchObject({ userId: bob.id, description: 'approved' });
    const merged = await server.call('POST', `/pulls/${id}/merge`, { text: 'Reviewed merge', auth: writer.auth });
    expect(merged.status, merged.text).toBe(200);
    expect(await changeTypes(id)).toEqual(['PullRequestApproveData', 'PullRequestMergeData']);

    const deny = await server.call('POST', `/pulls/${id}/delete-source-branch`, { text: '', auth: reader.auth });
    expect(deny.status).toBe(403);
    expect((await server.call('POST', `/pulls/${id}/delete-source-branch`, { text: 'Cleaning up' })).status).toBe(200);
    expect(await repo.head('reviewed')).toBe('');
    expect((await get(id)).commentCount).toBe(1);
    const gone = await server.call('POST', `/pulls/${id}/delete-source-branch`, { text: '' });
    expect([gone.status, gone.json.detail]).toEqual([409, 'Source branch no longer exists']);
    const head = (await server.call('GET', `/pulls/${id}/updates`)).json.at(-1).headCommitHash;
    expect((await server.call('POST', `/pulls/${id}/restore-source-branch`, { text: 'Restored' })).status).toBe(200);
    expect(await repo.head('reviewed')).toBe(head);
    const exists = await server.call('POST', `/pulls/${id}/restore-source-branch`, { text: '' });
    expect([exists.status, exists.json.detail]).toEqual([409, 'Source branch already exists']);
    expect((await changeTypes(id)).slice(-2)).toEqual(['PullRequestSourceBranchDeleteData', 'PullRequestSourceBranchRestoreData']);

    await repo.commitOn('reviewed', { 'r.txt': 'r2\n' }, 'moved on');
    const moved = await server.call('POST', `/pulls/${id}/delete-source-branch`, { text: '' });
    expect([moved.status, moved.json.detail]).toEqual([409, 'Change not updated yet']);
  });

  it('delete source branch: default branch and branches other requests target', async () => {
    await repo.commitOn('release', { 'rel.txt': 'rel\n' }, 'release base', 'main');
    await repo.commitOn('main', { 'fix.txt': 'fix\n' }, 'fix on main');
    const id = (await openRequest(server, { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'release', sourceBranch: 'main' })).json;
    expect((await server.call('POST', `/pulls/${id}/merge`, { text: '' })).status).toBe(200);
    const isDefault = await server.call('POST', `/pulls/${id}/delete-source-branch`, { text: '' });
    expect([isDefault.status, isDefault.json.detail]).toEqual([409, 'Source branch is default branch']);

    await repo.commitOn('topic', { 't.txt': 't\n' }, 'topic');
    const merged = await open('topic');
    expect((await server.call('POST', `/pulls/${merged}/merge`, { text: '' })).status).toBe(200);
    await repo.commitOn('onto-topic', { 'o.txt': 'o\n' }, 'onto topic', 'topic');
    expect((await openRequest(server, { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'topic', sourceBranch: 'onto-topic' })).status).toBe(
      200,
    );
    const targeted = await server.call('POST', `/pulls/${merged}/delete-source-branch`, { text: '' });
    expect([targeted.status, targeted.json.detail]).toEqual([409, 'Some other pull requests are opening to this branch']);
  });

  it('a request whose head reaches the target is marked merged without a preview (204)', async () => {
    await repo.commitOn('auto', { 'auto.txt': 'auto\n' }, 'auto');
    const id = await open('auto');
    await git(repo.work, ['push', '-q', repo.remote, 'auto:main']);
    const pr = await eventually(async () => ((await get(id)).status === 'MERGED' ? get(id) : null));
    expect(pr.lastActivity).toMatchObject({ userId: null, description: 'merged pull request' });
    const changes = (await server.call('GET', `/pulls/${id}/changes`)).json;
    expect(changes).toEqual([expect.objectContaining({ userId: null, data: { '@type': 'PullRequestMergeData', reason: 'merged pull request' } })]);
    const preview = await server.call('GET', `/pulls/${id}/merge-preview`);
    expect([preview.status, preview.text]).toEqual([204, '']);
    const noPreview = await server.call('POST', `/pulls/${id}/delete-source-branch`, { text: '' });
    expect([noPreview.status, noPreview.json.detail]).toEqual([409, 'Merge preview not calculated yet']);
  });

  it('delete: pull request managers only; removes rows and refs', async () => {
    await repo.commitOn('doomed', { 'd.txt': 'd\n' }, 'doomed');
    const id = await open('doomed', {}, writer.auth);
    const pr = await get(id);
    const updates = (await server.call('GET', `/pulls/${id}/updates`)).json;
    expect((await server.call('DELETE', `/pulls/${id}`, { auth: writer.auth })).status).toBe(403);
    expect((await server.call('DELETE', `/pulls/${id}`)).status).toBe(200);
    expect((await server.call('GET', `/pulls/${id}`)).status).toBe(404);
    expect(await refs(repo.id, `refs/pulls/${pr.number}/`)).toEqual([]);
    expect(await refs(repo.id, `refs/updates/${updates[0].id}`)).toEqual([]);
  });

  it('cross-project requests from a fork keep refs/pulls/N/* in the target repository', async () => {
    const fork = await givenRepo(server, 'ops-fork', { forkOf: repo });
    const head = await fork.commitOn('forked', { 'f.txt': 'f\n' }, 'from the fork');
    const res = await openRequest(server, {
      targetProjectId: repo.id,
      sourceProjectId: fork.id,
      targetBranch: 'main',
      sourceBranch: 'forked',
      title: 'From fork',
    });
    expect(res.status, res.text).toBe(200);
    const id = res.json as number;
    const pr = await get(id);
    expect(pr).toMatchObject({ sourceProjectId: fork.id, numberScopeId: repo.id });
    expect(await refs(repo.id, `refs/pulls/${pr.number}/head`)).toEqual([`refs/pulls/${pr.number}/head ${head}`]);
    const next = await fork.commitOn('forked', { 'f.txt': 'f2\n' }, 'more from the fork');
    await eventually(async () => (await refs(repo.id, `refs/pulls/${pr.number}/head`))[0] === `refs/pulls/${pr.number}/head ${next}`);
    // the staging ref goes once the update is recorded
    await eventually(async () => (await refs(repo.id, 'refs/pulls-staging/')).length === 0);
    const preview = (await server.call('GET', `/pulls/${id}/merge-preview`)).json;
    expect(preview.headCommitHash).toBe(next);
    expect(await refs(repo.id, `refs/pulls/${pr.number}/merge`)).toEqual([`refs/pulls/${pr.number}/merge ${preview.mergeCommitHash}`]);
    expect((await server.call('POST', `/pulls/${id}/merge`, { text: 'Merge from fork' })).status).toBe(200);
    const merged = await repo.head('main');
    expect((await git(bare(repo.id), ['rev-list', '--parents', '-1', merged])).trim().split(' ').slice(1)).toContain(next);
  });

  it('required reviewers of branch protection are added on open and reset on push', async () => {
    const project = (await server.call('GET', `/projects/${repo.id}/setting`)).json;
    const saved = await server.call('POST', `/projects/${repo.id}/setting`, {
      body: { ...project, branchProtections: [{ branches: 'protected', reviewRequirement: 'user(bob)', preventCreation: false, preventForcedPush: false }] },
    });
    expect(saved.status, saved.text).toBe(200);
    await repo.commitOn('protected', { 'pr.txt': 'base\n' }, 'protected base', 'main');
    await repo.commitOn('guarded', { 'gd.txt': 'g\n' }, 'guarded', 'protected');
    const id = (
      await openRequest(server, { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'protected', sourceBranch: 'guarded' }, writer.auth)
    ).json;
    const [review] = (await server.call('GET', `/pulls/${id}/reviews`)).json;
    expect(review).toMatchObject({ userId: bob.id, status: 'PENDING' });
    expect((await server.call('POST', `/pull-request-reviews/${review.id}`, { body: { status: 'APPROVED' }, auth: bob.auth })).status).toBe(200);
    await repo.commitOn('guarded', { 'gd.txt': 'g2\n' }, 'guarded again');
    const reset = await eventually(async () => {
      const [r] = (await server.call('GET', `/pulls/${id}/reviews`)).json;
      return r.status === 'PENDING' ? r : null;
    });
    expect(reset).toMatchObject({ userId: bob.id, status: 'PENDING' });
  });
});
