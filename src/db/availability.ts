/**
 * Database availability (README "Operations", issue 24): the one place that tells a database
 * outage from any other database error, and the one state of the outage — down since when and
 * why — that readiness (src/ops/health.ts), the error mapper (a 503) and the background loops
 * (src/domain/polling-loop.ts) share. An outage is logged once when it starts and once when the
 * database answers again, never per query.
 */
import { Unavailable } from '../errors.js';

/** Seconds a client is told to wait before retrying (`Retry-After`): a process recovers within them. */
export const RETRY_AFTER_SECONDS = 5;

/** SQLSTATEs of an outage outside class 08 (connection exception): shutdown, crash, starting up, too many connections. */
const PG_OUTAGE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** Socket errors of a server that cannot be reached or dropped the connection. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/** Messages of node-postgres (pg, pg-pool) for a connection that ended or could not be made. */
const PG_OUTAGE_MESSAGE =
  /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|timeout exceeded when trying to connect)/;

/** SQLite (better-sqlite3 `SqliteError.code`): busy beyond `busy_timeout`, an I/O error, a full disk. */
const SQLITE_OUTAGE_CODE = /^SQLITE_(BUSY|IOERR|FULL)/;

/**
 * Whether `error` means the database is unavailable rather than that the query was wrong:
 * PostgreSQL SQLSTATE class 08 and 57P01/57P02/57P03/53300, socket errors (ECONNREFUSED,
 * ECONNRESET, ETIMEDOUT, …), node-postgres's "Connection terminated…" family; SQLite's
 * SQLITE_BUSY*, SQLITE_IOERR* and SQLITE_FULL. An AggregateError (a connection attempt to every
 * address of a host) counts when one of its errors does.
 */
export function isOutage(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof AggregateError) return error.errors.some(isOutage);
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (code.startsWith('08') && code.length === 5) return true;
    if (PG_OUTAGE_STATES.has(code) || NETWORK_CODES.has(code) || SQLITE_OUTAGE_CODE.test(code)) return true;
  }
  return PG_OUTAGE_MESSAGE.test(error.message);
}

/** The 503 every database call throws during an outage (`GITLOOM_ERR_UNAVAILABLE`, `Retry-After`). */
export class DatabaseUnavailable extends Unavailable {
  constructor(cause: unknown) {
    super('The database is unavailable; try again shortly', RETRY_AFTER_SECONDS, { cause });
  }
}

/** What an outage reports to the log: its start (with the first error) and its end (with its length in ms). */
export interface OutageLog {
  down(cause: string): void;
  up(downMs: number): void;
}

/**
 * The availability of one database handle. Every statement reports to it: a failure that
 * {@link isOutage} recognises marks the database down (the first one of an outage is logged)
 * and becomes a {@link DatabaseUnavailable}; any success marks it up again (logged once).
 */
export class DatabaseAvailability {
  #downSince: number | null = null;
  #cause = '';
  #lastOutageEnded: number | null = null;
  /** Where outages are logged (set by the server once its logger exists). */
  log: OutageLog | null = null;

  /** Epoch milliseconds since which the database has been failing, or null while it answers. */
  get downSince(): number | null {
    return this.#downSince;
  }

  /**
   * Epoch milliseconds at which the last outage ended, or null when there was none. Leases that
   * expired during an outage are not taken for abandoned until their owners had a lease period
   * to renew them since.
   */
  get lastOutageEnded(): number | null {
    return this.#lastOutageEnded;
  }

  /** The message of the error that started the current outage ('' while up). */
  get cause(): string {
    return this.#cause;
  }

  /**
   * Classifies a failure: an outage marks the database down and is returned as a
   * {@link DatabaseUnavailable} (with the error as its cause); anything else is returned as is.
   */
  failed(error: unknown): unknown {
    if (error instanceof DatabaseUnavailable) return error;
    if (!isOutage(error)) return error;
    if (this.#downSince === null) {
      this.#downSince = Date.now();
      this.#cause = (error as Error).message || String((error as { code?: unknown }).code);
      this.log?.down(this.#cause);
    }
    return new DatabaseUnavailable(error);
  }

  /** A statement succeeded: the database is up (the end of an outage is logged once). */
  succeeded(): void {
    if (this.#downSince === null) return;
    const now = Date.now();
    const downMs = now - this.#downSince;
    this.#downSince = null;
    this.#lastOutageEnded = now;
    this.#cause = '';
    this.log?.up(downMs);
  }
}

/**
 * Runs `write` — the record of work already done outside the database (a webhook sent, a build
 * run) — again every `intervalMs` while it throws {@link DatabaseUnavailable}, so the work is
 * recorded once the database is back instead of being lost or done twice. Gives up, throwing
 * the last error, once `stopped()` turns true; any other error is thrown at once.
 */
export async function recordWhenAvailable<T>(write: () => Promise<T>, stopped: () => boolean, intervalMs = 500): Promise<T> {
  for (;;) {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof DatabaseUnavailable) || stopped()) throw error;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}
