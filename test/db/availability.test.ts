import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { DatabaseUnavailable } from '../../src/db/availability.js';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../../src/db/database.js';

/** A port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The outage log of a handle: what was logged, in order. */
function recordOutages(handle: DatabaseHandle): string[] {
  const lines: string[] = [];
  handle.availability.log = { down: (cause) => lines.push(`down: ${cause}`), up: () => lines.push('up') };
  return lines;
}

describe('database availability', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function sqliteHandle(): Promise<DatabaseHandle & { file: string }> {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-availability-'));
    cleanup.push(() => fs.rm(dataDir, { recursive: true, force: true }));
    const handle = await openDatabase({ databaseUrl: null, dataDir });
    cleanup.push(() => handle.close());
    await migrateToLatest(handle.db);
    return { ...handle, file: path.join(dataDir, 'gitloom.db') };
  }

  it('throws an unreachable PostgreSQL server as DatabaseUnavailable, logging the outage once', async () => {
    const handle = await openDatabase({ databaseUrl: `postgres://postgres@127.0.0.1:${await closedPort()}/gitloom`, dataDir: os.tmpdir() });
    cleanup.push(() => handle.close());
    const log = recordOutages(handle);
    for (let i = 0; i < 3; i++) {
      const error = await sql`select 1`.execute(handle.db).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DatabaseUnavailable);
      expect((error as DatabaseUnavailable).status).toBe(503);
      expect((error as DatabaseUnavailable).code).toBe('GITLOOM_ERR_UNAVAILABLE');
    }
    expect(log).toHaveLength(1);
    expect(log[0]).toMatch(/^down: .*ECONNREFUSED/);
    expect(handle.availability.downSince).not.toBeNull();
  });

  it('leaves errors of the query itself alone: the database stays up', async () => {
    const handle = await sqliteHandle();
    const log = recordOutages(handle);
    const user = { id: 10, name: 'ann', fullName: 'Ann', passwordHash: null, createDate: 0 };
    await handle.db.insertInto('users').values(user).execute();
    const duplicate = await handle.db
      .insertInto('users')
      .values(user)
      .execute()
      .catch((e: unknown) => e);
    expect(duplicate).toBeInstanceOf(Error);
    expect(duplicate).not.toBeInstanceOf(DatabaseUnavailable);
    expect((duplicate as { code: string }).code).toMatch(/^SQLITE_CONSTRAINT/);
    expect(handle.availability.downSince).toBeNull();
    expect(log).toEqual([]);
  });

  it('takes SQLITE_BUSY beyond busy_timeout for an outage, which ends with the next statement that succeeds', async () => {
    const handle = await sqliteHandle();
    const log = recordOutages(handle);
    const user = { id: 11, name: 'bob', fullName: 'Bob', passwordHash: null, createDate: 0 };
    const locker = new Database(handle.file);
    try {
      locker.exec('begin exclusive');
      for (let i = 0; i < 2; i++) {
        const error = await handle.db
          .insertInto('users')
          .values(user)
          .execute()
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DatabaseUnavailable);
        expect(((error as Error).cause as { code: string }).code).toMatch(/^SQLITE_BUSY/);
      }
      expect(log).toEqual(['down: database is locked']);
      locker.exec('rollback');
    } finally {
      locker.close();
    }
    await handle.db.insertInto('users').values(user).execute();
    expect(log).toEqual(['down: database is locked', 'up']);
    expect(handle.availability.downSince).toBeNull();
  });
});
