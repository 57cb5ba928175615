import fs from 'node:fs';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { LRUCache } from 'lru-cache';
import {
  CamelCasePlugin,
  Kysely,
  Migrator,
  PostgresDialect,
  PostgresQueryCompiler,
  SqliteDialect,
  SqliteQueryCompiler,
  CompiledQuery,
  type Compilable,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type QueryCompiler,
  type QueryResult,
  type RootOperationNode,
  type Transaction,
  type TransactionSettings,
  type UnknownRow,
} from 'kysely';
import { DatabaseAvailability } from './availability.js';
import { CHANNEL, Notifications, registerNotifications, TABLES_TOPIC } from './notifications.js';
import type { Database } from './schema.js';
import { migrations } from './migrations/index.js';

/** A database handle or an open transaction: what repository functions take. */
export type Db = Kysely<Database> | Transaction<Database>;

/** The engine behind a handle (what SQL differs by engine is in src/db/dialect.ts). */
export type Engine = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  db: Kysely<Database>;
  engine: Engine;
  close(): Promise<void>;
  /** Whether the database answers (outages are classified and logged there; src/db/availability.ts). */
  availability: DatabaseAvailability;
  /** Connections of the pool: total, idle, and requests waiting for one (SQLite: one connection). */
  poolStats(): { total: number; idle: number; waiting: number };
}

/**
 * camelCase in TypeScript, snake_case in SQL (the convention of Kysely's CamelCasePlugin) at a
 * fraction of its cost: identifiers are snake-cased while the query is compiled (the plugin
 * rebuilds the whole operation tree of every query first), and result rows get camelCase keys
 * here. The mappers are the plugin's own, so names convert exactly as before.
 */
class CamelCaseResults extends CamelCasePlugin implements KyselyPlugin {
  /** Identifiers are converted by the compiler ({@link snakeCaseCompiler}), not here. */
  override transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }

  /** Same mapping as CamelCasePlugin.mapRow, without a closure and an object spread per row. */
  override async transformResult(args: { result: QueryResult<UnknownRow> }): Promise<QueryResult<UnknownRow>> {
    const rows = args.result.rows;
    if (!Array.isArray(rows) || rows.length === 0) return args.result;
    const mapped = new Array<UnknownRow>(rows.length);
    for (let i = 0; i < rows.length; i++) mapped[i] = this.camelRow(rows[i]);
    return { ...args.result, rows: mapped };
  }

  /** One result row with camelCase keys. */
  camelRow(row: UnknownRow): UnknownRow {
    return this.mapRow(row);
  }

  /** The TypeScript name of an SQL column (`create_date` → `createDate`; memoized). */
  toCamel(column: string): string {
    return this.camelCase(column);
  }

  /** The SQL name of a TypeScript identifier (`createDate` → `create_date`; memoized). */
  toSql(identifier: string): string {
    return this.snakeCase(identifier);
  }
}

const naming = new CamelCaseResults();

/** SQLite's compiler with identifiers snake-cased on output. */
class SnakeSqliteCompiler extends SqliteQueryCompiler {
  protected override sanitizeIdentifier(identifier: string): string {
    return super.sanitizeIdentifier(naming.toSql(identifier));
  }
}

/** PostgreSQL's compiler with identifiers snake-cased on output. */
class SnakePostgresCompiler extends PostgresQueryCompiler {
  protected override sanitizeIdentifier(identifier: string): string {
    return super.sanitizeIdentifier(naming.toSql(identifier));
  }
}

/**
 * Change tracking for in-process caches of database state (the authentication cache): a
 * version number bumped around every statement that writes one of the watched tables and after
 * the commit of a transaction that did. A cache entry tagged with the version read *before* its
 * rows were read is current exactly while the version is unchanged.
 */
export interface ChangeTracker {
  /** Current version of the watched tables. */
  readonly version: number;
  /**
   * Milliseconds a cache entry built on this tracker may be used at most: the bound on a change
   * whose announcement did not arrive (docs/architecture.md#processes-sharing-postgresql).
   */
  readonly ttlMs: number;
}

class Tracker implements ChangeTracker {
  version = 0;
  constructor(readonly ttlMs: number) {}
  /** Called after every statement of this process that may have changed the database. */
  onStatementDone: (() => void) | null = null;
  private pattern: RegExp | null = null;
  private readonly tables = new Set<string>();

  watch(tables: readonly string[]): void {
    for (const table of tables) this.tables.add(table);
    this.pattern = new RegExp(`\\b(${[...this.tables].join('|')})\\b`, 'i');
    this.version++;
  }

