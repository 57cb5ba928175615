/**
 * The repository maintenance worker (docs/architecture.md#repository-maintenance): a loop in
 * every server process that maintains the repositories that are due (src/git/maintenance.ts), one
 * at a time per process. A repository turns due `GITLOOM_MAINTENANCE_DELAY_MS` after the ref
 * journal records a push to it ({@link markMaintenanceDue}, from src/domain/event-handlers.ts) —
 * a burst of pushes makes one run — and again a day after each run. Repositories are leased while
 * maintained (src/domain/project-leases.ts), so processes sharing a data dir never maintain one
 * repository at once, and a killed run's repository is taken over (its leftovers removed) once
 * the lease expires. A failed run is recorded and retried
 * after {@link RETRY_MS}.
 */
import type { Kysely } from 'kysely';
import { recordWhenAvailable } from '../../db/availability.js';
import type { Db } from '../../db/database.js';
import { announce } from '../../db/notifications.js';
import type { Database, RepositoryMaintenanceRow } from '../../db/schema.js';
import { maintainRepository } from '../../git/maintenance.js';
import { repositoryPath, type Services } from '../context.js';
import { PollingLoop } from '../polling-loop.js';
import { ProjectLeases, RELEASED } from '../project-leases.js';

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
  private readonly leases: ProjectLeases<'repositoryMaintenance'>;
  private readonly loop: PollingLoop;
  private readonly abort = new AbortController();

  constructor(
    private readonly services: Services,
    private readonly options: MaintenanceWorkerOptions = {},
  ) {
    this.leases = new ProjectLeases(services.db, 'repositoryMaintenance');
    this.loop = new PollingLoop(() => this.tick(), options.tickMs ?? 5000, options.onError).wakeOn(services.db, MAINTENANCE_TOPIC);
  }

  /** Starts the loop; when one process owns the database (SQLite) the leases of a previous (killed) one are released first. */
  async start(): Promise<void> {
    await this.leases.releaseCrashed();
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
      const row = await this.leases.claim();
      if (!row) return;
      await this.run(row);
    }
  }

  /** Maintains one leased repository and records the outcome, releasing the lease. */
  private async run(row: RepositoryMaintenanceRow): Promise<void> {
    const started = Date.now();
    let error: string | null = null;
    try {
      const repo = repositoryPath(this.services.config, row.projectId);
      await this.leases.holding(row.projectId, () => maintainRepository(repo, this.abort.signal), this.options.onError);
    } catch (failure) {
      if (!this.abort.signal.aborted) this.options.onError?.(failure);
      error = failure instanceof Error ? failure.message : String(failure);
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
    const release = RELEASED;
    const update = this.services.db.updateTable('repositoryMaintenance').where(this.leases.mine(projectId));
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
