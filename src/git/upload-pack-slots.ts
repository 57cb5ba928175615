/**
 * The limit of upload-packs serving clients at once in this server process
 * (`GITLOOM_GIT_CONCURRENCY`, docs/architecture.md#git-concurrency): each clone or fetch — over
 * HTTP, SSH or from a build agent — takes a slot once its client sends its request (the wants:
 * a client that connected and sends nothing holds none; a protocol v2 ref listing over HTTP holds
 * none either) until its upload-pack exits; the
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

/** The longest pkt-line (git's LARGE_PACKET_MAX), in bytes with its length. */
const MAX_PKT_LINE = 65520;

/**
 * What the first pkt-line of a request asks: `ls-refs` for protocol v2's ref listing
 * (`command=ls-refs`), `other` for anything else (a v2 `fetch`, a v0 `want`, a flush, a
 * malformed line), `incomplete` while `head` does not hold the whole first line yet.
 */
export function firstCommand(head: Buffer): 'ls-refs' | 'other' | 'incomplete' {
  if (head.length < 4) return 'incomplete';
  const length = Number.parseInt(head.subarray(0, 4).toString('latin1'), 16);
  if (!/^[0-9a-f]{4}$/i.test(head.subarray(0, 4).toString('latin1')) || length < 4 || length > MAX_PKT_LINE) return 'other';
  if (head.length < length) return 'incomplete';
  return /^command=ls-refs\n?$/.test(head.subarray(4, length).toString('latin1')) ? 'ls-refs' : 'other';
}

/**
 * The stage between a client and its upload-pack's stdin that takes a slot: the first bytes the
 * client sends wait for one ({@link uploadPackSlot}), the rest pass as they come. `release()`
 * gives the slot back (call it when git exited; nothing when none was taken). Destroying the
 * stage (the client went away) leaves the queue. A full queue fails the stage with Unavailable.
 *
 * With `freeRefListing` (a stateless request: one command per upload-pack, as over HTTP), a
 * request whose first pkt-line is protocol v2's `command=ls-refs` takes no slot: it lists refs
 * as the `info/refs` advertisement does, which takes none either, so a fetch finding nothing new
 * and the first step of every clone or fetch never queue behind running clones. The first line
 * is held until it is whole (at most 65,520 bytes) to be read. Never for a session (SSH), where
 * the same upload-pack goes on to the fetch.
 */
export class UploadPackSlotGate extends Transform {
  private slot: Promise<() => void> | null = null;
  private readonly leaving = new AbortController();
  private released = false;
  /** The first bytes, held while the first pkt-line is incomplete (with `freeRefListing`). */
  private head: Buffer | null = null;
  /** Whether this request passes without a slot (a ref listing). */
  private free = false;
  private readonly freeRefListing: boolean;

  /** @param options `freeRefListing`: let a stateless ref listing pass without a slot (see the class comment). */
  constructor(options: { freeRefListing?: boolean } = {}) {
    super();
    this.freeRefListing = options.freeRefListing ?? false;
  }

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
    if (this.free) return callback(null, chunk);
    if (this.slot === null && this.freeRefListing) {
      const head = this.head ? Buffer.concat([this.head, chunk]) : chunk;
      const command = firstCommand(head);
      if (command === 'incomplete') {
        this.head = head;
        return callback();
      }
      this.head = null;
      chunk = head;
      if (command === 'ls-refs') {
        this.free = true;
        return callback(null, chunk);
      }
    }
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

  override _flush(callback: TransformCallback): void {
    // a request that ended inside its first pkt-line: git refuses it at once, no slot needed
    const head = this.head;
    this.head = null;
    callback(null, head ?? undefined);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // a waiter whose client went away leaves the queue; a slot it holds stays until git exits
    if (!this.released) this.leaving.abort();
    callback(error);
  }
}
