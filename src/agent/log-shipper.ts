/**
 * A job's log on its way to the server (docs/compatibility.md#build-agents, POST
 * `/~agent/job/log`): the executor's lines (`HH:mm:ss message\n`, src/ci/executor.ts
 * `formatLogLine`) are batched and posted in order, one request at a time, within
 * {@link LOG_BATCH_MS} of the first line of a batch. A post that gets no answer is tried again
 * (with the lines written since, never reordered or lost) until it is answered; a refusal (the
 * job's token no longer valid: the build ended or went to another agent) or {@link
 * LogShipper.abandon} drops what is left and every later line.
 */
import { formatLogLine } from '../ci/executor.js';
import { Backoff, ServerRefusal, ServerUnreachable } from './server-client.js';

/** Milliseconds a line waits at most before its batch is posted. */
export const LOG_BATCH_MS = 100;

/** Options of {@link LogShipper}. */
export interface LogShipperOptions {
  /** Posts a batch of lines; rejects with ServerUnreachable (tried again) or ServerRefusal (dropped). */
  readonly send: (text: string) => Promise<void>;
  /** Told once why lines are dropped. */
  readonly onDropped?: (reason: string) => void;
  /** Told each failed try (the lines are kept). */
  readonly onRetry?: (error: Error) => void;
  /** Milliseconds a batch waits for more lines (default {@link LOG_BATCH_MS}). */
  readonly batchMs?: number;
  readonly backoff?: Backoff;
}

/**
 * A job's log sink (src/ci/executor.ts `LogSink`, the writable form): `write` takes formatted
 * lines, `line` formats one; `close` resolves once every line is posted or dropped.
 */
export class LogShipper {
  private pending = '';
  /** When the oldest pending line came. */
  private pendingSince = 0;
  private pump: Promise<void> | null = null;
  private closing = false;
  private dropped: string | null = null;
  private wakeUp: (() => void) | null = null;
  private readonly batchMs: number;
  private readonly backoff: Backoff;
  private readonly abandoned = new AbortController();

  constructor(private readonly options: LogShipperOptions) {
    this.batchMs = options.batchMs ?? LOG_BATCH_MS;
    this.backoff = options.backoff ?? new Backoff();
  }

  /** Queues log text (whole lines, as the executor writes them). */
  write(chunk: string): void {
    if (this.dropped !== null || chunk.length === 0) return;
    if (this.pending.length === 0) this.pendingSince = Date.now();
    this.pending += chunk;
    this.kick();
  }

  /** Starts posting what is pending unless a post is under way. */
  private kick(): void {
    this.pump ??= this.run().finally(() => {
      this.pump = null;
      // lines written between the loop's last look and its end
      if (this.pending.length > 0 && this.dropped === null) this.kick();
    });
  }

  /** Queues `message` as a log line stamped now. */
  line(message: string): void {
    this.write(`${formatLogLine(new Date(), message)}\n`);
  }

  /** Posts what is pending without waiting for the batch time, and resolves once nothing is left to post (posted, or dropped). */
  async close(): Promise<void> {
    this.closing = true;
    this.wakeUp?.();
    while (this.pump) await this.pump;
  }

  /** Drops what is pending and every later line (the job's lease is gone); `reason` goes to `onDropped`. */
  abandon(reason: string): void {
    this.drop(reason);
    this.abandoned.abort();
    this.wakeUp?.();
  }

  /** Whether lines were dropped, and why. */
  get droppedReason(): string | null {
    return this.dropped;
  }

  private drop(reason: string): void {
    if (this.dropped !== null) return;
    this.dropped = reason;
    this.pending = '';
    this.options.onDropped?.(reason);
  }

  private async run(): Promise<void> {
    while (this.pending.length > 0 && this.dropped === null) {
      const wait = this.pendingSince + this.batchMs - Date.now();
      if (!this.closing && wait > 0) await new Promise<void>((resolve) => this.sleep(resolve, wait));
      if (this.dropped !== null) return;
      const batch = this.pending;
      this.pending = '';
      await this.post(batch);
      this.pendingSince = Date.now();
    }
  }

  private sleep(resolve: () => void, ms: number): void {
    const timer = setTimeout(() => {
      this.wakeUp = null;
      resolve();
    }, ms);
    this.wakeUp = () => {
      clearTimeout(timer);
      this.wakeUp = null;
      resolve();
    };
  }

  /** Posts `batch`, trying again while unanswered; lines queued meanwhile join it on the next try, behind it. */
  private async post(batch: string): Promise<void> {
    let text = batch;
    for (;;) {
      try {
        await this.options.send(text);
        this.backoff.reset();
        return;
      } catch (error) {
        if (error instanceof ServerRefusal) return this.drop(`the server refused the log (${error.message})`);
        // anything else (a fault of this process) cannot get better by trying again: reported, and the log ends
        if (!(error instanceof ServerUnreachable)) return this.drop(`the log could not be sent (${error instanceof Error ? error.message : String(error)})`);
        this.options.onRetry?.(error);
      }
      try {
        await this.backoff.wait(this.abandoned.signal);
      } catch {
        return; // abandoned: the lines were dropped
      }
      text += this.pending;
      this.pending = '';
    }
  }
}
