import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, git, gitUrl, makeWorkTree, startTestServer, ADMIN, type TestServer } from '../helpers/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server.close();
});

async function created(method: string, path: string, body: unknown): Promise<number> {
  const res = await server.call(method, path, { body });
  expect(res.status, res.text).toBe(200);
  return res.json as number;
}

function ed25519Key(comment = 'me@host'): string {
  const part = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
  return `ssh-ed25519 ${Buffer.concat([part(Buffer.from('ssh-ed25519')), part(randomBytes(32))]).toString('base64')} ${comment}`;
}

describe('roles', () => {
  it('creates, reads, queries, updates and deletes a role with every privilege field', async () => {
    const id = await created('POST', '/roles', {
      name: 'Release Manager',
      codePrivilege: 'WRITE',
      manageBuilds: true,
      editableIssueFields: { '@type': 'IncludeIssueFields', includeFields: ['State'] },
      jobPrivileges: [{ jobNames: 'release-*', runJob: true }],
    });
    const role = (await server.call('GET', `/roles/${id}`)).json;
    expect(Object.keys(role)).toEqual([
      'id',
      'name',
      'manageProject',
      'createChildren',
      'managePullRequests',
      'manageCodeComments',
      'codePrivilege',
      'manageIssues',
      'accessConfidentialIssues',
      'scheduleIssues',
      'editableIssueFields',
      'manageBuilds',
      'jobPrivileges',
    ]);
    expect(role).toMatchObject({
      name: 'Release Manager',
      codePrivilege: 'WRITE',
      manageProject: false,
      manageBuilds: true,
      editableIssueFields: { '@type': 'IncludeIssueFields', includeFields: ['State'] },
      jobPrivileges: [{ jobNames: 'release-*', manageJob: false, runJob: true, accessLog: false, accessibleReports: null }],
    });
    expect((await server.call('GET', '/roles?name=release*')).json.map((r: { id: number }) => r.id)).toEqual([id]);
    expect((await server.call('GET', '/roles?name=release')).json).toEqual([]);
    expect((await server.call('GET', '/roles?name=code*')).json.map((r: { name: string }) => r.name)).toEqual(['Code Reader', 'Code Writer']);
    expect((await server.call('POST', `/roles/${id}`, { body: { editableIssueFields: { '@type': 'NoneIssueFields' } } })).status).toBe(200);
    const updated = (await server.call('GET', `/roles/${id}`)).json;
    expect(updated).toMatchObject({ name: 'Release Manager', codePrivilege: 'WRITE', editableIssueFields: { '@type': 'NoneIssueFields' } });
    expect((await server.call('DELETE', `/roles/${id}`)).status).toBe(200);
    expect((await server.call('GET', `/roles/${id}`)).status).toBe(404);
  });

  it('refuses unknown or missing @type, unknown fields, duplicates, and roles in use', async () => {
    expect((await server.call('POST', '/roles', { body: { name: 'x', editableIssueFields: { '@type': 'SomeFields' } } })).status).toBe(400);
    expect((await server.call('POST', '/roles', { body: { name: 'x', editableIssueFields: { includeFields: ['a'] } } })).status).toBe(400);
    expect((await server.call('POST', '/roles', { body: { name: 'x', bogus: true } })).status).toBe(400);
    expect((await server.call('POST', '/roles', { body: { id: 9, name: 'x' } })).status).toBe(400);
    expect((await server.call('POST', '/roles', { body: {} })).status).toBe(400);
    const dup = await server.call('POST', '/roles', { body: { name: 'code writer' } });
    expect(dup.status).toBe(409);
    expect(dup.headers.get('content-type')).toContain('application/problem+json');
    const roleId = await created('POST', '/roles', { name: 'Used' });
    const projectId = await created('POST', '/projects', { name: 'uses-role', defaultRoleId: roleId });
    const inUse = await server.call('DELETE', `/roles/${roleId}`);
    expect(inUse.status).toBe(409);
    expect(inUse.json.detail).toContain('uses-role');
    await server.call('POST', `/projects/${projectId}`, { body: { defaultRoleId: null } });
    expect((await server.call('DELETE', `/roles/${roleId}`)).status).toBe(200);
    expect((await server.call('DELETE', '/roles/1')).status).toBe(409);
  });
});

