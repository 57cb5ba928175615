import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, runJobOnCommit, type TestUser } from '../helpers/fixtures.js';
import { csrfTokenOf, signInByFetch, type WebSession } from '../helpers/browser.js';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server.js';

const SPEC = `version: 25
jobs:
- name: Publish
  steps:
  - !CommandStep
    name: make
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo "publishing report"
      - mkdir -p out/sub
      - echo '<script>window.pwned = 1</script>' > out/report.html
      - echo data > "out/sub/data file.txt"
  - !PublishArtifactStep
    name: publish
    sourcePath: out
    artifacts: '**'
  triggers:
  - !BranchUpdateTrigger
    branches: main
- name: Slow
  steps:
  - !CommandStep
    name: wait
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo "slow started"
      - sleep 60
      - echo "slow ended"
- name: Manual
  paramSpecs:
  - !TextParam
    name: greeting
    allowEmpty: false
    defaultValueProvider: !SpecifiedDefaultValue
      value: hello
  - !BooleanParam
    name: loud
  steps:
  - !CommandStep
    name: say
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - echo "say @param:greeting@ loud=@param:loud@"
- name: Big
  steps:
  - !CommandStep
    name: print
    runInContainer: false
    interpreter: !DefaultInterpreter
      commands:
      - i=1; while [ $i -le 20000 ]; do echo "big line $i, padded with enough words to pass the page's cap"; i=$((i+1)); done
`;

const FINISHED = ['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'];

