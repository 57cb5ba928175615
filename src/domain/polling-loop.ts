import { DatabaseUnavailable } from '../db/availability.js';
import type { Db } from '../db/database.js';
import { onAnnouncement } from '../db/notifications.js';

/**
 * The loop shared by the background workers of a server process (build scheduler, journal
 * worker, outbox worker): runs `tick` once at `start()`, then every `intervalMs` after the
 * previous tick ended, and at once on `wake()`. Ticks never overlap: a wake during a tick
 * runs one more tick right after it. A tick's rejection goes to `onError` and the loop goes on;
 * a tick that failed because the database is unavailable is not reported (the outage is logged
 * once, src/db/availability.ts): the loop pauses on it and resumes by itself within `intervalMs`
 * of the database's return. A loop given topics ({@link wakeOn}) also wakes when another process
 * announces one of them (docs/architecture.md#processes-sharing-postgresql): its interval is
 * then only the fallback.
 */
export class PollingLoop {
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private again = false;
  private running = false;
  private readonly topics: { db: Db; topic: string }[] = [];
  private unsubscribe: (() => void)[] = [];

  /**
   * @param tick one pass of the worker; it should return early when {@link stopped} turns true.
   * @param intervalMs milliseconds between the end of a tick and the next one.
   * @param onError receives what a tick throws.
   */
  constructor(
    private readonly tick: () => Promise<void>,
    private readonly intervalMs: number,
    private readonly onError?: (error: unknown) => void,
  ) {}

  /** Whether the loop is not running (before `start()`, after `stop()`). */
  get stopped(): boolean {
    return !this.running;
  }

  /**
   * Wakes the loop, while it runs, whenever another process announces `topic` on `db`
   * (src/db/notifications.ts; nothing on SQLite). Call before `start()`; returns the loop.
   */
  wakeOn(db: Db, topic: string): this {
    this.topics.push({ db, topic });
    return this;
  }

  /** Starts the loop with a tick now. */
  start(): void {
    this.running = true;
    this.unsubscribe = this.topics.map(({ db, topic }) => onAnnouncement(db, topic, () => this.wake()));
    this.wake();
  }

  /** Runs a tick now, or right after the one in progress; nothing once stopped. */
  wake(): void {
    if (!this.running) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.ticking = this.tick()
      .catch((error) => {
        if (!(error instanceof DatabaseUnavailable)) this.onError?.(error);
      })
      .finally(() => {
        this.ticking = null;
        if (!this.running) return;
        if (this.again) {
          this.again = false;
          this.wake();
        } else {
          this.timer = setTimeout(() => this.wake(), this.intervalMs);
        }
      });
  }

  /** Stops the loop (no tick starts any more) and resolves when the tick in progress has ended. */
  async stop(): Promise<void> {
    this.running = false;
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    this.unsubscribe = [];
    this.again = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.ticking) await this.ticking;
  }
}
