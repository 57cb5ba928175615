import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, givenRepo, removeWorkTrees, type Repo, runJobOnCommit } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const STEP = (command: string) => `  steps:
  - !CommandStep
    name: run
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - ${command}
`;

const ON_MAIN = `  triggers:
  - !BranchUpdateTrigger
    branches: main
`;

/** Two jobs run by every push to main: one whose param default fails its pattern, one without params. */
const SPEC = `version: 25
jobs:
- name: Versioned
  paramSpecs:
  - !TextParam
    name: version
    pattern: '\\d+(\\.\\d+)*'
    defaultValueProvider: !SpecifiedDefaultValue
      value: latest
${STEP('echo "version @param:version@"')}${ON_MAIN}- name: Plain
${STEP('echo plain')}${ON_MAIN}`;

const REFUSAL = 'Value of job parameter (version) does not match pattern \\d+(\\.\\d+)*';

/**
 * A push-triggered job the spec refuses to submit (here: its param default fails the param's
 * pattern) gets a build that FAILED at once with the reason in its log, as GitHub and GitLab
 * show a failed run; the push's journal entry completes on its first pass and the push's other
 * reactions — another job's build — happen.
 */
describe('refused trigger submissions', () => {
  let server: TestServer;
  let repo: Repo;

  const builds = async (job: string) => {
    const query = `"Project" is "refused" and "Job" is "${job}"`;
    const res = await server.call('GET', `/builds?query=${encodeURIComponent(query)}&offset=0&count=10`);
    expect(res.status, res.text).toBe(200);
    return res.json as { id: number; status: string; commitHash: string; submitReason: string }[];
  };
  const journal = (ref: string) =>
    server.server.services.db.selectFrom('refJournal').select(['newHash', 'processedDate', 'attempts']).where('ref', '=', ref).orderBy('id').execute();

  beforeAll(async () => {
    // a failed reaction is retried after 60 s: a push whose entry needs a second pass never settles within the test
    server = await startTestServer({ GITLOOM_JOURNAL_RETRY_MS: '60000' });
    repo = await givenRepo(server, 'refused', { files: { 'README.md': '# refused\n', '.onedev-buildspec.yml': SPEC } });
  });
  afterAll(async () => {
    await server?.close();
    await removeWorkTrees();
  });

  it("a push gives the refused job a FAILED build with the reason in its log; the push's other job runs", async () => {
    const head = await repo.head('main');
    const entries = await eventually(async () => {
      const rows = await journal('refs/heads/main');
      return rows.length === 1 && rows[0].processedDate !== null ? rows : null;
    });
    expect(entries).toMatchObject([{ newHash: head, attempts: 0 }]);

    const refused = await builds('Versioned');
    expect(refused).toMatchObject([{ status: 'FAILED', commitHash: head, submitReason: "Branch 'main' is updated" }]);
    const log = (await server.call('GET', `/builds/${refused[0].id}/log`)).text;
    expect(log).toContain(`Job 'Versioned' could not be submitted: ${REFUSAL}`);
    expect(log).toContain('Job failed');
    expect((await server.call('GET', `/builds/${refused[0].id}/params`)).json).toMatchObject([{ name: 'version', type: 'Text', value: 'latest' }]);

    const plain = await eventually(async () => {
      const list = await builds('Plain');
      return list.length === 1 && ['SUCCESSFUL', 'FAILED'].includes(list[0].status) ? list : null;
    }, 60_000);
    expect(plain).toMatchObject([{ status: 'SUCCESSFUL', commitHash: head }]);
  });

  it('every push shows it again; a job run asked for over the API still answers 400, and a matching value runs', async () => {
    const next = await repo.commitOn('main', { 'next.txt': 'next\n' }, 'Next');
    const refused = await eventually(async () => {
      const list = (await builds('Versioned')).filter((b) => b.commitHash === next);
      return list.length > 0 ? list : null;
    });
    expect(refused).toMatchObject([{ status: 'FAILED' }]);
    expect((await journal('refs/heads/main')).map((e) => e.attempts)).toEqual([0, 0]);

    const run = (version: string) => runJobOnCommit(server, { projectId: repo.id, commitHash: next, jobName: 'Versioned', params: { version: [version] } });
    const answer = await run('latest');
    expect(answer.status).toBe(400);
    expect(answer.json.detail).toBe(REFUSAL);
    const accepted = await run('1.2');
    expect(accepted.status, accepted.text).toBe(200);
    expect((await builds('Versioned')).filter((b) => b.commitHash === next)).toHaveLength(2);
  });
});
