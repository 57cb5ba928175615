import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { givenRepo, givenUsers, removeWorkTrees, type Repo, runJobOnCommit, type TestUser } from '../helpers/fixtures.js';
import { ADMIN, commitFiles, git, gitFails, startTestServer, type TestServer } from '../helpers/server.js';

const SPEC = `version: 25
jobs:
- name: CI build
  steps:
  - !CommandStep
    name: build
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo build
- name: Deploy
  steps:
  - !CommandStep
    name: deploy
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo deploy
`;

const LONG = 'a'.repeat(1001);
const TOO_LONG = 'Malformed pattern set: a pattern is longer than 1000 characters (1001)';

/**
 * Patterns stored in settings — branch, tag and file protections, job secrets' authorizations,
 * role job privileges — are read on save with the parser their matchers use: a malformed or
 * over-long one is refused with 400 naming the field, through the API and the settings pages,
 * instead of being stored to silently match nothing (a protection that protects nothing).
 */
describe('patterns stored in settings', () => {
  let server: TestServer;
  let repo: Repo;
  let web: WebSession;
  let runner: TestUser;

  const setting = async () => {
    const res = await server.call('GET', `/projects/${repo.id}/setting`);
    expect(res.status, res.text).toBe(200);
    return res.json as Record<string, any>;
  };
  const post = (path: string, fields: Record<string, string>) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: web.cookie },
      body: new URLSearchParams({ _csrf: web.csrfToken, ...fields }).toString(),
    });

  beforeAll(async () => {
    server = await startTestServer();
    repo = await givenRepo(server, 'guarded', { files: { 'README.md': '# guarded\n', '.onedev-buildspec.yml': SPEC } });
    web = await signInByFetch(server, ADMIN.name, ADMIN.password);
    [runner] = await givenUsers(server, 'runner');
  });
  afterAll(async () => {
    await server?.close();
    await removeWorkTrees();
  });

  describe('project settings', () => {
    it('refuses malformed and over-long protection and authorization patterns, naming the field; the setting stays as it was', async () => {
      const before = await setting();
      const cases: [Record<string, unknown>, string][] = [
        [{ branchProtections: [{ branches: '"main' }] }, `branchProtections[0].branches: Malformed pattern set: unterminated quote in '"main'`],
        [{ branchProtections: [{ branches: 'main' }, { branches: `main ${LONG}` }] }, `branchProtections[1].branches: ${TOO_LONG}`],
        [
          { branchProtections: [{ branches: 'main', fileProtections: [{ paths: 'src/\\' }] }] },
          `branchProtections[0].fileProtections[0].paths: Malformed pattern set: dangling escape in 'src/\\'`,
        ],
        [{ branchProtections: [{ branches: 'main', fileProtections: [{ paths: LONG }] }] }, `branchProtections[0].fileProtections[0].paths: ${TOO_LONG}`],
        [{ tagProtections: [{ tags: 'v* "rc' }] }, `tagProtections[0].tags: Malformed pattern set: unterminated quote in 'v* "rc'`],
        [{ tagProtections: [{ tags: LONG }] }, `tagProtections[0].tags: ${TOO_LONG}`],
        [
          {
            buildSetting: {
              ...before.buildSetting,
              jobSecrets: [{ name: 'token', value: 'secret', authorizedBranches: null, authorization: `on branch "${LONG}"` }],
            },
          },
          'buildSetting.jobSecrets[0].authorization: Pattern is longer than 1000 characters (1001)',
        ],
      ];
      for (const [part, detail] of cases) {
        const res = await server.call('POST', `/projects/${repo.id}/setting`, { body: { ...before, ...part } });
        expect(res.status, detail).toBe(400);
        expect(res.headers.get('content-type')).toContain('application/problem+json');
        expect(res.json).toMatchObject({ status: 400, detail });
        expect(await setting()).toEqual(before);
      }
    });

    it('the control: well-formed patterns of up to 1,000 characters are stored and protect the branch', async () => {
      const before = await setting();
      const branchProtections = [
        { branches: `"main" release/** ${'b'.repeat(1000)}`, fileProtections: [{ paths: 'src/** -src/generated/**', reviewRequirement: null, jobNames: [] }] },
      ];
      const res = await server.call('POST', `/projects/${repo.id}/setting`, { body: { ...before, branchProtections, tagProtections: [{ tags: 'v*' }] } });
      expect(res.status, res.text).toBe(200);
      const stored = await setting();
      expect(stored.branchProtections[0]).toMatchObject(branchProtections[0]);
      expect(stored.tagProtections[0]).toMatchObject({ tags: 'v*' });

      const head = await repo.head('main');
      await git(repo.work, ['fetch', '-q', repo.remote, 'main']);
      await git(repo.work, ['checkout', '-q', '-B', 'main', 'FETCH_HEAD']);
      await git(repo.work, ['commit', '-q', '--amend', '-m', 'rewritten']);
      expect(await gitFails(repo.work, ['push', '-f', repo.remote, 'main'])).toContain('Can not force-push to this branch');
      expect(await repo.head('main')).toBe(head);
      await git(repo.work, ['reset', '-q', '--hard', head]);
    });

    it('the settings page shows the refusal and keeps the rules as they were', async () => {
      const before = await setting();
      const refused = await post('/guarded/~settings/branch-protection', {
        form: 'new',
        index: '',
        pattern: 'main "release',
        userMatch: 'anyone',
        enabled: 'on',
      });
      expect(refused.status).toBe(400);
      expect(await refused.text()).toContain('branchProtections[1].branches: Malformed pattern set: unterminated quote in');
      const tags = await post('/guarded/~settings/tag-protection', { form: 'new', index: '', pattern: LONG, userMatch: 'anyone', enabled: 'on' });
      expect(tags.status).toBe(400);
      expect(await tags.text()).toContain(`tagProtections[1].tags: ${TOO_LONG}`);
      expect(await setting()).toEqual(before);
      // the control
      const added = await post('/guarded/~settings/branch-protection', {
        form: 'new',
        index: '',
        pattern: 'hotfix/*',
        userMatch: 'anyone',
        enabled: 'on',
        preventCreation: 'on',
      });
      expect(added.status).toBe(303);
      expect((await setting()).branchProtections.map((p: { branches: string }) => p.branches)).toEqual([before.branchProtections[0].branches, 'hotfix/*']);
      await commitFiles(repo.work, { 'h.txt': 'h\n' }, 'hotfix');
      expect(await gitFails(repo.work, ['push', repo.remote, 'HEAD:hotfix/1'])).toContain('Can not create this branch');
    });
  });

  describe('role job privileges', () => {
    const privilege = (jobNames: string, accessibleReports: string | null = null) => ({
      jobNames,
      runJob: true,
      manageJob: false,
      accessLog: false,
      accessibleReports,
    });
    const run = async (jobName: string) => runJobOnCommit(server, { projectId: repo.id, commitHash: await repo.head('main'), jobName }, runner.auth);
    let roleId: number;

    it('refuses malformed and over-long job and report patterns on create and update, naming the field', async () => {
      for (const [privileges, detail] of [
        [[privilege('"CI')], `jobPrivileges[0].jobNames: Malformed pattern set: unterminated quote in '"CI'`],
        [[privilege('Deploy'), privilege(`CI* ${LONG}`)], `jobPrivileges[1].jobNames: ${TOO_LONG}`],
        [[privilege('CI*', 'coverage\\')], `jobPrivileges[0].accessibleReports: Malformed pattern set: dangling escape in 'coverage\\'`],
      ] as const) {
        const res = await server.call('POST', '/roles', { body: { name: 'CI runner', codePrivilege: 'READ', jobPrivileges: privileges } });
        expect(res.status, detail).toBe(400);
        expect(res.json).toMatchObject({ status: 400, detail });
      }
      expect((await server.call('GET', '/roles?name=CI runner')).json).toEqual([]);

      const created = await server.call('POST', '/roles', {
        body: { name: 'CI runner', codePrivilege: 'READ', jobPrivileges: [privilege('CI*', 'coverage')] },
      });
      expect(created.status, created.text).toBe(200);
      roleId = created.json;
      const update = await server.call('POST', `/roles/${roleId}`, { body: { jobPrivileges: [privilege(LONG)] } });
      expect(update.status).toBe(400);
      expect(update.json.detail).toBe(`jobPrivileges[0].jobNames: ${TOO_LONG}`);
      expect((await server.call('GET', `/roles/${roleId}`)).json.jobPrivileges).toEqual([privilege('CI*', 'coverage')]);

      const page = await post('/~administration/roles/new', { name: 'Web runner', codePrivilege: 'READ', fieldSet: 'AllIssueFields', 'job0.jobNames': '"CI' });
      expect(await page.text()).toContain('jobPrivileges[0].jobNames: Malformed pattern set: unterminated quote in');
      expect((await server.call('GET', '/roles?name=Web runner')).json).toEqual([]);
    });

    it('the control: a stored job pattern grants what it names', async () => {
      const granted = await server.call('POST', '/user-authorizations', { body: { projectId: repo.id, userId: runner.id, roleId } });
      expect(granted.status, granted.text).toBe(200);
      const allowed = await run('CI build');
      expect(allowed.status, allowed.text).toBe(200);
      expect((await run('Deploy')).status).toBe(403);
    });
  });
});