  /** Whether a statement may change a watched table (reads never do). */
  writes(sqlText: string): boolean {
    if (this.pattern === null || sqlText.startsWith('select ')) return false;
    return !/^\s*\(?\s*select\b/i.test(sqlText) && this.pattern.test(sqlText);
  }
}

const trackers = new WeakMap<object, Tracker>();

/**
 * The change tracker of a database handle (from {@link openDatabase}, or one of its transactions) for `tables` (SQL names,
 * snake_case). Statements written through any handle of this database in this process are seen,
 * raw SQL and transactions included. On PostgreSQL a write of a watched table is announced to
 * the other processes in its transaction, and theirs bump this version when their announcement
 * arrives (src/db/notifications.ts); caches built on this still expire after `ttlMs`, the bound
 * when an announcement is lost.
 */
export function trackChanges(db: Db, tables: string[]): ChangeTracker {
  const tracker = trackers.get(db.getExecutor().adapter);
  if (!tracker) throw new Error('trackChanges: not a handle from openDatabase');
  tracker.watch(tables);
  return tracker;
}

/**
 * A connection that reports writes of watched tables to the tracker, and every statement's
 * outcome to the database's availability: an outage error is thrown as a DatabaseUnavailable.
 */
class TrackedConnection implements DatabaseConnection {
  private dirty = false;
  /** Between the driver's begin and its commit or rollback. */
  inTransaction = false;
  /** The open transaction announced its writes of watched tables already. */
  announced = false;
  constructor(
    readonly inner: DatabaseConnection,
    private readonly tracker: Tracker,
    private readonly availability: DatabaseAvailability,
    private readonly notifications: Notifications | null,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const sql = query.sql;
    // the common case: a read, which changes nothing
    if (sql.startsWith('select ')) return this.run<R>(query);
    const tracker = this.tracker;
    const watched = tracker.writes(sql);
    const ends = this.dirty && /^\s*(commit|rollback|end)\b/i.test(sql);
    if (watched) {
      tracker.version++;
      this.dirty = true;
    }
    try {
      const result = await this.run<R>(query);
      if (watched) await this.announceWrite();
      return result;
    } finally {
      if (watched) tracker.version++;
      if (ends) {
        this.dirty = false;
        tracker.version++;
      }
      tracker.onStatementDone?.();
    }
  }

  /**
   * PostgreSQL: tells the other processes that a watched table changed — in the transaction
   * (once per transaction; delivered at its commit) or, for an autocommitted write, right after it.
   */
  private async announceWrite(): Promise<void> {
    if (this.notifications === null || this.announced) return;
    await this.run(CompiledQuery.raw(`select pg_notify('${CHANNEL}', $1)`, [this.notifications.payload(TABLES_TOPIC)]));
    if (this.inTransaction) this.announced = true;
  }

