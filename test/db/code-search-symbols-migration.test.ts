import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Migrator, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrations } from '../../src/db/migrations/index.js';
import { createPostgresDatabase } from '../helpers/server.js';

/** Migration 0026 (docs/compatibility.md#code-search): an index built before symbols is made stale from its start. */
describe('migration 0026-code-search-symbols', () => {
  let handle: DatabaseHandle | undefined;
  let dataDir: string | undefined;
  let dropDatabase: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await handle?.close();
    await dropDatabase?.();
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('re-indexes every project once, so the files indexed before get their symbols', async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-migration-'));
    const base = process.env.GITLOOM_TEST_DATABASE_URL;
    const database = base ? await createPostgresDatabase(base) : null;
    dropDatabase = database?.drop;
    handle = await openDatabase({ databaseUrl: database?.url ?? null, dataDir });
    const migrator = new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations }, allowUnorderedMigrations: true });
    expect((await migrator.migrateTo('0025-code-search')).error).toBeUndefined();
    await sql`insert into projects (id, name, path, create_date, git_pack_config, code_analysis_setting, last_activity_date) values (7, 'app', 'app', 0, '{}', '{}', 0)`.execute(
      handle.db,
    );
    await sql`insert into code_search_projects (project_id, indexed_commit, index_date, stale_date) values (7, ${'a'.repeat(40)}, 1, null)`.execute(handle.db);
    await migrateToLatest(handle.db);
    expect(await handle.db.selectFrom('codeSearchProjects').select(['projectId', 'indexedCommit', 'staleDate']).execute()).toEqual([
      { projectId: 7, indexedCommit: null, staleDate: 0 },
    ]);
  });
});
