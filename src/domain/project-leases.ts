/**
 * The lease of the project queues that every server process works through one project at a time
 * (the code index, repository maintenance; docs/architecture.md#the-code-index): a row per
 * project with a due time and a lease (`lease_owner`, `lease_expires`). A worker claims the
 * project due the longest that no live process holds — `FOR UPDATE SKIP LOCKED` on PostgreSQL, a
 * conditional update on SQLite — renews the lease every minute while it works and releases it
 * when it records the outcome; a lease lasts three minutes without renewal, so a crashed process's
 * project is taken over. Processes sharing PostgreSQL never work on one project at once.
 */
import { randomUUID } from 'node:crypto';
import type { Expression, ExpressionBuilder, Kysely, Selectable, SqlBool } from 'kysely';
import { dialectOf } from '../db/dialect.js';
import type { Database } from '../db/schema.js';

/** How long a lease holds without renewal, ms. */
const LEASE_MS = 3 * 60_000;
/** How often a worker renews the lease of the project it works on, ms. */
const RENEW_MS = 60_000;

/** The queues: each table's due column. */
const DUE = { codeSearchProjects: 'staleDate', repositoryMaintenance: 'dueDate' } as const;
type QueueTable = keyof typeof DUE;

/** One process's hold on a project queue: claim, renew while working, and tell its rows. */
export class ProjectLeases<T extends QueueTable> {
  /** This process's lease owner id in the table. */
  readonly owner = randomUUID();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly table: T,
  ) {}

  /** The database as a queue table's columns are reached: the same in every queue. */
  private get queue(): Kysely<any> {
    return this.db as Kysely<any>;
  }

  private get name(): string {
    return this.table;
  }

  /** When one process owns the database (SQLite), releases every lease: a previous process's, which crashed. */
  async releaseCrashed(): Promise<void> {
    if (!dialectOf(this.db).ownedByOneProcess) return;
    await this.queue.updateTable(this.name).set({ leaseOwner: null, leaseExpires: null }).where('leaseOwner', 'is not', null).execute();
  }

  /** Leases the project due the longest (its due time passed) that no live process holds; null when none. */
  async claim(): Promise<Selectable<Database[T]> | null> {
    const due: string = DUE[this.table];
    const now = Date.now();
    const claimable = (eb: ExpressionBuilder<any, any>) =>
      eb.and([eb(due, 'is not', null), eb(due, '<=', now), eb.or([eb('leaseExpires', 'is', null), eb('leaseExpires', '<', now)])]);
    const rows = await dialectOf(this.db).claim(this.queue.selectFrom(this.name).select('projectId as id').where(claimable).orderBy(due).limit(1), (ids) =>
      this.queue
        .updateTable(this.name)
        .set({ leaseOwner: this.owner, leaseExpires: now + LEASE_MS })
        .where('projectId', 'in', ids)
        .where(claimable)
        .returningAll()
        .execute(),
    );
    return (rows[0] as Selectable<Database[T]> | undefined) ?? null;
  }

  /**
   * Runs `work` on a leased project, renewing the lease every minute until it settles; a failed
   * renewal goes to `onError` (the lease may then expire and the project be taken over).
   */
  async holding<R>(projectId: number, work: () => Promise<R>, onError?: (error: unknown) => void): Promise<R> {
    const renewal = setInterval(() => {
      this.queue
        .updateTable(this.name)
        .set({ leaseExpires: Date.now() + LEASE_MS })
        .where('projectId', '=', projectId)
        .where('leaseOwner', '=', this.owner)
        .execute()
        .catch((error: unknown) => onError?.(error));
    }, RENEW_MS);
    try {
      return await work();
    } finally {
      clearInterval(renewal);
    }
  }

  /** The condition "the row of `projectId`, leased by this process", for the update recording an outcome. */
  mine(projectId: number): (eb: ExpressionBuilder<any, any>) => Expression<SqlBool> {
    return (eb) => eb.and([eb('projectId', '=', projectId), eb('leaseOwner', '=', this.owner)]);
  }
}

/** The columns that release a lease, for the update recording an outcome. */
export const RELEASED = { leaseOwner: null, leaseExpires: null } as const;
