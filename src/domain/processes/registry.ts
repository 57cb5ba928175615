/**
 * The registry of live server processes (docs/architecture.md#start-up-recovery), table
 * `server_processes`: each server process registers at start — its id, host name, kernel, pid
 * and start time (src/process-identity.ts) — renews a heartbeat while it runs and removes its
 * row when it stops cleanly. A process is gone ({@link isGone}) when its heartbeat is older than
 * a bound, or, on the same kernel, when its pid no longer runs or runs with another start time.
 * Recovery asks {@link ownersNow} whose work a leftover is; the {@link ProcessRegistry}'s loop
 * claims the rows of gone processes (one process each) and has their leftovers repaired.
 */
import { randomUUID } from 'node:crypto';
import { availabilityOf } from '../../db/database.js';
import type { Db } from '../../db/database.js';
import { dialectOf } from '../../db/dialect.js';
import type { ServerProcessRow } from '../../db/schema.js';
import { isOfThisKernel, kernelHash, runsHere, thisProcess, type OwnerTag } from '../../process-identity.js';
import type { Services } from '../context.js';
import { PollingLoop } from '../polling-loop.js';

/** What {@link isGone} reads of a registered process. */
export type RegisteredProcess = Pick<ServerProcessRow, 'kernel' | 'pid' | 'startTicks' | 'heartbeat'>;

/** Default milliseconds between heartbeats. */
export const HEARTBEAT_MS = 5000;
/** Least milliseconds without a heartbeat after which a process is gone (three heartbeats when they are rarer). */
export const GONE_AFTER_MS = 15_000;
/** Default milliseconds between repairs when no process was found gone (for what live processes' killed children leave). */
export const SWEEP_MS = 10 * 60_000;

/**
 * The liveness rule: `row` is gone when its heartbeat is more than `goneAfterMs` older than
 * `now` (unless `heartbeatsCount` is false: just after a database outage nobody could renew
 * one), or when it ran on `kernel` (this process's, by default) and its pid no longer runs with
 * its start time there (`runs`, by default the kernel's answer).
 */
export function isGone(
  row: RegisteredProcess,
  now: number,
  goneAfterMs: number,
  {
    kernel = thisProcess().kernel,
    runs = runsHere,
    heartbeatsCount = true,
  }: { kernel?: string; runs?: (pid: number, startTicks: number) => boolean; heartbeatsCount?: boolean } = {},
): boolean {
  if (heartbeatsCount && now - row.heartbeat > goneAfterMs) return true;
  return row.kernel === kernel && !runs(row.pid, row.startTicks);
}

/** Whose work is alive, as the registry and this kernel say at one moment (see {@link ownersNow}). */
export interface Owners {
  /**
   * Whether the process a file name carries (src/process-identity.ts) runs: on this kernel, as
   * the kernel says (a running process keeps its files, registered or not: a command of the CLI
   * too); elsewhere, when a registered process that is not gone has that pid and start time.
   */
  lives(owner: OwnerTag): boolean;
  /** Whether registered process `id` is not gone; null when no process has that id (unregistered, or an owner id of another kind). */
  registered(id: string): boolean | null;
}

/**
 * The {@link Owners} of this moment: reads the registry once. `goneAfterMs` is the heartbeat
 * bound ({@link GONE_AFTER_MS} by default); within it after a database outage, heartbeats do
 * not count.
 */
export async function ownersNow(db: Db, now: number, goneAfterMs = GONE_AFTER_MS): Promise<Owners> {
  const rows = await db.selectFrom('serverProcesses').selectAll().execute();
  const options = { heartbeatsCount: heartbeatsCount(db, goneAfterMs) };
  const live = rows.filter((row) => !isGone(row, now, goneAfterMs, options));
  return {
    lives(owner) {
      if (isOfThisKernel(owner)) return runsHere(owner.pid, owner.startTicks);
      return live.some((row) => row.pid === owner.pid && row.startTicks === owner.startTicks && kernelHash(row.kernel) === owner.kernelHash);
    },
    registered(id) {
      if (!rows.some((row) => row.id === id)) return null;
      return live.some((row) => row.id === id);
    },
  };
}

/** Whether heartbeats tell liveness now: not within `goneAfterMs` after a database outage, when nobody could renew one. */
function heartbeatsCount(db: Db, goneAfterMs: number): boolean {
  const ended = availabilityOf(db).lastOutageEnded;
  return ended === null || Date.now() - ended >= goneAfterMs;
}

