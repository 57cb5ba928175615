import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { migrateToLatest, openDatabase } from '../../src/db/database.js';
import type { LogDestination } from '../../src/plugins/logging.js';
import { startServer, type RunningServer } from '../../src/server.js';

const run = promisify(execFile);

export const ADMIN = { name: 'admin', password: 'admin-secret', email: 'admin@example.com' };

/** Basic credentials for `fetch`. */
export function basic(name: string, password: string): string {
  return `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`;
}

export interface TestServer {
  url: string;
  api: string;
  dataDir: string;
  server: RunningServer;
  /** Calls the API; `auth` is an Authorization header value or null for anonymous. */
  call(
    method: string,
    route: string,
    options?: { body?: unknown; text?: string; auth?: string | null; headers?: Record<string, string> },
  ): Promise<ApiResponse>;
  /** Creates a user through the API and returns its id and Basic header. */
  createUser(name: string, password?: string): Promise<{ id: number; auth: string; name: string; password: string }>;
  /**
   * Resolves once the reactions to every ref change so far have run: no ref-journal entry is
   * left unprocessed and no event listener is pending (the journal worker runs on its own loop).
   */
  settled(): Promise<void>;
  /** Stops the server and starts it again on the same data dir and database (new ports; `url` and `server` follow). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  json: any;
}

/** Waits, up to 2 s, until no session of `database` is left: a pool ended its connections, but they may still be closing. */
async function closedSessions(client: pg.Client, database: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const { rows } = await client.query('select count(*)::int as n from pg_stat_activity where datname = $1', [database]);
    if (rows[0].n === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Names of the migrated template databases this process has made sure of, by server URL. */
const templates = new Map<string, Promise<string>>();

/**
 * A database of `baseUrl`'s server holding every migration, to create test databases from: made
 * once per set of migration sources (its name carries their digest) by the first worker that
 * needs it, under an advisory lock, through the server's own `migrateToLatest`.
 */
function migratedTemplate(baseUrl: string): Promise<string> {
  let name = templates.get(baseUrl);
  if (!name) {
    name = (async () => {
      const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../src/db/migrations');
      const digest = createHash('sha256');
      for (const file of (await fs.readdir(dir)).sort()) digest.update(file).update(await fs.readFile(path.join(dir, file)));
      const template = `gitloom_test_template_${digest.digest('hex').slice(0, 16)}`;
      const admin = new pg.Client({ connectionString: baseUrl });
      await admin.connect();
      try {
        await admin.query('select pg_advisory_lock(7265326)');
        const { rowCount } = await admin.query('select 1 from pg_database where datname = $1', [template]);
        if (!rowCount) {
          const building = `${template}_building`;
          await admin.query(`drop database if exists ${building}`);
          await admin.query(`create database ${building}`);
          const url = new URL(baseUrl);
          url.pathname = `/${building}`;
          const database = await openDatabase({ databaseUrl: url.toString(), dataDir: os.tmpdir() });
          await migrateToLatest(database.db);
          await database.close();
          // a database with sessions can be neither renamed nor copied
          await closedSessions(admin, building);
          await admin.query(`alter database ${building} rename to ${template}`);
        }
      } finally {
        await admin.end();
      }
      return template;
    })();
    templates.set(baseUrl, name);
  }
  return name;
}

/**
 * Creates a fresh PostgreSQL database next to `baseUrl`'s; `drop()` removes it. With `migrated`,
 * it is a copy of a template holding every migration (a server's start then finds none to run);
 * otherwise it is empty. Its sessions commit without waiting for the WAL flush: a test database
 * need not survive a crash of PostgreSQL itself.
 */
export async function createPostgresDatabase(baseUrl: string, options: { migrated?: boolean } = {}): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `gitloom_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const template = options.migrated ? await migratedTemplate(baseUrl) : null;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`create database ${name}${template ? ` template ${template}` : ''}`);
  await admin.query(`alter database ${name} set synchronous_commit = off`);
  await admin.end();
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: baseUrl });
      await client.connect();
      // the server's pool has ended, but its connections may still be closing: forcing the drop
      // then would kill them mid-goodbye (an uncaught 57P01 in the test process)
      await closedSessions(client, name);
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

/**
 * Resolves once the reactions to every ref change so far have run on `server`: no ref-journal
 * entry is left unprocessed and no event listener is pending. Throws after 30 s.
 */
export async function settled(server: RunningServer): Promise<void> {
  const { db, events } = server.services;
  const deadline = Date.now() + 30_000;
  for (;;) {
    await events.idle();
    const pending = await db.selectFrom('refJournal').select('id').where('processedDate', 'is', null).limit(1).executeTakeFirst();
    if (!pending) break;
    if (Date.now() > deadline) throw new Error(`ref-journal entry ${pending.id} still unprocessed after 30 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
  await events.idle();
}

/**
 * Starts a real server on 127.0.0.1 with a temp data dir: SQLite by default, a fresh PostgreSQL
 * database when GITLOOM_TEST_DATABASE_URL is set. The data dir lies below a private (0700)
 * directory, as it does below root's home after `git clone && npm start`. Logs are off unless
 * GITLOOM_TEST_LOG=1 or `options.logDestination` is given (it then receives the server's JSON
 * log lines). `options.databaseVia` rewrites the PostgreSQL URL the server is given (through a
 * proxy: test/helpers/tcp-proxy.ts). Git over SSH is off unless `options.ssh` (then on any free
 * port of 127.0.0.1: `server.server.ssh.port`) or `env` names a `GITLOOM_SSH_PORT`.
 */
export async function startTestServer(
  env: Record<string, string> = {},
  options: { logDestination?: LogDestination; databaseVia?: (url: string) => string; ssh?: boolean; port?: number } = {},
): Promise<TestServer> {
  const home = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-test-'));
  const dataDir = path.join(home, 'data');
  const pgBase = process.env.GITLOOM_TEST_DATABASE_URL;
  const database = pgBase ? await createPostgresDatabase(pgBase, { migrated: true }) : null;
  const config = () =>
    loadConfig(
      {
        GITLOOM_INITIAL_USER: ADMIN.name,
        GITLOOM_INITIAL_PASSWORD: ADMIN.password,
        GITLOOM_INITIAL_EMAIL: ADMIN.email,
        GITLOOM_HOST: '127.0.0.1',
        GITLOOM_JOB_CONCURRENCY: '2',
        GITLOOM_SSH_PORT: '0',
        ...(database && { GITLOOM_DATABASE_URL: options.databaseVia?.(database.url) ?? database.url }),
        ...env,
      },
      { port: options.port ?? 0, dataDir, ...(options.ssh && { sshPort: 0 }) },
    );
  const start = async () => {
    const started = await startServer(config(), {
      logger: process.env.GITLOOM_TEST_LOG === '1' || options.logDestination !== undefined,
      logDestination: options.logDestination,
    });
    // clone URLs must name the real port
    started.services.config.serverUrl = started.url;
    return started;
  };
  let server = await start();
  const adminAuth = basic(ADMIN.name, ADMIN.password);

  const call: TestServer['call'] = async (method, route, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    const auth = options.auth === undefined ? adminAuth : options.auth;
    if (auth) headers.authorization = auth;
    let body: string | undefined;
    if (options.text !== undefined) {
      body = options.text;
      headers['content-type'] ??= 'text/plain';
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${server.url}/~api${route}`, { method, headers, body });
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  };

  return {
    get url() {
      return server.url;
    },
    get api() {
      return `${server.url}/~api`;
    },
    dataDir,
    get server() {
      return server;
    },
    call,
    async restart() {
      await server.close();
      server = await start();
    },
    async createUser(name, password = `${name}-pass`) {
      const res = await call('POST', '/users', { body: { name, password, emailAddress: `${name}@example.com`, fullName: `${name} Full` } });
      if (res.status !== 200) throw new Error(`createUser ${name}: ${res.status} ${res.text}`);
      return { id: res.json as number, auth: basic(name, password), name, password };
    },
    settled: () => settled(server),
    async close() {
      await server.close();
      await database?.drop();
      await fs.rm(home, { recursive: true, force: true });
      await fs.rm(server.services.config.jobsDir, { recursive: true, force: true });
    },
  };
}

/** Runs the git CLI in `cwd` expecting a refusal (a rejected push, say); returns its stderr. Throws when git succeeds. */
export async function gitFails(cwd: string, args: string[]): Promise<string> {
  try {
    await git(cwd, args);
  } catch (error) {
    return (error as { stderr: string }).stderr;
  }
  throw new Error(`git ${args.join(' ')} unexpectedly succeeded`);
}

/** The environment of the tests' git commands: no prompt, no system or user configuration, a fixed author. */
export const GIT_TEST_ENV: Record<string, string> = {
  GIT_TERMINAL_PROMPT: '0',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Test Author',
  GIT_AUTHOR_EMAIL: 'author@example.com',
  GIT_COMMITTER_NAME: 'Test Author',
  GIT_COMMITTER_EMAIL: 'author@example.com',
};

/** Runs the git CLI (argument array, no shell) in `cwd`; returns stdout. Throws with stderr on failure. */
export async function git(cwd: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await run('git', args, {
    cwd,
    env: { ...process.env, ...GIT_TEST_ENV, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/** A URL for git with credentials embedded (`http://name:pass@host/path`). */
export function gitUrl(server: TestServer, projectPath: string, user?: { name: string; password: string }): string {
  const url = new URL(`${server.url}/${projectPath}`);
  if (user) {
    url.username = encodeURIComponent(user.name);
    url.password = encodeURIComponent(user.password);
  }
  return url.toString();
}

/** A fresh work tree with an initial commit on `main`; returns its path. */
export async function makeWorkTree(files: Record<string, string> = { 'README.md': '# hello\n' }): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-wt-'));
  await git(dir, ['init', '-q', '-b', 'main']);
  await commitFiles(dir, files, 'initial commit');
  return dir;
}

/** Writes files and commits them; returns the new commit hash. */
export async function commitFiles(dir: string, files: Record<string, string>, message: string): Promise<string> {
  for (const [name, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await fs.writeFile(path.join(dir, name), content);
  }
  await git(dir, ['add', '-A']);
  await git(dir, ['commit', '-q', '-m', message]);
  return (await git(dir, ['rev-parse', 'HEAD'])).trim();
}

/** A `gitloom serve` child process and the URL it listens on. */
export interface ChildServer {
  child: ChildProcess;
  url: string;
  /** Everything it has written so far, stdout and stderr (its banner first). */
  output(): string;
}

/** `gitloom serve` from the TypeScript sources. */
const FROM_SOURCES = [process.execPath, '--import', 'tsx', 'src/cli.ts', 'serve'];

/**
 * Starts `gitloom serve` as a child process (so a test can kill -9 it) with `env` added to this
 * process's environment — from the sources, or by `command` run in the project's root (e.g.
 * `npm start`); resolves with its URL once the banner says it listens, rejects with its output
 * when it exits first.
 */
export async function serveChild(env: Record<string, string>, command: string[] = FROM_SOURCES): Promise<ChildServer> {
  const child = spawn(command[0], command.slice(1), {
    cwd: path.resolve(import.meta.dirname, '../..'),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // a process group of its own: `npm start` runs the server as a grandchild, which a signal to
    // the group reaches too
    detached: true,
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
  return { child, url, output: () => output };
}

/** Kills a child server with SIGKILL (nothing when it has exited) and waits for its exit. */
export async function killChild(server: ChildServer): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGKILL');
  await exited;
}

/**
 * The environment of child servers of one installation: a fresh data dir below a private (0700)
 * directory and, when GITLOOM_TEST_DATABASE_URL is set, a fresh PostgreSQL database; both are
 * removed by the `cleanup` steps it adds.
 */
export async function givenInstallation(cleanup: (() => Promise<unknown>)[], extra: Record<string, string> = {}): Promise<Record<string, string>> {
  const home = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-child-'));
  cleanup.push(() => fs.rm(home, { recursive: true, force: true }));
  await fs.chmod(home, 0o700);
  const pgBase = process.env.GITLOOM_TEST_DATABASE_URL;
  const database = pgBase ? await createPostgresDatabase(pgBase, { migrated: true }) : null;
  if (database) cleanup.push(() => database.drop());
  return {
    GITLOOM_DATA_DIR: path.join(home, 'data'),
    GITLOOM_PORT: '0',
    GITLOOM_HOST: '127.0.0.1',
    GITLOOM_INITIAL_USER: ADMIN.name,
    GITLOOM_INITIAL_PASSWORD: ADMIN.password,
    GITLOOM_INITIAL_EMAIL: ADMIN.email,
    GITLOOM_LOG_LEVEL: 'warn',
    GITLOOM_SSH_PORT: '0',
    ...(database && { GITLOOM_DATABASE_URL: database.url }),
    ...extra,
  };
}

/** Calls the API of a child server as the administrator; the JSON body parsed when it is JSON. */
export async function callChild(server: ChildServer, method: string, route: string, body?: unknown): Promise<{ status: number; json: any; text: string }> {
  const res = await fetch(`${server.url}/~api${route}`, {
    method,
    headers: { authorization: basic(ADMIN.name, ADMIN.password), ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined, text };
}

/** The administrator's clone URL of `project` on a child server. */
export function remoteOf(server: ChildServer, project: string): string {
  const url = new URL(`${server.url}/${project}`);
  url.username = ADMIN.name;
  url.password = ADMIN.password;
  return url.toString();
}

/** A TCP port of 127.0.0.1 nothing listens on right now (for a child server's `GITLOOM_SSH_PORT`). */
export async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
