import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, basic, git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';
import { eventually, givenProject, givenRepo, removeWorkTrees } from '../helpers/fixtures.js';
import { answersWhile } from '../helpers/responsive.js';

/** `^(a+)+$` against 29 `a` and a `!`: minutes in a backtracking engine, one pass in RE2. */
const HOSTILE_PATTERN = '^(a+)+$';
const HOSTILE_VALUE = `${'a'.repeat(29)}!`;
const NO_MATCH = `Value of job parameter (word) does not match pattern ${HOSTILE_PATTERN}`;

/** A job with one patterned TextParam whose default is `value`, run on every push to main. */
function patternJob(name: string, pattern: string, value: string): string {
  return `- name: ${name}
  paramSpecs:
  - !TextParam
    name: word
    pattern: '${pattern}'
    defaultValueProvider: !SpecifiedDefaultValue
      value: '${value}'
  steps:
  - !CommandStep
    name: echo
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo "word @param:word@"
  triggers:
  - !BranchUpdateTrigger
    branches: main
`;
}

/**
 * User-supplied patterns never run in a backtracking engine or unbounded on the event loop
 * (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input): build spec TextParam patterns and the path globs of the query languages.
 * Server and client share one event loop here, so a blocked server also keeps the client's
 * deadline timers from firing until it lets go: a deadline that fires at all fails the test.
 */
