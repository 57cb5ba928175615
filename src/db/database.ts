import fs from 'node:fs';
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import { CamelCasePlugin, Kysely, Migrator, PostgresDialect, SqliteDialect, type Transaction } from 'kysely';
import type { Database } from './schema.js';
import { migrations } from './migrations/index.js';

/** A database handle or an open transaction: what repository functions take. */
export type Db = Kysely<Database> | Transaction<Database>;

/** The engine behind a handle; dialect-only SQL forks on this, nowhere else. */
export type Engine = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  db: Kysely<Database>;
  engine: Engine;
  close(): Promise<void>;
}

/**
 * Opens the database: PostgreSQL when `databaseUrl` is a postgres URL, otherwise SQLite in WAL
 * mode at `<dataDir>/gitloom.db`. Throws when the server cannot be reached.
 */
export async function openDatabase(options: { databaseUrl: string | null; dataDir: string; poolSize?: number }): Promise<DatabaseHandle> {
  const plugins = [new CamelCasePlugin()];
  if (options.databaseUrl) {
    // Each engine's driver is loaded only when used.
    const { default: pg } = await import('pg');
    // int8 (counts, epoch-millisecond dates) as numbers: every value we store fits in 2^53.
    pg.types.setTypeParser(20, (value) => Number(value));
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? 10 });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), plugins });
    return { db, engine: 'postgres', close: () => db.destroy() };
  }
  fs.mkdirSync(options.dataDir, { recursive: true });
  const { default: SQLite } = await import('better-sqlite3');
  const sqlite = new SQLite(path.join(options.dataDir, 'gitloom.db'));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // Prepared statements are kept by SQL text: preparing is a large share of a cheap query.
  const statements = new LRUCache<string, ReturnType<typeof sqlite.prepare>>({ max: 1000 });
  const database = {
    close: () => sqlite.close(),
    prepare(sql: string) {
      const cached = statements.get(sql);
      if (cached && !cached.busy) return cached;
      const statement = sqlite.prepare(sql);
      statements.set(sql, statement);
      return statement;
    },
  };
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }), plugins });
  return { db, engine: 'sqlite', close: () => db.destroy() };
}

/** Applies every pending migration (src/db/migrations); throws the first failure. */
export async function migrateToLatest(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error) throw error instanceof Error ? error : new Error(`Migration ${failed?.migrationName} failed: ${String(error)}`);
}
