/**
 * Recovery that knows whose work it is (docs/architecture.md#start-up-recovery), with real
 * processes: two server processes on one PostgreSQL database and one data dir. Process A holds
 * work in flight — a push whose pack is still coming (git's quarantine directory and A's push
 * marker) and a Git LFS upload whose body is still coming (A's temp file); process B restarts,
 * and A meanwhile repairs what the killed B left: A's work survives both, and A's requests then
 * complete. Then A is killed with its receive-pack (as a machine or a cgroup goes): B's periodic
 * repair finds A gone and removes A's leftovers.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/fixtures.js';
import { ADMIN, basic, callChild, killChild, serveChild, givenInstallation, type ChildServer } from '../helpers/server.js';

/** A request to a child server (PUT for Git LFS, else POST) whose body is sent in parts: `send` more, `end` it, `response` its answer. */
interface HeldRequest {
  send(chunk: Buffer): void;
  end(chunk: Buffer): void;
  response: Promise<{ status: number; body: string }>;
  abort(): void;
}

function holdRequest(server: ChildServer, route: string, headers: Record<string, string | number>, first: Buffer): HeldRequest {
  const req = http.request(`${server.url}${route}`, {
    method: route.includes('/info/lfs/') ? 'PUT' : 'POST',
    headers: { authorization: basic(ADMIN.name, ADMIN.password), ...headers },
  });
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.once('response', (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString('latin1')));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.once('error', reject);
    });
    req.once('error', reject);
  });
  response.catch(() => {});
  req.write(first);
  return { send: (chunk) => req.write(chunk), end: (chunk) => req.end(chunk), response, abort: () => req.destroy() };
}

/** One pkt-line. */
const pkt = (payload: string): string => (Buffer.byteLength(payload) + 4).toString(16).padStart(4, '0') + payload;

/** The pids of this machine's `git receive-pack` processes serving `repo`. */
function receivePacks(repo: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return argv.includes('receive-pack') && argv.includes(repo);
      } catch {
        return false; // ended meanwhile
      }
    })
    .map(Number);
}

