import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBuildSpec } from '../../src/ci/build-spec.js';
import { ENGINE_UNAVAILABLE } from '../../src/ci/container-engine.js';
import { loadConfig } from '../../src/config.js';
import { createContext, systemActor } from '../../src/domain/context.js';
import { chooseJobExecutor } from '../../src/domain/builds/executor-selection.js';
import { startServer } from '../../src/server.js';
import { eventually, givenRepo, removeWorkTrees, runJobOnCommit, type Repo } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** A job of the spec: one shell step, or (`image`) one step in a container; `executor` its `jobExecutor`. */
function job(name: string, commands: string[], options: { executor?: string; image?: string } = {}): string {
  return [
    `- name: ${name}`,
    ...(options.executor ? [`  jobExecutor: ${JSON.stringify(options.executor)}`] : []),
    '  steps:',
    '  - !CommandStep',
    '    name: run',
    options.image ? `    image: ${options.image}` : '    runInContainer: false',
    '    interpreter: !DefaultInterpreter',
    '      commands:',
    ...commands.map((c) => `      - ${JSON.stringify(c)}`),
  ].join('\n');
}

const SPEC = `version: 25
jobs:
${job('Plain', ['echo plain ran'])}
${job('Named', ['echo named ran'], { executor: 'shell-b' })}
${job('Missing', ['echo never'], { executor: 'nope' })}
${job('Container', ['echo never'], { executor: 'shell-a', image: 'localhost/gitloom-test/none:1' })}
${job('Sleepy', ['echo sleeping', 'sleep 600'], { executor: 'shell-one' })}
${job('Sleepy2', ['echo sleeping', 'sleep 600'], { executor: 'shell-one' })}
${job('Quick', ['echo quick ran'], { executor: 'shell-one' })}
${job('InImage', ['echo never'], { image: 'localhost/gitloom-test/none:1' })}
${job('ByParam', ['echo by param'], { executor: '@project_name@-a' })}
`;