  private async run<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      const result = await this.inner.executeQuery<R>(query);
      this.availability.succeeded();
      return result;
    } catch (error) {
      throw this.availability.failed(error);
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

/**
 * A dialect whose driver hands out tracked connections (failing to get one during an outage
 * throws a DatabaseUnavailable) and whose compiler snake-cases names.
 */
function instrumented(
  base: Dialect,
  Compiler: new () => QueryCompiler,
  tracker: Tracker,
  availability: DatabaseAvailability,
  notifications: Notifications | null,
): Dialect {
  return {
    createAdapter: () => base.createAdapter(),
    createIntrospector: (db) => base.createIntrospector(db),
    createQueryCompiler: () => new Compiler(),
    createDriver(): Driver {
      const driver = base.createDriver();
      const tracked = (connection: DatabaseConnection) => connection as TrackedConnection;
      /** The transaction on `connection` ended: the next one announces its writes again. */
      const ended = (connection: DatabaseConnection) => {
        tracked(connection).inTransaction = false;
        tracked(connection).announced = false;
      };
      return {
        init: () => driver.init(),
        acquireConnection: async () => {
          try {
            return new TrackedConnection(await driver.acquireConnection(), tracker, availability, notifications);
          } catch (error) {
            throw availability.failed(error);
          }
        },
        beginTransaction: async (connection, settings: TransactionSettings) => {
          await driver.beginTransaction(connection, settings);
          tracked(connection).inTransaction = true;
        },
        commitTransaction: (connection) => driver.commitTransaction(connection).finally(() => ended(connection)),
        rollbackTransaction: (connection) => driver.rollbackTransaction(connection).finally(() => ended(connection)),
        ...(driver.savepoint && { savepoint: (connection, name, compile) => driver.savepoint!(connection, name, compile) }),
        // announcements made since the savepoint are rolled back with it
        ...(driver.rollbackToSavepoint && {
          rollbackToSavepoint: async (connection, name, compile) => {
            await driver.rollbackToSavepoint!(connection, name, compile);
            tracked(connection).announced = false;
          },
        }),
        ...(driver.releaseSavepoint && { releaseSavepoint: (connection, name, compile) => driver.releaseSavepoint!(connection, name, compile) }),
        releaseConnection: (connection) => driver.releaseConnection(tracked(connection).inner),
        destroy: () => driver.destroy(),
      };
    },
  };
}

/** What stands for argument `index` of a prepared query while it is compiled. */
class Placeholder {
  constructor(readonly index: number) {}
}

/**
 * A query built and compiled once per database engine, then run with each call's argument
 * values: Kysely rebuilds the operation tree and recompiles the SQL on every `execute()`, a large
 * share of a primary-key lookup. `build` must use its arguments only as values
 * (`where('id', '=', id)`), never to choose the shape of the query. Resolves to the rows exactly
 * as `execute()` returns them (names camelCased); a transaction may be passed as `db`.
 *
 * @example const userById = preparedQuery((db, id: number) => db.selectFrom('users').selectAll().where('id', '=', id));
 */
export function preparedQuery<A extends unknown[], R>(build: (db: Db, ...args: A) => Compilable<R>): (db: Db, ...args: A) => Promise<R[]> {
  // keyed by the dialect adapter: one per opened database, shared by its transactions
  const compiled = new WeakMap<object, CompiledQuery<R>>();
  return async (db, ...args) => {
    const { adapter } = db.getExecutor();
    let query = compiled.get(adapter);
    if (!query) {
      query = build(db, ...(args.map((_, index) => new Placeholder(index)) as A)).compile();
      compiled.set(adapter, query);
    }
    const parameters = query.parameters.map((value) => (value instanceof Placeholder ? args[value.index] : value));
    const committed = db.isTransaction ? undefined : committedReads.get(db);
    return (committed?.(query.sql, parameters) as R[] | undefined) ?? (await db.executeQuery<R>({ ...query, parameters })).rows;
  };
}

/**
 * SQLite: reads of committed state on a second, read-only connection, run synchronously —
 * `(sql, parameters)` → camelCased rows, or undefined when the statement is not a read. Used by
 * {@link preparedQuery} outside transactions: WAL gives the reader the last committed state, so
 * a lookup neither queues behind an open transaction on the one writing connection (which may
 * be waiting for git) nor sees its uncommitted rows, and it skips Kysely's executor.
 */
const committedReads = new WeakMap<object, (sql: string, parameters: readonly unknown[]) => UnknownRow[] | undefined>();

/**
 * The reader of {@link committedReads}: its reads share one read transaction (one snapshot) per
 * turn of the event loop instead of taking and releasing WAL's read lock (two `fcntl` calls)
 * each. The snapshot ends when the turn does (`setImmediate`) and as soon as a statement of this
 * process that may have written the database is done (`Tracker.onStatementDone`), so a read
 * always sees this process's committed writes; another process's commit is seen from the next
 * turn on, as if the read had come a moment earlier.
 */
function committedReader(
  reader: BetterSqlite3.Database,
  tracker: Tracker,
  availability: DatabaseAvailability,
): { read: (sql: string, parameters: readonly unknown[]) => UnknownRow[] | undefined; close(): void } {
  reader.pragma('busy_timeout = 5000');
  // statements of reads with the camelCase names of their columns; rows come back as arrays
  // (raw mode), which builds each row object without better-sqlite3's per-column key lookups
  const statements = new LRUCache<string, { statement: BetterSqlite3.Statement; names: string[] } | false>({ max: 100 });
  const begin = reader.prepare('begin');
  const commit = reader.prepare('commit');
  let inSnapshot = false;
  const endSnapshot = () => {
    if (!inSnapshot) return;
    inSnapshot = false;
    commit.run();
  };
  tracker.onStatementDone = endSnapshot;
  const read = (sql: string, parameters: readonly unknown[]): UnknownRow[] | undefined => {
    let prepared = statements.get(sql);
    if (prepared === undefined) {
      const statement = reader.prepare(sql);
      prepared = statement.reader && { statement: statement.raw(true), names: statement.columns().map((column) => naming.toCamel(column.name)) };
      statements.set(sql, prepared);
    }
    if (!prepared) return undefined;
    if (!inSnapshot) {
      begin.run();
      inSnapshot = true;
      setImmediate(endSnapshot);
    }
    const { statement, names } = prepared;
    return (statement.all(parameters) as unknown[][]).map((values) => {
      const row: UnknownRow = {};
      for (let i = 0; i < names.length; i++) row[names[i]] = values[i];
      return row;
    });
  };
  return {
    read(sql, parameters) {
      try {
        return read(sql, parameters);
      } catch (error) {
        throw availability.failed(error);
      }
    },
    close() {
      endSnapshot();
      reader.close();
    },
  };
}

const availabilities = new WeakMap<object, DatabaseAvailability>();

/** The availability of a database handle from {@link openDatabase} (src/db/availability.ts). */
export function availabilityOf(db: Kysely<Database>): DatabaseAvailability {
  const availability = availabilities.get(db);
  if (!availability) throw new Error('availabilityOf: not a handle from openDatabase');
  return availability;
}

/** Milliseconds a PostgreSQL connection may take to open (or a request wait for a free one) before it fails as an outage. */
const CONNECT_TIMEOUT_MS = 10_000;

/** Options of {@link openDatabase}. */
export interface DatabaseOptions {
  /** A `postgres://…` URL, or null for SQLite in `dataDir`. */
  databaseUrl: string | null;
  dataDir: string;
  /** PostgreSQL connections of the pool (default 10). */
  poolSize?: number;
  /**
   * PostgreSQL: hold a LISTEN connection and act on the other processes' announcements
   * (src/db/notifications.ts) — a server does; a one-off command only announces its own writes.
   */
  listen?: boolean;
  /** {@link ChangeTracker.ttlMs}: how long cached rows may be used at most (default 1000). */
  cacheTtlMs?: number;
  /**
   * Tables watched from the start, as by {@link trackChanges} (SQL names): their writes are
   * announced to the other processes before any cache of this process asked for them — the
   * tables any process caches.
   */
  watchTables?: readonly string[];
}

/** Default of {@link DatabaseOptions.cacheTtlMs}. */
const CACHE_TTL_MS = 1000;

/**
 * Opens the database: PostgreSQL when `databaseUrl` is a postgres URL, otherwise SQLite in WAL
 * mode at `<dataDir>/gitloom.db`. Throws when the server cannot be reached (with `listen`: when
 * its LISTEN connection cannot be opened). Once open, a statement failing because the database
 * is unavailable throws a DatabaseUnavailable (503, src/db/availability.ts) and the handle
 * recovers by itself when the database answers again; so does the LISTEN connection.
 */
export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  const plugins = [naming];
  const tracker = new Tracker(options.cacheTtlMs ?? CACHE_TTL_MS);
  if (options.watchTables) tracker.watch(options.watchTables);
  const availability = new DatabaseAvailability();
  if (options.databaseUrl) {
    // Each engine's driver is loaded only when used.
    const { default: pg } = await import('pg');
    // int8 (counts, epoch-millisecond dates) as numbers: every value we store fits in 2^53.
    pg.types.setTypeParser(20, (value) => Number(value));
    // a connection the server closes (restart, failover, pg_terminate_backend, network) emits
    // 'error' on its client — idle in the pool or checked out — and on the pool: reported to the
    // availability, never left unhandled (which would end the process)
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
    });
    pool.on('error', (error) => availability.failed(error));
    pool.on('connect', (client) => client.on('error', (error) => availability.failed(error)));
    const notifications = new Notifications(
      () => new pg.Client({ connectionString: options.databaseUrl!, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true }),
      () => tracker.version++,
      (error) => availability.failed(error),
    );
    const db = new Kysely<Database>({
      dialect: instrumented(new PostgresDialect({ pool }), SnakePostgresCompiler, tracker, availability, notifications),
      plugins,
    });
    trackers.set(db.getExecutor().adapter, tracker);
    availabilities.set(db, availability);
    registerNotifications(db, notifications);
    const close = async () => {
      await notifications.close();
      await db.destroy();
    };
    if (options.listen) {
      try {
        await notifications.start();
      } catch (error) {
        await close();
        throw error;
      }
    }
    return {
      db,
      engine: 'postgres',
      availability,
      close,
      poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    };
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
  const db = new Kysely<Database>({ dialect: instrumented(new SqliteDialect({ database }), SnakeSqliteCompiler, tracker, availability, null), plugins });
  trackers.set(db.getExecutor().adapter, tracker);
  availabilities.set(db, availability);
  const reader = committedReader(new SQLite(path.join(options.dataDir, 'gitloom.db'), { readonly: true }), tracker, availability);
  committedReads.set(db, reader.read);
  const close = async () => {
    await db.destroy();
    reader.close();
  };
  return { db, engine: 'sqlite', availability, close, poolStats: () => ({ total: 1, idle: 1, waiting: 0 }) };
}

/** Applies every pending migration (src/db/migrations); throws the first failure. */
export async function migrateToLatest(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error) throw error instanceof Error ? error : new Error(`Migration ${failed?.migrationName} failed: ${String(error)}`);
}
