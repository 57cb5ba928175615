/**
 * Followers of a build log learn of its new lines without polling
 * (docs/architecture.md#processes-sharing-postgresql): the process writing the log wakes its own
 * followers at once and announces `log:<build id>` to the other processes, at most every
 * {@link ANNOUNCE_MS} per build (the lines of a burst are read together); a build's finish is
 * announced in its transaction. A follower still reads the log again after its fallback
 * interval without a signal, which covers a lost announcement.
 */
import { DatabaseUnavailable } from '../../db/availability.js';
import type { Db } from '../../db/database.js';
import { announce, onAnnouncement } from '../../db/notifications.js';

/** Milliseconds between two announcements of one build's new log lines. */
export const ANNOUNCE_MS = 50;

/** The topic of a build's log (src/db/notifications.ts). */
const logTopic = (buildId: number): string => `log:${buildId}`;

/** Followers in this process, by build. */
const followers = new Map<number, Set<() => void>>();

/** Wakes the followers of build `buildId`'s log in this process. */
export function logChanged(buildId: number): void {
  const set = followers.get(buildId);
  if (set) for (const follower of [...set]) follower();
}

/** Announces a change of build `buildId`'s log to the other processes, in the transaction `db` when it is one. */
export function announceLogChanged(db: Db, buildId: number): Promise<void> {
  return announce(db, logTopic(buildId));
}

/** Per database handle, the builds whose last announcement is less than {@link ANNOUNCE_MS} old: whether lines came since. */
const throttles = new WeakMap<object, Map<number, { since: boolean }>>();

/**
 * Lines were appended to build `buildId`'s log (and are in the file): its followers in this
 * process are woken at once; the other processes' are announced at once, or at the end of the
 * current {@link ANNOUNCE_MS} window when one is under way. A failed announcement goes to
 * `onError`, but during an outage (logged once by the database's availability): the followers'
 * fallback covers it.
 */
export function logAppended(db: Db, buildId: number, onError: (error: unknown) => void): void {
  logChanged(buildId);
  let windows = throttles.get(db);
  if (!windows) throttles.set(db, (windows = new Map()));
  const open = windows.get(buildId);
  if (open) {
    open.since = true;
    return;
  }
  const window = { since: false };
  const send = () => {
    announceLogChanged(db, buildId).catch((error: unknown) => {
      if (!(error instanceof DatabaseUnavailable)) onError(error);
    });
    setTimeout(() => {
      if (!window.since) {
        windows.delete(buildId);
        return;
      }
      window.since = false;
      send();
    }, ANNOUNCE_MS).unref();
  };
  windows.set(buildId, window);
  send();
}

/** A follower of one build's log: see {@link followLog}. */
export interface LogFollower {
  /**
   * Resolves once the log changed (in this process, or announced by another) since the previous
   * call (or since the follower was made), or after `fallbackMs` without a signal; never sooner
   * than {@link ANNOUNCE_MS} after the previous call resolved, so that a job printing fast is read
   * in batches.
   */
  next(fallbackMs: number): Promise<void>;
  /** Stops following. */
  close(): void;
}

/** Starts following build `buildId`'s log: call before reading it, so that no change between the read and the wait is missed. */
export function followLog(db: Db, buildId: number): LogFollower {
  let signalled = false;
  let wake: (() => void) | null = null;
  let resolvedAt = 0;
  const signal = () => {
    signalled = true;
    wake?.();
  };
  let set = followers.get(buildId);
  if (!set) followers.set(buildId, (set = new Set()));
  set.add(signal);
  const unsubscribe = onAnnouncement(db, logTopic(buildId), signal);
  const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
  return {
    async next(fallbackMs) {
      if (!signalled) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, fallbackMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = null;
      }
      const early = resolvedAt + ANNOUNCE_MS - Date.now();
      if (early > 0) await sleep(early);
      signalled = false;
      resolvedAt = Date.now();
    },
    close() {
      unsubscribe();
      set.delete(signal);
      if (set.size === 0 && followers.get(buildId) === set) followers.delete(buildId);
    },
  };
}
