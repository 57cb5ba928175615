import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { locateCtags } from '../../src/domain/code-search/ctags.js';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { eventually, givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server.js';

/** Many small Python functions: more tags than a file keeps. */
const MANY = Array.from({ length: 6000 }, (_, i) => `def generated_${String(i).padStart(4, '0')}():\n    pass\n`).join('');

/**
 * Symbol search and "go to definition" (docs/compatibility.md#code-search) over HTTP: Universal
 * Ctags' definitions follow pushes, permissions hold, hostile files do not stall the index.
 */
describe('symbol search', () => {
  let server: TestServer;
  let app: Repo;
  let alice: TestUser;
  let aliceWeb: WebSession;
  let adminWeb: WebSession;

  beforeAll(async () => {
    server = await startTestServer();
    [alice] = await givenUsers(server, 'alice');
    app = await givenRepo(server, 'app', {
      files: {
        'src/flux.ts': 'export class Engine {\n  fluxCapacitor(speed: number) {\n    return speed * 88;\n  }\n}\nexport function startEngine() {}\n',
        'lib/flux.py': 'def fluxCapacitor():\n    return 1\n\ndef flux_helper():\n    pass\n',
        'src/use.ts': "import { startEngine } from './flux';\nstartEngine();\n",
      },
    });
    await givenRepo(server, 'secret', { files: { 'plan.ts': 'export function fluxCapacitorSecret() {}\n' } });
    await grantRole(server, app.id, alice.id, 'Code Reader');
    [aliceWeb, adminWeb] = await Promise.all([signInByFetch(server, 'alice', alice.password), signInByFetch(server, ADMIN.name, ADMIN.password)]);
    await found('fluxCapacitorSecret', adminWeb, 'plan.ts');
    await found('fluxCapacitor', aliceWeb, 'lib/flux.py');
  });
  afterAll(async () => {
    await removeWorkTrees();
    await server?.close();
  });

  const get = async (url: string, session: WebSession = aliceWeb) => {
    const res = await fetch(`${server.url}${url}`, { headers: { cookie: session.cookie } });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };
  const search = (params: Record<string, string>, session: WebSession = aliceWeb) =>
    get(`/~code?${new URLSearchParams({ mode: 'symbol', ...params })}`, session);
  /** Waits until a symbol search of `q` shows `expected` (the index worker runs in the background). */
  const found = (q: string, session: WebSession, expected: string) => eventually(async () => (await search({ q }, session)).text.includes(expected) || null);

  it('finds definitions by name, exact first then by prefix, case-insensitively, with kind, scope and a link to the line', async () => {
    const { status, text } = await search({ q: 'FLUXCAPACITOR' });
    expect(status).toBe(200);
    const head = await app.head('main');
    const rows = [
      ...text.matchAll(
        /<tr><td class="symbol-kind">(\w+)<\/td><td><code>(\w+)<\/code>(?:<span class="meta"> in (\w+)<\/span>)?<\/td><td>.*?<a href="([^"]+)">([^<]+)<\/a><\/td><\/tr>/g,
      ),
    ].map((m) => m.slice(1));
    expect(rows).toEqual([
      ['function', 'fluxCapacitor', undefined, `/app/~files/${head}/lib/flux.py#L1`, 'lib/flux.py:1'],
      ['method', 'fluxCapacitor', 'Engine', `/app/~files/${head}/src/flux.ts#L2`, 'src/flux.ts:2'],
    ]);
    // a prefix finds longer names after the exact ones; a project alice cannot read never shows
    const prefix = await search({ q: 'flux' });
    expect(prefix.text).toContain('<code>flux_helper</code>');
    expect(prefix.text).toContain('<code>fluxCapacitor</code>');
    expect(prefix.text).not.toContain('fluxCapacitorSecret');
    expect(prefix.text).not.toContain('secret');
    expect(prefix.text).not.toContain('still being indexed');
    expect((await search({ q: 'fluxCapacitorSecret' })).text).toContain('No symbols match.');
    expect((await search({ q: 'fluxCapacitorSecret', project: 'secret' })).text).toContain('No symbols match.');
  });

  it('applies the project, path and language filters; refuses an unknown mode and a symbol search at a ref with 400', async () => {
    expect((await search({ q: 'fluxCapacitor', lang: 'python' })).text).not.toContain('src/flux.ts');
    expect((await search({ q: 'fluxCapacitor', path: 'src/**' })).text).not.toContain('lib/flux.py');
    expect((await search({ q: 'fluxCapacitor', project: 'app' })).text).toContain('lib/flux.py');
    expect((await search({ q: 'fluxCapacitorSecret', project: 'secret' }, adminWeb)).text).toContain('plan.ts');
    expect((await get('/~code?q=x&mode=fuzzy')).status).toBe(400);
    const atRef = await search({ q: 'fluxCapacitor', project: 'app', ref: 'main' });
    expect(atRef.status).toBe(400);
    expect(atRef.text).toContain('Symbol search covers the default branches only');
  });

  it('answers the definitions of a name as JSON for the file view, the file’s language first', async () => {
    const head = await app.head('main');
    const answer = await get('/app/~definitions?name=fluxCapacitor&path=src/use.ts');
    expect(answer.status).toBe(200);
    expect(answer.type).toContain('application/json');
    expect(JSON.parse(answer.text)).toEqual({
      name: 'fluxCapacitor',
      definitions: [
        { name: 'fluxCapacitor', kind: 'method', scope: 'Engine', path: 'src/flux.ts', line: 2, url: `/app/~files/${head}/src/flux.ts#L2` },
        { name: 'fluxCapacitor', kind: 'function', scope: null, path: 'lib/flux.py', line: 1, url: `/app/~files/${head}/lib/flux.py#L1` },
      ],
    });
    // case-sensitive; none is an empty list; no name is 400; a project alice cannot read is 404
    expect(JSON.parse((await get('/app/~definitions?name=fluxcapacitor')).text).definitions).toEqual([]);
    expect((await get('/app/~definitions')).status).toBe(400);
    expect((await get('/secret/~definitions?name=fluxCapacitorSecret')).status).toBe(404);
    // the file view offers it
    expect((await get(`/app/~files/main/src/use.ts`)).text).toContain('data-definitions="/app/~definitions?path=src%2Fuse.ts"');
  });

  it('follows pushes: a new function is found within seconds, a changed file’s old symbol is gone', async () => {
    await app.commitOn('main', { 'src/new.ts': 'export function hoverboard() {}\n' }, 'hoverboard');
    await found('hoverboard', aliceWeb, 'src/new.ts:1');
    await app.commitOn('main', { 'src/new.ts': '\nexport function skateboard() {}\n' }, 'rewrite');
    await found('skateboard', aliceWeb, 'src/new.ts:2');
    expect((await search({ q: 'hoverboard' })).text).toContain('No symbols match.');
  });

  it('indexes past files Universal Ctags crashes or hangs on, and keeps the first 5,000 symbols of a file', async () => {
    const hostile = await givenRepo(server, 'hostile', {
      files: {
        // Universal Ctags 5.9 and 6 crash on deeply nested braces of C and hang on nested brackets of Ruby
        'a-crash.c': '{'.repeat(100_000),
        'b-hang.rb': '['.repeat(1_000_000),
        'c-many.py': MANY,
        'd-after.ts': 'export function afterTheHostileFiles() {}\n',
      },
    });
    await grantRole(server, hostile.id, alice.id, 'Code Reader');
    await found('afterTheHostileFiles', aliceWeb, 'd-after.ts:1');
    const many = await search({ q: 'generated_', project: 'hostile' });
    expect(many.text).toContain('<code>generated_0000</code>');
    expect(many.text).toContain('Only the first 100 symbols are shown');
    expect((await search({ q: 'generated_4999', project: 'hostile' })).text).toContain('c-many.py:9999');
    expect((await search({ q: 'generated_5000', project: 'hostile' })).text).toContain('No symbols match.');
    const notes = await search({ q: 'afterTheHostileFiles', project: 'hostile' });
    expect(notes.text).toContain('3 files have missing or cut symbols');
    // the text of each is still searched
    expect((await get('/~code?q=def+generated_5999&project=hostile')).text).toContain('c-many.py');
  }, 60_000);
});

