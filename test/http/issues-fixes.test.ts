import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, commitFiles, git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';
import { eventually, givenProject } from '../helpers/fixtures.js';

describe('fixed issues of pull requests and pushes', () => {
  let server: TestServer;
  let work: string;
  const issues: Record<string, number> = {};
  let requestId: number;
  let remote: string;

  beforeAll(async () => {
    server = await startTestServer();
    const group = await givenProject(server, { name: 'group' });
    const app = await givenProject(server, { name: 'app', parentId: group });
    const sub = await givenProject(server, { name: 'sub', parentId: app });
    const sibling = await givenProject(server, { name: 'sibling', parentId: group });
    const other = await givenProject(server, { name: 'other' });
    for (const [name, projectId] of Object.entries({ group, app, sub, sibling, other })) {
      issues[name] = (await server.call('POST', '/issues', { body: { projectId, title: `Issue of ${name}` } })).json;
    }
    issues.app2 = (await server.call('POST', '/issues', { body: { projectId: app, title: 'Second of app' } })).json;
    work = await makeWorkTree({ 'README.md': '# app\n' });
    remote = gitUrl(server, 'group/app.git', { name: ADMIN.name, password: ADMIN.password });
    await git(work, ['push', '-q', remote, 'main']);
    await git(work, ['checkout', '-q', '-b', 'feature']);
    await commitFiles(work, { 'a.txt': 'a\n' }, 'Fix the parser\n\nfixes #1\ncloses: Group#1');
    await commitFiles(work, { 'b.txt': 'b\n' }, 'Touch sub (group/app/sub#1)\n\nresolves other#1, resolves group/sibling#1, fixes #99');
    await git(work, ['push', '-q', remote, 'feature']);
    const pr = await server.call('POST', '/pulls', {
      body: {
        targetProjectId: app,
        sourceProjectId: app,
        targetBranch: 'main',
        sourceBranch: 'feature',
        title: 'Parser work',
        description: 'Also resolves #2',
      },
    });
    expect(pr.status, pr.text).toBe(200);
    requestId = pr.json;
  });
  afterAll(async () => {
    await server.close();
    await fs.rm(work, { recursive: true, force: true });
  });

  it("computes a pull request's fixed issues from commits, title and description", async () => {
    const res = await server.call('GET', `/pulls/${requestId}/fixed-issue-ids`);
    expect(res.status).toBe(200);
    expect([...res.json].sort((a: number, b: number) => a - b)).toEqual([issues.app, issues.group, issues.sub, issues.app2].sort((a, b) => a - b));
    expect((await server.call('GET', '/pulls/999/fixed-issue-ids')).status).toBe(404);
  });

  it("answers includes issue, fixed in pull request and the issue's pull requests", async () => {
    const prs = await server.call('GET', `/pulls?query=${encodeURIComponent('includes issue "group#1"')}`);
    expect(prs.status, prs.text).toBe(200);
    expect(prs.json.map((p: any) => p.id)).toEqual([requestId]);
    expect((await server.call('GET', `/pulls?query=${encodeURIComponent('includes issue "other#1"')}`)).json).toEqual([]);
    expect((await server.call('GET', `/pulls?query=${encodeURIComponent('includes issue "nowhere#1"')}`)).status).toBe(400);
    const fixed = await server.call('GET', `/issues?query=${encodeURIComponent('fixed in pull request "group/app#1"')}`);
    expect(fixed.status, fixed.text).toBe(200);
    expect(fixed.json.map((i: any) => i.id).sort()).toEqual([issues.app, issues.group, issues.sub, issues.app2].sort());
    expect((await server.call('GET', `/issues/${issues.group}/pulls`)).json.map((p: any) => p.id)).toEqual([requestId]);
    expect((await server.call('GET', `/issues/${issues.other}/pulls`)).json).toEqual([]);
    const between = await server.call('GET', `/issues?query=${encodeURIComponent('fixed between branch "group/app:main" and branch "group/app:feature"')}`);
    expect(between.status, between.text).toBe(200);
    expect(between.json.map((i: any) => i.id).sort()).toEqual([issues.app, issues.group, issues.sub].sort());
  });

  it('records fixing commits of other branches without closing, and closes on the default branch', async () => {
    const recorded = await eventually(async () => (await server.call('GET', `/issues/${issues.group}/commits`)).json.length === 1);
    expect(recorded).toBe(true);
    expect((await server.call('GET', `/issues/${issues.group}`)).json.state).toBe('Open');
    expect((await server.call('GET', `/issues/${issues.other}/commits`)).json).toEqual([]);
    expect((await server.call('GET', `/issues/${issues.sibling}/commits`)).json).toEqual([]);
    await git(work, ['push', '-q', remote, 'feature:main']);
    const closed = await eventually(async () => {
      const states = await Promise.all(['app', 'group', 'sub'].map(async (k) => (await server.call('GET', `/issues/${issues[k]}`)).json.state));
      return states.every((s) => s === 'Closed');
    });
    expect(closed).toBe(true);
    expect((await server.call('GET', `/issues/${issues.other}`)).json.state).toBe('Open');
    expect((await server.call('GET', `/issues/${issues.sibling}`)).json.state).toBe('Open');
    // the description's reference is not a commit: #2 stays open
    expect((await server.call('GET', `/issues/${issues.app2}`)).json.state).toBe('Open');
    const changes = (await server.call('GET', `/issues/${issues.app}/changes`)).json;
    expect(changes.at(-1).data).toMatchObject({ '@type': 'IssueStateChangeData', oldState: 'Open', newState: 'Closed' });
  });
});
