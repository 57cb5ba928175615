/**
 * The repository maintenance worker (docs/architecture.md#repository-maintenance): a loop in
 * every server process that maintains the repositories that are due (src/git/maintenance.ts), one
 * at a time per process. A repository turns due `GITLOOM_MAINTENANCE_DELAY_MS` after the ref
 * journal records a push to it ({@link markMaintenanceDue}, from src/domain/event-handlers.ts) —
 * a burst of pushes makes one run — and again a day after each run. Repositories are leased while
 * maintained, as the code index leases projects (a claim: `FOR UPDATE SKIP LOCKED` on
 * PostgreSQL, a conditional update on SQLite; renewed every minute, lasting three), so processes
 * sharing a data dir never maintain one repository at once, and a killed run's repository is
 * taken over (its leftovers removed) once the lease expires. A failed run is recorded and retried
 * after {@link RETRY_MS}.
 */
import { randomUUID } from 'node:crypto';
import type { ExpressionBuilder, Kysely } from 'kysely';
import { recordWhenAvailable } from '../../db/availability.js';
import type { Db } from '../../db/database.js';
import { dialectOf } from '../../db/dialect.js';
import { announce } from '../../db/notifications.js';
import type { Database, RepositoryMaintenanceRow } from '../../db/schema.js';
import { maintainRepository } from '../../git/maintenance.js';
import { repositoryPath, type Services } from '../context.js';
import { PollingLoop } from '../polling-loop.js';

/** How long a lease holds without renewal, ms. */
const LEASE_MS = 3 * 60_000;
/** How often a running maintenance renews its lease, ms. */
const RENEW_MS = 60_000;
/** Delay before a failed repository is tried again, ms. */
export const RETRY_MS = 10 * 60_000;
/** A maintained repository is due again after a day, pushed to or not (a no-op run costs little), ms. */
export const MAINTENANCE_INTERVAL_MS = 24 * 3_600_000;

/** The topic waking the other processes' maintenance workers (src/db/notifications.ts). */
export const MAINTENANCE_TOPIC = 'repository-maintenance';

/**
 * Makes a project's repository due `delayMs` from `now` (epoch ms), unless it is due sooner
 * already (then nothing changes): the `refsJournalEntry` reaction. Idempotent; the other
 * processes' workers are told (in the transaction when `db` is one).
 */
export async function markMaintenanceDue(db: Db | Kysely<Database>, projectId: number, now: number, delayMs: number): Promise<void> {
  const due = now + delayMs;
  await db
    .insertInto('repositoryMaintenance')
    .values({ projectId, dueDate: due })
    .onConflict((oc) =>
      oc.column('projectId').doUpdateSet((eb) => ({
        dueDate: eb
          .case()
          .when('repositoryMaintenance.dueDate', 'is', null)
          .then(due)
          .when('repositoryMaintenance.dueDate', '>', due)
          .then(due)
          .else(eb.ref('repositoryMaintenance.dueDate'))
          .end(),
      })),
    )
    .execute();
  await announce(db, MAINTENANCE_TOPIC);
}

/** Options of {@link MaintenanceWorker}. */
export interface MaintenanceWorkerOptions {
  /** Milliseconds between polls for due repositories (default 5000). */
  tickMs?: number;
  /** Logs faults of the loop and failed runs. */
  onError?: (error: unknown) => void;
}

/** One process's repository maintenance worker: `start()` after the database is migrated, `stop()` on close. */
export class MaintenanceWorker {
  readonly owner = randomUUID();
  private readonly loop: PollingLoop;
  private readonly abort = new AbortController();

  constructor(
    private readonly services: Services,
    private readonly options: MaintenanceWorkerOptions = {},
  ) {
    this.loop = new PollingLoop(() => this.tick(), options.tickMs ?? 5000, options.onError).wakeOn(services.db, MAINTENANCE_TOPIC);
  }

