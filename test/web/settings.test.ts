import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { ADMIN, git, startTestServer, type TestServer } from '../helpers/server.js';

/** Decodes the entities preact-render-to-string writes, to compare messages as people read them. */
const decoded = (html: string) =>
  html
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** The project settings pages, project creation and forking over HTTP. */
describe('project settings pages', () => {
  let server: TestServer;
  let owner: TestUser;
  let writer: TestUser;
  let outsider: TestUser;
  let repo: Repo;
  let admin: WebSession;
  let asOwner: WebSession;
  let asWriter: WebSession;
  let asOutsider: WebSession;

  beforeAll(async () => {
    server = await startTestServer();
    [owner, writer, outsider] = await givenUsers(server, 'owner', 'writer', 'outsider');
    repo = await givenRepo(server, 'app', { files: { 'README.md': '# App\n' } });
    await repo.commitOn('develop', { 'dev.txt': 'dev\n' }, 'Develop');
    await grantRole(server, repo.id, owner.id, 'Project Owner');
    await grantRole(server, repo.id, writer.id, 'Code Writer');
    [admin, asOwner, asWriter, asOutsider] = await Promise.all([
      signInByFetch(server, ADMIN.name, ADMIN.password),
      signInByFetch(server, 'owner', owner.password),
      signInByFetch(server, 'writer', writer.password),
      signInByFetch(server, 'outsider', outsider.password),
    ]);
  }, 120_000);
  afterAll(async () => {
    await removeWorkTrees();
    await server?.close();
  });

  const get = (path: string, session: WebSession | null = asOwner) =>
    fetch(`${server.url}${path}`, { redirect: 'manual', headers: session ? { cookie: session.cookie } : {} });
  const post = (path: string, fields: Record<string, string>, session: WebSession = asOwner) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
      body: new URLSearchParams({ _csrf: session.csrfToken, ...fields }).toString(),
    });
  const setting = async (projectId = repo.id) => (await server.call('GET', `/projects/${projectId}/setting`)).json;
  const SECTIONS = ['', '/members', '/branch-protection', '/tag-protection', '/build', '/labels', '/milestones', '/webhooks', '/mirrors'];

  it('shows every section to a manager, with the Settings tab, and refuses others as the API does', async () => {
    for (const section of SECTIONS) {
      const response = await get(`/app/~settings${section}`);
      expect(response.status, section).toBe(200);
      const html = await response.text();
      expect(html).toContain('href="/app/~settings" ');
      expect(html).toMatch(/<title>[A-Z][a-z ]+ settings · app · Gitloom<\/title>/);
      expect((await get(`/app/~settings${section}`, asWriter)).status, section).toBe(403);
      expect((await get(`/app/~settings${section}`, asOutsider)).status, section).toBe(404);
      expect((await get(`/app/~settings${section}`, null)).headers.get('location')).toMatch(/^\/~login\?redirect=/);
    }
    expect(await (await get('/app')).text()).toContain('href="/app/~settings"');
    expect(await (await get('/app', asWriter)).text()).not.toContain('href="/app/~settings"');
    // a non-manager's change is refused and changes nothing
    expect((await post('/app/~settings', { form: 'general', name: 'hijacked' }, asWriter)).status).toBe(403);
    expect((await post('/app/~settings/members/users', { name: 'writer', roleId: '1' }, asWriter)).status).toBe(403);
    expect((await post('/app/~settings/branch-protection', { form: 'new', index: '', pattern: 'main' }, asWriter)).status).toBe(403);
    expect((await setting()).branchProtections).toEqual([]);
    // a form without its CSRF token is refused
    const noToken = await fetch(`${server.url}/app/~settings`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: asOwner.cookie },
      body: 'name=x',
    });
    expect(noToken.status).toBe(403);
    expect((await server.call('GET', `/projects/${repo.id}`)).json.name).toBe('app');
  });

  it('edits name, description, default role and default branch; a bad name shows the message and keeps the values', async () => {
    const bad = await post('/app/~settings', { form: 'general', name: 'bad name', description: 'Kept text', parent: '', defaultRoleId: '' });
    expect(bad.status).toBe(400);
    const html = decoded(await bad.text());
    expect(html).toContain('Should start with alphanumeric or underscore');
    expect(html).toContain('value="bad name"');
    expect(html).toContain('>Kept text</textarea>');

    const roles = (await server.call('GET', '/roles?name=Code%20Reader')).json as { id: number }[];
    const saved = await post('/app/~settings', { form: 'general', name: 'app', description: 'The app', parent: '', defaultRoleId: String(roles[0].id) });
    expect(saved.status).toBe(303);
    expect(saved.headers.get('location')).toBe('/app/~settings');
    const project = (await server.call('GET', `/projects/${repo.id}`)).json;
    expect(project.description).toBe('The app');
    expect(project.defaultRoleId).toBe(roles[0].id);
    expect(await (await get('/app/~settings')).text()).toContain(`<option value="${roles[0].id}" selected>Code Reader</option>`);
    await post('/app/~settings', { form: 'general', name: 'app', description: 'The app', parent: '', defaultRoleId: '' });
    expect((await server.call('GET', `/projects/${repo.id}`)).json.defaultRoleId).toBeNull();

    expect((await post('/app/~settings/default-branch', { defaultBranch: 'nope' })).status).toBe(400);
    expect((await post('/app/~settings/default-branch', { defaultBranch: 'develop' })).status).toBe(303);
    expect((await server.call('GET', `/repositories/${repo.id}/default-branch`)).text).toBe('develop');
    await post('/app/~settings/default-branch', { defaultBranch: 'main' });
    expect((await server.call('GET', `/repositories/${repo.id}/default-branch`)).text).toBe('main');
  });

  it('renames and moves a project under a parent, refusing an unknown parent and a clash', async () => {
    const created = await post('/~projects/new', { name: 'movable', parent: '', description: '' }, admin);
    expect(created.headers.get('location')).toBe('/movable');
    await post('/~projects/new', { name: 'group', parent: '', description: '' }, admin);
    await post('/~projects/new', { name: 'taken', parent: 'group', description: '' }, admin);
    // the owner of a project is not allowed to create root projects
    expect(await (await get('/~projects')).text()).not.toContain('href="/~projects/new"');
    expect((await post('/~projects/new', { name: 'mine', parent: '' })).status).toBe(403);
    const unknown = await post('/movable/~settings', { form: 'general', name: 'movable', parent: 'nowhere' }, admin);
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain('Parent project not found: nowhere');
    const clash = await post('/movable/~settings', { form: 'general', name: 'taken', parent: 'group' }, admin);
    expect(clash.status).toBe(409);
    expect(decoded(await clash.text())).toContain("Name 'taken' is already used by another project under 'group'");
    const settings = await (await get('/group/~settings', admin)).text();
    expect(settings).toContain('href="/~projects/new?parent=group"');
    expect(await (await get('/~projects/new?parent=group', admin)).text()).toContain('name="parent" type="text" value="group"');
    const moved = await post('/movable/~settings', { form: 'general', name: 'moved', parent: 'group' }, admin);
    expect(moved.status).toBe(303);
    expect(moved.headers.get('location')).toBe('/group/moved/~settings');
    expect((await get('/group/moved/~settings', admin)).status).toBe(200);
    expect((await get('/movable', admin)).status).toBe(404);
  });

  it('adds and removes members with a role; unknown users and duplicates are refused with the message', async () => {
    const roles = (await server.call('GET', '/roles?name=Code%20Reader')).json as { id: number }[];
    const unknown = await post('/app/~settings/members/users', { form: 'add-user', name: 'ghost', roleId: String(roles[0].id) });
    expect(unknown.status).toBe(400);
    const html = await unknown.text();
    expect(html).toContain('User not found: ghost');
    expect(html).toContain('value="ghost"');
    expect((await post('/app/~settings/members/users', { form: 'add-user', name: 'Outsider', roleId: String(roles[0].id) })).status).toBe(303);
    const grants = (await server.call('GET', `/projects/${repo.id}/user-authorizations`)).json as { id: number; userId: number; roleId: number }[];
    const grant = grants.find((g) => g.userId === outsider.id)!;
    expect(grant.roleId).toBe(roles[0].id);
    expect((await get('/app', asOutsider)).status).toBe(200);
    const duplicate = await post('/app/~settings/members/users', { form: 'add-user', name: 'outsider', roleId: String(roles[0].id) });
    expect(duplicate.status).toBe(409);
    const members = await (await get('/app/~settings/members')).text();
    expect(members).toContain('<strong>outsider</strong> · Code Reader');
    expect(members).not.toContain('Groups</h2>');
    const writerRole = (await server.call('GET', '/roles?name=Code%20Writer')).json as { id: number }[];
    expect((await post('/app/~settings/members/users/role', { id: String(grant.id), roleId: String(writerRole[0].id) })).status).toBe(303);
    expect((await server.call('GET', `/user-authorizations/${grant.id}`)).json.roleId).toBe(writerRole[0].id);
    expect((await post('/app/~settings/members/users/role', { id: String(grant.id), roleId: '999' })).status).toBe(400);
    const junk = await post('/app/~settings/members/users/role', { id: String(grant.id), roleId: '1 OR 1' });
    expect(junk.status).toBe(400);
    expect(await junk.text()).toContain('Invalid role: 1 OR 1');
    expect((await post('/app/~settings', { form: 'general', name: 'app', defaultRoleId: '99999999999999999999' })).status).toBe(400);
    expect(await (await get('/app/~settings/members', admin)).text()).toContain('Groups</h2>');
    expect((await post('/app/~settings/members/users/delete', { id: String(grant.id) })).status).toBe(303);
    expect((await get('/app', asOutsider)).status).toBe(404);
    expect((await post('/app/~settings/members/users/delete', { id: String(grant.id) })).status).toBe(404);
    // group authorizations: administrators only
    const groupId = (await server.call('POST', '/groups', { body: { name: 'team' } })).json as number;
    expect((await post('/app/~settings/members/groups', { form: 'add-group', name: 'team', roleId: String(roles[0].id) })).status).toBe(403);
    expect((await post('/app/~settings/members/groups', { form: 'add-group', name: 'Team', roleId: String(roles[0].id) }, admin)).status).toBe(303);
    expect((await server.call('GET', `/projects/${repo.id}/group-authorizations`)).json).toMatchObject([{ groupId, roleId: roles[0].id }]);
  });

  it('adds, edits and deletes branch and tag protections with the API validation messages', async () => {
    const empty = await post('/app/~settings/branch-protection', { form: 'new', index: '', pattern: ' ', userMatch: 'anyone', enabled: 'on' });
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain('branchProtections[0].branches is required');
    const added = await post('/app/~settings/branch-protection', {
      form: 'new',
      index: '',
      pattern: 'main',
      userMatch: 'anyone',
      enabled: 'on',
      preventForcedPush: 'on',
      preventDeletion: 'on',
      jobNames: 'ci, lint',
    });
    expect(added.status).toBe(303);
    expect((await setting()).branchProtections).toMatchObject([
      {
        branches: 'main',
        userMatch: 'anyone',
        enabled: true,
        preventForcedPush: true,
        preventDeletion: true,
        preventCreation: false,
        jobNames: ['ci', 'lint'],
        reviewRequirement: null,
      },
    ]);
    const page = await (await get('/app/~settings/branch-protection')).text();
    expect(page).toContain('<summary>main</summary>');
    expect(page).toContain('id="branch-0-preventForcedPush" name="preventForcedPush" value="on" checked');

    expect((await post('/app/~settings/branch-protection', { form: '0', index: '0', op: 'save', pattern: 'main release/*', userMatch: 'anyone' })).status).toBe(
      303,
    );
    expect((await setting()).branchProtections).toMatchObject([{ branches: 'main release/*', enabled: false, preventForcedPush: false, jobNames: [] }]);
    expect((await post('/app/~settings/branch-protection', { form: '5', index: '5', op: 'save', pattern: 'x' })).status).toBe(400);
    // commit message rules, validated by the API's checks, with the submitted values kept
    const short = await post('/app/~settings/branch-protection', {
      form: '0',
      index: '0',
      op: 'save',
      pattern: 'main release/*',
      maxCommitMessageLineLength: '30',
    });
    expect(short.status).toBe(400);
    const shortHtml = await short.text();
    expect(shortHtml).toContain('branchProtections[0].maxCommitMessageLineLength must be null or an integer of at least 40');
    expect(shortHtml).toContain('id="branch-0-maxCommitMessageLineLength" name="maxCommitMessageLineLength" type="text" value="30"');
    const footer = await post('/app/~settings/branch-protection', {
      form: '0',
      index: '0',
      op: 'save',
      pattern: 'main',
      checkCommitMessageFooter: 'on',
      commitMessageFooterPattern: '(',
    });
    expect(await footer.text()).toContain('branchProtections[0].commitMessageFooterPattern is not a valid regular expression: (');
    expect(
      (
        await post('/app/~settings/branch-protection', {
          form: '0',
          index: '0',
          op: 'save',
          pattern: 'main release/*',
          enforceConventionalCommits: 'on',
          commitTypes: 'feat, fix',
          maxCommitMessageLineLength: '72',
        })
      ).status,
    ).toBe(303);
    expect((await setting()).branchProtections).toMatchObject([
      { enforceConventionalCommits: true, commitTypes: ['feat', 'fix'], commitScopes: [], maxCommitMessageLineLength: 72 },
    ]);
    expect((await post('/app/~settings/branch-protection', { form: '0', index: '0', op: 'delete' })).status).toBe(303);
    expect((await setting()).branchProtections).toEqual([]);

    expect(
      (await post('/app/~settings/tag-protection', { form: 'new', index: '', pattern: 'v*', userMatch: 'anyone', enabled: 'on', preventUpdate: 'on' })).status,
    ).toBe(303);
    expect((await setting()).tagProtections).toMatchObject([{ tags: 'v*', preventUpdate: true, preventDeletion: false }]);
  });

  it("edits a branch protection's file protections: numbered field groups, a blank one adds, blank paths remove", async () => {
    const added = await post('/app/~settings/branch-protection', {
      form: 'new',
      index: '',
      pattern: 'main',
      userMatch: 'anyone',
      enabled: 'on',
      'files-0-paths': 'docs/** README.md',
      'files-0-reviewRequirement': 'user(root):1',
      'files-0-jobNames': 'docs, lint',
    });
    expect(added.status).toBe(303);
    expect((await setting()).branchProtections).toMatchObject([
      {
        branches: 'main',
        fileProtections: [{ paths: 'docs/** README.md', reviewRequirement: 'user(root):1', jobNames: ['docs', 'lint'] }],
      },
    ]);
    const page = await (await get('/app/~settings/branch-protection')).text();
    expect(page).toContain('id="branch-0-files-0-paths" name="files-0-paths" type="text" value="docs/** README.md"');
    expect(page).toContain('id="branch-0-files-1-paths" name="files-1-paths"');
    expect(page).not.toContain('name="files-2-paths"');
    expect(page).toContain('File protection 1: required builds (job names, comma-separated)');

    // the stored group kept, a second added through the blank group
    expect(
      (
        await post('/app/~settings/branch-protection', {
          form: '0',
          index: '0',
          op: 'save',
          pattern: 'main',
          enabled: 'on',
          'files-0-paths': 'docs/** README.md',
          'files-0-reviewRequirement': 'user(root):1',
          'files-0-jobNames': 'docs, lint',
          'files-1-paths': 'src/**',
          'files-1-reviewRequirement': '',
          'files-1-jobNames': 'ci',
        })
      ).status,
    ).toBe(303);
    expect((await setting()).branchProtections[0].fileProtections).toEqual([
      { paths: 'docs/** README.md', reviewRequirement: 'user(root):1', jobNames: ['docs', 'lint'] },
      { paths: 'src/**', reviewRequirement: null, jobNames: ['ci'] },
    ]);
    // blank paths remove the first; a refused save shows what was typed
    const refused = await post('/app/~settings/branch-protection', {
      form: '0',
      index: '0',
      op: 'save',
      pattern: 'main',
      enabled: 'on',
      maxCommitMessageLineLength: '10',
      'files-0-paths': ' ',
      'files-1-paths': 'src/** lib/**',
      'files-1-jobNames': 'ci',
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('name="files-1-paths" type="text" value="src/** lib/**"');
    expect((await setting()).branchProtections[0].fileProtections).toHaveLength(2);
    expect(
      (
        await post('/app/~settings/branch-protection', {
          form: '0',
          index: '0',
          op: 'save',
          pattern: 'main',
          enabled: 'on',
          'files-0-paths': ' ',
          'files-1-paths': 'src/** lib/**',
          'files-1-jobNames': 'ci',
        })
      ).status,
    ).toBe(303);
    expect((await setting()).branchProtections[0].fileProtections).toEqual([{ paths: 'src/** lib/**', reviewRequirement: null, jobNames: ['ci'] }]);
    expect((await post('/app/~settings/branch-protection', { form: '0', index: '0', op: 'delete' })).status).toBe(303);
  });

  it('stores job secrets without ever showing their values, and job properties', async () => {
    const missing = await post('/app/~settings/build/secrets', { form: 'secret-new', index: '', name: 'token', value: '' });
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain('Value is required');
    expect(
      (await post('/app/~settings/build/secrets', { form: 'secret-new', index: '', name: 'token', value: 's3cr3t-value', authorization: '' })).status,
    ).toBe(303);
    expect((await setting()).buildSetting.jobSecrets).toEqual([
      { name: 'token', archived: false, authorizedBranches: null, authorization: null, value: 's3cr3t-value' },
    ]);
    const page = await (await get('/app/~settings/build')).text();
    expect(page).toContain('<summary>token</summary>');
    expect(page).not.toContain('s3cr3t-value');
    // branch limits: a malformed pattern is refused with the form kept, a valid one stored and shown
    const malformed = await post('/app/~settings/build/secrets', {
      form: 'secret-0',
      index: '0',
      op: 'save',
      name: 'token',
      value: '',
      authorizedBranches: '"main',
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.text()).toContain('authorizedBranches: Malformed pattern set');
    expect(
      (
        await post('/app/~settings/build/secrets', {
          form: 'secret-0',
          index: '0',
          op: 'save',
          name: 'token',
          value: '',
          authorizedBranches: 'main release/**',
        })
      ).status,
    ).toBe(303);
    expect((await setting()).buildSetting.jobSecrets).toMatchObject([{ name: 'token', authorizedBranches: 'main release/**', value: 's3cr3t-value' }]);
    expect(await (await get('/app/~settings/build')).text()).toContain('value="main release/**"');
    // saving without a new value keeps the old one; a new value replaces it; errors never echo it
    expect((await post('/app/~settings/build/secrets', { form: 'secret-0', index: '0', op: 'save', name: 'token', value: '', archived: 'on' })).status).toBe(
      303,
    );
    expect((await setting()).buildSetting.jobSecrets).toMatchObject([{ name: 'token', archived: true, value: 's3cr3t-value' }]);
    const clash = await post('/app/~settings/build/secrets', { form: 'secret-new', index: '', name: 'token', value: 'other-secret' });
    expect(clash.status).toBe(400);
    expect(await clash.text()).not.toContain('other-secret');
    expect((await post('/app/~settings/build/secrets', { form: 'secret-0', index: '0', op: 'save', name: 'token', value: 'n3w' })).status).toBe(303);
    expect((await setting()).buildSetting.jobSecrets).toMatchObject([{ name: 'token', archived: false, value: 'n3w' }]);

    expect((await post('/app/~settings/build/properties', { form: 'property-new', index: '', name: 'region', value: 'eu' })).status).toBe(303);
    expect((await setting()).buildSetting.jobProperties).toEqual([{ name: 'region', value: 'eu', archived: false }]);
    expect(await (await get('/app/~settings/build')).text()).toContain('value="eu"');
    expect((await post('/app/~settings/build/secrets', { form: 'secret-0', index: '0', op: 'delete' })).status).toBe(303);
    expect((await setting()).buildSetting.jobSecrets).toEqual([]);
  });

  it('adds and removes labels, creates, edits and deletes milestones', async () => {
    const specId = (await server.call('POST', '/label-specs', { body: { name: 'backend', color: '#112233' } })).json as number;
    expect((await post('/app/~settings/labels', { specId: '999' })).status).toBe(400);
    expect((await post('/app/~settings/labels', { specId: String(specId) })).status).toBe(303);
    const labels = (await server.call('GET', `/projects/${repo.id}/labels`)).json as { id: number; specId: number }[];
    expect(labels).toMatchObject([{ specId }]);
    expect(await (await get('/app/~settings/labels')).text()).toContain('<span class="badge">backend</span>');
    expect((await post('/app/~settings/labels/delete', { id: String(labels[0].id) })).status).toBe(303);
    expect((await server.call('GET', `/projects/${repo.id}/labels`)).json).toEqual([]);

    expect((await post('/app/~settings/milestones', { form: 'new', id: '', name: 'v1', description: 'First', dueDate: '2030-01-31' })).status).toBe(303);
    const duplicate = await post('/app/~settings/milestones', { form: 'new', id: '', name: 'v1', dueDate: 'soon' });
    expect(duplicate.status).toBe(400);
    expect(await duplicate.text()).toContain('Due date is not a date (YYYY-MM-DD): soon');
    const again = await post('/app/~settings/milestones', { form: 'new', id: '', name: 'v1' });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('Milestone name already used in this project: v1');
    const [milestone] = (await server.call('GET', `/projects/${repo.id}/milestones`)).json as { id: number; dueDate: string; description: string }[];
    expect(milestone.description).toBe('First');
    expect(milestone.dueDate).toMatch(/^2030-01-31T00:00:00\.000/);
    expect(
      (await post('/app/~settings/milestones', { form: String(milestone.id), id: String(milestone.id), op: 'save', name: 'v1.0', closed: 'on' })).status,
    ).toBe(303);
    expect((await server.call('GET', `/milestones/${milestone.id}`)).json).toMatchObject({ name: 'v1.0', closed: true, dueDate: null });
    expect(await (await get('/app/~settings/milestones')).text()).toContain('<summary>v1.0 (closed)</summary>');
    expect((await post('/app/~settings/milestones', { form: String(milestone.id), id: String(milestone.id), op: 'delete' })).status).toBe(303);
    expect((await server.call('GET', `/milestones/${milestone.id}`)).status).toBe(404);
  });

  it('creates a project from /~projects/new, refusing a bad name, and links to it for those allowed', async () => {
    expect(await (await get('/~projects', admin)).text()).toContain('href="/~projects/new"');
    expect((await get('/~projects/new', null)).headers.get('location')).toMatch(/^\/~login/);
    const bad = await post('/~projects/new', { name: 'robots.txt', description: 'kept' }, admin);
    expect(bad.status).toBe(400);
    const html = decoded(await bad.text());
    expect(html).toContain("'robots.txt' is a reserved name");
    expect(html).toContain('>kept</textarea>');
    const created = await post('/~projects/new', { name: 'fresh', parent: '', description: 'New one' }, admin);
    expect(created.status).toBe(303);
    expect(created.headers.get('location')).toBe('/fresh');
    const home = await (await get('/fresh', admin)).text();
    expect(home).toContain('This repository is empty');
    expect(home).toContain('New one');
  });

  it('forks a project with its branches; the fork names its origin; readers without code access are refused', async () => {
    const form = await get('/app/~fork', asWriter);
    expect(form.status).toBe(200);
    expect(await form.text()).toContain('value="app"');
    const refused = await post('/app/~fork', { name: 'app', parent: '' }, asWriter);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('Not authorized to create root project');
    const forked = await post('/app/~fork', { name: 'app-fork', parent: '' }, admin);
    expect(forked.status).toBe(303);
    expect(forked.headers.get('location')).toBe('/app-fork');
    const home = await (await get('/app-fork', admin)).text();
    expect(home).toContain('forked from <a href="/app">app</a>');
    const fork = ((await server.call('GET', '/projects?query=%22Name%22%20is%20%22app-fork%22')).json as { id: number; forkedFromId: number }[])[0];
    expect(fork.forkedFromId).toBe(repo.id);
    const branches = (await server.call('GET', `/repositories/${fork.id}/branches`)).json as string[];
    expect(branches.sort()).toEqual(['develop', 'main']);
    expect((await get('/app/~fork', asOutsider)).status).toBe(404);
    expect(await git(repo.work, ['ls-remote', repo.remote.replace('/app', '/app-fork'), 'refs/heads/main'])).toContain(await repo.head('main'));
  });

  it('deletes a project only when its path is typed', async () => {
    await post('/~projects/new', { name: 'doomed', parent: '', description: '' }, admin);
    const wrong = await post('/doomed/~settings/delete', { form: 'delete', confirm: 'nope' }, admin);
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain('Type the project path (doomed) to confirm the deletion');
    expect((await get('/doomed', admin)).status).toBe(200);
    const deleted = await post('/doomed/~settings/delete', { form: 'delete', confirm: 'doomed' }, admin);
    expect(deleted.status).toBe(303);
    expect(deleted.headers.get('location')).toBe('/~projects');
    expect((await get('/doomed', admin)).status).toBe(404);
  });
});