/** Job executors selection and per-executor concurrency (docs/compatibility.md#builds-job-executors; OneDev DefaultJobManager). */
describe('job executors: which executor runs a build', () => {
  let server: TestServer;
  let repo: Repo;
  let head: string;
  beforeAll(async () => {
    server = await startTestServer();
    repo = await givenRepo(server, 'exec', { files: { '.onedev-buildspec.yml': SPEC } });
    head = await repo.head('main');
  });
  afterAll(async () => {
    await server?.close();
    await removeWorkTrees();
  });

  const setExecutors = async (executors: unknown[]) => {
    const res = await server.call('POST', '/settings/job-executors', { body: executors });
    expect(res.status, res.text).toBe(200);
  };
  const shell = (name: string, more: Record<string, unknown> = {}) => ({ '@type': 'ServerShellExecutor', name, ...more });
  const run = async (jobName: string) => {
    const res = await runJobOnCommit(server, { projectId: repo.id, commitHash: head, jobName });
    expect(res.status, res.text).toBe(200);
    return res.json as number;
  };
  const status = async (id: number) => (await server.call('GET', `/builds/${id}`)).json.status as string;
  const finished = async (id: number) => {
    const final = await eventually(async () => {
      const s = await status(id);
      return ['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(s) ? s : null;
    }, 60_000);
    return { status: final, log: (await server.call('GET', `/builds/${id}/log`)).text };
  };

  it('auto-discovers an executor when none is configured, as OneDev names it', async () => {
    const { status, log } = await finished(await run('Plain'));
    expect(status, log).toBe('SUCCESSFUL');
    expect(log).toContain('No job executor defined, auto-discovering...');
    // podman is installed here: a container engine can be had
    expect(log).toContain('Discovered job executor type: Server Docker Executor');
    expect(log).toContain('Executing job (executor: auto-discovered, ');
  });

  it('auto-discovers a server shell executor where no container engine can be had, telling a job that needs one what to install', async () => {
    const id = await run('Plain');
    await finished(id);
    const ctx = createContext(server.server.services, systemActor);
    const build = await ctx.db.selectFrom('builds').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const spec = parseBuildSpec(SPEC);
    const choose = (jobName: string) =>
      chooseJobExecutor(
        ctx,
        build,
        spec,
        spec.jobs.find((j) => j.name === jobName)!,
        () => 'ServerShellExecutor',
      );
    const plain = await choose('Plain');
    expect(plain).toMatchObject({ executor: { kind: 'ServerShellExecutor', name: 'auto-discovered' } });
    expect('executor' in plain && plain.executor.discovery).toEqual([
      'No job executor defined, auto-discovering...',
      'Discovered job executor type: Server Shell Executor',
    ]);
    const inImage = await choose('InImage');
    expect('executor' in inImage && inImage.executor.discovery).toContain(ENGINE_UNAVAILABLE);
  });

  it('runs a job on the executor its jobExecutor names, else on the first enabled one whose requirement accepts it', async () => {
    await setExecutors([
      shell('shell-a', { jobRequirement: 'on branch "release/**"' }),
      shell('shell-disabled', { enabled: false }),
      shell('shell-b', { jobRequirement: '"Project" is "exec" and "Job" is "Named" or "Job" is "Plain"' }),
      shell('exec-a'),
    ]);
    const named = await finished(await run('Named'));
    expect(named.status, named.log).toBe('SUCCESSFUL');
    expect(named.log).toContain('Executing job (executor: shell-b, ');
    expect(named.log).not.toContain('auto-discovering');
    const plain = await finished(await run('Plain'));
    expect(plain.status, plain.log).toBe('SUCCESSFUL');
    expect(plain.log).toContain('Executing job (executor: shell-b, ');
    // the name may use variables
    const byParam = await finished(await run('ByParam'));
    expect(byParam.status, byParam.log).toBe('SUCCESSFUL');
    expect(byParam.log).toContain('Executing job (executor: exec-a, ');
  });

  it("fails a build whose executor is missing, disabled or does not accept it, in OneDev's words", async () => {
    await setExecutors([shell('shell-a', { jobRequirement: 'on branch "release/**"' }), shell('shell-b', { enabled: false })]);
    const missing = await finished(await run('Missing'));
    expect(missing.status).toBe('FAILED');
    expect(missing.log).toContain("Unable to find specified job executor 'nope'");
    const disabled = await finished(await run('Named'));
    expect(disabled.status).toBe('FAILED');
    expect(disabled.log).toContain("Specified job executor 'shell-b' is disabled");
    const none = await finished(await run('Plain'));
    expect(none.status).toBe('FAILED');
    expect(none.log).toContain('No applicable job executor');
    expect(none.log).not.toContain('Executing job');
  });

  it("matches a pull request build's requirement as its source branch and as its target branch", async () => {
    await repo.commitOn('feature', { 'feature.txt': 'x\n' }, 'feature work');
    const pr = await server.call('POST', '/pulls', {
      body: { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'feature', title: 'Feature' },
    });
    expect(pr.status, pr.text).toBe(200);
    const runOnPr = async () => {
      const res = await server.call('POST', '/job-runs', {
        body: { '@type': 'JobRunOnPullRequest', pullRequestId: pr.json, jobName: 'Plain', params: {}, reason: 'pr' },
      });
      expect(res.status, res.text).toBe(200);
      return finished(res.json as number);
    };
    await setExecutors([shell('main-only', { jobRequirement: 'on branch "main"' })]);
    expect((await runOnPr()).log).toContain('No applicable job executor');
    await setExecutors([
      shell('main-only', { jobRequirement: 'on branch "main"' }),
      shell('both', { jobRequirement: 'on branch "main" or on branch "feature"' }),
    ]);
    const both = await runOnPr();
    expect(both.status, both.log).toBe('SUCCESSFUL');
    expect(both.log).toContain('Executing job (executor: both, ');
  });

  it('refuses a container step on a server shell executor before the first step', async () => {
    await setExecutors([shell('shell-a')]);
    const { status, log } = await finished(await run('Container'));
    expect(status).toBe('FAILED');
    expect(log).toContain('Executing job (executor: shell-a, ');
    expect(log).toContain('This step can only be executed by server docker executor, remote docker executor, or kubernetes executor');
    expect(log).not.toContain('Running step');
  });

  it("keeps a build PENDING while its executor's concurrency is taken, and runs it when a slot frees", async () => {
    await setExecutors([shell('shell-one', { concurrency: '1' }), shell('shell-b')]);
    const sleepy = await run('Sleepy');
    await eventually(async () => (await server.call('GET', `/builds/${sleepy}/log`)).text.includes('sleeping'), 60_000);
    const quick = await run('Quick');
    // another executor's build runs meanwhile
    const other = await finished(await run('Named'));
    expect(other.status, other.log).toBe('SUCCESSFUL');
    await new Promise((r) => setTimeout(r, 1500));
    expect(await status(quick)).toBe('PENDING');
    expect(await status(sleepy)).toBe('RUNNING');
    expect((await server.call('DELETE', `/job-runs/${sleepy}`)).status).toBe(200);
    const after = await finished(quick);
    expect(after.status, after.log).toBe('SUCCESSFUL');
    expect(after.log).toContain('quick ran');
  });

  it("counts an executor's concurrency per server process: two processes each run one, a third build waits, each runs once", async () => {
    const config = server.server.services.config;
    const other = await startServer(
      loadConfig(
        {
          GITLOOM_HOST: '127.0.0.1',
          GITLOOM_SSH_PORT: '0',
          GITLOOM_JOB_CONCURRENCY: '2',
          ...(config.databaseUrl && { GITLOOM_DATABASE_URL: config.databaseUrl }),
        },
        { port: 0, dataDir: config.dataDir },
      ),
      { logger: false },
    );
    try {
      await setExecutors([shell('shell-one', { concurrency: '1' })]);
      const sleepers = [await run('Sleepy'), await run('Sleepy2')];
      for (const id of sleepers) await eventually(async () => (await server.call('GET', `/builds/${id}/log`)).text.includes('sleeping'), 60_000);
      const quick = await run('Quick');
      await new Promise((r) => setTimeout(r, 1500));
      expect(await status(quick)).toBe('PENDING');
      const owners = await server.server.services.db.selectFrom('builds').select('leaseOwner').where('id', 'in', sleepers).execute();
      expect(new Set(owners.map((o) => o.leaseOwner)).size).toBe(2);
      for (const id of sleepers) expect((await server.call('DELETE', `/job-runs/${id}`)).status).toBe(200);
      const after = await finished(quick);
      expect(after.status, after.log).toBe('SUCCESSFUL');
      expect(after.log.split('Executing job').length - 1).toBe(1);
    } finally {
      await other.close();
    }
  });
});
