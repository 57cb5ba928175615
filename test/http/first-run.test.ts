import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { ADMIN, basic, startTestServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

/** Runs the gitloom CLI from source against a server's data directory and database. */
async function cli(server: TestServer, args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    cwd: root,
    env: { ...process.env, GITLOOM_DATA_DIR: server.dataDir, GITLOOM_DATABASE_URL: server.server.services.config.databaseUrl ?? '' },
  });
  return stdout;
}

describe('first run', () => {
  const servers: TestServer[] = [];
  afterAll(async () => {
    for (const server of servers) await server.close();
  });

  it('generates the administrator password once, warns when GITLOOM_INITIAL_PASSWORD comes too late, and resets it from the CLI', async () => {
    const server = await startTestServer({ GITLOOM_INITIAL_PASSWORD: '' });
    servers.push(server);
    const generated = server.server.generatedPassword;
    expect(generated).toMatch(/^[\w-]{16}$/);
    expect(server.server.initialPasswordIgnored).toBe(false);
    expect((await server.call('GET', '/users/1', { auth: basic(ADMIN.name, generated!) })).status).toBe(200);

    // a second server on the same data: the administrator exists, the variable is not applied
    const again = await startServer(
      loadConfig(
        {
          GITLOOM_INITIAL_USER: ADMIN.name,
          GITLOOM_INITIAL_PASSWORD: 'too-late',
          GITLOOM_HOST: '127.0.0.1',
          GITLOOM_SSH_PORT: '0',
          ...(server.server.services.config.databaseUrl && { GITLOOM_DATABASE_URL: server.server.services.config.databaseUrl }),
        },
        { port: 0, dataDir: server.dataDir },
      ),
      { logger: false },
    );
    try {
      expect(again.generatedPassword).toBeNull();
      expect(again.initialPasswordIgnored).toBe(true);
    } finally {
      await again.close();
    }

    expect(await cli(server, ['admin', 'reset-password', 'ADMIN', '--password', 'chosen-now'])).toContain("Password of 'ADMIN' changed");
    expect((await server.call('GET', '/users/1', { auth: basic(ADMIN.name, 'chosen-now') })).status).toBe(200);
    const printed = await cli(server, ['admin', 'reset-password', 'admin']);
    const fresh = /New password of 'admin': (\S+)/.exec(printed)?.[1];
    expect(fresh).toBeDefined();
    expect((await server.call('GET', '/users/1', { auth: basic(ADMIN.name, fresh!) })).status).toBe(200);
    await expect(cli(server, ['admin', 'reset-password', 'nobody'])).rejects.toMatchObject({ stderr: expect.stringContaining('User not found: nobody') });
  }, 60_000);

  it('answers / with the web UI: anonymous visitors are led to the sign-in page', async () => {
    const server = await startTestServer();
    servers.push(server);
    const res = await fetch(`${server.url}/`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toMatch(/^\/~login/);
    const login = await fetch(`${server.url}/~login`);
    expect(login.status).toBe(200);
    expect(await login.text()).toContain('<title>');
    expect((await fetch(`${server.url}/~help/api`)).status).toBe(200);
  });
});
