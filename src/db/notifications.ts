/**
 * Processes sharing a PostgreSQL database tell each other what changed
 * (docs/architecture.md#processes-sharing-postgresql): a change that others must act on is
 * announced with `pg_notify` in the transaction that makes it (PostgreSQL delivers it at the
 * commit, and never when the transaction rolls back), and every process holds one LISTEN
 * connection that hands what arrives to the subscribers of its topic. Announcements are small
 * (a topic: `tables`, a loop's name, `log:<build id>`), one per topic and transaction (PostgreSQL
 * delivers identical notifications of one transaction once). A process ignores its own.
 *
 * Nothing here is needed for correctness: each cache still expires and each loop still polls,
 * so a lost notification (the LISTEN connection down, a process starting) costs latency only.
 * On SQLite, which one process owns, every function here does nothing.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type pg from 'pg';
import type { Db } from './database.js';

/** The one channel of Gitloom's notifications (a channel is scoped to its database). */
export const CHANNEL = 'gitloom';

/** The topic of a write to a table some process caches (src/db/database.ts `trackChanges`). */
export const TABLES_TOPIC = 'tables';

/** Milliseconds between reconnection attempts of the LISTEN connection: the first, doubled up to the last. */
const RECONNECT_MS = { first: 100, max: 5000 };

type Listener = () => void;

/**
 * The notifications of one database handle: its LISTEN connection and its subscribers.
 * Created by `openDatabase` for PostgreSQL; see {@link announce} and {@link onAnnouncement}.
 */
export class Notifications {
  /** Marks this handle's announcements, so that it ignores its own. */
  readonly sender = randomBytes(6).toString('base64url');
  private readonly listeners = new Map<string, Set<Listener>>();
  private client: pg.Client | null = null;
  private listening = false;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;
  private delayMs = RECONNECT_MS.first;
  /** Whether a LISTEN connection was up before: notifications may have been missed since. */
  private wasListening = false;

  /**
   * @param connect makes a new (unconnected) client of the database.
   * @param onTablesChanged called for another process's `tables` announcement and after a reconnection.
   * @param onConnectFailure receives why a connection attempt failed (the database's availability logs outages).
   */
  constructor(
    private readonly connect: () => pg.Client,
    private readonly onTablesChanged: () => void,
    private readonly onConnectFailure: (error: unknown) => void,
  ) {}

  /** Whether the LISTEN connection is up (for readiness and tests). */
  get connected(): boolean {
    return this.listening;
  }

  /** The payload announcing `topic`. */
  payload(topic: string): string {
    return `${this.sender} ${topic}`;
  }

  /**
   * Opens the LISTEN connection; resolves once it listens. When it cannot be opened, rejects
   * with the error and keeps trying in the background (with backoff).
   */
  async start(): Promise<void> {
    const failure = await this.open();
    if (failure !== null) throw failure;
  }

  /** Closes the LISTEN connection for good. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    const client = this.client;
    this.client = null;
    this.listening = false;
    // pg's end() never rejects
    await client?.end();
  }

  /** Registers `listener` for another process's announcements of `topic`; returns the unregister function. */
  subscribe(topic: string, listener: Listener): () => void {
    let set = this.listeners.get(topic);
    if (!set) this.listeners.set(topic, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(topic) === set) this.listeners.delete(topic);
    };
  }

  /** One attempt to open the LISTEN connection: null once it listens, else the error (reported, and the next attempt scheduled). */
  private async open(): Promise<unknown> {
    if (this.closed) return null;
    const client = this.connect();
    // a connection lost later (restart, network, pg_terminate_backend) is opened again
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => {
      if (message.channel === CHANNEL && message.payload !== undefined) this.received(message.payload);
    });
    this.client = client;
    try {
      await client.connect();
      await client.query(`listen ${CHANNEL}`);
    } catch (error) {
      // closed while connecting: nothing failed
      if (this.closed) return null;
      this.onConnectFailure(error);
      this.lost(client);
      return error;
    }
    if (this.client !== client) return null;
    this.listening = true;
    this.delayMs = RECONNECT_MS.first;
    if (this.wasListening) this.missedSome();
    this.wasListening = true;
    return null;
  }

  /** The connection `client` ended or failed: a new one is opened after 100 ms, then 200 ms, … up to every 5 s while attempts fail. */
  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = null;
    this.listening = false;
    // releases its socket (pg's end() never rejects)
    void client.end();
    if (this.closed || this.retry) return;
    const delay = this.delayMs;
    this.delayMs = Math.min(this.delayMs * 2, RECONNECT_MS.max);
    this.retry = setTimeout(() => {
      this.retry = null;
      // a failed attempt is reported and schedules the next one itself
      void this.open();
    }, delay);
  }

  /** Announcements may have been missed while no connection listened: every cache and every subscriber is told. */
  private missedSome(): void {
    this.onTablesChanged();
    for (const set of [...this.listeners.values()]) for (const listener of [...set]) listener();
  }

  private received(payload: string): void {
    const space = payload.indexOf(' ');
    if (space < 0 || payload.slice(0, space) === this.sender) return;
    const topic = payload.slice(space + 1);
    if (topic === TABLES_TOPIC) this.onTablesChanged();
    const set = this.listeners.get(topic);
    if (set) for (const listener of [...set]) listener();
  }
}

/** The notifications of each PostgreSQL handle, by its dialect adapter (shared by its transactions). */
const byAdapter = new WeakMap<object, Notifications>();

/** Registers the notifications of a database handle (`openDatabase`). */
export function registerNotifications(db: Db, notifications: Notifications): void {
  byAdapter.set(db.getExecutor().adapter, notifications);
}

/** The notifications of `db` (a handle or one of its transactions), or undefined on SQLite. */
function notificationsOf(db: Db): Notifications | undefined {
  return byAdapter.get(db.getExecutor().adapter);
}

/**
 * Announces `topic` to the other processes of the database: inside a transaction (`db` is one)
 * it is delivered at the commit and dropped by a rollback; on a handle it is sent at once, so
 * call it right after the autocommitted change it announces. Nothing on SQLite.
 *
 * @param topic a short name (a loop's, `log:<id>`); a payload is limited to 8000 bytes.
 * @throws DatabaseUnavailable during an outage, as any statement.
 */
export async function announce(db: Db, topic: string): Promise<void> {
  const notifications = notificationsOf(db);
  if (!notifications) return;
  await sql`select pg_notify(${CHANNEL}, ${notifications.payload(topic)})`.execute(db);
}

/**
 * Calls `listener` whenever another process announces `topic` (and after the LISTEN connection
 * was lost and is back, when announcements may have been missed). Returns the unregister
 * function. Nothing on SQLite (one process: its own changes wake it directly).
 */
export function onAnnouncement(db: Db, topic: string, listener: () => void): () => void {
  return notificationsOf(db)?.subscribe(topic, listener) ?? (() => undefined);
}
