/**
 * What SQLite and PostgreSQL do differently, in one place (as Kysely keeps dialect-only SQL in
 * `helpers/{postgres,sqlite}`): text search by trigrams, claiming queued rows, id sequences,
 * bytewise ranges, row locks, and whether one process owns the database. Everything else is written once with Kysely and
 * runs on both engines; code outside this module never asks which engine it runs on.
 * Upserts need nothing here: both engines take `insert … on conflict` (Kysely's `onConflict`).
 */
import { PostgresAdapter, sql, type Kysely, type RawBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Engine } from './database.js';

/**
 * Texts searched by substring (`~fuzzy~`, `contains` of the query languages) through a trigram
 * index: `columns` of `table` (SQL names). SQLite keeps them in the FTS5 table `searchTable`
 * (rowid = the row's id) filled by triggers; PostgreSQL indexes `lower(column)` with pg_trgm.
 */
export interface TextSearch {
  readonly table: string;
  readonly columns: readonly string[];
  readonly searchTable: string;
}

/** The text of the files in the code index (migration 0025, docs/compatibility.md#code-search). */
export const CODE_TEXT: TextSearch = { table: 'code_search_files', columns: ['content'], searchTable: 'code_search_text' };
/** Pull request titles and descriptions (migration 0007, docs/compatibility.md#pull-requests-query-language). */
export const PULL_REQUEST_TEXT: TextSearch = { table: 'pull_requests', columns: ['title', 'description'], searchTable: 'pull_request_search' };
/** Pull request comments (migration 0007). */
export const PULL_REQUEST_COMMENT_TEXT: TextSearch = { table: 'pull_request_comments', columns: ['content'], searchTable: 'pull_request_comment_search' };
/** Issue titles and descriptions (migration 0010, docs/compatibility.md#issues). */
export const ISSUE_TEXT: TextSearch = { table: 'issues', columns: ['title', 'description'], searchTable: 'issue_search' };
/** Issue comments (migration 0010). */
export const ISSUE_COMMENT_TEXT: TextSearch = { table: 'issue_comments', columns: ['content'], searchTable: 'issue_comment_search' };

/** Ids of claimable rows, oldest first and limited: `db.selectFrom(table).select('id').where(…)`. */
export type ClaimCandidates = SelectQueryBuilder<any, any, { id: number }>;

/** The ids handed to a claim's update: a locking subquery (PostgreSQL) or the ids read (SQLite). */
export type ClaimedIds = ClaimCandidates | number[];

/** The differences of one engine; get it with {@link dialectOf}. */
export interface SqlDialect {
  readonly engine: Engine;
  /**
   * True when one server process owns the database (an SQLite file): at start-up, whatever is
   * leased or running belongs to a process that is gone. False for PostgreSQL, which several
   * processes share (a lease holds until it expires).
   */
  readonly ownedByOneProcess: boolean;

  /**
   * True when a transaction can hold single rows locked against other processes (PostgreSQL
   * `for update`, released when its connection ends, even by a crash); false for SQLite, whose
   * one writer excludes every other for the whole database.
   */
  readonly locksRows: boolean;

  /**
   * Holds the rows `query` selects locked until the transaction ends (PostgreSQL `for update`,
   * waiting for a holder to finish). Nothing to do on SQLite: no query runs.
   */
  lockRows(query: SelectQueryBuilder<any, any, any>): Promise<void>;

  /**
   * Narrows `query` to rows no other transaction holds, and locks them until the transaction
   * ends (PostgreSQL `for update skip locked`). SQLite: `query` unchanged (one writer at a time).
   */
  skipLocked<Q extends SelectQueryBuilder<any, any, any>>(query: Q): Q;

  /**
   * Condition "the id in column `ref` is one of the `roots` (a subquery of ids of `table`) or
   * of a row whose `path` lies below one of theirs": the descendants of path P are the paths in
   * the range (P + '/', P + '0') in byte order ('/' is 0x2F, '0' is 0x30), a range scan of a
   * bytewise path index (migration 0009) per root, not a comparison of every row with
   * every root. PostgreSQL compares in the "C" collation (byte order whatever the database
   * collation); and as it cannot estimate a range join of a table with itself (it expects
   * millions of rows, then plans badly and JIT-compiles), the root paths are collected into an
   * array first (estimated small), and `= any(array(…))` computes the ids once and probes
   * indexes with them.
   */
  inPathSubtrees(ref: string, table: string, roots: RawBuilder<unknown>): RawBuilder<SqlBool>;