  /** Starts the loop; when one process owns the database (SQLite) the leases of a previous (killed) one are released first. */
  async start(): Promise<void> {
    if (dialectOf(this.services.db).ownedByOneProcess) {
      await this.services.db.updateTable('repositoryMaintenance').set({ leaseOwner: null, leaseExpires: null }).where('leaseOwner', 'is not', null).execute();
    }
    this.loop.start();
  }

  /** Stops the loop and the git commands of the run in progress, waiting for it. */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop.stop();
  }

  /** Maintains the due repositories one after the other until none is left or the loop stops. */
  private async tick(): Promise<void> {
    while (!this.loop.stopped) {
      const row = await this.claim();
      if (!row) return;
      await this.run(row);
    }
  }

  /** Leases the repository due the longest that no live process holds, or null. */
  private async claim(): Promise<RepositoryMaintenanceRow | null> {
    const { db } = this.services;
    const now = Date.now();
    const claimable = (eb: ExpressionBuilder<Database, 'repositoryMaintenance'>) =>
      eb.and([eb('dueDate', 'is not', null), eb('dueDate', '<=', now), eb.or([eb('leaseExpires', 'is', null), eb('leaseExpires', '<', now)])]);
    const rows = await dialectOf(db).claim(
      db.selectFrom('repositoryMaintenance').select('projectId as id').where(claimable).orderBy('dueDate').limit(1),
      (ids) =>
        db
          .updateTable('repositoryMaintenance')
          .set({ leaseOwner: this.owner, leaseExpires: now + LEASE_MS })
          .where('projectId', 'in', ids)
          .where(claimable)
          .returningAll()
          .execute(),
    );
    return rows[0] ?? null;
  }

  /** Maintains one leased repository and records the outcome, releasing the lease. */
  private async run(row: RepositoryMaintenanceRow): Promise<void> {
    const started = Date.now();
    const renewal = setInterval(() => {
      this.services.db
        .updateTable('repositoryMaintenance')
        .set({ leaseExpires: Date.now() + LEASE_MS })
        .where('projectId', '=', row.projectId)
        .where('leaseOwner', '=', this.owner)
        .execute()
        .catch((error: unknown) => this.options.onError?.(error));
    }, RENEW_MS);
    let error: string | null = null;
    try {
      await maintainRepository(repositoryPath(this.services.config, row.projectId), this.abort.signal);
    } catch (failure) {
      if (!this.abort.signal.aborted) this.options.onError?.(failure);
      error = failure instanceof Error ? failure.message : String(failure);
    } finally {
      clearInterval(renewal);
    }
    await recordWhenAvailable(
      () => this.record(row.projectId, started, error),
      () => this.loop.stopped,
    );
  }

  /**
   * Records a run and releases the lease: a success makes the repository due again after
   * {@link MAINTENANCE_INTERVAL_MS}, or when it was made due since the run began, then; a failure
   * makes it due after {@link RETRY_MS}; a run stopped by `stop()` leaves it due as it was.
   */
  private async record(projectId: number, started: number, error: string | null): Promise<void> {
    const now = Date.now();
    const release = { leaseOwner: null, leaseExpires: null };
    const mine = (eb: ExpressionBuilder<Database, 'repositoryMaintenance'>) => eb.and([eb('projectId', '=', projectId), eb('leaseOwner', '=', this.owner)]);
    const update = this.services.db.updateTable('repositoryMaintenance').where(mine);
    if (error !== null && this.abort.signal.aborted) await update.set(release).execute();
    else if (error !== null) await update.set({ ...release, lastError: error.slice(0, 2000), dueDate: now + RETRY_MS }).execute();
    else {
      await update
        .set((eb) => ({
          ...release,
          lastRunDate: now,
          lastError: null,
          // made due by a push since the run began: keep that; else a day from now
          dueDate: eb
            .case()
            .when('dueDate', '>', started)
            .then(eb.ref('dueDate'))
            .else(now + MAINTENANCE_INTERVAL_MS)
            .end(),
        }))
        .execute();
    }
  }
}