describe('groups, memberships and authorizations', () => {
  it('grants administration through an administrator group', async () => {
    const user = await server.createUser('groupie');
    expect((await server.call('GET', '/roles', { auth: user.auth })).status).toBe(403);
    const groupId = await created('POST', '/groups', { name: 'Admins', administrator: true, description: 'all powerful' });
    expect((await server.call('GET', `/groups/${groupId}`)).json).toEqual({
      id: groupId,
      name: 'Admins',
      description: 'all powerful',
      administrator: true,
      createRootProjects: false,
      enforce2FA: false,
    });
    expect((await server.call('POST', '/groups', { body: { name: 'admins' } })).status).toBe(409);
    const membershipId = await created('POST', '/memberships', { userId: user.id, groupId });
    expect((await server.call('POST', '/memberships', { body: { userId: user.id, groupId } })).status).toBe(409);
    expect((await server.call('POST', '/memberships', { body: { userId: 999, groupId } })).status).toBe(400);
    expect((await server.call('POST', '/memberships', { body: { userId: user.id, groupId: 999 } })).status).toBe(400);
    expect((await server.call('GET', '/roles', { auth: user.auth })).status).toBe(200);
    expect((await server.call('GET', `/users/${user.id}/memberships`)).json).toEqual([{ id: membershipId, userId: user.id, groupId }]);
    expect((await server.call('GET', `/groups/${groupId}/memberships`)).json).toHaveLength(1);
    expect((await server.call('GET', '/groups?name=adm*')).json.map((g: { id: number }) => g.id)).toEqual([groupId]);
    expect((await server.call('DELETE', `/memberships/${membershipId}`)).status).toBe(200);
    expect((await server.call('GET', '/roles', { auth: user.auth })).status).toBe(403);
    expect((await server.call('POST', `/groups/${groupId}`, { body: { name: 'Root Makers', administrator: false, createRootProjects: true } })).status).toBe(
      200,
    );
    await created('POST', '/memberships', { userId: user.id, groupId });
    expect((await server.call('POST', '/projects', { body: { name: 'by-group-member' }, auth: user.auth })).status).toBe(200);
    expect((await server.call('DELETE', `/groups/${groupId}`)).status).toBe(200);
    expect((await server.call('GET', `/users/${user.id}/memberships`)).json).toEqual([]);
  });

  it('validates authorization references and uniqueness, and applies grants to descendants', async () => {
    const parent = await created('POST', '/projects', { name: 'parent' });
    const child = await created('POST', '/projects', { name: 'child', parentId: parent });
    const user = await server.createUser('inheritor');
    expect((await server.call('GET', `/projects/${child}`, { auth: user.auth })).status).toBe(404);
    const authId = await created('POST', '/user-authorizations', { projectId: parent, userId: user.id, roleId: 3 });
    expect((await server.call('POST', '/user-authorizations', { body: { projectId: parent, userId: user.id, roleId: 2 } })).status).toBe(409);
    expect((await server.call('POST', '/user-authorizations', { body: { projectId: parent, userId: user.id, roleId: 99 } })).status).toBe(400);
    expect((await server.call('POST', '/user-authorizations', { body: { projectId: parent, userId: 999, roleId: 3 } })).status).toBe(400);
    expect((await server.call('POST', '/user-authorizations', { body: { projectId: 999, userId: user.id, roleId: 3 } })).status).toBe(404);
    expect((await server.call('GET', `/projects/${child}`, { auth: user.auth })).status).toBe(200);
    expect((await server.call('GET', `/repositories/${child}/branches`, { auth: user.auth })).status).toBe(200);
    expect((await server.call('POST', `/repositories/${child}/default-branch`, { text: 'main', auth: user.auth })).status).toBe(403);
    expect((await server.call('GET', `/users/${user.id}/authorizations`)).json).toEqual([{ id: authId, projectId: parent, userId: user.id, roleId: 3 }]);
    expect((await server.call('GET', `/users/${user.id}/authorizations`, { auth: user.auth })).status).toBe(403);
    expect((await server.call('POST', `/user-authorizations/${authId}`, { body: { roleId: 1 } })).status).toBe(200);
    expect((await server.call('GET', `/projects/${child}/setting`, { auth: user.auth })).status).toBe(200);
    expect((await server.call('GET', `/projects/${parent}/user-authorizations`)).json.map((a: { userId: number }) => a.userId)).toContain(user.id);
    const groupId = await created('POST', '/groups', { name: 'readers' });
    const gaId = await created('POST', '/group-authorizations', { projectId: child, groupId, roleId: 3 });
    expect((await server.call('POST', '/group-authorizations', { body: { projectId: child, groupId, roleId: 2 } })).status).toBe(409);
    expect((await server.call('GET', `/projects/${child}/group-authorizations`)).json).toEqual([{ id: gaId, projectId: child, groupId, roleId: 3 }]);
    expect((await server.call('GET', `/groups/${groupId}/authorizations`)).json).toHaveLength(1);
    expect((await server.call('DELETE', `/group-authorizations/${gaId}`)).status).toBe(200);
    expect((await server.call('DELETE', `/user-authorizations/${authId}`)).status).toBe(200);
    expect((await server.call('GET', `/projects/${child}`, { auth: user.auth })).status).toBe(404);
  });

  it('applies a default role to every user, and a reduced one to anonymous callers when allowed', async () => {
    const projectId = await created('POST', '/projects', { name: 'public', defaultRoleId: 2 });
    const work = await makeWorkTree();
    await git(work, ['push', '-q', gitUrl(server, 'public', ADMIN), 'main']);
    const user = await server.createUser('passerby');
    expect((await server.call('POST', `/repositories/${projectId}/default-branch`, { text: '"main"', auth: user.auth })).status).toBe(200);
    expect((await server.call('GET', `/repositories/${projectId}/default-branch`, { auth: null })).status).toBe(401);
    await server.call('POST', '/settings/security', { body: { enableAnonymousAccess: true } });
    try {
      const res = await server.call('GET', `/repositories/${projectId}/default-branch`, { auth: null });
      expect(res.status).toBe(200);
      expect(res.text).toBe('main');
      expect((await server.call('GET', `/projects/${projectId}/setting`, { auth: null })).status).toBe(401);
      await git(work, ['clone', '-q', gitUrl(server, 'public'), `${work}-anon`]);
      await commitFiles(work, { 'new.txt': 'x' }, 'anonymous attempt');
      await expect(git(work, ['push', '-q', gitUrl(server, 'public'), 'main'])).rejects.toThrow();
      const projects = (await server.call('GET', '/projects', { auth: null })).json.map((p: { name: string }) => p.name);
      expect(projects).toEqual(['public']);
    } finally {
      await server.call('POST', '/settings/security', { body: { enableAnonymousAccess: false } });
    }
  });
});