  /**
   * Subquery of the ids of `search.table` rows whose `columns` (default: all of the search's)
   * match a lower-case LIKE pattern escaped with `\` (src/query/wildcards.ts): the FTS5 table on
   * SQLite (which takes no ESCAPE clause: patterns holding `\` read the table itself), the
   * pg_trgm indexes on PostgreSQL (one select per column, so each column's index serves it).
   * Use as `id in (…)`: both engines start from the few matching rows.
   */
  textMatches(search: TextSearch, pattern: string, columns?: readonly string[]): RawBuilder<unknown>;

  /**
   * Claims queued rows for this process: `candidates` selects their ids, `take(ids)` updates
   * those of `ids` still claimable (its where clause repeats the candidates' conditions) and
   * returns the rows it changed. PostgreSQL: one statement, the candidates locked `for update
   * skip locked` so concurrent processes take different rows. SQLite (one writer at a time): the
   * candidates are read, then taken; read again while another process took all of them first.
   */
  claim<R>(candidates: ClaimCandidates, take: (ids: ClaimedIds) => Promise<R[]>): Promise<R[]>;

  /**
   * After rows with chosen ids were inserted into `table` (SQL name), moves its id sequence past
   * them (PostgreSQL `setval`); nothing to do on SQLite, whose next id follows the largest.
   */
  resetSequence(db: Kysely<any>, table: string): Promise<void>;
}

const sqlite: SqlDialect = {
  engine: 'sqlite',
  ownedByOneProcess: true,
  locksRows: false,

  async lockRows() {},

  skipLocked: (query) => query,

  inPathSubtrees(ref, table, roots) {
    const rows = sql.table(table);
    return sql<SqlBool>`${sql.ref(ref)} in (select g.id from ${rows} g where g.id in (${roots}) union select d.id from ${rows} g join ${rows} d on d.path > g.path || '/' and d.path < g.path || '0' where g.id in (${roots}))`;
  },

  textMatches(search, pattern, columns = search.columns) {
    if (pattern.includes('\\')) return plainTextMatches(search, pattern, columns);
    const matches = columns.map((c) => sql`${sql.ref(c)} like ${pattern}`);
    return sql`select rowid from ${sql.table(search.searchTable)} where ${sql.join(matches, sql` or `)}`;
  },

  async claim(candidates, take) {
    for (;;) {
      const ids = (await candidates.execute()).map((row) => row.id);
      if (ids.length === 0) return [];
      const taken = await take(ids);
      if (taken.length > 0) return taken;
    }
  },

  async resetSequence() {},
};

const postgres: SqlDialect = {
  engine: 'postgres',
  ownedByOneProcess: false,
  locksRows: true,

  async lockRows(query) {
    await query.forUpdate().execute();
  },

  skipLocked: (query) => query.forUpdate().skipLocked() as typeof query,

  inPathSubtrees(ref, table, roots) {
    const rows = sql.table(table);
    const ids = sql`select g.id from ${rows} g where g.id in (${roots}) union select d.id from unnest(array(select g.path from ${rows} g where g.id in (${roots}))) as g(path) join ${rows} d on d.path collate "C" > g.path collate "C" || '/' and d.path collate "C" < g.path collate "C" || '0'`;
    return sql<SqlBool>`${sql.ref(ref)} = any(array(${ids}))`;
  },

  textMatches: plainTextMatches,

  async claim(candidates, take) {
    return take(postgres.skipLocked(candidates));
  },

  async resetSequence(db, table) {
    await sql`select setval(pg_get_serial_sequence(${table}, 'id'), greatest((select max(id) from ${sql.table(table)}), 1))`.execute(db);
  },
};

/** `lower(column) like pattern escape '\'` per column, read from the table itself. */
function plainTextMatches(search: TextSearch, pattern: string, columns: readonly string[] = search.columns): RawBuilder<unknown> {
  const table = sql.table(search.table);
  return sql.join(
    columns.map((c) => sql`select id from ${table} where lower(${sql.ref(c)}) like ${pattern} escape '\\'`),
    sql` union `,
  );
}

/**
 * The dialect of a database handle or transaction, told by its Kysely adapter.
 *
 * @example await dialectOf(ctx.db).claim(candidates, take)
 */
export function dialectOf(db: Kysely<any>): SqlDialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? postgres : sqlite;
}
