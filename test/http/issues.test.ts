import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';
import { eventually, givenProject, givenUsers, type TestUser } from '../helpers/fixtures.js';

describe('issues', () => {
  let server: TestServer;
  let group: number;
  let app: number;
  let other: number;
  let secret: number;
  let alice: TestUser;
  let bob: TestUser;
  const cleanup: string[] = [];

  beforeAll(async () => {
    server = await startTestServer();
    [alice, bob] = await givenUsers(server, 'alice', 'bob');
    // every logged-in user gets Issue Reporter (role 4) through the projects' default role
    group = await givenProject(server, { name: 'group', defaultRoleId: 4 });
    app = await givenProject(server, { name: 'app', parentId: group });
    other = await givenProject(server, { name: 'other', defaultRoleId: 4 });
    secret = await givenProject(server, { name: 'secret' });
  });
  afterAll(async () => {
    await server.close();
    for (const dir of cleanup) await fs.rm(dir, { recursive: true, force: true });
  });

  const open = async (body: Record<string, unknown>, auth?: string | null) => server.call('POST', '/issues', { body, auth });

  it('creates an issue with number, state, defaults and auto-watch', async () => {
    const res = await open({ projectId: app, title: 'First bug', description: 'cc @bob please', fields: { Type: 'Bug', Assignees: ['alice'] } }, alice.auth);
    expect(res.status).toBe(200);
    const id = res.json as number;
    const issue = (await server.call('GET', `/issues/${id}`)).json;
    expect(Object.keys(issue)).toEqual([
      'id',
      'state',
      'stateOrdinal',
      'title',
      'description',
      'numberScopeId',
      'projectId',
      'submitterId',
      'submitDate',
      'voteCount',
      'commentCount',
      'uuid',
      'number',
      'threadingReference',
      'lastActivity',
      'confidential',
      'pinDate',
    ]);
    expect(issue).toMatchObject({
      state: 'Open',
      stateOrdinal: 0,
      title: 'First bug',
      number: 1,
      numberScopeId: app,
      projectId: app,
      submitterId: alice.id,
      voteCount: 0,
      commentCount: 0,
      confidential: false,
      pinDate: null,
    });
    expect(issue.lastActivity).toMatchObject({ userId: alice.id, description: 'opened' });
    const fields = (await server.call('GET', `/issues/${id}/fields`)).json;
    expect(fields.map((f: any) => [f.name, f.value, f.type, f.ordinal])).toEqual([
      ['Type', 'Bug', 'Enumeration', 2],
      ['Priority', 'Normal', 'Enumeration', 1],
      ['Assignees', 'alice', 'User', -1],
    ]);
    const watches = (await server.call('GET', `/issues/${id}/watches`)).json;
    expect(watches.map((w: any) => w.userId).sort()).toEqual([alice.id, bob.id].sort());
    const second = (await open({ projectId: app, title: 'Second' }, alice.auth)).json;
    expect((await server.call('GET', `/issues/${second}`)).json.number).toBe(2);
  });

  it('validates create input', async () => {
    expect((await open({ projectId: app, title: '  ' })).status).toBe(400);
    expect((await open({ projectId: app, title: 'x'.repeat(256) })).status).toBe(400);
    expect((await open({ projectId: app, title: 't', fields: { Nope: 'x' } })).status).toBe(400);
    expect((await open({ projectId: app, title: 't', fields: { Type: 'Epic' } })).status).toBe(400);
    expect((await open({ projectId: app, title: 't', fields: { Assignees: ['ghost'] } })).status).toBe(400);
    expect((await open({ projectId: app, title: 't', id: 5 })).status).toBe(400);
    expect((await open({ projectId: 9999, title: 't' })).status).toBe(404);
    expect((await open({ projectId: app, title: 't' }, null)).status).toBe(401);
    expect((await open({ projectId: secret, title: 't' }, alice.auth)).status).toBe(404);
  });

  it('sets title, description, confidential, fields and state with permission checks', async () => {
    const id = (await open({ projectId: app, title: 'Editable' }, alice.auth)).json;
    expect((await server.call('POST', `/issues/${id}/title`, { text: 'Renamed', auth: alice.auth })).status).toBe(200);
    expect((await server.call('POST', `/issues/${id}/title`, { text: 'Bob was here', auth: bob.auth })).status).toBe(403);
    expect((await server.call('POST', `/issues/${id}/title`, { text: '' })).status).toBe(400);
    expect((await server.call('POST', `/issues/${id}/description`, { text: '"quoted @bob"', auth: alice.auth })).status).toBe(200);
    let issue = (await server.call('GET', `/issues/${id}`)).json;
    expect(issue.title).toBe('Renamed');
    expect(issue.description).toBe('quoted @bob');
    expect((await server.call('POST', `/issues/${id}/fields`, { body: { Priority: 'Critical' }, auth: alice.auth })).status).toBe(403);
    expect((await server.call('POST', `/issues/${id}/fields`, { body: { Priority: 'Critical', Assignees: ['bob'] } })).status).toBe(200);
    expect((await server.call('POST', `/issues/${id}/fields`, { body: { Priority: 'Huge' } })).status).toBe(400);
    const fields = (await server.call('GET', `/issues/${id}/fields`)).json;
    expect(fields.find((f: any) => f.name === 'Priority')).toMatchObject({ value: 'Critical', ordinal: 3 });
    expect((await server.call('POST', `/issues/${id}/state-transitions`, { body: { state: 'Closed', comment: 'done' }, auth: alice.auth })).status).toBe(403);
    expect((await server.call('POST', `/issues/${id}/state-transitions`, { body: { state: 'Gone' } })).status).toBe(400);
    expect((await server.call('POST', `/issues/${id}/state-transitions`, { body: { state: 'Closed', comment: 'done' } })).status).toBe(200);
    expect((await server.call('POST', `/issues/${id}/state-transitions`, { body: { state: 'Closed' } })).status).toBe(409);
    issue = (await server.call('GET', `/issues/${id}`)).json;
    expect(issue).toMatchObject({ state: 'Closed', stateOrdinal: 1, commentCount: 1 });
    const changes = (await server.call('GET', `/issues/${id}/changes`)).json;
    expect(changes.map((c: any) => c.data['@type'])).toEqual([
      'IssueTitleChangeData',
      'IssueDescriptionChangeData',
      'IssueFieldChangeData',
      'IssueStateChangeData',
    ]);
    expect((await server.call('POST', `/issues/${id}/confidential`, { body: true, auth: alice.auth })).status).toBe(200);
    // bob lost access (confidential, but he was mentioned: he keeps it)
    expect((await server.call('GET', `/issues/${id}`, { auth: bob.auth })).status).toBe(200);
    const hidden = (await open({ projectId: app, title: 'Secret', confidential: true }, alice.auth)).json;
    expect((await server.call('GET', `/issues/${hidden}`, { auth: bob.auth })).status).toBe(403);
    expect((await server.call('GET', `/issues/${hidden}`, { auth: alice.auth })).status).toBe(200);
    const listed = (await server.call('GET', `/issues?query=${encodeURIComponent('confidential')}`, { auth: bob.auth })).json.map((i: any) => i.id);
    expect(listed).toContain(id);
    expect(listed).not.toContain(hidden);
    expect((await server.call('DELETE', `/issues/${hidden}`, { auth: alice.auth })).status).toBe(403);
    expect((await server.call('DELETE', `/issues/${hidden}`)).status).toBe(200);
    expect((await server.call('GET', `/issues/${hidden}`)).status).toBe(404);
  });

  it('schedules issues into milestones of the project hierarchy', async () => {
    const v1 = await server.call('POST', '/milestones', { body: { projectId: group, name: 'v1' } });
    expect(v1.status, v1.text).toBe(200);
    const elsewhere = (await server.call('POST', '/milestones', { body: { projectId: other, name: 'v9' } })).json;
    const id = (await open({ projectId: app, title: 'Planned', milestoneIds: [v1.json] })).json;
    expect((await server.call('GET', `/issues/${id}/milestones`)).json.map((m: any) => m.name)).toEqual(['v1']);
    expect((await open({ projectId: app, title: 'Misplaced', milestoneIds: [elsewhere] })).status).toBe(400);
    expect((await open({ projectId: app, title: 'Not allowed', milestoneIds: [v1.json] }, alice.auth)).status).toBe(403);
    const query = async (q: string) => (await server.call('GET', `/issues?query=${encodeURIComponent(q)}`)).json.map((i: any) => i.id);
    expect(await query('"Milestone" is "V1"')).toEqual([id]);
    expect(await query('"Milestone" is empty and "Project" is "group/app"')).not.toContain(id);
    expect((await server.call('POST', `/issues/${id}/milestones`, { body: [], auth: alice.auth })).status).toBe(403);
    expect((await server.call('POST', `/issues/${id}/milestones`, { body: [elsewhere] })).status).toBe(400);
    expect((await server.call('POST', `/issues/${id}/milestones`, { body: [] })).status).toBe(200);
    expect((await server.call('GET', `/issues/${id}/milestones`)).json).toEqual([]);
    expect((await server.call('GET', `/issues/${id}/changes`)).json.at(-1).data['@type']).toBe('IssueMilestoneChangeData');
  });

  it('queries with the issue query language', async () => {
    const a = (await open({ projectId: other, title: 'Crash on start', fields: { Type: 'Bug', Priority: 'Major' } })).json;
    const b = (await open({ projectId: other, title: 'Add dark mode', description: 'please', fields: { Priority: 'Minor', Assignees: 'alice' } })).json;
    const ids = async (query: string, auth?: string) => {
      const res = await server.call('GET', `/issues?query=${encodeURIComponent(query)}`, { auth });
      expect(res.status, `${query}: ${res.text}`).toBe(200);
      return res.json.map((i: any) => i.id);
    };
    expect(await ids('"Project" is "other"')).toEqual([b, a]);
    expect(await ids('"Project" is "other" order by "Priority" desc')).toEqual([a, b]);
    expect(await ids('"Project" is "other" order by "Number"')).toEqual([a, b]);
    expect(await ids('"Type" is "Bug" and "Project" is "other"')).toEqual([a]);
    expect(await ids('"Priority" is greater than "Normal" and "Project" is "other"')).toEqual([a]);
    expect(await ids('"Assignees" is "alice" and "Project" is "other"')).toEqual([b]);
    expect(await ids('"Assignees" is empty and "Project" is "other"')).toEqual([a]);
    expect(await ids('"Title" contains "dark"')).toEqual([b]);
    expect(await ids('"Description" contains "please" and "Project" is "other"')).toEqual([b]);
    expect(await ids('~crash~')).toEqual([a]);
    const comment = await server.call('POST', '/issue-comments', { body: { issueId: b, content: 'Seen on Firefox 120' } });
    expect(comment.status, comment.text).toBe(200);
    expect(await ids('"Comment" contains "firefox" and "Project" is "other"')).toEqual([b]);
    expect(await ids('~FIREFOX~ and "Project" is "other"')).toEqual([b]);
    expect(await ids('~on~ and "Project" is "other"')).toEqual([b, a]);
    expect(await ids('"Title" contains "da" and "Project" is "other"')).toEqual([b]);
    expect(await ids('"Number" is "other#1"')).toEqual([a]);
    expect(await ids('"State" is "Open" and "Project" is "other"')).toEqual([b, a]);
    expect(await ids('"State" is after "Open" and "Project" is "other"')).toEqual([]);
    expect(await ids('"Submit Date" is until "2000-01-01"')).toEqual([]);
    expect(await ids('"Vote Count" is "0" and "Project" is "other"')).toEqual([b, a]);
    expect(await ids('submitted by "admin" and "Project" is "other"')).toEqual([b, a]);
    expect(await ids('"Project" is "other" and "Milestone" is empty')).toEqual([b, a]);
    expect(await ids('"Assignees" is me', alice.auth)).toContain(b);
    expect(await ids('mentioned "bob"')).not.toContain(a);
    for (const bad of [
      'fixed in build "other#1"',
      'fixed in build "nowhere#1"',
      'fixed in commit "other:main"',
      'has any "Nope"',
      '"Foo" is "x"',
      '"Title" is "x"',
      'submitted by "ghost"',
      '"State" is "Nope"',
      '"Type" is me',
      'order by "Title"',
    ]) {
      expect((await server.call('GET', `/issues?query=${encodeURIComponent(bad)}`)).status, bad).toBe(400);
    }
    expect((await server.call('GET', `/issues?query=${encodeURIComponent('submitted by me')}`, { auth: null })).status).toBeGreaterThanOrEqual(400);
    expect((await server.call('GET', '/issues?count=101')).status).toBe(400);
    expect((await server.call('GET', '/issues?foo=1')).status).toBe(400);
  });

  it('closes issues fixed by commits pushed to the default branch and lists fixing commits', async () => {
    const issue = (await open({ projectId: app, title: 'Fix me' })).json;
    const number = (await server.call('GET', `/issues/${issue}`)).json.number;
    const keep = (await open({ projectId: app, title: 'Keep me' })).json;
    const keepNumber = (await server.call('GET', `/issues/${keep}`)).json.number;
    const work = await makeWorkTree({ 'README.md': 'hi\n' });
    cleanup.push(work);
    const remote = gitUrl(server, 'group/app.git', { name: 'admin', password: 'admin-secret' });
    await git(work, ['push', '-q', remote, 'main']);
    await git(work, ['checkout', '-q', '-b', 'topic']);
    const topicCommit = await commitFiles(work, { 'b.txt': 'b\n' }, `work on it\n\nresolves #${keepNumber}`);
    await git(work, ['push', '-q', remote, 'topic']);
    await git(work, ['checkout', '-q', 'main']);
    const fix = await commitFiles(work, { 'a.txt': 'a\n' }, `Repair the thing (#${number})`);
    await git(work, ['push', '-q', remote, 'main']);
    const closed = await eventually(async () => (await server.call('GET', `/issues/${issue}`)).json.state === 'Closed');
    expect(closed).toBe(true);
    expect((await server.call('GET', `/issues/${issue}/commits`)).json).toEqual([{ projectId: app, commitHash: fix }]);
    const topic = await eventually(async () => (await server.call('GET', `/issues/${keep}/commits`)).json.length > 0);
    expect(topic).toBe(true);
    expect((await server.call('GET', `/issues/${keep}/commits`)).json).toEqual([{ projectId: app, commitHash: topicCommit }]);
    expect((await server.call('GET', `/issues/${keep}`)).json.state).toBe('Open');
    const fixedIn = await server.call('GET', `/issues?query=${encodeURIComponent(`fixed in commit "group/app:${fix}"`)}`);
    expect(fixedIn.json.map((i: any) => i.id)).toEqual([issue]);
  });
});
