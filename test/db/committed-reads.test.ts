import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase, preparedQuery, type DatabaseHandle } from '../../src/db/database.js';

// SQLite only: the committed reader is SQLite's (PostgreSQL reads through its pool)
const userById = preparedQuery((db, id: number) => db.selectFrom('users').select(['id', 'name', 'fullName']).where('id', '=', id));
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('committed reads (SQLite)', () => {
  let dataDir: string;
  let handle: DatabaseHandle;

  beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-reads-'));
    handle = await openDatabase({ databaseUrl: null, dataDir });
    await migrateToLatest(handle.db);
    await handle.db.insertInto('users').values({ id: 10, name: 'ann', fullName: 'Ann', passwordHash: null, createDate: 0 }).execute();
  });

  afterEach(async () => {
    await handle.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it("gives camelCased rows and sees this process's commits at once, even within one turn", async () => {
    expect(await userById(handle.db, 10)).toEqual([{ id: 10, name: 'ann', fullName: 'Ann' }]);
    await handle.db.updateTable('users').set({ fullName: 'Ann B' }).where('id', '=', 10).execute();
    expect(await userById(handle.db, 10)).toEqual([{ id: 10, name: 'ann', fullName: 'Ann B' }]);
    await handle.db.transaction().execute(async (tx) => {
      await tx.updateTable('users').set({ fullName: 'Ann C' }).where('id', '=', 10).execute();
      // not yet committed: the committed reader still sees the last commit; the transaction its own write
      expect(await userById(handle.db, 10)).toEqual([{ id: 10, name: 'ann', fullName: 'Ann B' }]);
      expect(await userById(tx, 10)).toEqual([{ id: 10, name: 'ann', fullName: 'Ann C' }]);
    });
    expect(await userById(handle.db, 10)).toEqual([{ id: 10, name: 'ann', fullName: 'Ann C' }]);
    expect(await userById(handle.db, 11)).toEqual([]);
  });

  it("sees another process's commit from the next turn of the event loop on", async () => {
    expect(await userById(handle.db, 10)).toEqual([{ id: 10, name: 'ann', fullName: 'Ann' }]);
    const other = new Database(path.join(dataDir, 'gitloom.db'));
    try {
      other.prepare('update users set full_name = ? where id = ?').run('Ann (elsewhere)', 10);
    } finally {
      other.close();
    }
    await nextTurn();
    expect(await userById(handle.db, 10)).toEqual([{ id: 10, name: 'ann', fullName: 'Ann (elsewhere)' }]);
  });
});
