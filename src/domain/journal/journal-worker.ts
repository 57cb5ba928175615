/**
 * The journal worker (docs/architecture.md#the-ref-journal): a loop in every server process
 * that consumes applied `ref_journal` rows in order: it dispatches each as a `refsJournalEntry`
 * event to the reactions the areas registered (src/domain/event-handlers.ts: pull request
 * updates, merge previews and auto-merged detection, the project's last activity and commit
 * dates, fixed issues, build triggers) and, in the transaction that marks the row processed,
 * enqueues the CODE_PUSH outbox event. On PostgreSQL a row is held by a row lock
 * (`FOR UPDATE SKIP LOCKED`) for as long as it is worked on, so a process that dies releases it
 * at once; on SQLite rows are leased by a conditional update and a previous process's leases are
 * released at start (one process owns the file). Each row is finished exactly once. Woken by `refsJournaled` events, and every `tickMs` for rows other
 * processes wrote. Every few seconds it also repairs the intents a crashed process or a failed
 * confirmation left (src/domain/journal/ref-journal.ts `recoverRefIntents`).
 */
import { randomUUID } from 'node:crypto';
import { DatabaseUnavailable } from '../../db/availability.js';
import type { Db } from '../../db/database.js';
import { dialectOf } from '../../db/dialect.js';
import type { RefJournalRow } from '../../db/schema.js';
import { createContext, systemActor, type Context, type Services } from '../context.js';
import type { RefChange } from '../events.js';
import { PollingLoop } from '../polling-loop.js';
import { JOURNAL_TOPIC, recoverRefIntents } from './ref-journal.js';

/** Options of {@link JournalWorker}. */
export interface JournalWorkerOptions {
  /** Milliseconds between polls for rows of other processes (default 500). */
  tickMs?: number;
  /** Lease of a claimed row in milliseconds (default 120000). */
  leaseMs?: number;
  /** Logs faults of the loop and of single reactions. */
  onError?: (error: unknown) => void;
  /** Logs intents of crashed processes repaired on the way (PostgreSQL). */
  onRepair?: (message: string) => void;
}

/** How often the worker repairs intents left by crashed processes or failed confirmations (ref-journal.ts). */
const REPAIR_EVERY_MS = 10_000;

const BATCH = 16;

/** Passes an entry gets: after this many failed ones it is finished anyway (its faults logged). */
export const MAX_ATTEMPTS = 5;

/** One process's journal worker: `start()` after start-up recovery, `stop()` on close. */
export class JournalWorker {
  readonly owner = randomUUID();
  private readonly ctx: Context;
  private readonly leaseMs: number;
  private readonly retryMs: number;
  private readonly loop: PollingLoop;
  private repairedAt = Date.now();

  constructor(
    private readonly services: Services,
    private readonly options: JournalWorkerOptions = {},
  ) {
    this.ctx = createContext(services, systemActor);
    this.leaseMs = options.leaseMs ?? 120_000;
    this.retryMs = services.config.journalRetryMs;
    this.loop = new PollingLoop(() => this.tick(), options.tickMs ?? 500, options.onError).wakeOn(services.db, JOURNAL_TOPIC);
    services.events.on('refsJournaled', () => this.wake());
  }

  /** Starts the loop; on SQLite the leases of a previous (crashed) process are released first. */
  async start(): Promise<void> {
    if (dialectOf(this.services.db).ownedByOneProcess) {
      await this.services.db.updateTable('refJournal').set({ leaseOwner: null, leaseExpires: null }).where('leaseOwner', 'is not', null).execute();
    }
    this.loop.start();
  }

  /** Stops the loop and waits for the entry in progress. */
  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /** Runs a pass now (or right after the one in progress). */
  wake(): void {
    this.loop.wake();
  }

  private async tick(): Promise<void> {
    if (Date.now() - this.repairedAt >= REPAIR_EVERY_MS) {
      this.repairedAt = Date.now();
      await recoverRefIntents(this.ctx, (message) => this.options.onRepair?.(message));
    }
    if (dialectOf(this.services.db).locksRows) {
      while (!this.loop.stopped && (await this.processLocked()));
      return;
    }
    for (;;) {
      const entries = await this.claim();
      for (const entry of entries) {
        if (this.loop.stopped) return;
        if (await this.react(entry)) await this.finish(entry);
        else await this.postpone(this.services.db, entry, true);
      }
      if (entries.length < BATCH || this.loop.stopped) return;
    }
  }

  /**
   * PostgreSQL: takes the oldest unprocessed entry no other process holds (`FOR UPDATE SKIP
   * LOCKED`) and keeps it locked while reacting, then marks it processed in the same
   * transaction; a process that dies mid-way releases the lock with its connection, so another
   * takes the entry over at once.
   *
   * @returns whether an entry was taken (finished, or postponed for a retry).
   */
  private async processLocked(): Promise<boolean> {
    const now = Date.now();
    const outcome = await this.services.db.transaction().execute(async (tx) => {
      const next = await tx
        .selectFrom('refJournal')
        .selectAll()
        .where('processedDate', 'is', null)
        .where('appliedDate', 'is not', null)
        .where((w) => w.or([w('retryDate', 'is', null), w('retryDate', '<=', now)]))
        .orderBy('id')
        .limit(1)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (!next) return null;
      if (!(await this.react(next)) && (await this.postpone(tx, next, false))) return { entry: next, finished: false };
      await tx.updateTable('refJournal').set({ processedDate: Date.now() }).where('id', '=', next.id).execute();
      await this.pushed(tx, next);
      return { entry: next, finished: true };
    });
    if (outcome?.finished) this.announce(outcome.entry);
    return outcome !== null;
  }