/** Options of {@link ProcessRegistry}. */
export interface RegistryOptions {
  /** Milliseconds between heartbeats ({@link HEARTBEAT_MS}). */
  heartbeatMs?: number;
  /** The heartbeat bound (default: three heartbeats, at least {@link GONE_AFTER_MS}). */
  goneAfterMs?: number;
  /** Milliseconds between repairs when nobody was found gone ({@link SWEEP_MS}). */
  sweepMs?: number;
  /** Logs faults of the loop. */
  onError?: (error: unknown) => void;
  /** Logs what the registry noticed (a process found gone, this one taken for gone). */
  log?: (message: string) => void;
}

/**
 * This server process in the registry. `register()` at start, before it serves anything (on
 * SQLite, whose database one process owns, the rows of earlier runs go); `start()` runs the
 * heartbeat loop on PostgreSQL (on SQLite there is no other process to read it), which also
 * finds gone processes, claims their rows and repairs their leftovers; `stop()` on a clean stop
 * removes the row.
 */
export class ProcessRegistry {
  /** This process's id in the registry. */
  readonly id = randomUUID();
  readonly goneAfterMs: number;
  private readonly loop: PollingLoop;
  private readonly sweepMs: number;
  private nextSweep = 0;
  private repair: ((gone: ServerProcessRow[]) => Promise<void>) | null = null;

  constructor(
    private readonly services: Pick<Services, 'db'>,
    private readonly options: RegistryOptions = {},
  ) {
    const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
    this.goneAfterMs = options.goneAfterMs ?? Math.max(GONE_AFTER_MS, 3 * heartbeatMs);
    this.sweepMs = options.sweepMs ?? SWEEP_MS;
    this.loop = new PollingLoop(() => this.tick(), heartbeatMs, options.onError);
  }

  /** Registers this process (its row, with a heartbeat now). */
  async register(): Promise<void> {
    const { db } = this.services;
    const me = thisProcess();
    const now = Date.now();
    const row = { id: this.id, host: me.host, kernel: me.kernel, pid: me.pid, startTicks: me.startTicks, startedAt: now, heartbeat: now };
    await db.transaction().execute(async (trx) => {
      if (dialectOf(db).ownedByOneProcess) await trx.deleteFrom('serverProcesses').execute();
      await trx.insertInto('serverProcesses').values(row).execute();
    });
  }

  /**
   * Starts the heartbeat loop. `repair` removes the leftovers of gone processes (PostgreSQL
   * only): called with the rows this process claimed (removed from the registry) once it found
   * them gone, and every `sweepMs` with none — the first time a sweep after now (start-up
   * recovery has just run).
   */
  start(repair?: (gone: ServerProcessRow[]) => Promise<void>): void {
    // one process owns an SQLite database: nobody reads its heartbeat, and a write waiting on a
    // lock would stall the process (the SQLite driver is synchronous)
    if (dialectOf(this.services.db).ownedByOneProcess) return;
    this.repair = repair ?? null;
    this.nextSweep = Date.now() + this.sweepMs;
    this.loop.start();
  }

  /** Stops the loop and removes this process's row. */
  async stop(): Promise<void> {
    await this.loop.stop();
    await this.services.db.deleteFrom('serverProcesses').where('id', '=', this.id).execute();
  }

  /** Runs a tick now (tests, and a wake after a change). */
  wake(): void {
    this.loop.wake();
  }

  private async tick(): Promise<void> {
    const { db } = this.services;
    const now = Date.now();
    const renewed = await db.updateTable('serverProcesses').set({ heartbeat: now }).where('id', '=', this.id).executeTakeFirst();
    if (Number(renewed.numUpdatedRows) === 0) {
      // another process took this one for gone (a pause longer than the bound) and removed its row
      this.options.log?.('Process registry: this process was taken for gone by another and registers again; its files of meanwhile may have been removed');
      await this.register();
    }
    if (dialectOf(db).ownedByOneProcess || !this.repair) return;
    const rows = await db.selectFrom('serverProcesses').selectAll().where('id', '<>', this.id).execute();
    const options = { heartbeatsCount: heartbeatsCount(db, this.goneAfterMs) };
    const claimed: ServerProcessRow[] = [];
    for (const row of rows) {
      if (!isGone(row, now, this.goneAfterMs, options)) continue;
      // one process claims each gone row: the one whose delete finds it unchanged
      const deleted = await db.deleteFrom('serverProcesses').where('id', '=', row.id).where('heartbeat', '=', row.heartbeat).executeTakeFirst();
      if (Number(deleted.numDeletedRows) === 0) continue;
      claimed.push(row);
      this.options.log?.(`Process registry: process ${row.pid} on ${row.host} (${row.id}) is gone; removing what it left`);
    }
    if (claimed.length === 0 && now < this.nextSweep) return;
    this.nextSweep = now + this.sweepMs;
    await this.repair(claimed);
  }
}
