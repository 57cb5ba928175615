/**
 * The registry of server processes and its liveness rule (docs/architecture.md#start-up-recovery):
 * a process is gone when its heartbeat is older than the bound, or, on this kernel, when its pid
 * no longer runs or runs with another start time; files name their owner, and whose work is
 * alive is read from the registry and the kernel. Real processes (`sleep`) stand for owners.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { dialectOf } from '../../src/db/dialect.js';
import { isGone, ownersNow, ProcessRegistry } from '../../src/domain/processes/index.js';
import { kernelHash, ownedName, ownerOf, processStartTicks, thisProcess } from '../../src/process-identity.js';
import { createPostgresDatabase } from '../helpers/server.js';

const BOUND = 15_000;

/** A real process of this kernel, and its start time. */
async function aProcess(): Promise<{ child: ChildProcess; pid: number; startTicks: number }> {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('spawn', resolve));
  return { child, pid: child.pid!, startTicks: processStartTicks(child.pid!)! };
}

async function ended(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

describe('process identity', () => {
  it('reads the start time of a process from /proc/<pid>/stat field 22, and null for no process', async () => {
    const me = thisProcess();
    expect(me.pid).toBe(process.pid);
    expect(me.startTicks).toBeGreaterThan(0);
    expect(me.kernel).toMatch(/^[0-9a-f-]{36}\/\d+$/);
    const { child, pid, startTicks } = await aProcess();
    // started after this process
    expect(startTicks).toBeGreaterThanOrEqual(me.startTicks);
    await ended(child);
    expect(processStartTicks(pid)).toBeNull();
  });

  it('names files after their owner and reads it back; names of earlier versions carry none', () => {
    const name = ownedName('.gitloom-upload-');
    expect(ownerOf(name, '.gitloom-upload-')).toEqual({ pid: process.pid, startTicks: thisProcess().startTicks, kernelHash: kernelHash(thisProcess().kernel) });
    expect(ownerOf('.gitloom-upload-3f2a9c1e-1b2c-4d5e-8f90-123456789abc', '.gitloom-upload-')).toBeNull();
    expect(ownerOf('.gitloom-upload-12345678-1234-1234-1234-123456789abc', '.gitloom-upload-')).toBeNull();
    expect(ownerOf(name, '.tmp-')).toBeNull();
  });
});

describe('the liveness rule', () => {
  const here = { kernel: 'boot/1' };
  const row = { kernel: 'boot/1', pid: 42, startTicks: 1000, heartbeat: 100_000 };

  it('keeps a process of this kernel whose pid runs with its start time and whose heartbeat is fresh', () => {
    expect(isGone(row, 100_000 + BOUND, BOUND, { ...here, runs: (pid, ticks) => pid === 42 && ticks === 1000 })).toBe(false);
  });

  it('a heartbeat older than the bound: gone, on any kernel — unless just after a database outage', () => {
    expect(isGone({ ...row, kernel: 'other/1' }, 100_000 + BOUND, BOUND, here)).toBe(false);
    expect(isGone({ ...row, kernel: 'other/1' }, 100_001 + BOUND, BOUND, here)).toBe(true);
    expect(isGone(row, 100_001 + BOUND, BOUND, { ...here, runs: () => true })).toBe(true);
    expect(isGone({ ...row, kernel: 'other/1' }, 100_001 + BOUND, BOUND, { ...here, heartbeatsCount: false })).toBe(false);
  });

  it('on this kernel, a pid that no longer runs, or runs with another start time (reused): gone at once', async () => {
    const { child, pid, startTicks } = await aProcess();
    const mine = { kernel: thisProcess().kernel, pid, startTicks, heartbeat: Date.now() };
    expect(isGone(mine, Date.now(), BOUND)).toBe(false);
    // the same pid, started at another time: another process
    expect(isGone({ ...mine, startTicks: startTicks - 1 }, Date.now(), BOUND)).toBe(true);
    await ended(child);
    expect(isGone(mine, Date.now(), BOUND)).toBe(true);
    // another kernel's pid is not this kernel's: only its heartbeat tells
    expect(isGone({ ...mine, kernel: 'other/1' }, Date.now(), BOUND)).toBe(false);
  });
});

describe('the registry', () => {
  let handle: DatabaseHandle;
  const cleanup: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    const pgBase = process.env.GITLOOM_TEST_DATABASE_URL;
    const database = pgBase ? await createPostgresDatabase(pgBase) : null;
    if (database) cleanup.push(() => database.drop());
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-registry-'));
    cleanup.push(() => fs.rm(dataDir, { recursive: true, force: true }));
    handle = await openDatabase({ databaseUrl: database?.url ?? null, dataDir });
    cleanup.push(() => handle.close());
    await migrateToLatest(handle.db);
  });

  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  const rowOf = (id: string, values: { kernel: string; pid: number; startTicks: number; heartbeat: number }) => ({
    id,
    host: 'elsewhere',
    startedAt: values.heartbeat,
    ...values,
  });

  const onPostgres = Boolean(process.env.GITLOOM_TEST_DATABASE_URL);

  it('registers a process with its pid and start time, heartbeats on PostgreSQL (not on SQLite, which one process owns), and removes it on a clean stop', async () => {
    const registry = new ProcessRegistry({ db: handle.db }, { heartbeatMs: 50 });
    await registry.register();
    const row = await handle.db.selectFrom('serverProcesses').selectAll().where('id', '=', registry.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ pid: process.pid, startTicks: thisProcess().startTicks, kernel: thisProcess().kernel, host: os.hostname() });
    registry.start();
    const heartbeat = async () =>
      (await handle.db.selectFrom('serverProcesses').select('heartbeat').where('id', '=', registry.id).executeTakeFirst())?.heartbeat;
    if (onPostgres) await expect.poll(heartbeat).toBeGreaterThan(row.heartbeat);
    else {
      await new Promise((r) => setTimeout(r, 200));
      expect(await heartbeat()).toBe(row.heartbeat);
    }
    await registry.stop();
    expect(await handle.db.selectFrom('serverProcesses').selectAll().where('id', '=', registry.id).execute()).toEqual([]);
  });

  it('tells whose work is alive: this kernel by its processes, other kernels by fresh heartbeats', async () => {
    await handle.db.deleteFrom('serverProcesses').execute();
    const now = Date.now();
    const live = await aProcess();
    const dead = await aProcess();
    await ended(dead.child);
    const here = thisProcess().kernel;
    await handle.db
      .insertInto('serverProcesses')
      .values([
        rowOf('remote-live', { kernel: 'b00t/7', pid: 7, startTicks: 70, heartbeat: now }),
        rowOf('remote-silent', { kernel: 'b00t/7', pid: 8, startTicks: 80, heartbeat: now - 2 * BOUND }),
        rowOf('local-dead', { kernel: here, pid: dead.pid, startTicks: dead.startTicks, heartbeat: now }),
      ])
      .execute();
    try {
      const owners = await ownersNow(handle.db, now, BOUND);
      const remote = kernelHash('b00t/7');
      expect(owners.lives({ pid: 7, startTicks: 70, kernelHash: remote })).toBe(true);
      expect(owners.lives({ pid: 7, startTicks: 71, kernelHash: remote })).toBe(false);
      expect(owners.lives({ pid: 8, startTicks: 80, kernelHash: remote })).toBe(false);
      // never registered on another kernel: gone
      expect(owners.lives({ pid: 9, startTicks: 90, kernelHash: remote })).toBe(false);
      // this kernel: the kernel answers, registered or not
      expect(owners.lives({ pid: live.pid, startTicks: live.startTicks, kernelHash: kernelHash(here) })).toBe(true);
      expect(owners.lives({ pid: live.pid, startTicks: live.startTicks + 1, kernelHash: kernelHash(here) })).toBe(false);
      expect(owners.lives({ pid: dead.pid, startTicks: dead.startTicks, kernelHash: kernelHash(here) })).toBe(false);
      expect(owners.registered('remote-live')).toBe(true);
      expect(owners.registered('remote-silent')).toBe(false);
      expect(owners.registered('local-dead')).toBe(false);
      expect(owners.registered('an-owner-of-another-kind')).toBeNull();
    } finally {
      await ended(live.child);
      await handle.db.deleteFrom('serverProcesses').execute();
    }
  });

  it('claims the rows of gone processes once and has their leftovers repaired (PostgreSQL); on SQLite a start forgets earlier runs', async () => {
    const now = Date.now();
    await handle.db
      .insertInto('serverProcesses')
      .values([
        rowOf('silent', { kernel: 'b00t/7', pid: 8, startTicks: 80, heartbeat: now - 2 * BOUND }),
        rowOf('alive', { kernel: 'b00t/7', pid: 9, startTicks: 90, heartbeat: now + 60_000 }),
      ])
      .execute();
    const first = new ProcessRegistry({ db: handle.db }, { heartbeatMs: 50, goneAfterMs: BOUND, sweepMs: 60_000 });
    const second = new ProcessRegistry({ db: handle.db }, { heartbeatMs: 50, goneAfterMs: BOUND, sweepMs: 60_000 });
    const repaired: string[][] = [];
    const repair = async (gone: { id: string }[]) => {
      repaired.push(gone.map((row) => row.id));
    };
    await first.register();
    if (dialectOf(handle.db).ownedByOneProcess) {
      expect((await handle.db.selectFrom('serverProcesses').select('id').execute()).map((r) => r.id)).toEqual([first.id]);
      first.start(repair);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await first.stop();
      expect(repaired).toEqual([]);
      return;
    }
    await second.register();
    first.start(repair);
    second.start(repair);
    try {
      await expect.poll(() => repaired.flat()).toContain('silent');
      await new Promise((resolve) => setTimeout(resolve, 200));
      // one of the two claimed it, once
      expect(repaired).toEqual([['silent']]);
      const ids = (await handle.db.selectFrom('serverProcesses').select('id').execute()).map((r) => r.id).sort();
      expect(ids).toEqual([first.id, second.id, 'alive'].sort());
    } finally {
      await first.stop();
      await second.stop();
      await handle.db.deleteFrom('serverProcesses').execute();
    }
  });

  it.skipIf(!onPostgres)('registers again when another process took it for gone and removed its row', async () => {
    const registry = new ProcessRegistry({ db: handle.db }, { heartbeatMs: 50 });
    const noticed: string[] = [];
    const quiet = new ProcessRegistry({ db: handle.db }, { heartbeatMs: 50, log: (m) => noticed.push(m) });
    await registry.register();
    await quiet.register();
    await handle.db.deleteFrom('serverProcesses').where('id', '=', quiet.id).execute();
    quiet.start();
    try {
      await expect.poll(async () => (await handle.db.selectFrom('serverProcesses').select('id').where('id', '=', quiet.id).execute()).length).toBe(1);
      expect(noticed[0]).toMatch(/taken for gone/);
    } finally {
      await quiet.stop();
      await registry.stop();
    }
  });
});