describe('hostile patterns', () => {
  let server: TestServer;
  const dirs: string[] = [];
  const adminAuth = basic(ADMIN.name, ADMIN.password);

  const meWhile = <T>(work: Promise<T>): Promise<T> => answersWhile(server, work);

  /** An API call with a deadline. */
  async function call(method: string, route: string, body?: unknown): Promise<{ status: number; json: any }> {
    const res = await fetch(`${server.api}${route}`, {
      method,
      headers: { authorization: adminAuth, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(5000),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : undefined };
  }

  async function pushProject(name: string, spec: string): Promise<{ id: number; head: string; push: Promise<string> }> {
    const id = await givenProject(server, { name });
    const dir = await makeWorkTree({ 'README.md': `# ${name}\n`, '.onedev-buildspec.yml': spec });
    dirs.push(dir);
    const head = (await git(dir, ['rev-parse', 'HEAD'])).trim();
    return { id, head, push: git(dir, ['push', '-q', gitUrl(server, name, ADMIN), 'main']) };
  }

  /** Builds of a top-level project's job. */
  const buildsOf = async (project: string, job: string) =>
    (await call('GET', `/builds?query=${encodeURIComponent(`"Project" is "${project}" and "Job" is "${job}"`)}&offset=0&count=10`)).json as {
      id: number;
      status: string;
    }[];

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
    for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
    await removeWorkTrees();
  });

  describe('build spec TextParam patterns', () => {
    let projectId: number;
    let head: string;

    it('a push whose trigger supplies a catastrophic value keeps the server answering; the value is refused as not matching', async () => {
      const spec = `version: 25\njobs:\n${patternJob('Hostile', HOSTILE_PATTERN, HOSTILE_VALUE)}${patternJob('Friendly', HOSTILE_PATTERN, 'aaaa')}`;
      const pushed = await pushProject('patterns', spec);
      projectId = pushed.id;
      head = pushed.head;
      await meWhile(pushed.push.then(() => server.settled()));
      // the control: the same pattern with a matching default ran its job
      const friendly = await eventually(async () => {
        const list = await buildsOf('patterns', 'Friendly');
        return list.length === 1 && ['SUCCESSFUL', 'FAILED'].includes(list[0].status) ? list : null;
      });
      expect(friendly?.[0].status).toBe('SUCCESSFUL');
      // the hostile default does not match the whole pattern: a FAILED build saying so
      const hostile = await buildsOf('patterns', 'Hostile');
      expect(hostile).toMatchObject([{ status: 'FAILED' }]);
      const hostileLog = await fetch(`${server.api}/builds/${hostile[0].id}/log`, { headers: { authorization: adminAuth } });
      expect(await hostileLog.text()).toContain(`Job 'Hostile' could not be submitted: ${NO_MATCH}`);
    });

    it('a job run with the catastrophic value answers 400 at once, the server answering meanwhile; a matching value runs', async () => {
      const run = (word: string) =>
        call('POST', '/job-runs', {
          '@type': 'JobRunOnCommit',
          projectId,
          commitHash: head,
          refName: 'refs/heads/main',
          jobName: 'Hostile',
          params: { word: [word] },
          reason: 'test',
        });
      const refused = await meWhile(run(HOSTILE_VALUE));
      expect(refused.status).toBe(400);
      expect(refused.json).toMatchObject({ status: 400, detail: NO_MATCH });
      // the whole value must match (Java's matches()): a matching prefix is not enough
      expect((await run('aaaa!')).json.detail).toBe(NO_MATCH);
      // a value too long to check within the match budget is refused as such
      const long = await run('a'.repeat(6000));
      expect(long.status).toBe(400);
      expect(long.json.detail).toMatch(
        /^Value of job parameter \(word\) is too long to check against pattern \^\(a\+\)\+\$: Text of 6000 characters is too long to match against this pattern \(at most \d+\)$/,
      );
      // the control
      const accepted = await run('aaaa');
      expect(accepted.status).toBe(200);
      expect(typeof accepted.json).toBe('number');
    });

    it('a spec whose pattern is over 1,000 characters fails its build with the reason', async () => {
      const pushed = await pushProject('long-pattern', `version: 25\njobs:\n${patternJob('Long', 'a'.repeat(1001), 'a')}`);
      await pushed.push;
      await server.settled();
      const failed = await eventually(async () => {
        const list = await buildsOf('long-pattern', 'Long');
        return list.length === 1 ? list : null;
      });
      expect(failed?.[0].status).toBe('FAILED');
      const buildLog = await fetch(`${server.api}/builds/${failed![0].id}/log`, { headers: { authorization: adminAuth } });
      expect(await buildLog.text()).toContain('pattern: regular expression is longer than 1000 characters (1001)');
    });
  });

  describe('commit query wildcards', () => {
    const commits = async (query: string) => call('GET', `/repositories/${projectId}/commits?query=${encodeURIComponent(query)}&count=10`);
    let projectId: number;

    beforeAll(async () => {
      projectId = (await givenRepo(server, 'commit-patterns')).id;
    });

    it('refuses author, committer and message wildcards over 1,000 characters (400), which would become git regular expressions', async () => {
      for (const criterion of ['author', 'committer', 'message']) {
        const res = await commits(`${criterion}(${'a*'.repeat(501)})`);
        expect(res.status, criterion).toBe(400);
        expect(res.json).toMatchObject({ status: 400, code: 'GITLOOM_ERR_PATTERN', detail: 'Pattern is longer than 1000 characters (1002)' });
      }
    });

    it('the control: wildcards up to 1,000 characters select commits', async () => {
      const all = await commits('');
      expect(all.status).toBe(200);
      expect(all.json).toHaveLength(1);
      expect((await commits(`message(${'*'.repeat(992)}initial*)`)).json).toEqual(all.json);
      expect((await commits('author(*)')).json).toEqual(all.json);
      expect((await commits('committer(nobody*)')).json).toEqual([]);
    });
  });

  describe('project path globs in queries', () => {
    // `aaa…ab/a`: LIKE `%a%a…%a` lets it through to the exact match, which must fail (the glob
    // has one segment); a backtracking RegExp tried every split of the a's first.
    const parent = `${'a'.repeat(3000)}b`;
    const STARS = '*a'.repeat(10);

    beforeAll(async () => {
      const parentId = await givenProject(server, { name: parent });
      await givenProject(server, { name: 'a', parentId });
    });

    const projectIds = async (query: string) => {
      const res = await call('GET', `/projects?query=${encodeURIComponent(query)}&offset=0&count=100`);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      return (res.json as { id: number }[]).map((p) => p.id);
    };

    it('"children of" a many-star glob over a very long path answers at once, the server answering meanwhile', async () => {
      expect(await meWhile(projectIds(`children of "${STARS}"`))).toEqual([]);
      expect(await meWhile(projectIds(`forks of "${STARS}"`))).toEqual([]);
      const builds = await meWhile(call('GET', `/builds?query=${encodeURIComponent(`"Project" is "${STARS}"`)}&offset=0&count=10`));
      expect(builds).toMatchObject({ status: 200, json: [] });
    });

    it('the controls: globs that match the long path still match', async () => {
      const child = (await call('GET', `/projects?query=${encodeURIComponent(`"Name" is "a"`)}&offset=0&count=10`)).json as { id: number }[];
      expect(child).toHaveLength(1);
      expect(await projectIds(`children of "${STARS}b"`)).toEqual([child[0].id]);
      expect(await projectIds(`children of "*a?"`)).toEqual([child[0].id]);
      expect(await projectIds(`children of "**/*b"`)).toEqual([child[0].id]);
    });

    it('refuses a glob over 1,000 characters (400)', async () => {
      const res = await call('GET', `/projects?query=${encodeURIComponent(`children of "${'a*'.repeat(501)}"`)}&offset=0&count=10`);
      expect(res.status).toBe(400);
      expect(res.json.detail).toBe('Pattern is longer than 1000 characters (1002)');
    });
  });
});
