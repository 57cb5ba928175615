import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git, startTestServer, type TestServer } from '../helpers/server.js';
import { eventually, givenRepo, removeWorkTrees, type Repo, runJobOnCommit } from '../helpers/fixtures.js';

const ZERO = '0'.repeat(40);
const SPEC = `version: 25
jobs:
- name: Quick
  steps:
  - !CommandStep
    name: quick
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo quick
`;

type Data = Record<string, unknown> & { '@type': string };

/**
 * "Referenced from" change records (docs/compatibility.md#fixed-issue-references, docs/compatibility.md#pull-requests-sub-entities), the fixed
 * issue index of pull requests (docs/compatibility.md#pull-requests-fixed-issues) and pull request deletion removing its builds
 * (docs/compatibility.md#pull-requests-lifecycle "Delete").
 */
describe('references between issues, pull requests, code comments and commits', () => {
  let server: TestServer;
  let repo: Repo;
  let other: Repo;
  const issues: Record<string, number> = {};
  let pr1: number;
  let pr2: number;
  let fixingCommit: Data;

  const referenceChanges = async (kind: 'issues' | 'pulls', id: number): Promise<Data[]> => {
    const res = await server.call('GET', `/${kind}/${id}/changes`);
    expect(res.status, res.text).toBe(200);
    return (res.json as { data: Data }[]).map((c) => c.data).filter((d) => d['@type'].includes('ReferencedFrom'));
  };
  const settled = () => server.settled();
  const newIssue = async (projectId: number, title: string, description?: string): Promise<number> => {
    const res = await server.call('POST', '/issues', { body: { projectId, title, description } });
    expect(res.status, res.text).toBe(200);
    return res.json;
  };
  const openPull = async (sourceBranch: string, title: string, description?: string): Promise<number> => {
    const res = await server.call('POST', '/pulls', {
      body: { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch, title, description },
    });
    expect(res.status, res.text).toBe(200);
    return res.json;
  };
  const fixedIssueIds = async (requestId: number): Promise<number[]> => {
    const res = await server.call('GET', `/pulls/${requestId}/fixed-issue-ids`);
    expect(res.status, res.text).toBe(200);
    return [...res.json].sort((a: number, b: number) => a - b);
  };
  const query = async (kind: 'issues' | 'pulls', text: string): Promise<number[]> => {
    const res = await server.call('GET', `/${kind}?query=${encodeURIComponent(text)}`);
    expect(res.status, res.text).toBe(200);
    return (res.json as { id: number }[]).map((x) => x.id).sort((a, b) => a - b);
  };

  beforeAll(async () => {
    server = await startTestServer();
    repo = await givenRepo(server, 'refs', { files: { 'README.md': '# refs\n', '.onedev-buildspec.yml': SPEC } });
    other = await givenRepo(server, 'other');
    issues.a = await newIssue(repo.id, 'A'); // refs#1
    issues.b = await newIssue(repo.id, 'B'); // refs#2
    issues.otherA = await newIssue(other.id, 'Other A'); // other#1
    const fixing = await repo.commitOn('feat/a', { 'a.txt': 'a\n' }, 'Fix the parser\n\nfixes #1');
    fixingCommit = { '@type': 'IssueReferencedFromCommitData', projectId: repo.id, commitHash: fixing };
    pr1 = await openPull('feat/a', 'Parser'); // refs PR #1
    await repo.commitOn('feat/b', { 'b.txt': 'b\n' }, 'Other work');
    pr2 = await openPull('feat/b', 'Other'); // refs PR #2
    await settled();
  });
  afterAll(async () => {
    await server?.close();
    await removeWorkTrees();
  });

  it('issues: title, description, comments and state notes reference once per pair, as minor changes', async () => {
    const before = (await server.call('GET', `/issues/${issues.a}`)).json.lastActivity;
    // refs#3 references itself, code and links are skipped, #4abc and unknown numbers are no references
    issues.d = await newIssue(
      repo.id,
      'Follow-up of #1',
      'See #1, Other#1 and pr #1; itself #3; not `#2` nor [#2](http://example.com) nor <code>#2</code> nor <a href="x">#2</a>, not #4abc, nor issue #999 or build #1',
    );
    expect((await server.call('GET', `/issues/${issues.d}`)).json.number).toBe(3);
    const fromD = { '@type': 'IssueReferencedFromIssueData', issueId: issues.d };
    expect(await referenceChanges('issues', issues.a)).toEqual([fixingCommit, fromD]);
    expect(await referenceChanges('issues', issues.otherA)).toEqual([fromD]);
    expect(await referenceChanges('issues', issues.b)).toEqual([]);
    expect(await referenceChanges('issues', issues.d)).toEqual([]);
    expect(await referenceChanges('pulls', pr1)).toEqual([{ '@type': 'PullRequestReferencedFromIssueData', issueId: issues.d }]);
    const change = (await server.call('GET', `/issues/${issues.a}/changes`)).json.at(-1);
    expect(change.userId).toBe(1);
    expect((await server.call('GET', `/issues/${issues.a}`)).json.lastActivity).toEqual(before);

    // re-saving or repeating a reference adds nothing; new references are recorded
    expect((await server.call('POST', `/issues/${issues.d}/description`, { text: 'still about #1 and refs#1' })).status).toBe(200);
    expect((await server.call('POST', `/issues/${issues.d}/title`, { text: 'About issue #2' })).status).toBe(200);
    expect(await referenceChanges('issues', issues.a)).toEqual([fixingCommit, fromD]);
    expect(await referenceChanges('issues', issues.b)).toEqual([fromD]);

    const comment = await server.call('POST', '/issue-comments', { body: { issueId: issues.b, content: 'duplicate of #1?' } });
    expect(comment.status, comment.text).toBe(200);
    const fromB = { '@type': 'IssueReferencedFromIssueData', issueId: issues.b };
    expect(await referenceChanges('issues', issues.a)).toEqual([fixingCommit, fromD, fromB]);
    const edited = await server.call('POST', `/issue-comments/${comment.json}`, { body: { content: 'duplicate of #1, see pull request #2' } });
    expect(edited.status, edited.text).toBe(200);
    expect(await referenceChanges('issues', issues.a)).toEqual([fixingCommit, fromD, fromB]);
    expect(await referenceChanges('pulls', pr2)).toEqual([{ '@type': 'PullRequestReferencedFromIssueData', issueId: issues.b }]);

    const closed = await server.call('POST', `/issues/${issues.b}/state-transitions`, { body: { state: 'Closed', comment: 'moved to other#1' } });
    expect(closed.status, closed.text).toBe(200);
    expect(await referenceChanges('issues', issues.otherA)).toEqual([fromD, fromB]);
  });

  it('pull requests: description, title and comments reference issues and other requests', async () => {
    const activity = (await server.call('GET', `/pulls/${pr1}`)).json.lastActivity;
    expect((await server.call('POST', `/pulls/${pr2}/description`, { text: 'Needs #2 and pull request #1; this is pr #2' })).status).toBe(200);
    expect(await referenceChanges('issues', issues.b)).toContainEqual({ '@type': 'IssueReferencedFromPullRequestData', requestId: pr2 });
    const fromPr2 = { '@type': 'PullRequestReferencedFromPullRequestData', requestId: pr2 };
    expect(await referenceChanges('pulls', pr1)).toEqual([{ '@type': 'PullRequestReferencedFromIssueData', issueId: issues.d }, fromPr2]);
    expect(await referenceChanges('pulls', pr2)).not.toContainEqual(fromPr2);
    expect((await server.call('GET', `/pulls/${pr1}`)).json.lastActivity).toEqual(activity);
    expect((await server.call('POST', `/pulls/${pr2}/title`, { text: 'Other (pr #1)' })).status).toBe(200);
    expect((await referenceChanges('pulls', pr1)).filter((d) => d.requestId === pr2)).toHaveLength(1);

    const comment = await server.call('POST', '/pull-request-comments', { body: { requestId: pr1, content: 'conflicts with pr #2' } });
    expect(comment.status, comment.text).toBe(200);
    const fromPr1 = { '@type': 'PullRequestReferencedFromPullRequestData', requestId: pr1 };
    expect(await referenceChanges('pulls', pr2)).toContainEqual(fromPr1);
    expect((await server.call('POST', `/pull-request-comments/${comment.json}`, { body: { content: 'conflicts with pr #2 and #2' } })).status).toBe(200);
    expect((await referenceChanges('pulls', pr2)).filter((d) => d.requestId === pr1)).toHaveLength(1);
    expect(await referenceChanges('issues', issues.b)).toContainEqual({ '@type': 'IssueReferencedFromPullRequestData', requestId: pr1 });
  });

  it('code comments and their replies reference as the code comment; their own pull request is skipped', async () => {
    const head = await repo.head('main');
    const created = await server.call('POST', '/code-comments', {
      body: {
        projectId: repo.id,
        content: 'Broken since #1, see pr #1',
        mark: { commitHash: head, path: 'README.md', range: { fromRow: 0, fromColumn: 0, toRow: 0, toColumn: 2 } },
        compareContext: { pullRequestId: pr1, oldCommitHash: ZERO, newCommitHash: head },
      },
    });
    expect(created.status, created.text).toBe(200);
    const fromComment = (type: string) => ({ '@type': type, commentId: created.json });
    expect(await referenceChanges('issues', issues.a)).toContainEqual(fromComment('IssueReferencedFromCodeCommentData'));
    expect(await referenceChanges('pulls', pr1)).not.toContainEqual(fromComment('PullRequestReferencedFromCodeCommentData'));
    const reply = await server.call('POST', '/code-comment-replies', {
      body: { commentId: created.json, content: 'maybe pr #2', compareContext: { oldCommitHash: ZERO, newCommitHash: head } },
    });
    expect(reply.status, reply.text).toBe(200);
    expect(await referenceChanges('pulls', pr2)).toContainEqual(fromComment('PullRequestReferencedFromCodeCommentData'));
    expect((await server.call('POST', `/code-comment-replies/${reply.json}`, { body: { content: 'surely pr #2' } })).status).toBe(200);
    expect((await referenceChanges('pulls', pr2)).filter((d) => d.commentId === created.json)).toHaveLength(1);
  });

  it('pushed commit messages reference as the commit, once however often the commit is pushed', async () => {
    const hash = await repo.commitOn('topic', { 't.txt': 't\n' }, 'Refactor\n\nrelated to #2 and pr #1, other#1');
    await settled();
    const fromCommit = (type: string) => ({ '@type': type, projectId: repo.id, commitHash: hash });
    expect(await referenceChanges('issues', issues.b)).toContainEqual(fromCommit('IssueReferencedFromCommitData'));
    expect(await referenceChanges('issues', issues.otherA)).toContainEqual(fromCommit('IssueReferencedFromCommitData'));
    expect(await referenceChanges('pulls', pr1)).toContainEqual(fromCommit('PullRequestReferencedFromCommitData'));
    await git(repo.work, ['push', '-q', repo.remote, 'topic:topic-copy']);
    await settled();
    expect((await referenceChanges('issues', issues.b)).filter((d) => d.commitHash === hash)).toHaveLength(1);
    expect((await referenceChanges('pulls', pr1)).filter((d) => d.commitHash === hash)).toHaveLength(1);
  });

  it('keeps the fixed issue index with pushes, title and description changes', async () => {
    const rows = () =>
      server.server.services.db
        .selectFrom('pullRequestFixedIssues')
        .select(['origin', 'projectId', 'number'])
        .where('requestId', '=', pr1)
        .orderBy('origin')
        .orderBy('number')
        .execute();
    expect(await fixedIssueIds(pr1)).toEqual([issues.a]);
    expect(await rows()).toEqual([{ origin: 'COMMIT', projectId: repo.id, number: 1 }]);

    // a push to the source branch adds the new commits' references
    await repo.commitOn('feat/a', { 'a2.txt': 'a2\n' }, 'More parser work\n\ncloses #2');
    expect(await eventually(async () => (await fixedIssueIds(pr1)).length === 2)).toBe(true);
    expect(await fixedIssueIds(pr1)).toEqual([issues.a, issues.b].sort((x, y) => x - y));
    expect(await query('pulls', 'includes issue "refs#2"')).toEqual([pr1]);
    expect((await server.call('GET', `/issues/${issues.b}/pulls`)).json.map((p: { id: number }) => p.id)).toEqual([pr1]);

    // a description reference to an issue created later counts once the issue exists
    const next = (await server.call('GET', `/issues/${issues.d}`)).json.number + 1;
    expect((await server.call('POST', `/pulls/${pr1}/description`, { text: `Also resolves #${next}` })).status).toBe(200);
    expect(await fixedIssueIds(pr1)).toEqual([issues.a, issues.b].sort((x, y) => x - y));
    issues.e = await newIssue(repo.id, 'E');
    expect((await server.call('GET', `/issues/${issues.e}`)).json.number).toBe(next);
    expect(await fixedIssueIds(pr1)).toEqual([issues.a, issues.b, issues.e].sort((x, y) => x - y));
    expect(await query('issues', 'fixed in pull request "refs#1"')).toEqual([issues.a, issues.b, issues.e].sort((x, y) => x - y));
    expect(await query('pulls', `includes issue "refs#${next}"`)).toEqual([pr1]);

    // a description change replaces the description's references; the title has its own
    expect((await server.call('POST', `/pulls/${pr1}/description`, { text: 'nothing fixed here' })).status).toBe(200);
    expect(await fixedIssueIds(pr1)).toEqual([issues.a, issues.b].sort((x, y) => x - y));
    expect(await query('pulls', `includes issue "refs#${next}"`)).toEqual([]);
    expect((await server.call('POST', `/pulls/${pr1}/title`, { text: `Parser (#${next})` })).status).toBe(200);
    expect(await fixedIssueIds(pr1)).toEqual([issues.a, issues.b, issues.e].sort((x, y) => x - y));
    expect(await rows()).toEqual([
      { origin: 'COMMIT', projectId: repo.id, number: 1 },
      { origin: 'COMMIT', projectId: repo.id, number: 2 },
      { origin: 'TITLE', projectId: repo.id, number: next },
    ]);
    expect(await fixedIssueIds(pr2)).toEqual([]);

    // a request from before the index (in the migration's backlog) is indexed from its repository on first use
    const db = server.server.services.db;
    await db.deleteFrom('pullRequestFixedIssues').where('requestId', '=', pr1).execute();
    await db.insertInto('pullRequestFixedIssueBacklog').values({ requestId: pr1 }).execute();
    expect(await query('pulls', 'includes issue "refs#2"')).toEqual([pr1]);
    expect(await fixedIssueIds(pr1)).toEqual([issues.a, issues.b, issues.e].sort((x, y) => x - y));
    expect(await rows()).toEqual([
      { origin: 'COMMIT', projectId: repo.id, number: 1 },
      { origin: 'COMMIT', projectId: repo.id, number: 2 },
      { origin: 'TITLE', projectId: repo.id, number: next },
    ]);
    expect(await db.selectFrom('pullRequestFixedIssueBacklog').selectAll().execute()).toEqual([]);
  });

  it('deleting a pull request deletes its builds and their storage', async () => {
    const run = await eventually(async () => {
      const res = await server.call('POST', '/job-runs', {
        body: { '@type': 'JobRunOnPullRequest', pullRequestId: pr2, jobName: 'Quick', params: {}, reason: 'test' },
      });
      return res.status === 200 ? (res.json as number) : null;
    });
    const build = await eventually(async () => {
      const b = (await server.call('GET', `/builds/${run}`)).json;
      return ['SUCCESSFUL', 'FAILED'].includes(b?.status) ? b : null;
    });
    expect(build.requestId).toBe(pr2);
    const dir = path.join(server.dataDir, 'builds', String(repo.id), String(build.number));
    await expect(fs.stat(dir)).resolves.toBeTruthy();
    const commitBuild = await runJobOnCommit(server, { projectId: repo.id, commitHash: await repo.head('main'), jobName: 'Quick', reason: 'kept' });
    expect(commitBuild.status, commitBuild.text).toBe(200);

    expect((await server.call('DELETE', `/pulls/${pr2}`)).status).toBe(200);
    expect((await server.call('GET', `/pulls/${pr2}`)).status).toBe(404);
    expect((await server.call('GET', `/builds/${run}`)).status).toBe(404);
    await expect(fs.stat(dir)).rejects.toThrow();
    expect((await server.call('GET', `/builds/${commitBuild.json}`)).status).toBe(200);
    expect((await server.call('GET', `/pulls/${pr1}`)).status).toBe(200);
  });
});
