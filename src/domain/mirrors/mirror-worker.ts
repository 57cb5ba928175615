/**
 * The mirror worker (docs/compatibility.md#repository-mirrors): a loop in every server process
 * that syncs the mirrors that are due — a pull mirror every `intervalMinutes`, a push mirror after
 * its project's refs changed — at most {@link MAX_RUNNING} at once per process. A mirror is leased
 * while it syncs (a claim as the outbox's: `FOR UPDATE SKIP LOCKED` on PostgreSQL, a conditional
 * update on SQLite), the lease renewed every minute and lasting three, so two processes sharing
 * PostgreSQL never sync the same mirror at once and a crashed process's mirror is taken over within
 * minutes. A failed attempt waits `GITLOOM_MIRROR_BACKOFF_MS`, doubled with each further failure up
 * to an hour (or the pull mirror's interval when longer): a remote that is down is not stormed.
 * Every attempt's outcome is recorded on the mirror (last attempt, last success, last error).
 */
import { randomUUID } from 'node:crypto';
import type { ExpressionBuilder } from 'kysely';
import { recordWhenAvailable } from '../../db/availability.js';
import { dialectOf } from '../../db/dialect.js';
import { announce } from '../../db/notifications.js';
import type { Database, RepositoryMirrorRow } from '../../db/schema.js';
import { createContext, systemActor, type Context, type Services } from '../context.js';
import { PollingLoop } from '../polling-loop.js';
import { syncPullMirror } from './pull-sync.js';
import { pushToMirror } from './push-sync.js';
import { failureText, mirrorConnection } from './remote-connection.js';

/** The topic waking the other processes' mirror workers (src/db/notifications.ts): a mirror made due. */
export const MIRRORS_TOPIC = 'mirrors';

/** Mirrors one process syncs at once. */
export const MAX_RUNNING = 4;
/** How long a lease holds without renewal, ms. */
const LEASE_MS = 3 * 60_000;
/** How often a running sync renews its lease, ms. */
const RENEW_MS = 60_000;
/** The longest backoff of a failing mirror (unless its interval is longer), ms. */
const MAX_BACKOFF_MS = 3_600_000;

/** Options of {@link MirrorWorker}. */
export interface MirrorWorkerOptions {
  /** Milliseconds between polls for due mirrors (default 500). */
  tickMs?: number;
  /** Logs faults of the loop. */
  onError?: (error: unknown) => void;
  /** Reports a failed attempt with its shown text (credentials taken out). */
  onFailure?: (mirror: Pick<RepositoryMirrorRow, 'id' | 'projectId' | 'direction'>, text: string) => void;
}

/**
 * Delay before the next attempt after `failures` failed ones in a row, ms: `baseMs`, doubled with
 * each further failure, at most an hour or the pull mirror's interval when that is longer.
 */
export function backoffMs(baseMs: number, failures: number, intervalMinutes: number | null): number {
  return Math.min(baseMs * 2 ** Math.max(0, failures - 1), Math.max(MAX_BACKOFF_MS, (intervalMinutes ?? 0) * 60_000));
}

/** One process's mirror worker: `start()` after the database is migrated, `stop()` on close. */
export class MirrorWorker {
  readonly owner = randomUUID();
  private readonly ctx: Context;
  private readonly loop: PollingLoop;
  private readonly running = new Set<Promise<void>>();
  private readonly abort = new AbortController();

  constructor(
    private readonly services: Services,
    private readonly options: MirrorWorkerOptions = {},
  ) {
    this.ctx = createContext(services, systemActor);
    this.loop = new PollingLoop(() => this.tick(), options.tickMs ?? 500, options.onError).wakeOn(services.db, MIRRORS_TOPIC);
    // a mirror made due by "sync now", or push mirrors by a ref change this process journaled
    services.events.on('mirrorsDue', () => this.loop.wake());
    services.events.on('refsUpdated', () => this.loop.wake());
  }

  /** Starts the loop; when one process owns the database (SQLite) the leases of a previous (crashed) one are released first. */
  async start(): Promise<void> {
    if (dialectOf(this.services.db).ownedByOneProcess) {
      await this.services.db.updateTable('repositoryMirrors').set({ leaseOwner: null, leaseExpires: null }).where('leaseOwner', 'is not', null).execute();
    }
    this.loop.start();
  }

  /** Stops the loop, stops the git commands of the syncs in progress and waits for them (their leases released, no attempt counted). */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop.stop();
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  private async tick(): Promise<void> {
    const free = MAX_RUNNING - this.running.size;
    if (free <= 0) return;
    for (const row of await this.claim(free)) {
      const run: Promise<void> = this.run(row)
        .catch((error: unknown) => this.options.onError?.(error))
        .finally(() => {
          this.running.delete(run);
          this.loop.wake();
        });
      this.running.add(run);
    }
  }

  /** Leases up to `limit` enabled mirrors that are due and that no live process holds. */
  private async claim(limit: number): Promise<RepositoryMirrorRow[]> {
    const { db } = this.services;
    const now = Date.now();
    const claimable = (eb: ExpressionBuilder<Database, 'repositoryMirrors'>) =>
      eb.and([
        eb('enabled', '=', 1),
        eb('nextAttemptDate', 'is not', null),
        eb('nextAttemptDate', '<=', now),
        eb.or([eb('leaseExpires', 'is', null), eb('leaseExpires', '<', now)]),
      ]);
    return dialectOf(db).claim(db.selectFrom('repositoryMirrors').select('id').where(claimable).orderBy('nextAttemptDate').orderBy('id').limit(limit), (ids) =>
      db
        .updateTable('repositoryMirrors')
        .set({ leaseOwner: this.owner, leaseExpires: now + LEASE_MS })
        .where('id', 'in', ids)
        .where(claimable)
        .returningAll()
        .execute(),
    );
  }

