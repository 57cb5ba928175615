import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, givenRepo, grantRole, removeWorkTrees, type Repo, runJobOnCommit, type TestUser } from '../helpers/fixtures.js';
import { git, startTestServer, type TestServer } from '../helpers/server.js';
import { openRequest } from './pulls-fixtures.js';

/**
 * The job `Leak` does what a hostile build spec does with a secret: writes `token` and
 * `release` into a published artifact (`token` also through a param), and prints them plainly
 * and base64-encoded. The project's own spec has no trigger for it; the branches of the pull
 * requests below edit the spec to run it on pull requests ({@link LEAK_SPEC}), whose trigger
 * supplies the param as the job secret `token`.
 */
const BASE_SPEC = `version: 25
jobs:
- name: Leak
  paramSpecs:
  - !TextParam
    name: tok
    allowEmpty: true
  steps:
  - !CommandStep
    name: leak
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - mkdir -p out
      - printf %s "@secret:token@" > out/token.txt
      - printf %s "@secret:release@" > out/release.txt
      - printf %s "@param:tok@" > out/param.txt
      - printf %s "@secret:token@" | base64
      - echo "plain @secret:token@ @secret:release@"
  - !PublishArtifactStep
    name: publish
    artifacts: 'out/**'
`;

const LEAK_SPEC = `${BASE_SPEC}  triggers:
  - !PullRequestUpdateTrigger
    branches: main
    params:
    - name: tok
      secret: true
      valuesProvider: !SpecifiedValues
        values:
        - - token
  - !PullRequestMergeTrigger
    branches: main
`;

