import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { eventually, givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { ADMIN, git, startTestServer, type TestServer } from '../helpers/server.js';

/** Code search on a branch, tag or commit (docs/compatibility.md#code-search) over HTTP: the tree at the ref, not the index. */
describe('code search on a branch or tag', () => {
  let server: TestServer;
  let app: Repo;
  let secret: Repo;
  let alice: TestUser;
  let aliceWeb: WebSession;
  let adminWeb: WebSession;
  let feature: string;
  let tagged: string;

  beforeAll(async () => {
    server = await startTestServer();
    [alice] = await givenUsers(server, 'alice');
    app = await givenRepo(server, 'app', {
      files: {
        'README.md': '# App\n',
        'src/flux.ts': 'export function fluxCapacitor(speed: number) {\n  return speed * 88;\n}\n',
        'node_modules/dep/index.js': 'module.exports = "warpDrive vendored";\n',
        'logo.bin': 'warpDrive\u0000binary',
      },
    });
    feature = await app.commitOn(
      'feature',
      { 'src/warp.ts': 'export const warpDrive = 9;\n// -- warp-core --\n', 'lib/warp.py': 'WARP_DRIVE = "warpDrive in python"\n' },
      'warp',
    );
    // an annotated tag on a commit of a branch since deleted: its text is on the tag only
    tagged = await app.commitOn('release', { 'src/tachyon.ts': 'export const tachyonBeam = true;\n' }, 'tachyon');
    await git(app.work, ['tag', '-a', '-m', 'v1', 'v1', tagged]);
    await git(app.work, ['push', '-q', app.remote, 'refs/tags/v1', ':refs/heads/release']);
    secret = await givenRepo(server, 'secret', { files: { 'plan.ts': 'const plan = 1;\n' } });
    await secret.commitOn('feature', { 'plan.ts': 'const warpDrive = "secret plan";\n' }, 'secret warp');
    await grantRole(server, app.id, alice.id, 'Code Reader');
    [aliceWeb, adminWeb] = await Promise.all([signInByFetch(server, 'alice', alice.password), signInByFetch(server, ADMIN.name, ADMIN.password)]);
    // the index of the default branches is built
    await eventually(async () => (await search({ q: 'fluxCapacitor' })).html.includes('src/flux.ts') || null);
  });
  afterAll(async () => {
    await removeWorkTrees();
    await server?.close();
  });

  const search = async (params: Record<string, string>, session: WebSession = aliceWeb) => {
    const res = await fetch(`${server.url}/~code?${new URLSearchParams(params)}`, { headers: { cookie: session.cookie } });
    return { status: res.status, html: await res.text() };
  };

  it('finds an identifier only on a feature branch with ref=feature, linking the line at its commit, and not on the default branch', async () => {
    const { status, html } = await search({ q: 'WARPDRIVE', project: 'app', ref: 'feature' });
    expect(status).toBe(200);
    expect(html).toContain(`href="/app/~files/${feature}/src/warp.ts#L1"`);
    expect(html).toContain('export const <mark>warpDrive</mark> = 9;');
    expect(html).toContain('lib/warp.py');
    // vendored and binary files are skipped and said so, as by the index
    expect(html).not.toContain('node_modules/dep');
    expect(html).not.toContain('logo.bin');
    expect(html).toContain('2 files are not searched: binary, larger than 1 MiB, or vendored.');
    expect((await search({ q: 'warpDrive', project: 'app' })).html).toContain('No code matches.');
    expect((await search({ q: 'warpDrive' })).html).toContain('No code matches.');
    // a literal starting with `-` is searched too
    expect((await search({ q: '-- warp-core', project: 'app', ref: 'feature' })).html).toContain('// <mark>-- warp-core</mark> --');
  });

  it('searches an annotated tag at its commit, and a commit by its hash', async () => {
    const { html } = await search({ q: 'tachyonBeam', project: 'app', ref: 'v1' });
    expect(html).toContain(`href="/app/~files/${tagged}/src/tachyon.ts#L1"`);
    expect((await search({ q: 'tachyonBeam', project: 'app', ref: tagged.slice(0, 10) })).html).toContain(`/app/~files/${tagged}/src/tachyon.ts#L1`);
    expect((await search({ q: 'tachyonBeam', project: 'app', ref: 'feature' })).html).toContain('No code matches.');
  });

  it('verifies regular expressions with RE2: with required literals, without any, and explosive ones promptly', async () => {
    expect((await search({ q: 'warp\\w+ = \\d', regex: '1', project: 'app', ref: 'feature' })).html).toContain('export const <mark>warpDrive = 9</mark>;');
    // no literal run of three characters: every file of the tree is read
    expect((await search({ q: 'fl.xC.p.c', regex: '1', project: 'app', ref: 'feature' })).html).toContain('export function <mark>fluxCapac</mark>itor');
    // case-sensitive unless the pattern says otherwise
    expect((await search({ q: 'WARPDRIVE', regex: '1', project: 'app', ref: 'feature' })).html).toContain('No code matches.');
    expect((await search({ q: '(?i)WARPDRIVE', regex: '1', project: 'app', ref: 'feature' })).html).toContain('src/warp.ts');
    const started = Date.now();
    const explosive = await search({ q: '(a+)+$', regex: '1', project: 'app', ref: 'feature' });
    expect(explosive.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(5000);
    const invalid = await search({ q: '(?<=x)y', regex: '1', project: 'app', ref: 'feature' });
    expect(invalid.status).toBe(400);
    expect(invalid.html).toContain('is not a valid regular expression');
  });

  it('filters by path glob and language at a ref', async () => {
    const byPath = (await search({ q: 'warpDrive', project: 'app', ref: 'feature', path: 'src/*.ts' })).html;
    expect(byPath).toContain('src/warp.ts');
    expect(byPath).not.toContain('lib/warp.py');
    const byLanguage = (await search({ q: 'warpDrive', project: 'app', ref: 'feature', lang: 'python' })).html;
    expect(byLanguage).toContain('lib/warp.py');
    expect(byLanguage).not.toContain('src/warp.ts');
  });

  it('answers a project the user cannot read, a missing project and a missing ref alike: nothing, without a branch list', async () => {
    for (const params of [
      { q: 'warpDrive', project: 'secret', ref: 'feature' },
      { q: 'warpDrive', project: 'nowhere', ref: 'feature' },
      { q: 'warpDrive', project: 'app', ref: 'no-such-branch' },
    ]) {
      const { status, html } = await search(params);
      expect(status).toBe(200);
      expect(html).toContain('No code matches.');
      expect(html).not.toContain('secret plan');
    }
    expect((await search({ q: 'warpDrive', project: 'secret' })).html).not.toContain('Branch, tag or commit');
    expect((await search({ q: 'warpDrive', project: 'secret', ref: 'feature' }, adminWeb)).html).toContain('<mark>warpDrive</mark> = &quot;secret plan&quot;');
  });

  it('refuses a ref that is no branch or tag name with 400, and a ref without a project', async () => {
    for (const ref of ['a..b', 'x:y', '-x', 'HEAD', 'a b']) {
      const { status, html } = await search({ q: 'warpDrive', project: 'app', ref });
      expect(status).toBe(400);
      expect(html).toContain('Invalid branch or tag name');
    }
    const { status, html } = await search({ q: 'warpDrive', ref: 'feature' });
    expect(status).toBe(400);
    expect(html).toContain('Choose a project to search a branch or tag of');
  });

  it('shows at most 50 files and says the search is incomplete', async () => {
    const files = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`many/file-${i}.ts`, `export const manyFluxes${i} = ${i};\n`]));
    await app.commitOn('many', files, 'many files');
    const { html } = await search({ q: 'manyFluxes', project: 'app', ref: 'many' });
    expect(html.match(/class="code-result"/g)).toHaveLength(50);
    expect(html).toContain('Only the first 50 files are shown, or the search stopped early');
    expect((await search({ q: 'manyFluxes', project: 'app', ref: 'many', path: 'many/file-1*' })).html).not.toContain('Only the first 50 files');
  });

  it('offers the branch and tag switcher once a project is chosen, the default branch meaning the index', async () => {
    const { html } = await search({ q: 'warpDrive', project: 'app', ref: 'feature' });
    expect(html).toContain('Branch: <strong>feature</strong>');
    expect(html).toContain(`href="/~code?q=warpDrive&amp;project=app&amp;ref=v1"`);
    expect(html).toContain(`href="/~code?q=warpDrive&amp;project=app"`);
    expect(html).toContain('<input type="hidden" name="ref" value="feature"/>');
    expect((await search({ q: 'warpDrive' })).html).not.toContain('Branch, tag or commit');
  });
});