describe('label specs, project labels and milestones', () => {
  it('manages label specs and makes the Label criterion of project queries work', async () => {
    expect((await server.call('GET', `/projects?query=${encodeURIComponent('"Label" is "frontend"')}`)).status).toBe(400);
    const specId = await created('POST', '/label-specs', { name: 'frontend' });
    expect((await server.call('GET', `/label-specs/${specId}`)).json).toEqual({ id: specId, name: 'frontend', color: '#0d87e9' });
    expect((await server.call('POST', '/label-specs', { body: { name: 'frontend' } })).status).toBe(409);
    expect((await server.call('POST', '/label-specs', { body: { name: 'bad', color: 'red' } })).status).toBe(400);
    expect((await server.call('GET', '/label-specs?name=FRONT*')).json).toHaveLength(1);
    const projectId = await created('POST', '/projects', { name: 'labelled' });
    await created('POST', '/projects', { name: 'unlabelled' });
    const labelId = await created('POST', '/project-labels', { projectId, specId });
    expect((await server.call('POST', '/project-labels', { body: { projectId, specId } })).status).toBe(409);
    expect((await server.call('POST', '/project-labels', { body: { projectId, specId: 999 } })).status).toBe(400);
    expect((await server.call('GET', `/projects/${projectId}/labels`)).json).toEqual([{ id: labelId, projectId, specId }]);
    const found = await server.call('GET', `/projects?query=${encodeURIComponent('"Label" is "frontend"')}`);
    expect(found.json.map((p: { name: string }) => p.name)).toEqual(['labelled']);
    expect((await server.call('POST', `/label-specs/${specId}`, { body: { color: '#ff0000' } })).status).toBe(200);
    const inUse = await server.call('DELETE', `/label-specs/${specId}`);
    expect(inUse.status).toBe(409);
    expect(inUse.json.detail).toContain('1 project label(s)');
    expect((await server.call('DELETE', `/project-labels/${labelId}`)).status).toBe(200);
    expect((await server.call('GET', `/projects/${projectId}/labels`)).json).toEqual([]);
    expect((await server.call('DELETE', `/label-specs/${specId}`)).status).toBe(200);
    expect((await server.call('GET', `/label-specs/${specId}`)).status).toBe(404);
  });

  it('manages milestones and queries them with ancestors', async () => {
    const parent = await created('POST', '/projects', { name: 'ms-parent' });
    const child = await created('POST', '/projects', { name: 'ms-child', parentId: parent });
    const a = await created('POST', '/milestones', { projectId: parent, name: 'Q1', dueDate: '2024-03-31', startDate: '2024-01-01' });
    const b = await created('POST', '/milestones', { projectId: child, name: 'Q2', dueDate: '2024-06-30', closed: true });
    expect((await server.call('POST', '/milestones', { body: { projectId: child, name: 'Q2' } })).status).toBe(409);
    expect((await server.call('POST', '/milestones', { body: { projectId: child } })).status).toBe(400);
    expect((await server.call('POST', '/milestones', { body: { projectId: 999, name: 'x' } })).status).toBe(404);
    expect((await server.call('GET', `/milestones/${a}`)).json).toEqual({
      id: a,
      projectId: parent,
      name: 'Q1',
      description: null,
      startDate: '2024-01-01T00:00:00.000+00:00',
      dueDate: '2024-03-31T00:00:00.000+00:00',
      closed: false,
    });
    const update = await server.call('POST', `/milestones/${a}`, { body: { description: 'first quarter' } });
    expect(update.status).toBe(200);
    expect(update.json).toBe(a);
    const names = async (query: string) => (await server.call('GET', `/projects/${child}/milestones${query}`)).json.map((m: { name: string }) => m.name);
    expect(await names('')).toEqual(['Q1', 'Q2']);
    expect(await names('?closed=true')).toEqual(['Q2']);
    expect(await names('?name=q1')).toEqual(['Q1']);
    expect(await names('?dueBefore=2024-04-01')).toEqual(['Q1']);
    expect(await names('?dueAfter=2024-04-01')).toEqual(['Q2']);
    expect(await names('?startAfter=2023-12-31&startBefore=2024-01-01')).toEqual(['Q1']);
    expect((await server.call('GET', `/projects/${parent}/milestones`)).json.map((m: { name: string }) => m.name)).toEqual(['Q1']);
    expect((await server.call('GET', `/projects/${child}/milestones?dueBefore=soon`)).status).toBe(400);
    expect((await server.call('GET', `/projects/${child}/milestones?bogus=1`)).status).toBe(400);
    const issue = await created('POST', '/issues', { projectId: child, title: 'scheduled', milestoneIds: [b] });
    expect((await server.call('DELETE', `/milestones/${b}`)).status).toBe(409);
    expect((await server.call('POST', `/issues/${issue}/milestones`, { body: [] })).status).toBe(200);
    expect((await server.call('DELETE', `/milestones/${b}`)).status).toBe(200);
    expect((await server.call('GET', `/milestones/${b}`)).status).toBe(404);
  });
});

