/**
 * OpenAPI-driven fuzzing (docs/compatibility.md#gitloom-differs-errors: no user input produces a 5xx): every operation
 * of /~api/openapi.json, first as a user without roles (reads and writes), then as the
 * administrator (by access token, so a fuzzed password change cannot lock the run out; deletions
 * last), called with edge values in its path, query and body
 * — ids at int32/int64 bounds and malformed, NUL bytes, huge and unicode strings, deep JSON, bad
 * content types. No answer may be a 5xx, and every error must be problem+json.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';
import { commandSpec, givenRepo, removeWorkTrees, runJobOnCommit } from '../helpers/fixtures.js';
import { openRequest } from './pulls-fixtures.js';

type Schema = Record<string, any>;

interface Operation {
  method: string;
  path: string;
  params: { name: string; in: 'path' | 'query'; schema: Schema; required: boolean }[];
  body: Schema | null;
}

interface Call {
  method: string;
  target: string;
  body?: string;
  contentType?: string;
}

const SPEC = commandSpec({ name: 'Job', commands: ['echo ok'] });

/** Integer texts for path and query positions: bounds, beyond bounds, and not-quite-integers. */
const INTEGER_TEXTS = [
  '0',
  '-1',
  '2147483647',
  '2147483648',
  '-2147483649',
  '9223372036854775807',
  '9223372036854775808',
  '99999999999999999999999',
  '%201',
  '0x2',
  '2e0',
  '+2',
  '1.5',
  'abc',
  '%00',
  '%E2%82%AC',
];
/** String texts for path and query positions (already URL-encoded). */
const STRING_TEXTS = [
  '%00',
  'a%00b',
  encodeURIComponent('x'.repeat(4000)),
  encodeURIComponent('😀\u202eرب'),
  '..',
  '%2e%2e%2f',
  '-rf',
  encodeURIComponent('"Name" is "x" and ('),
  encodeURIComponent('~\\'),
  '%FF',
  encodeURIComponent('"Number" is "2147483648"'),
  encodeURIComponent('#99999999999'),
];
/** JSON values for integer fields of a body. */
const INTEGER_VALUES: unknown[] = [2147483648, -2147483649, 1e20, 9223372036854775807, 1.5, '1', null, true, [], {}];
/** JSON values for string fields of a body. */
const STRING_VALUES: unknown[] = [
  '\u0000',
  'a\u0000b',
  'x'.repeat(200_000),
  '😀\u202eرب\ud800',
  '',
  'fixes #2147483648, see x#99999999999',
  1,
  null,
  ['x'],
  { a: 1 },
];

/** A value the schema accepts, as plain as possible (first variants, required and optional fields). */
function sample(schema: Schema | undefined, depth = 0): unknown {
  if (!schema || depth > 8) return null;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const variants = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (variants) return sample(variants.find((v) => v.type !== 'null') ?? variants[0], depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const value: Record<string, unknown> = {};
      for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) value[name] = sample(property, depth + 1);
      return value;
    }
    case 'array':
      return [];
    case 'string':
      return 'x';
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return {};
  }
}

const isType = (schema: Schema, type: string): boolean =>
  schema.type === type ||
  (Array.isArray(schema.type) && schema.type.includes(type)) ||
  ((schema.anyOf ?? schema.oneOf) as Schema[] | undefined)?.some((v) => isType(v, type)) === true;

/** The operations of the OpenAPI document. */
function operations(doc: any): Operation[] {
  const found: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(methods)) {
      if (!['get', 'post', 'delete'].includes(method)) continue;
      const params = ((op.parameters ?? []) as any[])
        .filter((p) => p.in === 'path' || p.in === 'query')
        .map((p) => ({ name: p.name as string, in: p.in as 'path' | 'query', schema: (p.schema ?? {}) as Schema, required: Boolean(p.required) }));
      // a wildcard segment is a path parameter too
      if (path.includes('*') && !params.some((p) => p.name === '*')) params.push({ name: '*', in: 'path', schema: { type: 'string' }, required: true });
      const body = (op.requestBody?.content?.['application/json']?.schema ?? null) as Schema | null;
      found.push({ method: method.toUpperCase(), path, params, body });
    }
  }
  // deletions last, so the entities other operations use exist while they run
  return found.sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
}

