import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git, startTestServer, type TestServer } from '../helpers/server.js';
import { givenRepo, grantRole, removeWorkTrees, type Repo } from '../helpers/fixtures.js';

const SPEC = `version: 25
jobs:
- name: Deploy
  paramSpecs:
  - !TextParam
    name: channel
    allowEmpty: false
  - !ChoiceParam
    name: targets
    allowMultiple: true
    allowEmpty: true
    choiceProvider: !SpecifiedChoices
      choices:
      - value: a
      - value: b
      - value: x
  steps:
  - !CommandStep
    name: deploy
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo "deploying to @param:channel@"
`;

describe('/~api/trigger-job (docs/compatibility.md#builds-trigger-job)', () => {
  let server: TestServer;
  let repo: Repo;
  let adminToken: string;
  let readerToken: string;
  let outsiderToken: string;
  let readerId: number;

  /** Calls trigger-job anonymously with `query` as the query string. */
  const trigger = (query: string, method = 'GET', text?: string) =>
    server.call(method, `/trigger-job?${query}`, { auth: null, ...(text !== undefined && { text }) });
  const token = async (userId: number, auth?: string) =>
    (await server.call('POST', `/users/${userId}/access-tokens`, { body: {}, ...(auth && { auth }) })).text;

  beforeAll(async () => {
    server = await startTestServer();
    repo = await givenRepo(server, 'svc', { files: { 'README.md': '# svc\n', '.onedev-buildspec.yml': SPEC } });
    await git(repo.work, ['tag', '-a', 'v1', '-m', 'release 1']);
    await git(repo.work, ['push', '-q', repo.remote, 'v1']);
    adminToken = await token(1);
    const reader = await server.createUser('reader');
    readerId = reader.id;
    await grantRole(server, repo.id, reader.id, 'Code Reader');
    readerToken = await token(reader.id, reader.auth);
    const outsider = await server.createUser('outsider');
    outsiderToken = await token(outsider.id, outsider.auth);
  });
  afterAll(async () => {
    await server?.close();
    await removeWorkTrees();
  });

  it('runs the job on the branch head as the token owner, anonymously, with extra params as job params', async () => {
    const res = await trigger(`project=SVC&job=Deploy&branch=main&access-token=${adminToken}&channel=beta&targets=a&targets=b`);
    expect(res.status).toBe(200);
    expect(typeof res.json).toBe('number');
    const build = (await server.call('GET', `/builds/${res.json}`)).json;
    expect(build).toMatchObject({
      projectId: repo.id,
      jobName: 'Deploy',
      refName: 'refs/heads/main',
      commitHash: await repo.head('main'),
      submitterId: 1,
      submitReason: 'Triggered via restful api',
    });
    const params = (await server.call('GET', `/builds/${res.json}/params`)).json;
    expect(params.map((p: any) => [p.name, p.value])).toEqual([
      ['channel', 'beta'],
      ['targets', 'a'],
      ['targets', 'b'],
    ]);
  });

  it('accepts POST, ignores any body and builds the commit an annotated tag points to', async () => {
    const res = await trigger(`project=svc&job=Deploy&tag=v1&access-token=${adminToken}&channel=prod&targets=x`, 'POST', '{not json');
    expect(res.status).toBe(200);
    const build = (await server.call('GET', `/builds/${res.json}`)).json;
    expect(build).toMatchObject({ refName: 'refs/tags/v1', commitHash: await repo.head('main') });
  });

  it('keeps the required-param check: 400 Missing query params', async () => {
    const res = await trigger('branch=main');
    expect(res.status).toBe(400);
    expect(res.json.detail).toBe('Missing query params: [project, job, access-token]');
    expect((await trigger(`project=svc&job=Deploy&branch=main`)).json.detail).toBe('Missing query params: [access-token]');
  });

  it('refuses an unknown project (404), a bad token (401), a bad branch/tag choice (400) and an unknown ref (404)', async () => {
    const unknown = await trigger(`project=nope&job=Deploy&branch=main&access-token=${adminToken}&channel=x`);
    expect([unknown.status, unknown.json.detail]).toEqual([404, 'Project not found: nope']);
    const badToken = await trigger('project=svc&job=Deploy&branch=main&access-token=wrong&channel=x');
    expect([badToken.status, badToken.json.detail]).toEqual([401, 'Invalid access token']);
    const neither = await trigger(`project=svc&job=Deploy&access-token=${adminToken}&channel=x`);
    expect([neither.status, neither.json.detail]).toEqual([400, 'Either branch or tag should be specified']);
    const both = await trigger(`project=svc&job=Deploy&branch=main&tag=v1&access-token=${adminToken}&channel=x`);
    expect([both.status, both.json.detail]).toEqual([400, 'Either branch or tag should be specified, but not both']);
    const ref = await trigger(`project=svc&job=Deploy&branch=gone&access-token=${adminToken}&channel=x`);
    expect([ref.status, ref.json.detail]).toEqual([404, 'Ref not found: refs/heads/gone']);
  });

  it('checks the token before the project: an anonymous caller cannot tell a private project from none', async () => {
    const other = await server.call('POST', '/projects', { body: { name: 'hidden' } });
    expect(other.status).toBe(200);
    for (const token of ['wrong', 'a'.repeat(40), '']) {
      const answers = [];
      for (const project of ['svc', 'hidden', 'nope', 'SVC']) {
        const res = await trigger(`project=${project}&job=Deploy&branch=main&access-token=${token || 'x'}&channel=x`);
        answers.push([res.status, res.json.detail, res.json.code]);
      }
      expect(answers, token).toEqual(Array(4).fill([401, 'Invalid access token', 'GITLOOM_ERR_UNAUTHORIZED']));
    }
    // a valid token whose owner cannot see the project: the same 404 as for a project that does not exist
    const hidden = await trigger(`project=hidden&job=Deploy&branch=main&access-token=${outsiderToken}&channel=x`);
    const none = await trigger(`project=nope&job=Deploy&branch=main&access-token=${outsiderToken}&channel=x`);
    expect([hidden.status, hidden.json.detail]).toEqual([404, 'Project not found: hidden']);
    expect([none.status, none.json.detail]).toEqual([404, 'Project not found: nope']);
    // control: the owner's token reaches the project (an empty one: its branch is what is missing)
    const owner = await trigger(`project=hidden&job=Deploy&branch=main&access-token=${adminToken}&channel=x`);
    expect([owner.status, owner.json.detail]).toEqual([404, 'Ref not found: refs/heads/main']);
  });

  it('needs the token owner to see the project (404) and to hold RunJob (403)', async () => {
    const outsider = await trigger(`project=svc&job=Deploy&branch=main&access-token=${outsiderToken}&channel=x`);
    expect([outsider.status, outsider.json.detail]).toEqual([404, 'Project not found: svc']);
    const reader = await trigger(`project=svc&job=Deploy&branch=main&access-token=${readerToken}&channel=x`);
    expect(reader.status).toBe(403);
    const builds = (await server.call('GET', `/builds?offset=0&count=100`)).json as { submitterId: number }[];
    expect(builds.filter((b) => b.submitterId === readerId)).toEqual([]);
  });

  it('checks job params as Run Build does: missing and unknown ones are 400', async () => {
    const missing = await trigger(`project=svc&job=Deploy&branch=main&access-token=${adminToken}`);
    expect(missing.status).toBe(400);
    expect(missing.json.detail).toContain('channel');
    const unknown = await trigger(`project=svc&job=Deploy&branch=main&access-token=${adminToken}&channel=x&cachebuster=1`);
    expect(unknown.status).toBe(400);
    expect(unknown.json.detail).toContain('cachebuster');
  });

  it('the exemptions belong to this route only', async () => {
    expect((await server.call('POST', '/projects', { body: { name: 'x' }, auth: null })).status).toBe(401);
    const extra = await server.call('GET', `/projects/${repo.id}?channel=x`);
    expect([extra.status, extra.json.detail]).toEqual([400, 'Unexpected query params: [channel]']);
  });
});