  /**
   * SQLite: leases a batch of unprocessed entries (a conditional update; one process owns the
   * file). Entries this worker leased before are taken again: ticks never overlap, so they are
   * left over from a pass the database's unavailability broke off.
   */
  private async claim(): Promise<RefJournalRow[]> {
    const { db } = this.services;
    const now = Date.now();
    const lease = { leaseOwner: this.owner, leaseExpires: now + this.leaseMs };
    const candidates = await db
      .selectFrom('refJournal')
      .select('id')
      .where('processedDate', 'is', null)
      .where('appliedDate', 'is not', null)
      .where((w) => w.or([w('leaseExpires', 'is', null), w('leaseExpires', '<', now), w('leaseOwner', '=', this.owner)]))
      .where((w) => w.or([w('retryDate', 'is', null), w('retryDate', '<=', now)]))
      .orderBy('id')
      .limit(BATCH)
      .execute();
    if (candidates.length === 0) return [];
    const rows = await db
      .updateTable('refJournal')
      .set(lease)
      .where(
        'id',
        'in',
        candidates.map((c) => c.id),
      )
      .where('processedDate', 'is', null)
      .where((w) => w.or([w('leaseExpires', 'is', null), w('leaseExpires', '<', now), w('leaseOwner', '=', this.owner)]))
      .returningAll()
      .execute();
    return rows.sort((a, b) => a.id - b.id);
  }

  /**
   * Dispatches one entry to its reactions; a failing one is reported and the others still run
   * (each is idempotent, so a retry may run them all again). The database being unavailable breaks
   * the pass off instead (a DatabaseUnavailable is thrown): the entry is taken again once it is
   * back, without counting a failed pass.
   *
   * @returns whether every reaction succeeded.
   */
  private async react(entry: RefJournalRow): Promise<boolean> {
    const errors = await this.ctx.events.dispatch('refsJournalEntry', {
      projectId: entry.projectId,
      changes: [changeOf(entry)],
      userId: entry.userId,
      journalId: entry.id,
    });
    const outage = errors.find((error) => error instanceof DatabaseUnavailable);
    if (outage) throw outage;
    for (const error of errors) this.options.onError?.(error);
    return errors.length === 0;
  }

  /**
   * After a pass whose reactions failed: counts the attempt and sets when to retry (backoff
   * doubling from `retryMs`), releasing a SQLite lease. Once {@link MAX_ATTEMPTS} passes failed,
   * the entry is left to be finished now instead.
   *
   * @returns whether the entry waits for a retry (false: finish it now).
   */
  private async postpone(db: Db, entry: RefJournalRow, leased: boolean): Promise<boolean> {
    const attempts = entry.attempts + 1;
    if (attempts >= MAX_ATTEMPTS) {
      this.options.onError?.(new Error(`Ref change ${entry.id} (${entry.ref}) finished after ${attempts} failed passes`));
      if (leased) await this.finish(entry);
      return false;
    }
    let update = db
      .updateTable('refJournal')
      .set({ attempts, retryDate: Date.now() + this.retryMs * 2 ** (attempts - 1), leaseOwner: null, leaseExpires: null })
      .where('id', '=', entry.id)
      .where('processedDate', 'is', null);
    if (leased) update = update.where('leaseOwner', '=', this.owner);
    await update.execute();
    return true;
  }

  /**
   * SQLite: marks a leased entry processed and enqueues its CODE_PUSH event in one transaction —
   * only while this process still holds the lease, so an entry is finished once.
   */
  private async finish(entry: RefJournalRow): Promise<void> {
    const finished = await this.services.db.transaction().execute(async (tx) => {
      const done = await tx
        .updateTable('refJournal')
        .set({ processedDate: Date.now(), leaseOwner: null, leaseExpires: null })
        .where('id', '=', entry.id)
        .where('processedDate', 'is', null)
        .where('leaseOwner', '=', this.owner)
        .executeTakeFirst();
      if (Number(done.numUpdatedRows) !== 1) return false;
      await this.pushed(tx, entry);
      return true;
    });
    if (finished) this.announce(entry);
  }

  /**
   * The CODE_PUSH activity of a processed entry (OneDev's RefUpdated: `refName`, `oldCommitId`,
   * `newCommitId`, null for a created or deleted ref), in the transaction that marks it processed.
   */
  private pushed(tx: Db, entry: RefJournalRow): Promise<void> {
    const { projectId, ref: refName, oldHash: oldCommitId, newHash: newCommitId, userId: actorId, date } = entry;
    return this.services.events.dispatchInTransaction('activity', {
      db: tx,
      activity: { type: 'CODE_PUSH', projectId, refName, oldCommitId, newCommitId, actorId, date },
    });
  }

  /** The in-process `refsUpdated` event (the build scheduler's schedules follow the refs). */
  private announce(entry: RefJournalRow): void {
    this.ctx.events.emit('refsUpdated', { projectId: entry.projectId, changes: [changeOf(entry)], userId: entry.userId });
  }
}

function changeOf(entry: RefJournalRow): RefChange {
  return { ref: entry.ref, oldHash: entry.oldHash, newHash: entry.newHash };
}
