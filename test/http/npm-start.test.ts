import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN, basic, freePort, git, givenInstallation, makeWorkTree, serveChild, type ChildServer } from '../helpers/server.js';

const root = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

/**
 * `npm start` runs the bundle scripts/build.mjs writes to dist/ (README "Start"): what only the
 * bundle can get wrong is pinned here — the git hooks' program beside it, the web assets, the
 * chunks and packages loaded on first use (swagger-ui, highlighting, Markdown).
 */
describe('npm start: the bundled server', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  it('builds dist/, serves pushes through its hooks, pages with their assets, and the API documentation', async () => {
    // the embedded default: SQLite
    const sshPort = await freePort();
    const env = await givenInstallation(cleanup, { GITLOOM_DATABASE_URL: '', GITLOOM_SSH_PORT: String(sshPort) });
    // sources newer than the stamp: `npm start` builds first
    await fs.rm(path.join(root, 'dist', '.build-stamp'), { force: true });
    const server: ChildServer = await serveChild(env, ['npm', 'start', '--silent']);
    cleanup.push(async () => {
      const exited = new Promise((resolve) => server.child.once('exit', resolve));
      process.kill(-server.child.pid!, 'SIGTERM');
      await exited;
    });
    expect(await fs.readFile(path.join(root, 'dist', '.build-stamp'), 'utf8')).toMatch(/^\d{4}-/);

    const auth = { authorization: basic(ADMIN.name, ADMIN.password) };
    const created = await fetch(`${server.url}/~api/projects`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{"name":"bundled"}',
    });
    expect(created.status).toBe(200);
    const work = await makeWorkTree({ 'README.md': '# Bundled\n\nA **readme**.\n', 'main.ts': 'export const answer = 42;\n' });
    cleanup.push(() => fs.rm(work, { recursive: true, force: true }));
    const remote = new URL('/bundled', server.url);
    remote.username = ADMIN.name;
    remote.password = ADMIN.password;
    await git(work, ['push', '-q', remote.href, 'main']);
    const branches = await fetch(`${server.url}/~api/repositories/${await created.json()}/branches`, { headers: auth });
    expect(await branches.json()).toEqual(['main']);

    const page = await (await fetch(`${server.url}/bundled`, { headers: auth })).text();
    expect(page).toContain('<strong>readme</strong>');
    const stylesheet = /href="(\/~assets\/site\.[0-9a-f]+\.css)"/.exec(page)?.[1];
    expect(stylesheet).toBeDefined();
    expect((await fetch(`${server.url}${stylesheet}`)).status).toBe(200);
    const file = await (await fetch(`${server.url}/bundled/~files/main/main.ts`, { headers: auth })).text();
    expect(file).toMatch(/class="hljs-keyword">export</);

    // git over SSH: ssh2 and its native crypto binding load beside the bundle
    expect(server.output()).toContain(`Git over SSH on port ${sshPort}`);
    const scanned = await run('ssh-keyscan', ['-p', String(sshPort), '-t', 'ed25519', '127.0.0.1']);
    expect(scanned.stdout).toContain(`[127.0.0.1]:${sshPort} ssh-ed25519 `);

    const docs = await fetch(`${server.url}/~help/api/`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('swagger');
  }, 120_000);
});
