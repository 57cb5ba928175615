import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requiredLiterals } from '../../src/domain/code-search/index.js';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { eventually, givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);

/** Code search (docs/compatibility.md#code-search) over HTTP: the index follows pushes; permissions, literals, RE2, filters. */
describe('code search', () => {
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
        'README.md': '# App\n',
        'src/flux.ts': 'export function fluxCapacitor(speed: number) {\n  return speed * 88; // FLUX\n}\n',
        'lib/util.py': 'def flux_helper():\n    return "fluxCapacitor in python"\n',
        'node_modules/dep/index.js': 'module.exports = "fluxCapacitor vendored";\n',
        'logo.bin': 'fluxCapacitor\u0000binary',
        'docs/ten.txt': ['one', 'line two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'line nine', 'ten'].join('\n') + '\n',
      },
    });
    await givenRepo(server, 'secret', { files: { 'plan.ts': 'const fluxCapacitor = "secret plan";\n' } });
    await grantRole(server, app.id, alice.id, 'Code Reader');
    [aliceWeb, adminWeb] = await Promise.all([signInByFetch(server, 'alice', alice.password), signInByFetch(server, ADMIN.name, ADMIN.password)]);
    await indexed('fluxCapacitor', adminWeb, 'secret');
  });
  afterAll(async () => {
    await removeWorkTrees();
    await server?.close();
  });

  const search = async (params: Record<string, string>, session: WebSession = aliceWeb) => {
    const res = await fetch(`${server.url}/~code?${new URLSearchParams(params)}`, { headers: { cookie: session.cookie } });
    return { status: res.status, html: await res.text() };
  };
  /** Waits until searching `q` shows `expected` (the index worker runs in the background). */
  const indexed = (q: string, session: WebSession, expected: string) => eventually(async () => (await search({ q }, session)).html.includes(expected) || null);

  it('finds a literal case-insensitively in the projects the user can read, linking the line at the indexed commit', async () => {
    const { status, html } = await search({ q: 'FLUXCAPACITOR' });
    expect(status).toBe(200);
    const head = await app.head('main');
    expect(html).toContain(`href="/app/~files/${head}/src/flux.ts#L1"`);
    expect(html).toContain('export function <mark>fluxCapacitor</mark>(speed: number) {');
    expect(html).toContain('lib/util.py');
    // vendored and binary files are not indexed; a project alice cannot read never shows
    expect(html).not.toContain('node_modules');
    expect(html).not.toContain('logo.bin');
    expect(html).not.toContain('secret');
    expect(html).toContain('2 files are not searched: binary, larger than 1 MiB, or vendored.');
  });

  it('shows a line of context before and after each matching line, marking the lines left out between', async () => {
    const { html } = await search({ q: 'return speed', project: 'app' });
    const lines = [...html.matchAll(/<li( class="([a-z ]+)")?><a href="[^"]*#L(\d+)"/g)].map((m) => `${m[3]}:${m[2] ?? 'match'}`);
    expect(lines).toEqual(['1:context', '2:match', '3:context']);
    const spread = await search({ q: 'line', project: 'app', path: 'docs/*' });
    const numbers = [...spread.html.matchAll(/<li( class="([a-z ]+)")?><a href="[^"]*#L(\d+)"/g)].map((m) => `${m[3]}:${m[2] ?? 'match'}`);
    // matches on lines 2 and 9 of ten: their contexts, a gap between, and no line after the last
    expect(numbers).toEqual(['1:context', '2:match', '3:context', '8:context gap', '9:match', '10:context']);
  });

  it('matches RE2 regular expressions in linear time, and refuses invalid ones with 400', async () => {
    const { html } = await search({ q: 'speed \\* \\d+', regex: '1' });
    expect(html).toContain('<mark>speed * 88</mark>');
    const started = Date.now();
    const explosive = await search({ q: '(a+)+$', regex: '1' });
    expect(explosive.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(5000);
    const invalid = await search({ q: '(?<=x)y', regex: '1' });
    expect(invalid.status).toBe(400);
    expect(invalid.html).toContain('is not a valid regular expression');
  });

  it('filters by project, path glob and language', async () => {
    expect((await search({ q: 'fluxCapacitor', path: 'src/*.ts' })).html).not.toContain('lib/util.py');
    expect((await search({ q: 'fluxCapacitor', lang: 'python' })).html).not.toContain('src/flux.ts');
    expect((await search({ q: 'fluxCapacitor', lang: 'python' })).html).toContain('lib/util.py');
    expect((await search({ q: 'fluxCapacitor', project: 'secret' })).html).toContain('No code matches.');
    expect((await search({ q: 'fluxCapacitor', project: 'secret' }, adminWeb)).html).toContain('plan.ts');
  });

  it('follows pushes: a new identifier is found and a removed file is gone within seconds', async () => {
    await app.commitOn('main', { 'src/new.ts': 'export const hoverboard = 2015;\n' }, 'hoverboard');
    await indexed('hoverboard', aliceWeb, 'src/new.ts');
    await app.commitOn('main', { 'src/new.ts': 'export const skateboard = 1985;\n' }, 'rewrite');
    await indexed('skateboard', aliceWeb, 'src/new.ts');
    expect((await search({ q: 'hoverboard' })).html).toContain('No code matches.');
  });

  it('indexes a push of many files written in several transactions: every file is found', async () => {
    // 150 files of 4 KiB: more files and more text than one write holds
    const files = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`many/file${i}.txt`, `needle${i}qz ${'x'.repeat(4096)}\n`]));
    await app.commitOn('main', files, 'many files');
    await indexed('needle149qz', aliceWeb, 'many/file149.txt');
    for (const i of [0, 99, 100, 149]) expect((await search({ q: `needle${i}qz` })).html).toContain(`many/file${i}.txt`);
  });

  it('rebuilds the index of a project from its default branch with `gitloom admin rebuild-code-index`', async () => {
    const cli = (args: string[]) =>
      run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'admin', 'rebuild-code-index', ...args], {
        cwd: path.resolve(import.meta.dirname, '../..'),
        env: { ...process.env, GITLOOM_DATA_DIR: server.dataDir, GITLOOM_DATABASE_URL: server.server.services.config.databaseUrl ?? '' },
      });
    expect((await cli(['app'])).stdout).toContain('Code index of 1 project dropped');
    expect((await search({ q: 'fluxCapacitor' })).html).not.toContain('src/flux.ts');
    await indexed('fluxCapacitor', aliceWeb, 'src/flux.ts');
    await expect(cli(['nowhere'])).rejects.toMatchObject({ stderr: expect.stringContaining('Project not found: nowhere') });
  });

  it('tells the literal runs every match of a regular expression contains', () => {
    expect(requiredLiterals('foo\\.bar(baz)?\\d+qux')).toEqual(['foo.bar', 'qux']);
    expect(requiredLiterals('fluxCapacitor')).toEqual(['fluxcapacitor']);
    expect(requiredLiterals('abcd?ef')).toEqual(['abc']);
    expect(requiredLiterals('abc+def')).toEqual(['abc', 'def']);
    expect(requiredLiterals('foo|bar')).toEqual([]);
    expect(requiredLiterals('[abc]+xyz{0,2}w')).toEqual([]);
    expect(requiredLiterals('(?i)hello.world')).toEqual(['hello', 'world']);
  });
});