describe('project deletion', () => {
  it('removes the milestones, labels and authorizations of the deleted projects', async () => {
    const projectId = await created('POST', '/projects', { name: 'short-lived' });
    const milestoneId = await created('POST', '/milestones', { projectId, name: 'never' });
    const specId = await created('POST', '/label-specs', { name: 'ephemeral' });
    await created('POST', '/project-labels', { projectId, specId });
    const groupId = await created('POST', '/groups', { name: 'watchers' });
    const gaId = await created('POST', '/group-authorizations', { projectId, groupId, roleId: 3 });
    expect((await server.call('DELETE', `/projects/${projectId}`)).status).toBe(200);
    expect((await server.call('GET', `/milestones/${milestoneId}`)).status).toBe(404);
    expect((await server.call('GET', `/group-authorizations/${gaId}`)).status).toBe(404);
    expect((await server.call('DELETE', `/label-specs/${specId}`)).status).toBe(200);
  });
});

describe('project setting, contributors and repositories', () => {
  it('replaces the setting whole and keeps unknown parts verbatim', async () => {
    const projectId = await created('POST', '/projects', { name: 'configured' });
    const initial = (await server.call('GET', `/projects/${projectId}/setting`)).json;
    expect(initial.namedCommitQueries).toHaveLength(5);
    expect(initial.namedCodeCommentQueries).toHaveLength(7);
    expect(initial.pullRequestSetting).toEqual({ namedQueries: null, defaultMergeStrategy: null });
    const webHooks = [{ postUrl: 'http://example.com/hook', eventTypes: ['CODE_PUSH'], secret: 's3cret', extra: { kept: true } }];
    expect(
      (
        await server.call('POST', `/projects/${projectId}/setting`, {
          body: {
            serviceDeskName: 'desk',
            webHooks,
            pullRequestSetting: { namedQueries: null, defaultMergeStrategy: 'SQUASH_SOURCE_BRANCH_COMMITS' },
            contributedSettings: { x: 1 },
          },
        })
      ).status,
    ).toBe(200);
    const setting = (await server.call('GET', `/projects/${projectId}/setting`)).json;
    expect(setting).toMatchObject({ serviceDeskName: 'desk', webHooks, branchProtections: [], namedCommitQueries: [], contributedSettings: {} });
    expect(setting.pullRequestSetting.defaultMergeStrategy).toBe('SQUASH_SOURCE_BRANCH_COMMITS');
    const other = await created('POST', '/projects', { name: 'configured2' });
    expect((await server.call('POST', `/projects/${other}/setting`, { body: { serviceDeskName: 'desk' } })).status).toBe(409);
    expect((await server.call('GET', `/projects?query=${encodeURIComponent('"Service Desk Name" is "desk"')}`)).json.map((p: { id: number }) => p.id)).toEqual([
      projectId,
    ]);
  });

  it('ranks top contributors from the default branch history', async () => {
    const projectId = await created('POST', '/projects', { name: 'history' });
    const work = await makeWorkTree({ 'a.txt': 'a\nb\nc\n' });
    await git(work, ['commit', '-q', '--allow-empty', '-m', 'by bob'], {
      GIT_AUTHOR_NAME: 'Bob',
      GIT_AUTHOR_EMAIL: 'bob@example.com',
      GIT_AUTHOR_DATE: '2024-02-02T10:00:00Z',
    });
    await commitFiles(work, { 'b.txt': '1\n2\n' }, 'second');
    await git(work, ['push', '-q', gitUrl(server, 'history', ADMIN), 'main']);
    const url = (type: string) => `/projects/${projectId}/top-contributors?type=${type}&sinceDate=2000-01-01&untilDate=2100-12-31&count=10`;
    const byCommits = (await server.call('GET', url('COMMITS'))).json;
    expect(byCommits.map((c: { author: { emailAddress: string } }) => c.author.emailAddress)).toEqual(['author@example.com', 'bob@example.com']);
    expect(byCommits[0].totalContribution).toEqual({ commits: 2, additions: 5, deletions: 0 });
    expect(byCommits[1].dailyContributions).toEqual({ '2024-02-02': 1 });
    // a day's amount sums the author's commits of that day, in the unit of the ranking
    const sum = (daily: Record<string, number>) => Object.values(daily).reduce((a, b) => a + b, 0);
    expect(sum(byCommits[0].dailyContributions)).toBe(2);
    const byAdditions = (await server.call('GET', url('ADDITIONS'))).json;
    expect(sum(byAdditions[0].dailyContributions)).toBe(5);
    expect(byAdditions[1]).toMatchObject({ totalContribution: { commits: 1, additions: 0, deletions: 0 }, dailyContributions: { '2024-02-02': 0 } });
    const bobOnly = (await server.call('GET', `/projects/${projectId}/top-contributors?type=ADDITIONS&sinceDate=2024-02-02&untilDate=2024-02-02&count=10`))
      .json;
    expect(bobOnly).toMatchObject([{ author: { emailAddress: 'bob@example.com' }, totalContribution: { commits: 1 } }]);
    expect((await server.call('GET', `/projects/${projectId}/top-contributors?type=COMMITS&sinceDate=2024-13-01&untilDate=2025-01-01&count=1`)).status).toBe(
      400,
    );
    expect((await server.call('GET', `/projects/${projectId}/top-contributors?type=LINES&sinceDate=2024-01-01&untilDate=2025-01-01&count=1`)).status).toBe(400);
  });

  it('reads and sets the default branch and lists branches', async () => {
    const projectId = await created('POST', '/projects', { name: 'branches' });
    expect((await server.call('GET', `/repositories/${projectId}/default-branch`)).status).toBe(204);
    const work = await makeWorkTree();
    await git(work, ['push', '-q', gitUrl(server, 'branches', ADMIN), 'main', 'main:dev']);
    expect((await server.call('GET', `/repositories/${projectId}/branches`)).json).toEqual(['dev', 'main']);
    expect((await server.call('POST', `/repositories/${projectId}/default-branch`, { text: 'dev' })).status).toBe(200);
    expect((await server.call('GET', `/repositories/${projectId}/default-branch`)).text).toBe('dev');
    expect((await server.call('POST', `/repositories/${projectId}/default-branch`, { text: 'nope' })).status).toBe(400);
  });
});