/** Without Universal Ctags (`GITLOOM_CTAGS=off`) the code index holds text only and the pages say symbols are unavailable. */
describe('symbol search without Universal Ctags', () => {
  let server: TestServer;
  let adminWeb: WebSession;

  beforeAll(async () => {
    server = await startTestServer({ GITLOOM_CTAGS: 'off' });
    await givenRepo(server, 'plain', { files: { 'main.ts': 'export function withoutCtags() {}\n' } });
    adminWeb = await signInByFetch(server, ADMIN.name, ADMIN.password);
  });
  afterAll(async () => {
    await removeWorkTrees();
    await server?.close();
  });

  const get = async (url: string) => {
    const res = await fetch(`${server.url}${url}`, { headers: { cookie: adminWeb.cookie } });
    return { status: res.status, text: await res.text() };
  };

  it('finds Universal Ctags on PATH, takes a configured one only when it is Universal Ctags with its sandbox, and none when off', async () => {
    expect(await locateCtags(null)).toMatch(/\/ctags(-universal)?$/);
    expect(await locateCtags('/usr/bin/ctags-universal')).toBe('/usr/bin/ctags-universal');
    expect(await locateCtags('/bin/true')).toBeNull();
    expect(await locateCtags('/nowhere/ctags')).toBeNull();
    expect(await locateCtags('off')).toBeNull();
  });

  it('indexes the text, says symbol search is unavailable, and offers no go to definition', async () => {
    await eventually(async () => (await get('/~code?q=withoutCtags')).text.includes('main.ts') || null);
    const symbols = await get('/~code?q=withoutCtags&mode=symbol');
    expect(symbols.status).toBe(200);
    expect(symbols.text).toContain('Symbol search is unavailable: this server has no Universal Ctags');
    expect(symbols.text).not.toContain('main.ts');
    const file = await get('/plain/~files/main/main.ts');
    expect(file.status).toBe(200);
    expect(file.text).not.toContain('data-definitions');
    expect(JSON.parse((await get('/plain/~definitions?name=withoutCtags')).text).definitions).toEqual([]);
  });
});
