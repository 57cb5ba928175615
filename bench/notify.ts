/**
 * Announcement latency across two processes sharing PostgreSQL (run on demand:
 * `npx tsx bench/notify.ts`; `GITLOOM_BENCH_DATABASE_URL`, default
 * `postgres://postgres@127.0.0.1:5432/postgres`, names the server; a fresh database is made and
 * dropped). This process and a peer process play ping-pong `GITLOOM_BENCH_ROUNDS` times (default
 * 200); one way is half a round trip:
 *
 * - the limit: bare `pg` clients, `select pg_notify(…)` answered by the other's LISTEN;
 * - Gitloom's `announce()` of a topic (what wakes a loop), answered through its LISTEN connection;
 * - Gitloom: a transaction writing a cached table (`settings`) through Gitloom's database handle,
 *   whose tracked connection announces it at the commit (docs/architecture.md#processes-sharing-postgresql),
 *   answered the same way by the peer when its LISTEN connection hands it over.
 *
 * Prints p50 and p99 of each and the ratio of the p50s. Then, end to end through two server
 * processes (`src/cli.ts serve`, one data dir, `GITLOOM_FALLBACK_POLL_MS` at a minute so that only
 * the announcement can do it): from process A answering the revocation of an access token to
 * process B first refusing it, B asked again and again meanwhile (`GITLOOM_BENCH_REVOKES`
 * tokens, default 30). Not part of the tests.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { migrateToLatest, openDatabase } from '../src/db/database.js';
import { announce, onAnnouncement, TABLES_TOPIC } from '../src/db/notifications.js';
import { serveChild, type ChildServer } from '../test/helpers/server.js';
import { percentile } from './lib.js';

const ROUNDS = Number(process.env.GITLOOM_BENCH_ROUNDS ?? 200);
const REVOKES = Number(process.env.GITLOOM_BENCH_REVOKES ?? 30);
const PASSWORD = 'bench-secret';
const ADMIN = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;

/** `gitloom serve` from the sources on `databaseUrl` and `dataDir`; resolves with its URL once it listens. */
function serve(databaseUrl: string, dataDir: string): Promise<ChildServer> {
  return serveChild({
    GITLOOM_DATABASE_URL: databaseUrl,
    GITLOOM_DATA_DIR: dataDir,
    GITLOOM_PORT: '0',
    GITLOOM_HOST: '127.0.0.1',
    GITLOOM_SSH_PORT: '0',
    GITLOOM_INITIAL_PASSWORD: PASSWORD,
    GITLOOM_LOG_LEVEL: 'warn',
    GITLOOM_FALLBACK_POLL_MS: '60000',
  });
}

