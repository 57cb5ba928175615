/**
 * The limit of upload-packs serving clients at once in this server process
 * (`GITLOOM_GIT_CONCURRENCY`, docs/architecture.md#git-concurrency): each clone or fetch — over
 * HTTP, SSH or from a build agent — takes a slot once its client sends its request (the wants:
 * a client that connected and sends nothing holds none) until its upload-pack exits; the
 * pack-objects it starts may take a core and hundreds of MiB on a large repository. Past the
 * limit, requests wait in arrival order before they reach git, so that a crowd of clones queues
 * instead of taking the machine from the pages; a waiter whose client goes away leaves the
 * queue; past {@link WAITING_PER_SLOT} waiters per slot, a fetch is refused at once (503 and
 * `Retry-After` over HTTP, an `ERR` packet over SSH; `GITLOOM_ERR_GIT_BUSY`). Upload-packs run at
 * a lower CPU priority ({@link UPLOAD_PACK_NICENESS}).
 */
import { availableParallelism } from 'node:os';
import { Transform, type TransformCallback } from 'node:stream';
import { Unavailable } from '../errors.js';

/**
 * The nice value of upload-pack and its pack-objects: a clone takes the cores only when requests
 * (pages, the API, pushes) leave them idle.
 */
export const UPLOAD_PACK_NICENESS = 10;

/** Waiters allowed per slot before a fetch is refused. */
export const WAITING_PER_SLOT = 32;

interface Waiter {
  grant(): void;
}

let limit = availableParallelism();
let running = 0;
const waiting: Waiter[] = [];

/** Sets the number of slots (at least 1); waiters the new limit admits start at once. */
export function configureUploadPackSlots(slots: number): void {
  limit = Math.max(1, Math.floor(slots));
  while (running < limit && waiting.length > 0) admit(waiting.shift()!);
}

/** Slots in use, fetches waiting, and the limit, for the metrics. */
export function uploadPackLoad(): { running: number; waiting: number; limit: number } {
  return { running, waiting: waiting.length, limit };
}

function admit(waiter: Waiter): void {
  running++;
  waiter.grant();
}

/**
 * Takes a slot, waiting for one when all are in use: resolves to the function that gives it back
 * (call it once, when upload-pack exited). Rejects with `signal`'s reason when it aborts while
 * waiting (the slot is then not taken), and with Unavailable (`GITLOOM_ERR_GIT_BUSY`, retry after
 * 5 s) when the queue is full.
 */
function uploadPackSlot(signal?: AbortSignal): Promise<() => void> {
  signal?.throwIfAborted();
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    running--;
    while (running < limit && waiting.length > 0) admit(waiting.shift()!);
  };
  if (running < limit && waiting.length === 0) {
    running++;
    return Promise.resolve(release);
  }
  if (waiting.length >= limit * WAITING_PER_SLOT) {
    return Promise.reject(new Unavailable('Too many clones and fetches are waiting; try again shortly', 5, { code: 'GITLOOM_ERR_GIT_BUSY' }));
  }
  return new Promise((resolve, reject) => {
    const waiter: Waiter = {
      grant: () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(release);
      },
    };
    const onAbort = () => {
      const at = waiting.indexOf(waiter);
      if (at >= 0) waiting.splice(at, 1);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    waiting.push(waiter);
  });
}

/**
 * The stage between a client and its upload-pack's stdin that takes a slot: the first bytes the
 * client sends wait for one ({@link uploadPackSlot}), the rest pass as they come. `release()`
 * gives the slot back (call it when git exited; nothing when none was taken). Destroying the
 * stage (the client went away) leaves the queue. A full queue fails the stage with Unavailable.
 */
export class UploadPackSlotGate extends Transform {
  private slot: Promise<() => void> | null = null;
  private readonly leaving = new AbortController();
  private released = false;

  /** Gives the slot back, once; later calls, and a slot granted after it, are released at once. */
  readonly release = (): void => {
    this.released = true;
    this.leaving.abort();
    this.slot?.then(
      (giveBack) => giveBack(),
      () => {},
    );
  };

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.slot === null) {
      this.slot = uploadPackSlot(this.leaving.signal);
      this.slot.then(
        (giveBack) => {
          if (this.released) giveBack();
          callback(null, chunk);
        },
        (error: unknown) => callback(error as Error),
      );
      return;
    }
    callback(null, chunk);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // a waiter whose client went away leaves the queue; a slot it holds stays until git exits
    if (!this.released) this.leaving.abort();
    callback(error);
  }
}