describe.skipIf(!process.env.GITLOOM_TEST_DATABASE_URL)('recovery that knows whose work it is', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  let env: Record<string, string>;
  let a: ChildServer;
  let b: ChildServer;
  let repo: string;
  let lfsDir: string;
  let db: pg.Client;

  /** Resolves once `server` is registered and its heartbeat loop ticked: its start-up recovery is over. */
  async function recovered(server: ChildServer): Promise<void> {
    await eventually(async () => {
      const { rows } = await db.query('select 1 from server_processes where pid = $1 and heartbeat > started_at', [server.child.pid]);
      return rows.length === 1 ? true : null;
    });
  }

  const serve = (name: string) => serveChild({ ...env, GITLOOM_JOB_DIR: path.join(env.GITLOOM_DATA_DIR, '..', `jobs-${name}`) });

  beforeAll(async () => {
    // heartbeats every 300 ms: a process of this machine killed is found gone within a tick
    env = await givenInstallation(cleanup, { GITLOOM_FALLBACK_POLL_MS: '300' });
    a = await serve('a');
    cleanup.push(() => killChild(a));
    b = await serve('b');
    cleanup.push(() => killChild(b));
    db = new pg.Client({ connectionString: env.GITLOOM_DATABASE_URL });
    await db.connect();
    cleanup.push(() => db.end());
    const projectId = (await callChild(a, 'POST', '/projects', { name: 'shared' })).json as number;
    repo = path.join(env.GITLOOM_DATA_DIR, 'repos', `${projectId}.git`);
    lfsDir = path.join(env.GITLOOM_DATA_DIR, 'lfs');
    await recovered(a);
    await recovered(b);
  }, 60_000);

  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  /** A's work in flight: a push's quarantine and marker, an LFS upload's temp file. */
  async function inFlight(): Promise<{ push: HeldRequest; upload: HeldRequest; rest: Buffer; quarantine: string; marker: string; temp: string }> {
    const commands = pkt(`${'0'.repeat(40)} ${randomBytes(20).toString('hex')} refs/heads/slow-${randomBytes(3).toString('hex')}\0report-status\n`) + '0000';
    // a pack of three objects whose objects never come
    const header = Buffer.concat([Buffer.from('PACK'), Buffer.from([0, 0, 0, 2, 0, 0, 0, 3])]);
    const push = holdRequest(
      a,
      '/shared.git/git-receive-pack',
      { 'content-type': 'application/x-git-receive-pack-request' },
      Buffer.concat([Buffer.from(commands), header]),
    );
    const content = randomBytes(256 * 1024);
    const oid = createHash('sha256').update(content).digest('hex');
    const half = content.length / 2;
    const upload = holdRequest(
      a,
      `/shared.git/info/lfs/objects/${oid}`,
      { 'content-type': 'application/octet-stream', 'content-length': content.length },
      content.subarray(0, half),
    );
    const found = await eventually(async () => {
      const quarantine = (await fs.readdir(path.join(repo, 'objects'))).find((name) => name.startsWith('tmp_objdir-') || name.startsWith('incoming-'));
      const marker = existsSync(path.join(repo, 'gitloom-pushes')) ? (await fs.readdir(path.join(repo, 'gitloom-pushes')))[0] : undefined;
      const temps = await uploadTemps();
      if (!quarantine || !marker || temps.length !== 1) return null;
      return { quarantine: path.join(repo, 'objects', quarantine), marker: path.join(repo, 'gitloom-pushes', marker), temp: temps[0] };
    });
    if (!found) throw new Error(`A holds no push and upload in flight: ${a.output()}`);
    return { push, upload, rest: content.subarray(half), ...found };
  }

  async function uploadTemps(): Promise<string[]> {
    const found: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) await walk(full);
        else if (entry.name.startsWith('.gitloom-upload-')) found.push(full);
      }
    };
    await walk(lfsDir);
    return found;
  }

  it('keeps a live process`s push and upload in flight while another restarts; its requests then complete', async () => {
    const work = await inFlight();
    // the restarted process B starts with A's work in the shared data dir, and A repairs what B left
    await killChild(b);
    b = await serve('b2');
    await recovered(b);
    await eventually(async () => ((await db.query('select 1 from server_processes')).rows.length === 2 ? true : null));
    for (const file of [work.quarantine, work.marker, work.temp]) expect(existsSync(file)).toBe(true);
    expect(b.output()).not.toMatch(/removed (push quarantine directory|push marker|Git LFS upload temp file)/);
    expect(a.output()).not.toMatch(/Repair: removed/);

    // A's upload was never disturbed: it completes and stores the object
    work.upload.end(work.rest);
    expect((await work.upload.response).status).toBe(200);
    expect(await uploadTemps()).toEqual([]);
    // A's push still waits for its pack: git refuses the one that ends short, and removes its quarantine itself
    work.push.end(Buffer.alloc(0));
    await work.push.response.catch(() => undefined);
    await eventually(async () => (!existsSync(work.quarantine) && !existsSync(work.marker) ? true : null));
  });

  it('removes what a killed process left once it is gone: B`s repair, not B`s restart', async () => {
    const work = await inFlight();
    // A dies with its receive-pack (a machine or a cgroup killed whole): git removes nothing
    const gits = receivePacks(repo);
    expect(gits.length).toBe(1);
    for (const pid of gits) process.kill(pid, 'SIGKILL');
    await killChild(a);
    work.push.abort();
    work.upload.abort();
    await eventually(async () => (!existsSync(work.quarantine) && !existsSync(work.marker) && !existsSync(work.temp) ? true : null), 10_000);
    // B says so once it removed them: its log lines reach its output after the removals
    const said = (line: RegExp) => eventually(async () => line.test(b.output()) || null, 10_000);
    expect(await said(/Repair: removed push quarantine directory/), b.output()).toBe(true);
    expect(await said(/Repair: removed Git LFS upload temp file/), b.output()).toBe(true);
    // A's row was claimed by B
    expect((await db.query('select pid from server_processes')).rows.map((r) => r.pid)).toEqual([b.child.pid]);
  });
});