/** Milliseconds from A answering each token's revocation to B first refusing it. */
async function revocations(databaseUrl: string): Promise<number[]> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-bench-notify-'));
  // one after the other: the first creates the schema and the administrator
  const a = await serve(databaseUrl, dataDir);
  const b = await serve(databaseUrl, dataDir).catch(async (error: unknown) => {
    a.child.kill();
    throw error;
  });
  const call = async (url: string, method: string, route: string, auth: string) => {
    const res = await fetch(`${url}/~api${route}`, { method, headers: { authorization: auth } });
    return { status: res.status, text: await res.text() };
  };
  try {
    const times: number[] = [];
    for (let i = 0; i < REVOKES; i++) {
      const token = (await call(a.url, 'POST', '/users/1/access-tokens', ADMIN)).text;
      const bearer = `Bearer ${token}`;
      for (let j = 0; j < 3; j++) if ((await call(b.url, 'GET', '/users/1', bearer)).status !== 200) throw new Error('token refused before its revocation');
      if ((await call(a.url, 'DELETE', `/users/1/access-tokens/${token}`, ADMIN)).status !== 200) throw new Error('revocation failed');
      const revoked = performance.now();
      for (;;) {
        const { status } = await call(b.url, 'GET', '/users/1', bearer);
        if (status === 401) break;
        if (performance.now() - revoked > 10_000) throw new Error('B still accepts the revoked token after 10 s');
      }
      times.push(performance.now() - revoked);
    }
    return times;
  } finally {
    for (const server of [b, a]) {
      const exited = new Promise((resolve) => server.child.once('exit', resolve));
      server.child.kill('SIGTERM');
      await exited;
    }
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

/** A Gitloom handle of `url` that listens, with a temp data dir (unused on PostgreSQL). */
async function gitloomHandle(url: string) {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-bench-notify-'));
  const handle = await openDatabase({ databaseUrl: url, dataDir, listen: true, watchTables: ['settings'] });
  return {
    db: handle.db,
    async close() {
      await handle.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Writes a setting in a transaction: the tracked connection announces the write at the commit. */
function writeSetting(db: Awaited<ReturnType<typeof gitloomHandle>>['db'], key: string, round: number): Promise<void> {
  return db.transaction().execute(async (tx) => {
    const value = JSON.stringify({ round });
    await tx
      .insertInto('settings')
      .values({ key, value })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
      .execute();
  });
}

/** The peer: answers each bare ping with a pong, and each Gitloom write with one of its own. */
async function peer(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  client.on('notification', (message) => {
    if (message.channel === 'bench_ping') void client.query("select pg_notify('bench_pong', $1)", [message.payload ?? '']);
  });
  await client.query('listen bench_ping');
  const gitloom = await gitloomHandle(url);
  let round = 0;
  onAnnouncement(gitloom.db, TABLES_TOPIC, () => void writeSetting(gitloom.db, 'bench-pong', round++));
  onAnnouncement(gitloom.db, 'bench-ping', () => void announce(gitloom.db, 'bench-pong'));
  process.stdout.write('ready\n');
  // ends when the bench closes its stdin
  process.stdin.resume();
  await new Promise((resolve) => process.stdin.once('end', resolve));
  await client.end();
  await gitloom.close();
}

/** Milliseconds of each of {@link ROUNDS} round trips: `ping` starts one, `pong` is called once it came back. */
async function roundTrips(ping: () => Promise<void>, onPong: (pong: () => void) => void): Promise<number[]> {
  const times: number[] = [];
  let resolve: (() => void) | null = null;
  onPong(() => resolve?.());
  for (let i = 0; i < ROUNDS + 10; i++) {
    const back = new Promise<void>((r) => (resolve = r));
    const started = performance.now();
    await ping();
    await back;
    // the first rounds warm the connections and the JIT
    if (i >= 10) times.push(performance.now() - started);
  }
  return times;
}

async function main(): Promise<void> {
  const base = process.env.GITLOOM_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `gitloom_bench_notify_${process.pid}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const gitloom = await gitloomHandle(url.toString());
  const child = spawn(process.execPath, ['--import', 'tsx', import.meta.filename, 'peer', url.toString()], { stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    await migrateToLatest(gitloom.db);
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
      child.once('exit', (code) => reject(new Error(`peer exited with ${code}`)));
    });
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    await client.query('listen bench_pong');
    const bare = await roundTrips(
      async () => void (await client.query("select pg_notify('bench_ping', 'x')")),
      (pong) => client.on('notification', pong),
    );
    await client.end();
    const announced = await roundTrips(
      () => announce(gitloom.db, 'bench-ping'),
      (pong) => onAnnouncement(gitloom.db, 'bench-pong', pong),
    );
    let round = 0;
    const ours = await roundTrips(
      () => writeSetting(gitloom.db, 'bench-ping', round++),
      (pong) => onAnnouncement(gitloom.db, TABLES_TOPIC, pong),
    );
    const oneWay = (times: number[], p: number) => (percentile(times, p) / 2).toFixed(2);
    const row = (name: string, times: number[]) => console.log(`${name.padEnd(62)} p50 ${oneWay(times, 50)} ms   p99 ${oneWay(times, 99)} ms`);
    console.log(`Announcement latency across two processes, one way (half of ${ROUNDS} round trips):`);
    row('bare pg LISTEN/NOTIFY (the limit)', bare);
    row('Gitloom: announce() of a topic (a loop woken)', announced);
    row('Gitloom: a write of a cached table, announced at its commit', ours);
    const ratio = (times: number[]) => (percentile(times, 50) / percentile(bare, 50)).toFixed(2);
    console.log(
      `ratio of the p50s to the limit: announce ${ratio(announced)}, write and commit ${ratio(ours)} (begin, upsert, notify, commit: four statements to one)`,
    );
    const revoked = await revocations(url.toString());
    console.log(`A token revoked through server A, refused by server B after (${REVOKES} tokens; B asked in a loop, one request ≈ 1 ms):`);
    console.log(
      `${'end to end over HTTP (target: 100 ms)'.padEnd(62)} p50 ${percentile(revoked, 50).toFixed(2)} ms   p99 ${percentile(revoked, 99).toFixed(2)} ms`,
    );
  } finally {
    child.stdin!.end();
    await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)));
    await gitloom.close();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

if (process.argv[2] === 'peer') await peer(process.argv[3]);
else await main();