/** The fields of an object schema and of its nested object fields (two levels), as paths. */
function fields(properties: Record<string, Schema>, prefix: string[] = []): [string[], Schema][] {
  const found: [string[], Schema][] = [];
  for (const [name, property] of Object.entries(properties)) {
    found.push([[...prefix, name], property]);
    const nested = property.type === 'object' ? property : ((property.anyOf ?? property.oneOf) as Schema[] | undefined)?.find((v) => v.type === 'object');
    if (nested?.properties && prefix.length < 1) found.push(...fields(nested.properties as Record<string, Schema>, [...prefix, name]));
  }
  return found;
}

/** A copy of `base` with the field at `path` set to `value` (missing objects on the way created). */
function replaced(base: unknown, path: string[], value: unknown): unknown {
  const [name, ...rest] = path;
  const object = (base !== null && typeof base === 'object' && !Array.isArray(base) ? base : {}) as Record<string, unknown>;
  return { ...object, [name]: rest.length === 0 ? value : replaced(object[name], rest, value) };
}

/** Every edge-value call of an operation. */
function calls(op: Operation): Call[] {
  const baseline = (p: Operation['params'][number]): string => {
    if (isType(p.schema, 'integer') || isType(p.schema, 'number')) return '1';
    if (Array.isArray(p.schema.enum)) return encodeURIComponent(String(p.schema.enum[0]));
    if (p.schema.anyOf) return encodeURIComponent(String(sample(p.schema)));
    return 'x';
  };
  const target = (override: Record<string, string> = {}): string => {
    let path = op.path;
    const query: string[] = [];
    for (const p of op.params) {
      const value = override[p.name] ?? baseline(p);
      if (p.in === 'path') path = p.name === '*' ? path.replace('*', value) : path.replace(`{${p.name}}`, value);
      else if (p.required || p.name in override) query.push(`${encodeURIComponent(p.name)}=${value}`);
    }
    return query.length > 0 ? `${path}?${query.join('&')}` : path;
  };
  const bodyText = op.body ? JSON.stringify(sample(op.body)) : undefined;
  const json = (body: string | undefined) => ({ body, contentType: body === undefined ? undefined : 'application/json' });
  const result: Call[] = [{ method: op.method, target: target(), ...json(bodyText) }];

  for (const p of op.params) {
    const texts = isType(p.schema, 'integer') || isType(p.schema, 'number') ? INTEGER_TEXTS : STRING_TEXTS;
    for (const text of texts) result.push({ method: op.method, target: target({ [p.name]: text }), ...json(bodyText) });
  }
  result.push({ method: op.method, target: `${target()}${target().includes('?') ? '&' : '?'}unknownParam=%00` });

  if (op.body) {
    const base = sample(op.body);
    if (base !== null && typeof base === 'object' && !Array.isArray(base)) {
      const properties = (op.body.properties ?? {}) as Record<string, Schema>;
      for (const [path, property] of fields(properties)) {
        const values =
          isType(property, 'integer') || isType(property, 'number')
            ? INTEGER_VALUES
            : isType(property, 'string')
              ? STRING_VALUES
              : [null, '\u0000', 2147483648, [[[['deep']]]], { '\u0000': 1 }];
        for (const value of values) result.push({ method: op.method, target: target(), ...json(JSON.stringify(replaced(base, path, value))) });
      }
      result.push({ method: op.method, target: target(), ...json(JSON.stringify({ ...base, unknownField: 1 })) });
      result.push({ method: op.method, target: target(), ...json(JSON.stringify({ ...base, id: 2147483648 })) });
    }
    if (isType(op.body, 'array')) {
      for (const value of [[2147483648], ['\u0000'], [null], [1e20]]) result.push({ method: op.method, target: target(), ...json(JSON.stringify(value)) });
    }
  }
  // whole bodies: deep nesting, malformed JSON, wrong types, bad media types, none at all
  const deep = `${'['.repeat(6000)}${']'.repeat(6000)}`;
  const deepObject = `${'{"a":'.repeat(6000)}1${'}'.repeat(6000)}`;
  for (const body of [deep, deepObject, '{"a":', 'null', '[]', '"x\\u0000"', '12345678901234567890', '{"__proto__":{"x":1}}']) {
    result.push({ method: op.method, target: target(), ...json(body) });
  }
  result.push({ method: op.method, target: target(), body: bodyText ?? 'x', contentType: 'application/xml' });
  result.push({ method: op.method, target: target(), body: 'a\u0000b', contentType: 'text/plain' });
  result.push({ method: op.method, target: target(), body: bodyText ?? '{}', contentType: 'application/json; charset=latin1' });
  result.push({ method: op.method, target: target(), body: '\u00ff\u00fe', contentType: 'application/octet-stream' });
  result.push({ method: op.method, target: target() });
  return result;
}

