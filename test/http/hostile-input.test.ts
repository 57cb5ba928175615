import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, git, gitUrl, makeWorkTree, startTestServer, type ApiResponse, type TestServer } from '../helpers/server.js';
import { commandSpec, givenProject, givenRepo, removeWorkTrees, runJobOnCommit } from '../helpers/fixtures.js';
import { openRequest } from './pulls-fixtures.js';

const SPEC = commandSpec({ name: 'Job', commands: ['echo ok'] });

/** Sends a request with path and headers exactly as written (fetch normalizes and limits them). */
function exact(
  server: TestServer,
  method: string,
  target: string,
  options: { headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: target,
        headers: { authorization: `Basic ${Buffer.from(`${ADMIN.name}:${ADMIN.password}`).toString('base64')}`, ...options.headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Asserts a problem+json answer of `status` with a stable code. */
function expectProblem(res: { status: number; headers: Headers | http.IncomingHttpHeaders; text: string }, status: number, detail?: RegExp): void {
  expect(res.status, res.text).toBe(status);
  const type = res.headers instanceof Headers ? res.headers.get('content-type') : res.headers['content-type'];
  expect(type).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(res.text) as { type: string; title: string; status: number; detail: string; code: string };
  expect(body).toMatchObject({ type: 'about:blank', status, title: expect.any(String), detail: expect.any(String) });
  expect(body.code).toMatch(/^GITLOOM_ERR_[A-Z0-9_]+$/);
  if (detail) expect(body.detail).toMatch(detail);
}

describe('hostile input: never a 5xx, always problem+json', () => {
  let server: TestServer;
  let projectId: number;

  beforeAll(async () => {
    server = await startTestServer();
    await givenProject(server, { name: 'one' });
    projectId = await givenProject(server, { name: 'two' });
    expect(projectId).toBe(2);
  });
  afterAll(async () => {
    await server?.close();
    await removeWorkTrees();
  });

  describe('ids', () => {
    it('path ids are digits within int32, else 404', async () => {
      expect((await server.call('GET', '/projects/2')).status).toBe(200);
      for (const id of ['2147483648', '-2147483649', '9223372036854775808', '99999999999999999999999', '%201', '0x2', '2e0', '+2', '2.0', '%2B2', 'two', '']) {
        const res = await server.call('GET', `/projects/${id}`);
        if (id === '') continue; // the collection itself
        expectProblem(res, 404);
      }
      expectProblem(await server.call('GET', '/milestones/99999999999999999999999'), 404);
      expectProblem(await server.call('GET', '/projects/2147483647'), 404);
    });

    it('query ids and pages are digits within int32, else 400', async () => {
      for (const value of ['0x2', '2e0', '+2', '%202', '2147483648', 'abc']) {
        expectProblem(await server.call('GET', `/code-comments?projectId=${value}`), 400, /projectId/);
      }
      expectProblem(await server.call('GET', '/projects?offset=99999999999999999999'), 400, /offset/);
      expectProblem(await server.call('GET', '/projects?offset=-1'), 400, /offset/);
      expectProblem(await server.call('GET', '/projects?count=1e2'), 400, /count/);
      expect((await server.call('GET', '/projects?offset=2147483647&count=10')).json).toEqual([]);
    });

    it('body ids beyond int32 are 400; dates may be epoch milliseconds', async () => {
      for (const id of [2147483648, -2147483649, 1e20, 9007199254740993]) {
        expectProblem(await server.call('POST', '/issues', { body: { projectId: id, title: 'x' } }), 400, /projectId/);
      }
      expectProblem(
        await server.call('POST', '/milestones', { body: { projectId, name: 'm', description: null, startDate: 1e300, dueDate: null, closed: false } }),
        400,
      );
      const created = await server.call('POST', '/milestones', {
        body: { projectId, name: 'm', description: null, startDate: 1_700_000_000_000, dueDate: null, closed: false },
      });
      expect(created.status, created.text).toBe(200);
    });
  });

  it('numbers beyond int32 in query languages are 400; in text references they name nothing', async () => {
    const queries = [
      '/issues?query="Number" is "2147483648"',
      '/issues?query="Number" is greater than "99999999999999999999"',
      '/issues?query="Vote Count" is greater than "2147483648"',
      '/issues?query="Comment Count" is "-2147483649"',
      '/issues?query=fixed in pull request "two#2147483648"',
      '/issues?query=fixed in build "two#2147483648"',
      '/issues?query=#2147483648',
      '/pulls?query="Number" is "2147483648"',
      '/pulls?query=includes issue "two#2147483648"',
      '/builds?query="Number" is "two#2147483648"',
      '/builds?query=fixed issue "two#9223372036854775808"',
      '/code-comments?query="Reply Count" is "2147483648"',
    ];
    for (const query of queries) {
      const [path, text] = query.split('?query=');
      expectProblem(await server.call('GET', `${path}?query=${encodeURIComponent(text)}`), 400);
    }
    const issue = await server.call('POST', '/issues', {
      body: { projectId, title: 'refs', description: 'fixes #2147483648, see two#99999999999 and #9007199254740993' },
    });
    expect(issue.status, issue.text).toBe(200);
    expect((await server.call('DELETE', `/issues/${issue.json as number}`)).status).toBe(200);
  });

  describe('NUL bytes', () => {
    it('in a URL, API or git, are 400', async () => {
      expectProblem(await exact(server, 'GET', '/%00/info/refs?service=git-upload-pack'), 400, /NUL/);
      expectProblem(await exact(server, 'GET', '/two/info/refs?service=git-upload-pack%00'), 400, /NUL/);
      expectProblem(await exact(server, 'GET', '/~api/projects?query=%22a%00b%22'), 400, /NUL/);
      expectProblem(await exact(server, 'GET', '/~api/projects/2%00'), 400, /NUL/);
    });

    it('in JSON strings and keys, and in text bodies, are 400 and change nothing', async () => {
      expectProblem(await server.call('POST', '/issues', { body: { projectId, title: 'a\u0000b' } }), 400, /NUL/);
      expectProblem(
        await server.call('POST', '/issues', { text: '{"projectId":2,"title":"x","a\\u0000":1}', headers: { 'content-type': 'application/json' } }),
        400,
        /NUL/,
      );
      expectProblem(await server.call('POST', `/projects/${projectId}/setting`, { body: { issueSetting: { a: ['x\u0000'] } } }), 400, /NUL/);
      expect((await server.call('GET', `/issues?query=&count=100`)).json).toEqual([]);
    });

    it('in a pull request title and a merge message are 400; the request stays open', async () => {
      const repo = await givenRepo(server, 'pulls');
      await repo.commitOn('feature', { 'a.txt': 'a\n' }, 'feature');
      const opened = await openRequest(server, { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'feature' });
      expect(opened.status, opened.text).toBe(200);
      const id = opened.json as number;
      expectProblem(await server.call('POST', `/pulls/${id}/title`, { text: 'bad\u0000title' }), 400, /NUL/);
      expectProblem(await server.call('POST', `/pulls/${id}/title`, { text: '"bad\\u0000title"' }), 400, /NUL/);
      expectProblem(await server.call('POST', `/pulls/${id}/merge`, { text: 'merge\u0000message' }), 400, /NUL/);
      expectProblem(
        await server.call('POST', `/pulls/${id}/merge`, { text: '"merge\\u0000message"', headers: { 'content-type': 'application/json' } }),
        400,
        /NUL/,
      );
      const pull = (await server.call('GET', `/pulls/${id}`)).json;
      expect(pull).toMatchObject({ status: 'OPEN', title: 'Change' });
    });
  });

  it('garbage to git smart HTTP and in credentials is 4xx problem+json', async () => {
    await givenRepo(server, 'smart');
    const gitCases: [string, string, Record<string, string>, string | undefined][] = [
      ['GET', '/smart/info/refs?service=evil', {}, undefined],
      ['GET', '/smart/info/refs', {}, undefined],
      ['POST', '/smart/git-upload-pack', { 'content-type': 'application/x-git-upload-pack-request' }, 'garbage'],
      ['POST', '/smart/git-receive-pack', { 'content-type': 'application/x-git-receive-pack-request' }, 'garbage'],
      ['POST', '/smart/git-upload-pack', { 'content-type': 'application/x-git-upload-pack-request', 'content-encoding': 'gzip' }, 'not gzip'],
      ['POST', '/smart/git-upload-pack', { 'content-type': 'text/plain' }, 'x'],
      ['GET', '/%2e%2e/info/refs?service=git-upload-pack', {}, undefined],
      ['GET', `/${'a'.repeat(3000)}/info/refs?service=git-upload-pack`, {}, undefined],
      ['GET', '/%FF/info/refs?service=git-upload-pack', {}, undefined],
      ['GET', '/-smart/info/refs?service=git-upload-pack', {}, undefined],
    ];
    for (const [method, target, headers, body] of gitCases) {
      const res = await exact(server, method, target, { headers, body });
      expect(res.status >= 400 && res.status < 500, `${method} ${target.slice(0, 60)}: ${res.status} ${res.text}`).toBe(true);
      expectProblem(res, res.status);
    }
    const credentials = [
      `Basic ${Buffer.from('a\u0000:b\u0000').toString('base64')}`,
      `Basic ${Buffer.from(`${'a'.repeat(6000)}:b`).toString('base64')}`,
      `Basic ${Buffer.from(`${randomBytes(3000).toString('hex')}:b`).toString('base64')}`,
      'Basic %%%',
      `Bearer ${'x'.repeat(6000)}`,
      'Digest x',
    ];
    for (const authorization of credentials) expectProblem(await exact(server, 'GET', '/~api/projects', { headers: { authorization } }), 401);
  });

  it('JSON nested 6,000 deep is 400 and changes nothing', async () => {
    const before = (await server.call('GET', `/projects/${projectId}/setting`)).json;
    const deep = `${'['.repeat(6000)}${']'.repeat(6000)}`;
    expectProblem(
      await server.call('POST', `/projects/${projectId}/setting`, { text: `{"issueSetting":${deep}}`, headers: { 'content-type': 'application/json' } }),
      400,
      /deeper/,
    );
    expectProblem(await server.call('POST', '/issues', { text: `{"projectId":${deep}}`, headers: { 'content-type': 'application/json' } }), 400, /deeper/);
    expect((await server.call('GET', `/projects/${projectId}/setting`)).json).toEqual(before);
  });

  it('bad content types, malformed JSON and empty bodies are 4xx', async () => {
    expectProblem(await server.call('POST', '/issues', { text: '{"projectId":', headers: { 'content-type': 'application/json' } }), 400, /Malformed JSON/);
    expectProblem(await server.call('POST', '/issues', { text: 'projectId=2', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 400);
    expectProblem(await server.call('POST', '/issues', { text: '', headers: { 'content-type': 'application/json' } }), 400);
    const none = await exact(server, 'POST', '/~api/issues');
    expect(none.status).toBeGreaterThanOrEqual(400);
    expect(none.status).toBeLessThan(500);
  });

  describe('artifacts', () => {
    let buildId: number;
    beforeAll(async () => {
      const id = await givenProject(server, { name: 'art' });
      const work = await makeWorkTree({ '.onedev-buildspec.yml': SPEC });
      const head = (await git(work, ['rev-parse', 'HEAD'])).trim();
      await git(work, ['push', '-q', gitUrl(server, 'art', ADMIN), 'main']);
      const run = await runJobOnCommit(server, { projectId: id, commitHash: head, jobName: 'Job', reason: 'r' });
      expect(run.status, run.text).toBe(200);
      buildId = run.json as number;
    });

    it('a path segment over 255 bytes is 400; 255 is fine', async () => {
      const upload = (route: string) =>
        server.call('POST', `/artifacts/${buildId}/${route}`, { text: 'x', headers: { 'content-type': 'application/octet-stream' } });
      expectProblem(await upload(`dir/${'a'.repeat(256)}`), 400, /255 bytes/);
      expectProblem(await upload(`${'é'.repeat(128)}/f`), 400, /255 bytes/);
      expectProblem(await server.call('GET', `/artifacts/${buildId}/infos/${'a'.repeat(300)}`), 400, /255 bytes/);
      expect((await upload(`dir/${'a'.repeat(255)}`)).status).toBe(200);
    });

    it('an upload without a body is 400', async () => {
      expectProblem(await exact(server, 'POST', `/~api/artifacts/${buildId}/empty.txt`), 400, /Missing artifact content/);
    });
  });

  it('a personalization created while its project is deleted is 4xx, never 5xx', async () => {
    const kinds = ['issue', 'pull-request', 'build', 'commit', 'code-comment'];
    for (let round = 0; round < 6; round++) {
      const id = await givenProject(server, { name: `doomed${round}` });
      const results = await Promise.all([
        server.call('DELETE', `/projects/${id}`),
        ...kinds.map((kind) => server.call('POST', `/${kind}-query-personalizations`, { body: { projectId: id, userId: 1, queries: [] } })),
      ]);
      expect(results[0].status, results[0].text).toBe(200);
      for (const res of results.slice(1)) {
        expect(res.status === 200 || (res.status >= 400 && res.status < 500), `${res.status} ${res.text}`).toBe(true);
      }
    }
  });

  it('concurrent deletes of one project answer 200 or 404, never 5xx', async () => {
    for (let round = 0; round < 4; round++) {
      const id = await givenProject(server, { name: `gone${round}` });
      const results = await Promise.all([1, 2, 3, 4].map(() => server.call('DELETE', `/projects/${id}`)));
      for (const res of results) expect([200, 404], res.text).toContain(res.status);
      expectProblem(await server.call('GET', `/projects/${id}`), 404);
    }
  });

  it('30 concurrent first issues of a project get distinct numbers 1..30', async () => {
    const id = await givenProject(server, { name: 'race' });
    const results: ApiResponse[] = await Promise.all(
      Array.from({ length: 30 }, (_, i) => server.call('POST', '/issues', { body: { projectId: id, title: `issue ${i}` } })),
    );
    for (const res of results) expect(res.status, res.text).toBe(200);
    const numbers = await Promise.all(results.map(async (res) => (await server.call('GET', `/issues/${res.json as number}`)).json.number as number));
    expect([...numbers].sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
  });

  describe('errors raised before routing are problem+json too', () => {
    it('431 for header fields too large', async () => {
      expectProblem(await exact(server, 'GET', '/~api/projects', { headers: { 'x-filler': 'x'.repeat(20_000) } }), 431);
    });

    it('431 for a request line too long', async () => {
      expectProblem(await exact(server, 'GET', `/~api/projects?query=${'x'.repeat(20_000)}`), 431);
    });

    it('414 for a path parameter over the router limit', async () => {
      expectProblem(await exact(server, 'DELETE', `/~api/projects/${'1'.repeat(2000)}`), 414);
    });

    it('413 for a body over the limit', async () => {
      const small = await startTestServer({ GITLOOM_BODY_LIMIT: '1000' });
      try {
        expectProblem(await small.call('POST', '/issues', { body: { projectId: 1, title: 'x'.repeat(5000) } }), 413);
      } finally {
        await small.close();
      }
    });
  });
});
