/**
 * The code index worker (docs/compatibility.md#code-search): a loop in every server process that
 * brings stale project indexes up to their default branches, one project at a time. A project
 * turns stale when the ref journal records a change of it ({@link markCodeIndexStale}, called
 * from src/domain/event-handlers.ts) or an administrator rebuilds the index. Projects are leased
 * while indexed (src/domain/project-leases.ts), so processes sharing PostgreSQL never index one
 * project at once and a crashed process's work is taken over.
 * A failed run is recorded and retried after {@link RETRY_MS}.
 */
import type { Kysely } from 'kysely';
import { recordWhenAvailable } from '../../db/availability.js';
import type { Db } from '../../db/database.js';
import { announce } from '../../db/notifications.js';
import type { CodeSearchProjectRow, Database } from '../../db/schema.js';
import type { Services } from '../context.js';
import { PollingLoop } from '../polling-loop.js';
import { ProjectLeases, RELEASED } from '../project-leases.js';
import { indexProject } from './indexer.js';

/** Delay before a failed project is tried again, ms. */
export const RETRY_MS = 60_000;

/** The topic waking the other processes' code index workers (src/db/notifications.ts): a project's index turned stale. */
export const CODE_INDEX_TOPIC = 'code-index';

/**
 * Marks a project's index stale as of `now` (epoch ms): the worker re-indexes it (the workers of
 * the other processes are told, in the transaction when `db` is one). Idempotent.
 */
export async function markCodeIndexStale(db: Db | Kysely<Database>, projectId: number, now: number): Promise<void> {
  await db
    .insertInto('codeSearchProjects')
    .values({ projectId, staleDate: now })
    .onConflict((oc) => oc.column('projectId').doUpdateSet({ staleDate: now }))
    .execute();
  await announce(db, CODE_INDEX_TOPIC);
}

/** Options of {@link CodeIndexWorker}. */
export interface CodeIndexWorkerOptions {
  /** Milliseconds between polls for stale projects (default 2000). */
  tickMs?: number;
  /** Logs faults of the loop and failed runs. */
  onError?: (error: unknown) => void;
}

/** One process's code index worker: `start()` after the database is migrated, `stop()` on close. */
export class CodeIndexWorker {
  private readonly leases: ProjectLeases<'codeSearchProjects'>;
  private readonly loop: PollingLoop;

  constructor(
    private readonly services: Services,
    private readonly options: CodeIndexWorkerOptions = {},
  ) {
    this.leases = new ProjectLeases(services.db, 'codeSearchProjects');
    this.loop = new PollingLoop(() => this.tick(), options.tickMs ?? 2000, options.onError).wakeOn(services.db, CODE_INDEX_TOPIC);
    // registered after the journal's reactions (src/domain/event-handlers.ts), which mark the project stale first
    services.events.on('refsJournalEntry', () => this.loop.wake());
  }

  /** Starts the loop; when one process owns the database (SQLite) the leases of a previous (crashed) one are released first. */
  async start(): Promise<void> {
    await this.leases.releaseCrashed();
    this.loop.start();
  }

  /** Stops the loop, waiting for the project being indexed. */
  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /** Indexes the stale projects one after the other until none is left or the loop stops. */
  private async tick(): Promise<void> {
    while (!this.loop.stopped) {
      const row = await this.leases.claim();
      if (!row) return;
      await this.run(row);
    }
  }

  /** Indexes one leased project and records the outcome, releasing the lease. */
  private async run(row: CodeSearchProjectRow): Promise<void> {
    const started = Date.now();
    let outcome: { commit: string | null } | { error: string };
    try {
      outcome = await this.leases.holding(row.projectId, () => indexProject(this.services, row.projectId, row.indexedCommit), this.options.onError);
    } catch (error) {
      this.options.onError?.(error);
      outcome = { error: error instanceof Error ? error.message : String(error) };
    }
    await recordWhenAvailable(
      () => this.record(row.projectId, started, outcome),
      () => this.loop.stopped,
    );
  }

  /**
   * Records a run and releases the lease: a success stores the commit and leaves the project
   * stale only when it was marked again since the run began; a failure keeps the commit and
   * makes the project due again after {@link RETRY_MS}.
   */
  private async record(projectId: number, started: number, outcome: { commit: string | null } | { error: string }): Promise<void> {
    const mine = this.leases.mine(projectId);
    const release = RELEASED;
    const { db } = this.services;
    if ('error' in outcome) {
      await db
        .updateTable('codeSearchProjects')
        .set({ ...release, lastError: outcome.error.slice(0, 2000), staleDate: Date.now() + RETRY_MS })
        .where(mine)
        .execute();
      return;
    }
    await db
      .updateTable('codeSearchProjects')
      .set((eb) => ({
        ...release,
        indexedCommit: outcome.commit,
        indexDate: Date.now(),
        lastError: null,
        staleDate: eb.case().when('staleDate', '>', started).then(eb.ref('staleDate')).else(null).end(),
      }))
      .where(mine)
      .execute();
  }
}