/** Sends one call with its path exactly as written; resolves with status, content type and body. */
function send(server: TestServer, auth: string, call: Call): Promise<{ status: number; type: string; text: string }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { authorization: auth };
    if (call.contentType) headers['content-type'] = call.contentType;
    if (call.body !== undefined) headers['content-length'] = Buffer.byteLength(call.body);
    const req = http.request({ host: url.hostname, port: url.port, method: call.method, path: call.target, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (text.length < 2000) text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(call.body);
  });
}

describe('fuzzing every operation of the OpenAPI document', () => {
  let server: TestServer;
  let token: string;
  /** The server's error log lines: the faults behind any 5xx, shown with the failures. */
  const errors: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({ GITLOOM_LOG_LEVEL: 'error' }, { logDestination: { write: (line: string) => errors.push(line.slice(0, 3000)) } });
    const created = await server.call('POST', '/users/1/access-tokens', { body: { description: 'fuzz', expireDate: null } });
    expect(created.status, created.text).toBe(200);
    token = created.text;
    // entities with id 1 of the common kinds, so baseline calls reach the domain
    const repo = await givenRepo(server, 'fuzz', { files: { 'README.md': '# fuzz\n', '.onedev-buildspec.yml': SPEC } });
    await repo.commitOn('feature', { 'a.txt': 'a\n' }, 'feature');
    expect((await openRequest(server, { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'feature' })).status).toBe(200);
    expect((await server.call('POST', '/issues', { body: { projectId: repo.id, title: 'issue' } })).status).toBe(200);
    const work = await makeWorkTree({ '.onedev-buildspec.yml': SPEC });
    await git(work, ['push', '-q', '-f', gitUrl(server, 'fuzz', ADMIN), 'main:build']);
    const head = (await git(work, ['rev-parse', 'HEAD'])).trim();
    expect((await runJobOnCommit(server, { projectId: repo.id, commitHash: head, refName: 'refs/heads/build', jobName: 'Job', reason: 'r' })).status).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
    await removeWorkTrees();
  });

  /** Runs every call with `auth` (4 at a time); returns the calls answered with a 5xx or a non-problem error. */
  async function fuzz(auth: string, methods: string[]): Promise<string[]> {
    const doc = (await server.call('GET', '/openapi.json')).json;
    const ops = operations(doc).filter((op) => methods.includes(op.method));
    expect(ops.length).toBeGreaterThan(50);
    const all = ops.flatMap(calls);
    expect(all.length).toBeGreaterThan(4000);
    const failures: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < all.length) {
        const call = all[next++];
        const res = await send(server, auth, call);
        const shown = `${call.method} ${call.target.slice(0, 160)} ${call.contentType ?? ''} ${(call.body ?? '').slice(0, 80)}`;
        if (res.status >= 500) failures.push(`${res.status} ${shown} → ${res.text.slice(0, 200)}`);
        else if (res.status >= 400 && !res.type.startsWith('application/problem+json')) failures.push(`${res.status} not problem+json: ${shown} → ${res.type}`);
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    return failures;
  }

  it('as a user without roles: no 5xx, problem+json for every error', async () => {
    const user = await server.createUser('fuzzer');
    const failures = await fuzz(user.auth, ['GET', 'POST']);
    expect({ failures, errors: failures.length > 0 ? errors : [] }).toEqual({ failures: [], errors: [] });
  }, 300_000);

  it('as the administrator: no 5xx, problem+json for every error', async () => {
    const auth = `Bearer ${token}`;
    const failures = await fuzz(auth, ['GET', 'POST', 'DELETE']);
    expect({ failures, errors: failures.length > 0 ? errors : [] }).toEqual({ failures: [], errors: [] });
    // the server still serves after all that
    expect((await send(server, auth, { method: 'GET', target: '/~api/users/1' })).status).toBe(200);
  }, 300_000);
});