  /** Syncs one leased mirror and records the outcome (renewing the lease meanwhile). */
  private async run(row: RepositoryMirrorRow): Promise<void> {
    const started = Date.now();
    const renewal = setInterval(() => {
      this.lease(row.id, Date.now() + LEASE_MS).catch((error: unknown) => this.options.onError?.(error));
    }, RENEW_MS);
    let failure: string | null;
    try {
      failure = await this.attempt(row);
    } finally {
      clearInterval(renewal);
    }
    if (failure !== null && this.abort.signal.aborted) {
      await this.lease(row.id, null);
      return;
    }
    await recordWhenAvailable(
      () => this.record(row, started, failure),
      () => this.loop.stopped,
    );
  }

  /** One attempt: null when it succeeded, else the text shown of its failure. */
  private async attempt(row: RepositoryMirrorRow): Promise<string | null> {
    let secrets: string[] = [];
    try {
      const remote = await mirrorConnection(this.ctx, row);
      secrets = remote.secrets;
      if (row.direction === 'PULL') await syncPullMirror(this.ctx, row, remote.connection, this.abort.signal);
      else await pushToMirror(this.ctx, row, remote.connection, this.abort.signal);
      return null;
    } catch (error) {
      const text = failureText(error, secrets);
      if (!this.abort.signal.aborted) this.options.onFailure?.(row, text);
      return text;
    }
  }

  /** Renews this process's lease of a mirror until `expires`, or releases it (null). */
  private async lease(id: number, expires: number | null): Promise<void> {
    await this.services.db
      .updateTable('repositoryMirrors')
      .set(expires === null ? { leaseOwner: null, leaseExpires: null } : { leaseExpires: expires })
      .where('id', '=', id)
      .where('leaseOwner', '=', this.owner)
      .execute();
  }

  /**
   * Records an attempt and releases the lease: a success clears the error and the failures and
   * sets when the mirror is due next (a pull mirror after its interval; a push mirror at once when
   * its project's refs changed since the push began, else not until they change); a failure keeps
   * what was due and waits for {@link backoffMs}. Nothing when the mirror was deleted meanwhile.
   */
  private async record(row: RepositoryMirrorRow, started: number, failure: string | null): Promise<void> {
    await this.services.db.transaction().execute(async (tx) => {
      const mine = tx.selectFrom('repositoryMirrors').selectAll().where('id', '=', row.id).where('leaseOwner', '=', this.owner);
      await dialectOf(tx).lockRows(mine);
      const current = await mine.executeTakeFirst();
      if (!current) return;
      const now = Date.now();
      const failures = failure === null ? 0 : current.failureCount + 1;
      let due: { nextAttemptDate: number | null; pendingDate: number | null };
      if (failure !== null)
        due = { nextAttemptDate: now + backoffMs(this.services.config.mirrorBackoffMs, failures, current.intervalMinutes), pendingDate: current.pendingDate };
      else if (current.direction === 'PULL') due = { nextAttemptDate: now + (current.intervalMinutes ?? 60) * 60_000, pendingDate: null };
      else if (current.pendingDate !== null && current.pendingDate >= started) due = { nextAttemptDate: now, pendingDate: current.pendingDate };
      else due = { nextAttemptDate: null, pendingDate: null };
      await tx
        .updateTable('repositoryMirrors')
        .set({
          ...due,
          lastAttemptDate: started,
          ...(failure === null && { lastSuccessDate: now }),
          lastError: failure,
          failureCount: failures,
          attemptCount: current.attemptCount + 1,
          leaseOwner: null,
          leaseExpires: null,
        })
        .where('id', '=', row.id)
        .execute();
    });
  }
}

/**
 * The `refsJournalEntry` reaction: a project's refs moved, so each of its push mirrors has
 * something to push — due at once, unless it is failing, when its backoff keeps its time (a change
 * does not storm a remote that is down). Safe to run again for the same entry.
 */
export async function markPushMirrorsPending(ctx: Pick<Context, 'db' | 'now'>, projectId: number): Promise<void> {
  const now = ctx.now();
  const mirrors = ctx.db.updateTable('repositoryMirrors').where('projectId', '=', projectId).where('direction', '=', 'PUSH');
  const due = await mirrors.set({ pendingDate: now, nextAttemptDate: now }).where('failureCount', '=', 0).executeTakeFirst();
  await mirrors.set({ pendingDate: now }).where('failureCount', '>', 0).execute();
  if (Number(due.numUpdatedRows) > 0) await announce(ctx.db, MIRRORS_TOPIC);
}

/**
 * Mirror `mirrorId` was made due now (created, changed, "sync now"): the mirror workers of this
 * process are woken at once, those of the other processes by the announcement.
 */
export async function mirrorDue(ctx: Pick<Context, 'db' | 'events'>, mirrorId: number): Promise<void> {
  ctx.events.emit('mirrorsDue', { mirrorId });
  await announce(ctx.db, MIRRORS_TOPIC);
}
