import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';
import { eventually, givenProject, runJobOnCommit } from '../helpers/fixtures.js';

const SPEC = `version: 25
jobs:
- name: CI
  steps:
  - !CheckoutStep
    name: checkout
    cloneCredential: !DefaultCredential {}
  - !CommandStep
    name: build
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo "building @commit_hash@"
      - mkdir -p dist && cat README.md > dist/out.txt && echo 1.2.@build_number@ > version.txt
  - !SetBuildVersionStep
    name: version
    buildVersion: '@file:version.txt@'
  - !PublishArtifactStep
    name: publish
    artifacts: 'dist/**'
  triggers:
  - !BranchUpdateTrigger
    branches: main
- name: Fail
  steps:
  - !CommandStep
    name: boom
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo about to fail
      - exit 3
- name: Slow
  timeout: 1
  steps:
  - !CommandStep
    name: sleep
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - sleep 30
- name: Release
  jobDependencies:
  - jobName: CI
    requireSuccessful: true
    artifacts: 'dist/**'
    destinationPath: deps
  paramSpecs:
  - !TextParam
    name: channel
    allowEmpty: false
  - !TextParam
    name: token
    allowEmpty: true
  steps:
  - !CommandStep
    name: release
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - cat deps/dist/out.txt
      - echo "channel @param:channel@"
- name: AfterFail
  jobDependencies:
  - jobName: Fail
    requireSuccessful: true
  steps:
  - !CommandStep
    name: never
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo should not run
`;

