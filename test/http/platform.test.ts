import { ERROR_CODES } from '../../src/error-codes.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** Platform conventions (docs/compatibility.md#gitloom-differs-mount-and-media-types, docs/compatibility.md#gitloom-differs-json, docs/compatibility.md#gitloom-differs-success-responses, docs/compatibility.md#gitloom-differs-errors, docs/compatibility.md#gitloom-differs-pagination-and-query-parameters; docs/compatibility.md#platform-json, docs/compatibility.md#platform-pagination). */
describe('platform', () => {
  let server: TestServer;
  let user: Awaited<ReturnType<TestServer['createUser']>>;
  let projectId: number;

  beforeAll(async () => {
    server = await startTestServer();
    user = await server.createUser('plato');
    projectId = (await server.call('POST', '/projects', { body: { name: 'platform' } })).json;
  });
  afterAll(async () => {
    await server.close();
  });

  function expectProblem(res: { status: number; headers: Headers; json: any }, status: number, title: string, detail?: string | RegExp) {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(Object.keys(res.json)).toEqual(['type', 'title', 'status', 'detail', 'code']);
    expect(res.json).toMatchObject({ type: 'about:blank', title, status });
    expect(res.json.code).toMatch(/^GITLOOM_ERR_[A-Z0-9_]+$/);
    expect(typeof res.json.detail).toBe('string');
    if (typeof detail === 'string') expect(res.json.detail).toBe(detail);
    else if (detail) expect(res.json.detail).toMatch(detail);
  }

  describe('problem+json errors', () => {
    it('400 for validation failures', async () => {
      expectProblem(await server.call('POST', '/projects', { body: { name: 'x', colour: 'red' } }), 400, 'Bad Request', /colour/);
      expectProblem(await server.call('POST', '/projects', { body: { name: 42 } }), 400, 'Bad Request', /name/);
      expectProblem(await server.call('POST', '/projects', { body: [] }), 400, 'Bad Request');
    });

    it('401 with a WWW-Authenticate challenge', async () => {
      const res = await server.call('GET', '/projects', { auth: null });
      expectProblem(res, 401, 'Unauthorized');
      expect(res.headers.get('www-authenticate')).toBe('Basic realm="Gitloom"');
    });

    it('403 for a known caller lacking the privilege', async () => {
      expectProblem(await server.call('GET', '/users', { auth: user.auth }), 403, 'Forbidden', 'Permission denied');
    });

    it('404 for a missing entity and for a project the caller may not see', async () => {
      expectProblem(await server.call('GET', '/projects/424242'), 404, 'Not Found');
      expectProblem(await server.call('GET', `/projects/${projectId}`, { auth: user.auth }), 404, 'Not Found');
    });

    it('404 for a non-numeric id', async () => {
      expectProblem(await server.call('GET', '/projects/abc'), 404, 'Not Found', /projectId/);
      expectProblem(await server.call('DELETE', '/users/1.5'), 404, 'Not Found', /userId/);
    });

    it('409 for conflicts', async () => {
      expectProblem(
        await server.call('POST', '/projects', { body: { name: 'PLATFORM' } }),
        409,
        'Conflict',
        "Name 'PLATFORM' is already used by another root project",
      );
    });

    it('404 for unknown routes, inside and outside the API', async () => {
      expectProblem(await server.call('GET', '/no-such-resource'), 404, 'Not Found');
      expectProblem(await server.call('GET', '/no-such-resource', { auth: null }), 404, 'Not Found');
      const outside = await fetch(`${server.url}/~nothing/here`);
      expect(outside.status).toBe(404);
    });

    it('401 for wrong credentials even on unknown routes', async () => {
      const wrong = { headers: { authorization: 'Bearer not-a-token' } };
      expect((await fetch(`${server.url}/~api/no-such-resource`, wrong)).status).toBe(401);
      expect((await fetch(`${server.url}/~health/live`, wrong)).status).toBe(200);
    });

    it('404 for methods the API does not use', async () => {
      expectProblem(await server.call('PUT', `/projects/${projectId}`, { body: {} }), 404, 'Not Found');
      expectProblem(await server.call('PATCH', `/projects/${projectId}`, { body: {} }), 404, 'Not Found');
    });

    it('400 for malformed JSON', async () => {
      const res = await server.call('POST', '/projects', { text: '{"name": "oops",', headers: { 'content-type': 'application/json' } });
      expectProblem(res, 400, 'Bad Request', /JSON/);
      const prototype = await server.call('POST', '/projects', {
        text: '{"name":"proto","__proto__":{"admin":true}}',
        headers: { 'content-type': 'application/json' },
      });
      expect(prototype.status).toBe(400);
    });

    it('413 for a body over the limit', async () => {
      const res = await server.call('POST', `/users/${user.id}/password`, { text: 'x'.repeat(11 * 1024 * 1024), auth: user.auth });
      expectProblem(res, 413, 'Payload Too Large');
      expect((await server.call('GET', '/users/me', { auth: user.auth })).status).toBe(200);
    });

    it('400 for a JSON body of another media type', async () => {
      const res = await server.call('POST', '/projects', { text: 'name=form', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expectProblem(res, 400, 'Bad Request');
    });
  });

  describe('query parameters', () => {
    it('400 for an undeclared query parameter', async () => {
      expectProblem(await server.call('GET', '/projects?x=1'), 400, 'Bad Request', 'Unexpected query params: [x]');
      expectProblem(await server.call('GET', '/users/me?foo=bar'), 400, 'Bad Request', 'Unexpected query params: [foo]');
      expectProblem(await server.call('GET', '/projects?offset=0&count=10&a=1&b=2'), 400, 'Bad Request', 'Unexpected query params: [a, b]');
    });

    it('count at most 100, offset and count not negative nor malformed', async () => {
      expectProblem(await server.call('GET', '/projects?count=101'), 400, 'Bad Request', 'Count should not be greater than 100');
      expect((await server.call('GET', '/projects?count=100')).status).toBe(200);
      expectProblem(await server.call('GET', '/projects?offset=-1'), 400, 'Bad Request', /offset/);
      expectProblem(await server.call('GET', '/projects?count=-5'), 400, 'Bad Request', /count/);
      expectProblem(await server.call('GET', '/projects?count=ten'), 400, 'Bad Request', /count/);
    });

    it('offset and count page the results; both are optional', async () => {
      for (const name of ['p1', 'p2', 'p3']) await server.call('POST', '/projects', { body: { name } });
      const all = (await server.call('GET', '/projects')).json.map((p: { name: string }) => p.name);
      expect(all).toEqual(['p1', 'p2', 'p3', 'platform']);
      expect((await server.call('GET', '/projects?offset=1&count=2')).json.map((p: { name: string }) => p.name)).toEqual(['p2', 'p3']);
      expect((await server.call('GET', '/projects?count=0')).json).toEqual([]);
      expect((await server.call('GET', '/projects?offset=10')).json).toEqual([]);
    });
  });

  describe('JSON conventions', () => {
    it('responds with compact JSON, null fields included, reference field order', async () => {
      const res = await server.call('GET', `/projects/${projectId}`);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.text).not.toMatch(/\n|": /);
      expect(res.text).toContain('"forkedFromId":null');
      expect(res.text).toContain('"description":null');
      expect(Object.keys(res.json)).toEqual([
        'id',
        'forkedFromId',
        'parentId',
        'name',
        'description',
        'createDate',
        'defaultRoleId',
        'codeManagement',
        'issueManagement',
        'gitPackConfig',
        'codeAnalysisSetting',
      ]);
      expect(res.json.gitPackConfig).toEqual({ windowMemory: null, packSizeLimit: null, threads: null, window: null });
      expect(res.json.codeAnalysisSetting).toEqual({ analysisFiles: null });
    });

    it('writes dates as UTC with milliseconds and a colon offset', async () => {
      const before = Date.now();
      const id = (await server.call('POST', '/projects', { body: { name: 'dated' } })).json;
      const { createDate } = (await server.call('GET', `/projects/${id}`)).json;
      expect(createDate).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/);
      const ms = Date.parse(createDate);
      expect(ms).toBeGreaterThanOrEqual(before - 5);
      expect(ms).toBeLessThanOrEqual(Date.now() + 5);
    });

    it('accepts ISO dates and epoch milliseconds as input', async () => {
      const iso = await server.call('POST', `/users/${user.id}/access-tokens`, { body: { expireDate: '2999-06-01T10:20:30+02:00' }, auth: user.auth });
      const epoch = await server.call('POST', `/users/${user.id}/access-tokens`, { body: { expireDate: Date.UTC(2999, 0, 2) }, auth: user.auth });
      expect(iso.status).toBe(200);
      expect(epoch.status).toBe(200);
      const list = (await server.call('GET', `/users/${user.id}/access-tokens`, { auth: user.auth })).json;
      expect(list.map((t: { expireDate: string }) => t.expireDate)).toEqual(['2999-06-01T08:20:30.000+00:00', '2999-01-02T00:00:00.000+00:00']);
      for (const expireDate of ['next tuesday', '2024-13-45', 1e20, -1e17]) {
        expectProblem(
          await server.call('POST', `/users/${user.id}/access-tokens`, { body: { expireDate }, auth: user.auth }),
          400,
          'Bad Request',
          /expireDate/,
        );
      }
      expect((await server.call('GET', `/users/${user.id}/access-tokens`, { auth: user.auth })).json).toHaveLength(2);
      expectProblem(await server.call('POST', '/projects', { body: { name: 'baddate', createDate: 'yesterday-ish' } }), 400, 'Bad Request', /createDate/);
      const stamped = await server.call('POST', '/projects', { body: { name: 'stamped', createDate: '2001-01-01T00:00:00Z' } });
      expect(stamped.status).toBe(200);
      expect((await server.call('GET', `/projects/${stamped.json}`)).json.createDate).not.toMatch(/^2001/);
    });

    it('returns created ids as bare numbers and updates as empty 200s', async () => {
      const created = await server.call('POST', '/projects', { body: { name: 'bare' } });
      expect(created.status).toBe(200);
      expect(created.text).toBe(String(created.json));
      const updated = await server.call('POST', `/projects/${created.json}`, { body: { description: 'd' } });
      expect(updated.status).toBe(200);
      expect(updated.text).toBe('');
    });
  });

  describe('API documentation', () => {
    it('serves an OpenAPI 3.1 document with the user and project paths', async () => {
      const res = await fetch(`${server.url}/~api/openapi.json`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
      expect(doc.openapi).toBe('3.1.0');
      for (const path of [
        '/~api/users/{userId}',
        '/~api/users/me',
        '/~api/users',
        '/~api/users/{userId}/access-tokens',
        '/~api/projects',
        '/~api/projects/{projectId}',
        '/~api/projects/{projectId}/path',
        '/~api/projects/{projectId}/clone-url',
      ]) {
        expect(Object.keys(doc.paths)).toContain(path);
      }
      expect(Object.keys(doc.paths['/~api/projects/{projectId}']).sort()).toEqual(['delete', 'get', 'post']);
      expect(Object.keys(doc.paths).some((p) => p.includes('openapi'))).toBe(false);
    });

    it('lists every registered error code, with its status and meaning, in the Problem schema', async () => {
      const doc = (await (await fetch(`${server.url}/~api/openapi.json`)).json()) as {
        components: { schemas: { Problem: { properties: { code: { enum: string[]; description: string } } } } };
      };
      const code = doc.components.schemas.Problem.properties.code;
      expect(code.enum).toEqual(Object.keys(ERROR_CODES));
      expect(code.description).toContain('`GITLOOM_ERR_MERGE_CONFLICTS` (409): The source does not merge into the target without conflicts.');
    });

    it('serves the rendered documentation as HTML', async () => {
      const res = await fetch(`${server.url}/~help/api`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await res.text()).toMatch(/<html/i);
    });
  });
});