describe('job secrets: never for pull requests from forks or from authors without write access; limited to branches', () => {
  let server: TestServer;
  let origin: Repo;
  let mallory: TestUser;
  let walter: TestUser;
  let rita: TestUser;
  const token = `tok-${randomUUID()}`;
  const release = `rel-${randomUUID()}`;

  const finished = (id: number) =>
    eventually(async () => {
      const b = (await server.call('GET', `/builds/${id}`)).json;
      return ['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(b?.status) ? b : null;
    }, 60_000);
  const logOf = async (id: number) => (await server.call('GET', `/builds/${id}/log`)).text;
  const artifact = async (id: number, file: string) => {
    const res = await server.call('GET', `/artifacts/${id}/contents/out/${file}`);
    expect(res.status, `${file}: ${res.text}`).toBe(200);
    return res.text;
  };
  /** The first build of a pull request, finished. */
  const requestBuild = async (requestId: number) => {
    const builds = await eventually(async () => {
      const list = (await server.call('GET', `/pulls/${requestId}/current-builds`)).json;
      return list?.length ? list : null;
    }, 30_000);
    expect(builds).toHaveLength(1);
    return finished(builds[0].id);
  };
  const runOn = async (refName: string, commitHash: string, auth?: string) => {
    const res = await runJobOnCommit(server, { projectId: origin.id, commitHash, refName, jobName: 'Leak', params: { tok: ['token'] } }, auth);
    expect(res.status, res.text).toBe(200);
    return finished(res.json as number);
  };
  const setSecrets = async (jobSecrets: unknown[]) => {
    const setting = (await server.call('GET', `/projects/${origin.id}/setting`)).json;
    return server.call('POST', `/projects/${origin.id}/setting`, { body: { ...setting, buildSetting: { ...setting.buildSetting, jobSecrets } } });
  };
  const occurrences = (text: string, part: string) => text.split(part).length - 1;

  beforeAll(async () => {
    server = await startTestServer();
    origin = await givenRepo(server, 'origin', { files: { 'README.md': '# origin\n', '.onedev-buildspec.yml': BASE_SPEC } });
    [mallory, walter, rita] = [await server.createUser('mallory'), await server.createUser('walter'), await server.createUser('rita')];
    await grantRole(server, origin.id, mallory.id, 'Code Reader');
    await grantRole(server, origin.id, walter.id, 'Code Writer');
    await grantRole(server, origin.id, rita.id, 'Code Reader');
    const groupId = (await server.call('POST', '/groups', { body: { name: 'forkers', createRootProjects: true } })).json;
    await server.call('POST', '/memberships', { body: { userId: mallory.id, groupId } });
    const saved = await setSecrets([
      { name: 'token', value: token, authorizedBranches: null, authorization: null, archived: false },
      { name: 'release', value: release, authorizedBranches: 'main release/**', authorization: null, archived: false },
    ]);
    expect(saved.status, saved.text).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await removeWorkTrees();
  });

  it('a Code Reader who forks and opens a pull request with a spec that publishes the secrets gets none of them, until a writer merges it', async () => {
    const fork = await givenRepo(server, 'mallory-fork', { forkOf: origin, auth: mallory.auth, user: mallory });
    await fork.commitOn('steal', { '.onedev-buildspec.yml': LEAK_SPEC }, 'Run the build on pull requests');
    const pr = await openRequest(server, { targetProjectId: origin.id, sourceProjectId: fork.id, targetBranch: 'main', sourceBranch: 'steal' }, mallory.auth);
    expect(pr.status, pr.text).toBe(200);

    const build = await requestBuild(pr.json as number);
    expect(build.status, await logOf(build.id)).toBe('SUCCESSFUL');
    expect(await artifact(build.id, 'token.txt')).toBe('');
    expect(await artifact(build.id, 'release.txt')).toBe('');
    expect(await artifact(build.id, 'param.txt')).toBe('');
    const log = await logOf(build.id);
    expect(occurrences(log, "Secret 'token' withheld: pull request from a fork")).toBe(1);
    expect(occurrences(log, "Secret 'release' withheld: pull request from a fork")).toBe(1);
    for (const form of [token, release, Buffer.from(token).toString('base64')]) expect(log).not.toContain(form);
    expect(log).not.toContain('******');

    // once a writer merges it, the code is the project's: the merge build on main gets the secrets
    expect((await server.call('POST', `/pulls/${pr.json}/merge`, { text: 'Accept' })).status).toBe(200);
    const merged = await eventually(async () => {
      const list = (await server.call('GET', `/builds?query=${encodeURIComponent('"Job" is "Leak"')}&offset=0&count=100`)).json as {
        id: number;
        requestId: number | null;
      }[];
      return list.find((b) => b.requestId === pr.json && b.id !== build.id) ?? null;
    }, 30_000);
    expect((await finished(merged!.id)).status).toBe('SUCCESSFUL');
    expect(await artifact(merged!.id, 'token.txt')).toBe(token);
    expect(await artifact(merged!.id, 'release.txt')).toBe(release);
  });

  it("control: a Code Writer's pull request from a branch of the project gets the unlimited secret, not the one limited to main and release/**", async () => {
    await origin.commitOn('feature', { '.onedev-buildspec.yml': LEAK_SPEC, 'feature.txt': 'work\n' }, 'feature');
    const pr = await openRequest(
      server,
      { targetProjectId: origin.id, sourceProjectId: origin.id, targetBranch: 'main', sourceBranch: 'feature' },
      walter.auth,
    );
    expect(pr.status, pr.text).toBe(200);

    const build = await requestBuild(pr.json as number);
    expect(build.status).toBe('SUCCESSFUL');
    expect(await artifact(build.id, 'token.txt')).toBe(token);
    expect(await artifact(build.id, 'param.txt')).toBe(token);
    expect(await artifact(build.id, 'release.txt')).toBe('');
    const log = await logOf(build.id);
    expect(occurrences(log, "Secret 'release' withheld: not authorized for pull request from branch 'feature' to 'main'")).toBe(1);
    expect(log).not.toContain("Secret 'token' withheld");
    expect(log).toContain('plain ******');
    expect(log).not.toContain(token);
  });

  it('a pull request opened by a Code Reader from a branch a writer pushed gets no secret', async () => {
    await origin.commitOn('reader-work', { '.onedev-buildspec.yml': LEAK_SPEC, 'reader.txt': 'pushed by a writer\n' }, 'reader work');
    const pr = await openRequest(
      server,
      { targetProjectId: origin.id, sourceProjectId: origin.id, targetBranch: 'main', sourceBranch: 'reader-work' },
      rita.auth,
    );
    expect(pr.status, pr.text).toBe(200);

    const build = await requestBuild(pr.json as number);
    expect(build.status).toBe('SUCCESSFUL');
    expect(await artifact(build.id, 'token.txt')).toBe('');
    expect(await artifact(build.id, 'param.txt')).toBe('');
    const log = await logOf(build.id);
    expect(occurrences(log, "Secret 'token' withheld: the pull request's author has no write access to the project")).toBe(1);
    expect(log).not.toContain(token);
  });

  it('a branch build sees a secret limited to branches only on a matching branch; a tag build only when its commit is on one', async () => {
    const main = await runOn('refs/heads/main', await origin.head('main'));
    expect(main.status).toBe('SUCCESSFUL');
    expect(await artifact(main.id, 'token.txt')).toBe(token);
    expect(await artifact(main.id, 'release.txt')).toBe(release);
    expect(await logOf(main.id)).not.toContain('withheld');

    const releaseHead = await origin.commitOn('release/1.0', { 'version.txt': '1.0\n' }, 'release 1.0');
    const onRelease = await runOn('refs/heads/release/1.0', releaseHead);
    expect(await artifact(onRelease.id, 'release.txt')).toBe(release);

    const featureHead = await origin.commitOn('topic', { 'topic.txt': 'topic\n' }, 'topic');
    const topic = await runOn('refs/heads/topic', featureHead);
    expect(topic.status).toBe('SUCCESSFUL');
    expect(await artifact(topic.id, 'token.txt')).toBe(token);
    expect(await artifact(topic.id, 'release.txt')).toBe('');
    const log = await logOf(topic.id);
    expect(occurrences(log, "Secret 'release' withheld: not authorized for branch 'topic'")).toBe(1);
    expect(log).not.toContain(release);

    await git(origin.work, ['tag', 'v-topic', featureHead]);
    await git(origin.work, ['tag', 'v-release', releaseHead]);
    await git(origin.work, ['push', '-q', origin.remote, 'v-topic', 'v-release']);
    const topicTag = await runOn('refs/tags/v-topic', featureHead);
    expect(await artifact(topicTag.id, 'release.txt')).toBe('');
    expect(await logOf(topicTag.id)).toContain("Secret 'release' withheld: its commit is on no authorized branch");
    const releaseTag = await runOn('refs/tags/v-release', releaseHead);
    expect(await artifact(releaseTag.id, 'release.txt')).toBe(release);
  });

  it("OneDev's job match in authorization limits a secret too", async () => {
    const saved = await setSecrets([
      { name: 'token', value: token, authorizedBranches: null, authorization: 'on branch "main" or submitted by user "walter"', archived: false },
      { name: 'release', value: release, authorizedBranches: null, authorization: null, archived: false },
    ]);
    expect(saved.status, saved.text).toBe(200);
    const main = await runOn('refs/heads/main', await origin.head('main'));
    expect(await artifact(main.id, 'token.txt')).toBe(token);
    const topic = await runOn('refs/heads/topic', await origin.head('topic'));
    expect(topic.status).toBe('SUCCESSFUL');
    expect(await artifact(topic.id, 'token.txt')).toBe('');
    expect(await artifact(topic.id, 'release.txt')).toBe(release);
    expect(await logOf(topic.id)).toContain("Secret 'token' withheld: not authorized for branch 'topic'");
    const byWalter = await runOn('refs/heads/topic', await origin.head('topic'), walter.auth);
    expect(await artifact(byWalter.id, 'token.txt')).toBe(token);
  });

  it('stores the branch limits beside the encrypted value, reads them back, and refuses malformed limits with 400', async () => {
    const jobSecrets = [
      { name: 'token', value: token, authorizedBranches: 'main -release/old "with space"', authorization: 'submitted by group "forkers"', archived: false },
    ];
    expect((await setSecrets(jobSecrets)).status).toBe(200);
    expect((await server.call('GET', `/projects/${origin.id}/setting`)).json.buildSetting.jobSecrets).toEqual(jobSecrets);
    const row = await server.server.services.db.selectFrom('projects').select('setting').where('id', '=', origin.id).executeTakeFirstOrThrow();
    expect(row.setting).not.toContain(token);
    expect(JSON.parse(row.setting!).buildSetting.jobSecrets[0].authorizedBranches).toBe('main -release/old "with space"');

    const refusals: [Record<string, unknown>, string][] = [
      [{ authorizedBranches: '"main' }, 'buildSetting.jobSecrets[0].authorizedBranches: Malformed pattern set: unterminated quote'],
      [{ authorizedBranches: 7 }, 'buildSetting.jobSecrets[0].authorizedBranches must be a string or null'],
      [{ authorization: 'on branch main' }, "buildSetting.jobSecrets[0].authorization: Unexpected 'main' at column 11"],
      [{ authorization: 'submitted by user "ghost"' }, 'buildSetting.jobSecrets[0].authorization: Unable to find user with login: ghost'],
      [{ authorization: 'submitted by group "nobody"' }, 'buildSetting.jobSecrets[0].authorization: Unable to find group: nobody'],
      [{ authorization: '"Job" is "Leak"' }, 'buildSetting.jobSecrets[0].authorization: Job criteria is not supported here'],
    ];
    for (const [change, detail] of refusals) {
      const res = await setSecrets([{ name: 'token', value: 'changed', ...change }]);
      expect(res.status, JSON.stringify(change)).toBe(400);
      expect(res.json.detail).toContain(detail);
    }
    expect((await server.call('GET', `/projects/${origin.id}/setting`)).json.buildSetting.jobSecrets).toEqual(jobSecrets);
  });
});
