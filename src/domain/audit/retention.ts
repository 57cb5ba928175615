/**
 * The retention of the audit log (docs/audit-log.md#retention): a loop of each server process
 * deletes the rows older than the retention setting, at start and every hour after.
 */
import type { Services } from '../context.js';
import { PollingLoop } from '../polling-loop.js';
import { pruneAuditEvents } from './audit-queries.js';

/** Milliseconds between two prunings. */
export const RETENTION_EVERY_MS = 60 * 60_000;
const DAY_MS = 24 * 60 * 60_000;

/** Options of {@link AuditRetention}. */
export interface AuditRetentionOptions {
  /** The retention in days as the settings hold it: rows older go; 0 or null keeps every row. */
  retentionDays(): Promise<number | null>;
  /** Milliseconds between prunings (default {@link RETENTION_EVERY_MS}). */
  intervalMs?: number;
  onError?: (error: unknown) => void;
}

/**
 * One process's pruning loop: `start()` prunes at once and then every `intervalMs`; `stop()`
 * waits for a pruning in progress. Several processes pruning at once delete the same rows,
 * which is harmless.
 */
export class AuditRetention {
  private readonly loop: PollingLoop;

  constructor(
    private readonly services: Services,
    private readonly options: AuditRetentionOptions,
  ) {
    this.loop = new PollingLoop(() => this.tick(), options.intervalMs ?? RETENTION_EVERY_MS, options.onError);
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  private async tick(): Promise<void> {
    const days = await this.options.retentionDays();
    if (!days) return;
    await pruneAuditEvents(this.services.db, Date.now() - days * DAY_MS);
  }
}