describe('builds: triggers, executor, logs, artifacts, job runs', () => {
  let server: TestServer;
  let work: string;
  let projectId: number;
  let head: string;

  const build = async (id: number) => (await server.call('GET', `/builds/${id}`)).json;
  const finished = (id: number) =>
    eventually(async () => {
      const b = await build(id);
      return ['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(b.status) ? b : null;
    });
  const run = (jobName: string, params: Record<string, string[]> = {}) => runJobOnCommit(server, { projectId, commitHash: head, jobName, params });

  beforeAll(async () => {
    server = await startTestServer();
    projectId = await givenProject(server, { name: 'ci' });
    work = await makeWorkTree({ 'README.md': '# ci\n', '.onedev-buildspec.yml': SPEC });
    head = (await git(work, ['rev-parse', 'HEAD'])).trim();
    await git(work, ['push', '-q', gitUrl(server, 'ci', { name: 'admin', password: 'admin-secret' }), 'main']);
  });
  afterAll(async () => {
    await server?.close();
    await fs.rm(work, { recursive: true, force: true });
  });

  it('a push triggers CI, which runs, sets the version and publishes an artifact', async () => {
    const list = await eventually(async () => {
      const res = await server.call('GET', '/builds?query=' + encodeURIComponent('"Job" is "CI"') + '&offset=0&count=10');
      return res.json?.length ? res.json : null;
    });
    expect(list).toHaveLength(1);
    const b = await finished(list[0].id);
    expect(b.status).toBe('SUCCESSFUL');
    expect(b.submitterId).toBe(-1);
    expect(b.submitReason).toBe("Branch 'main' is updated");
    expect(b.refName).toBe('refs/heads/main');
    expect(b.commitHash).toBe(head);
    expect(b.version).toBe(`1.2.${b.number}`);
    expect(b.numberScopeId).toBe(projectId);
    const log = await server.call('GET', `/builds/${b.id}/log`);
    expect(log.text).toContain(`building ${head}`);
    expect(log.text).toContain('Job finished');
    const info = await server.call('GET', `/artifacts/${b.id}/infos`);
    expect(info.json['@type']).toBe('DirectoryInfo');
    expect(info.json.children.map((c: any) => c.path)).toEqual(['dist']);
    const file = await server.call('GET', `/artifacts/${b.id}/contents/dist/out.txt`);
    expect(file.status).toBe(200);
    expect(file.text).toBe('# ci\n');
    expect(file.headers.get('content-length')).toBe('5');
    const part = await server.call('GET', `/artifacts/${b.id}/contents/dist/out.txt`, { headers: { range: 'bytes=2-3' } });
    expect(part.status).toBe(206);
    expect(part.text).toBe('ci');
    expect((await server.call('GET', `/artifacts/${b.id}/contents/dist/out.txt`, { headers: { range: 'bytes=50-' } })).status).toBe(416);
  });

  it('a failing step fails the build with the reason in its log', async () => {
    const res = await run('Fail');
    expect(res.status).toBe(200);
    const b = await finished(res.json);
    expect(b.status).toBe('FAILED');
    expect(b.submitReason).toBe('test');
    const log = (await server.call('GET', `/builds/${b.id}/log`)).text;
    expect(log).toContain('about to fail');
    expect(log).toContain('Command exited with code 3');
  });

  it('a dependency chain passes artifacts and params; secret params are masked', async () => {
    const res = await run('Release', { channel: ['beta'], token: ['$OneDev-Secret-Literal$hunter2'] });
    expect(res.status).toBe(200);
    const release = await finished(res.json);
    expect(release.status).toBe('SUCCESSFUL');
    const deps = (await server.call('GET', `/builds/${release.id}/dependencies`)).json;
    expect(deps).toHaveLength(1);
    expect(deps[0]).toMatchObject({ dependentId: release.id, requireSuccessful: true, artifacts: 'dist/**', destinationPath: 'deps' });
    const ci = await build(deps[0].dependencyId);
    expect(ci.jobName).toBe('CI');
    expect(ci.pipeline).toBe(release.pipeline);
    const dependents = (await server.call('GET', `/builds/${ci.id}/dependents`)).json;
    expect(dependents.map((d: any) => d.dependentId)).toEqual([release.id]);
    const log = (await server.call('GET', `/builds/${release.id}/log`)).text;
    expect(log).toContain('# ci');
    expect(log).toContain('channel beta');
    const params = (await server.call('GET', `/builds/${release.id}/params`)).json;
    expect(params.map((p: any) => [p.name, p.type, p.value])).toEqual([
      ['channel', 'Text', 'beta'],
      ['token', 'Text', '$OneDev-Secret-Literal$hunter2'],
    ]);
  });

  it('a failed required dependency fails the dependent', async () => {
    const res = await run('AfterFail');
    const b = await finished(res.json);
    expect(b.status).toBe('FAILED');
    expect((await server.call('GET', `/builds/${b.id}/log`)).text).toContain('Some dependencies are required to be successful but failed');
  });

  it('a timeout ends TIMED_OUT; cancel kills the process', async () => {
    const slow = await run('Slow');
    const b = await finished(slow.json);
    expect(b.status).toBe('TIMED_OUT');

    const running = (await run('Fail')).json;
    await finished(running);
    const again = await runJobOnCommit(server, { projectId, commitHash: head, jobName: 'Slow', reason: 'cancel me' });
    await eventually(async () => (await build(again.json)).status === 'RUNNING');
    expect((await server.call('DELETE', `/job-runs/${again.json}`)).status).toBe(200);
    const cancelled = await finished(again.json);
    expect(cancelled.status).toBe('CANCELLED');
    expect(cancelled.cancellerId).toBe(1);
  });

  it('rejects bad job runs', async () => {
    expect((await run('Release', {})).json.detail).toBe('Missing job parameter (channel)');
    expect((await run('CI', { nope: ['x'] })).json.detail).toBe('Unknown job parameter (nope)');
    expect((await run('Nope')).status).toBe(400);
    const badRef = await runJobOnCommit(server, { projectId, commitHash: head, refName: 'main', jobName: 'CI', reason: 'x' });
    expect(badRef.json.detail).toBe('Ref name should start with refs/');
    const missingRef = await runJobOnCommit(server, { projectId, commitHash: head, refName: 'refs/heads/nope', jobName: 'CI', reason: 'x' });
    expect(missingRef.status).toBe(404);
    expect((await server.call('POST', '/job-runs', { body: { projectId, jobName: 'CI', reason: 'x' } })).status).toBe(400);
  });
});
