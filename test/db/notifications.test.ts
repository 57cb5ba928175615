/**
 * Announcements between processes sharing PostgreSQL (src/db/notifications.ts,
 * docs/architecture.md#processes-sharing-postgresql): two handles of one database stand for two
 * processes. Delivery is asynchronous: the tests wait for what must arrive, and prove what must
 * not by a later announcement that arrives alone (PostgreSQL delivers one session's
 * notifications in commit order).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase, trackChanges, type DatabaseHandle } from '../../src/db/database.js';
import { announce, onAnnouncement } from '../../src/db/notifications.js';
import { eventually } from '../helpers/fixtures.js';
import { createPostgresDatabase } from '../helpers/server.js';

const pgBase = process.env.GITLOOM_TEST_DATABASE_URL;

describe('announcements', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function twoProcesses(): Promise<{ url: string; listener: DatabaseHandle; writer: DatabaseHandle }> {
    const database = await createPostgresDatabase(pgBase!);
    cleanup.push(() => database.drop());
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-notify-'));
    cleanup.push(() => fs.rm(dataDir, { recursive: true, force: true }));
    const listener = await openDatabase({ databaseUrl: database.url, dataDir, listen: true, cacheTtlMs: 60_000 });
    cleanup.push(() => listener.close());
    const writer = await openDatabase({ databaseUrl: database.url, dataDir });
    cleanup.push(() => writer.close());
    await migrateToLatest(writer.db);
    return { url: database.url, listener, writer };
  }

  /** The topics `handle` receives, in order. */
  function received(handle: DatabaseHandle, ...topics: string[]): string[] {
    const seen: string[] = [];
    for (const topic of topics) onAnnouncement(handle.db, topic, () => seen.push(topic));
    return seen;
  }

  it.skipIf(!pgBase)('delivers at the commit, once per topic and transaction, and nothing of a rollback', async () => {
    const { listener, writer } = await twoProcesses();
    const seen = received(listener, 'work', 'dropped', 'end');
    await writer.db.transaction().execute(async (tx) => {
      for (let i = 0; i < 5; i++) await announce(tx, 'work');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(seen).toEqual([]);
    });
    await expect(
      writer.db.transaction().execute(async (tx) => {
        await announce(tx, 'dropped');
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await announce(writer.db, 'end');
    await eventually(async () => seen.includes('end') || null);
    expect(seen).toEqual(['work', 'end']);
  });

  it.skipIf(!pgBase)("ignores a handle's own announcements", async () => {
    const { listener, writer } = await twoProcesses();
    const seen = received(listener, 'own', 'other');
    await announce(listener.db, 'own');
    await announce(writer.db, 'other');
    await eventually(async () => seen.includes('other') || null);
    expect(seen).toEqual(['other']);
  });

  it.skipIf(!pgBase)("invalidates the other process's caches in the transaction that writes a watched table", async () => {
    const { listener, writer } = await twoProcesses();
    const tracker = trackChanges(listener.db, ['settings']);
    trackChanges(writer.db, ['settings']);
    const seen = received(listener, 'end');
    const before = tracker.version;
    await writer.db.insertInto('settings').values({ key: 'a', value: '{}' }).execute();
    await eventually(async () => tracker.version !== before || null);
    const inTransaction = tracker.version;
    await writer.db.transaction().execute(async (tx) => {
      await tx.updateTable('settings').set({ value: '{"x":1}' }).where('key', '=', 'a').execute();
      await tx.updateTable('settings').set({ value: '{"x":2}' }).where('key', '=', 'a').execute();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(tracker.version).toBe(inTransaction);
    });
    await eventually(async () => tracker.version !== inTransaction || null);
    // a write of a table nobody watches announces nothing
    const unwatched = tracker.version;
    await writer.db.insertInto('signInFailures').values({ subject: 'x', windowStart: 1, failures: 1 }).execute();
    await announce(writer.db, 'end');
    await eventually(async () => seen.includes('end') || null);
    expect(tracker.version).toBe(unwatched);
  });

  it.skipIf(!pgBase)('listens again after its connection is killed, and tells every subscriber it may have missed some', async () => {
    const { url, listener, writer } = await twoProcesses();
    const tracker = trackChanges(listener.db, ['settings']);
    const seen = received(listener, 'work');
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    cleanup.push(() => admin.end());
    const before = tracker.version;
    const { rowCount } = await admin.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query = 'listen gitloom'",
    );
    expect(rowCount).toBe(1);
    // back: the subscriber and the caches are told, then announcements arrive again
    await eventually(async () => (seen.length > 0 && tracker.version !== before) || null);
    seen.length = 0;
    await eventually(async () => {
      await announce(writer.db, 'work');
      await new Promise((resolve) => setTimeout(resolve, 50));
      return seen.length > 0 || null;
    });
    expect(seen[0]).toBe('work');
  });

  it('does nothing on SQLite', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-notify-'));
    cleanup.push(() => fs.rm(dataDir, { recursive: true, force: true }));
    const handle = await openDatabase({ databaseUrl: null, dataDir, listen: true });
    cleanup.push(() => handle.close());
    const unsubscribe = onAnnouncement(handle.db, 'work', () => undefined);
    await handle.db.transaction().execute((tx) => announce(tx, 'work'));
    await announce(handle.db, 'work');
    unsubscribe();
    expect((await sql<{ one: number }>`select 1 as one`.execute(handle.db)).rows).toEqual([{ one: 1 }]);
  });
});