/** The build pages over plain HTTP: log, live log, artifacts, cancel, rebuild, run job, permissions, CSRF. */
describe('web build pages', () => {
  let server: TestServer;
  let repo: Repo;
  let reader: TestUser;
  let writer: TestUser;
  let outsider: TestUser;
  let admin: WebSession;
  let publishNumber: number;

  const get = (path: string, cookie?: string) => fetch(`${server.url}${path}`, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  const post = (path: string, fields: Record<string, string>, cookie: string) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams(fields).toString(),
    });
  const apiBuild = async (number: number) => {
    const list = (await server.call('GET', `/builds?query=${encodeURIComponent(`"Number" is "ci#${number}"`)}&offset=0&count=1`)).json;
    return list[0];
  };
  const finished = (number: number) =>
    eventually(async () => {
      const build = await apiBuild(number);
      return FINISHED.includes(build?.status) ? build : null;
    }, 60_000);
  const runSlow = async (): Promise<number> => {
    const id = (await runJobOnCommit(server, { projectId: repo.id, commitHash: await repo.head('main'), jobName: 'Slow' })).json as number;
    return (await server.call('GET', `/builds/${id}`)).json.number;
  };
  const running = (number: number) => eventually(async () => (await apiBuild(number))?.status === 'RUNNING', 60_000);

  beforeAll(async () => {
    server = await startTestServer();
    [reader, writer, outsider] = await givenUsers(server, 'reader', 'writer', 'outsider');
    repo = await givenRepo(server, 'ci', { files: { 'README.md': '# ci\n', '.onedev-buildspec.yml': SPEC } });
    await grantRole(server, repo.id, reader.id, 'Code Reader');
    await grantRole(server, repo.id, writer.id, 'Code Writer');
    admin = await signInByFetch(server, ADMIN.name, ADMIN.password);
    const first = await eventually(async () => {
      const list = (await server.call('GET', `/builds?query=${encodeURIComponent('"Job" is "Publish"')}&offset=0&count=1`)).json;
      return list?.length ? list[0] : null;
    });
    publishNumber = first.number;
    expect((await finished(publishNumber)).status).toBe('SUCCESSFUL');
  }, 120_000);
  afterAll(async () => {
    await removeWorkTrees();
    await server?.close();
  });

  it('shows a finished build: status, ref, commit, timing, its log and its artifacts', async () => {
    const response = await get(`/ci/~builds/${publishNumber}`, admin.cookie);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain(`<title>#${publishNumber} Publish · Builds · ci · Gitloom</title>`);
    expect(html).toContain(`<h1>Build #${publishNumber} · Publish</h1>`);
    expect(html).toContain('>Successful</span>');
    expect(html).toContain(await repo.head('main'));
    expect(html).toContain("by gitloom: Branch 'main' is updated");
    expect(html).toMatch(/<pre class="build-log"[^>]*>[^<]*publishing report/);
    expect(html).not.toContain('data-follow');
    expect(html).not.toContain('build-log.js');
    expect(html).toContain(`href="/ci/~builds/${publishNumber}/artifacts/report.html" download`);
    expect(html).toContain(`href="/ci/~builds/${publishNumber}/artifacts/sub/data%20file.txt" download`);
    expect(html).toContain('>Rebuild</button>');
    expect(html).not.toContain('Cancel build');
  });

  it('serves the whole log as text', async () => {
    const response = await get(`/ci/~builds/${publishNumber}/log`, admin.cookie);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await response.text()).toMatch(/^\d\d:\d\d:\d\d .*publishing report$/m);
    expect((await get(`/ci/~builds/${publishNumber}/log?from=-1`, admin.cookie)).status).toBe(400);
  });

  it('caps a big log on the page to its last whole lines, the full log a link away', async () => {
    const id = (await runJobOnCommit(server, { projectId: repo.id, commitHash: await repo.head('main'), jobName: 'Big' })).json as number;
    const number = (await server.call('GET', `/builds/${id}`)).json.number;
    expect((await finished(number)).status).toBe('SUCCESSFUL');
    const html = await (await get(`/ci/~builds/${number}`, admin.cookie)).text();
    expect(html).toContain('Earlier lines are left out.');
    const log = html.slice(html.indexOf('<pre class="build-log"'), html.indexOf('</pre>'));
    expect(log).not.toContain('big line 1,');
    expect(log).toContain('big line 20000,');
    expect(log.length).toBeLessThan(1.1 * 1024 * 1024);
    expect(
      log
        .split('\n')
        .slice(1, -1)
        .every((line) => /^\d\d:\d\d:\d\d /.test(line)),
    ).toBe(true);
    const full = await (await get(`/ci/~builds/${number}/log`, admin.cookie)).text();
    expect(full).toContain('big line 1,');
    expect(full.length).toBeGreaterThan(1024 * 1024);
  }, 120_000);

  it("downloads an artifact with the API's headers: HTML as an attachment that never renders as a page of ours", async () => {
    const response = await get(`/ci/~builds/${publishNumber}/artifacts/report.html`, admin.cookie);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="report.html"');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-type')).toBe('text/html');
    expect(response.headers.get('content-security-policy')).toMatch(/^sandbox;/);
    expect(await response.text()).toBe('<script>window.pwned = 1</script>\n');
    // a safe type is shown inline (as by the API), still sandboxed and not sniffed
    const nested = await get(`/ci/~builds/${publishNumber}/artifacts/sub/data%20file.txt`, admin.cookie);
    expect(nested.headers.get('content-disposition')).toBe('inline; filename="data file.txt"');
    expect(nested.headers.get('x-content-type-options')).toBe('nosniff');
    expect(nested.headers.get('content-security-policy')).toMatch(/^sandbox;/);
    expect(await nested.text()).toBe('data\n');
    expect((await get(`/ci/~builds/${publishNumber}/artifacts/missing.txt`, admin.cookie)).status).toBe(404);
    expect((await get(`/ci/~builds/${publishNumber}/artifacts/sub/..%2F..%2F..%2Fbuild.log`, admin.cookie)).status).toBe(400);
  });

  it('streams the log of a running build, and a writer cancels it from the page', async () => {
    const number = await runSlow();
    expect(await running(number)).toBe(true);
    const session = await signInByFetch(server, writer.name, writer.password);
    const page = await (await get(`/ci/~builds/${number}`, session.cookie)).text();
    expect(page).toContain('data-follow=');
    // without JavaScript: the log so far and a way to refresh it
    expect(page).toContain(`The build is running: <a href="/ci/~builds/${number}">refresh</a> to see more.`);
    expect(page).toContain('>Cancel build</button>');
    expect(page).toMatch(/<script type="module" src="\/~assets\/build-log\.[0-9a-f]{12}\.js">/);
    const follow = /data-follow="([^"]+)"/.exec(page)![1].replaceAll('&amp;', '&');
    const stream = await fetch(`${server.url}${follow.replace(/from=\d+/, 'from=0')}`, { headers: { cookie: session.cookie } });
    expect(stream.status).toBe(200);
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('slow started')) {
      const { value, done } = await reader.read();
      expect(done).toBe(false);
      text += value;
    }
    expect((await apiBuild(number)).status).toBe('RUNNING');

    const cancelled = await post(`/ci/~builds/${number}/cancel`, { _csrf: csrfTokenOf(page) }, session.cookie);
    expect(cancelled.status).toBe(303);
    expect(cancelled.headers.get('location')).toBe(`/ci/~builds/${number}`);
    const build = await finished(number);
    expect(build.status).toBe('CANCELLED');
    expect(build.cancellerId).toBe(writer.id);
    // the follower's response ends once the build has finished
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    expect(text).not.toContain('slow ended');
    const after = await (await get(`/ci/~builds/${number}`, session.cookie)).text();
    expect(after).toContain('>Cancelled</span>');
    expect(after).toContain('<dt>Cancelled by</dt><dd>writer</dd>');
  }, 120_000);

  it('rebuilds a finished build from its page', async () => {
    const before = await apiBuild(publishNumber);
    const page = await (await get(`/ci/~builds/${publishNumber}`, admin.cookie)).text();
    const response = await post(`/ci/~builds/${publishNumber}/rebuild`, { _csrf: csrfTokenOf(page) }, admin.cookie);
    expect(response.status).toBe(303);
    const again = await eventually(async () => {
      const build = await apiBuild(publishNumber);
      return build.submitDate !== before.submitDate && FINISHED.includes(build.status) ? build : null;
    }, 60_000);
    expect(again.id).toBe(before.id);
    expect(again.status).toBe('SUCCESSFUL');
    expect(again.submitReason).toBe('Resubmitted manually');
    expect(again.submitterId).toBe(1);
  }, 120_000);

  it("runs a job with params from the list's Run job control", async () => {
    const session = await signInByFetch(server, writer.name, writer.password);
    const list = await (await get('/ci/~builds', session.cookie)).text();
    expect(list).toContain('<summary>Run job</summary>');
    expect(list).toContain('>Run Manual</button>');
    expect(list).toMatch(/<input id="run-2-param-0" name="param:greeting" type="text" value="hello" required/);
    expect(list).toContain('<label for="run-2-param-1">loud</label>');
    const response = await post(
      '/ci/~builds/run',
      {
        _csrf: csrfTokenOf(list),
        job: 'Manual',
        branch: 'main',
        'param:greeting': 'hi there',
        'param:loud': 'true',
      },
      session.cookie,
    );
    expect(response.status).toBe(303);
    const number = Number(/^\/ci\/~builds\/(\d+)$/.exec(response.headers.get('location')!)![1]);
    const build = await finished(number);
    expect(build.status).toBe('SUCCESSFUL');
    expect(build.submitterId).toBe(writer.id);
    expect(build.jobName).toBe('Manual');
    expect(build.submitReason).toBe('Submitted manually');
    const params = (await server.call('GET', `/builds/${build.id}/params`)).json;
    expect(params.map((p: { name: string; value: string }) => [p.name, p.value])).toEqual([
      ['greeting', 'hi there'],
      ['loud', 'true'],
    ]);
    const html = await (await get(`/ci/~builds/${number}`, session.cookie)).text();
    expect(html).toContain('say hi there loud=true');
    expect(html).toContain('<dt>greeting</dt><dd>hi there</dd>');

    const unknownBranch = await post('/ci/~builds/run', { _csrf: csrfTokenOf(list), job: 'Manual', branch: 'nope', 'param:greeting': 'x' }, session.cookie);
    expect(unknownBranch.status).toBe(404);
    expect(await unknownBranch.text()).toContain('role="alert">Branch not found: nope</p>');
    const badParam = await post('/ci/~builds/run', { _csrf: csrfTokenOf(list), job: 'Manual', branch: 'main', 'param:greeting': '' }, session.cookie);
    expect(badParam.status).toBe(400);
    expect(await badParam.text()).toContain('Job parameter (greeting) can not be empty');
  }, 120_000);

  it('lists builds of a project and across projects, filtered by the query, paged', async () => {
    const list = await (await get(`/ci/~builds?query=${encodeURIComponent('"Job" is "Publish"')}`, admin.cookie)).text();
    expect(list).toContain(`href="/ci/~builds/${publishNumber}"`);
    expect(list).not.toContain('>Manual</td>');
    const all = await (await get('/~builds', admin.cookie)).text();
    expect(all).toContain('<th scope="col">Project</th>');
    expect(all).toContain('<td><a href="/ci">ci</a></td>');
    expect(all).toContain('>Manual</td>');
    const bad = await get(`/~builds?query=${encodeURIComponent('"Nope" is')}`, admin.cookie);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('id="query-error"');
    const beyond = await (await get('/ci/~builds?page=2', admin.cookie)).text();
    expect(beyond).toContain('No build found.');
    expect(beyond).toContain('rel="prev"');
  });

  it('gives a user without job permission no buttons, no log, and 403 on forged POSTs', async () => {
    const session = await signInByFetch(server, reader.name, reader.password);
    const response = await get(`/ci/~builds/${publishNumber}`, session.cookie);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).not.toContain('Rebuild');
    expect(html).not.toContain('Cancel build');
    expect(html).not.toContain('class="build-log"');
    expect(html).toContain('report.html');
    const list = await (await get('/ci/~builds', session.cookie)).text();
    expect(list).not.toContain('Run job');
    expect((await get(`/ci/~builds/${publishNumber}/log`, session.cookie)).status).toBe(403);
    const csrf = csrfTokenOf(html);
    expect((await post(`/ci/~builds/${publishNumber}/rebuild`, { _csrf: csrf }, session.cookie)).status).toBe(403);
    expect((await post(`/ci/~builds/${publishNumber}/cancel`, { _csrf: csrf }, session.cookie)).status).toBe(403);
    const run = await post('/ci/~builds/run', { _csrf: csrf, job: 'Manual', branch: 'main', 'param:greeting': 'x' }, session.cookie);
    expect(run.status).toBe(403);
  });

  it('answers 404 for the builds of a project the user cannot see', async () => {
    const session = await signInByFetch(server, outsider.name, outsider.password);
    for (const path of [
      '/ci/~builds',
      `/ci/~builds/${publishNumber}`,
      `/ci/~builds/${publishNumber}/log`,
      `/ci/~builds/${publishNumber}/artifacts/report.html`,
    ]) {
      expect((await get(path, session.cookie)).status).toBe(404);
    }
    const all = await (await get('/~builds', session.cookie)).text();
    expect(all).toContain('No build found.');
    expect((await post(`/ci/~builds/${publishNumber}/rebuild`, { _csrf: session.csrfToken }, session.cookie)).status).toBe(404);
    expect((await post('/ci/~builds/run', { _csrf: session.csrfToken, job: 'Manual', branch: 'main' }, session.cookie)).status).toBe(404);
    expect((await get('/ci/~builds/999999', admin.cookie)).status).toBe(404);
    expect((await get('/ci/~builds/x1', admin.cookie)).status).toBe(404);
  });

  it('refuses a POST without the CSRF token and leaves the build alone', async () => {
    const number = await runSlow();
    const session = await signInByFetch(server, writer.name, writer.password);
    const refused = await post(`/ci/~builds/${number}/cancel`, {}, session.cookie);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('CSRF');
    expect((await post('/ci/~builds/run', { job: 'Manual', branch: 'main', 'param:greeting': 'x' }, session.cookie)).status).toBe(403);
    expect(FINISHED).not.toContain((await apiBuild(number)).status);
    const page = await (await get(`/ci/~builds/${number}`, session.cookie)).text();
    expect((await post(`/ci/~builds/${number}/cancel`, { _csrf: csrfTokenOf(page) }, session.cookie)).status).toBe(303);
    expect((await finished(number)).status).toBe('CANCELLED');
  }, 120_000);
});