describe('user lists and SSH keys', () => {
  it('adds, lists, reads and deletes SSH keys with validation', async () => {
    const user = await server.createUser('keyholder');
    const other = await server.createUser('snoop');
    const key = ed25519Key();
    const id = (await server.call('POST', `/users/${user.id}/ssh-keys`, { text: key, auth: user.auth })).json;
    expect((await server.call('GET', `/users/${user.id}/ssh-keys`, { auth: user.auth })).json).toEqual([{ id, content: key, ownerId: user.id }]);
    // a key names one user: added twice (by its owner or anybody) is 400, as an unparsable one (OneDev: 500)
    for (const auth of [user.auth, undefined]) {
      const twice = await server.call('POST', `/users/${user.id}/ssh-keys`, { text: key, auth });
      expect([twice.status, twice.json.code, twice.json.detail]).toEqual([400, 'GITLOOM_ERR_SSH_KEY_IN_USE', 'This key is already in use']);
    }
    const invalid = await server.call('POST', `/users/${user.id}/ssh-keys`, { text: 'ssh-rsa notbase64!', auth: user.auth });
    expect([invalid.status, invalid.json.code, invalid.json.detail]).toEqual([400, 'GITLOOM_ERR_SSH_KEY_INVALID', 'Invalid OpenSSH public key']);
    // a blob that names its type but holds no key of it (a 5-byte Ed25519 point)
    const part = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
    const truncated = `ssh-ed25519 ${Buffer.concat([part(Buffer.from('ssh-ed25519')), part(randomBytes(5))]).toString('base64')}`;
    expect((await server.call('POST', `/users/${user.id}/ssh-keys`, { text: truncated, auth: user.auth })).json.code).toBe('GITLOOM_ERR_SSH_KEY_INVALID');
    expect((await server.call('POST', `/users/${user.id}/ssh-keys`, { text: `ssh-rsa ${ed25519Key().split(' ')[1]}`, auth: user.auth })).status).toBe(400);
    expect((await server.call('POST', `/users/${user.id}/ssh-keys`, { text: '', auth: user.auth })).status).toBe(400);
    expect((await server.call('POST', `/users/${user.id}/ssh-keys`, { text: ed25519Key(), auth: other.auth })).status).toBe(403);
    expect((await server.call('GET', `/ssh-keys/${id}`, { auth: other.auth })).status).toBe(403);
    expect((await server.call('GET', `/ssh-keys/${id}`)).json).toEqual({ id, content: key, ownerId: user.id });
    expect((await server.call('DELETE', `/ssh-keys/${id}`, { auth: user.auth })).status).toBe(200);
    expect((await server.call('GET', `/ssh-keys/${id}`)).status).toBe(404);
  });

  it('lists pull request reviews, assignments and watches for self or administrators', async () => {
    const user = await server.createUser('reviewer');
    for (const list of ['pull-request-reviews', 'pull-request-assignments', 'pull-request-watches']) {
      expect((await server.call('GET', `/users/${user.id}/${list}`, { auth: user.auth })).json).toEqual([]);
      expect((await server.call('GET', `/users/1/${list}`, { auth: user.auth })).status).toBe(403);
      expect((await server.call('GET', `/users/999/${list}`)).status).toBe(404);
    }
    const projectId = await created('POST', '/projects', { name: 'reviewed' });
    const work = await makeWorkTree();
    await git(work, ['push', '-q', gitUrl(server, 'reviewed', ADMIN), 'main']);
    await commitFiles(work, { 'r.txt': 'r' }, 'to review');
    await git(work, ['push', '-q', gitUrl(server, 'reviewed', ADMIN), 'main:topic']);
    const authId = await created('POST', '/user-authorizations', { projectId, userId: user.id, roleId: 3 });
    const requestId = await created('POST', '/pulls', {
      targetProjectId: projectId,
      sourceProjectId: projectId,
      targetBranch: 'main',
      sourceBranch: 'topic',
      title: 'Review me',
      reviewerIds: [user.id],
    });
    const reviews = (await server.call('GET', `/users/${user.id}/pull-request-reviews`, { auth: user.auth })).json;
    expect(reviews).toMatchObject([{ userId: user.id, requestId, status: 'PENDING' }]);
    expect(Object.keys(reviews[0])).toEqual(['id', 'userId', 'requestId', 'status', 'statusDate']);
    await server.call('DELETE', `/user-authorizations/${authId}`);
    expect((await server.call('GET', `/users/${user.id}/pull-request-reviews`, { auth: user.auth })).json).toEqual([]);
    expect((await server.call('GET', `/users/${user.id}/pull-request-reviews`)).json).toHaveLength(1);
  });
});
