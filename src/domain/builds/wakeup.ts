/**
 * Wake-up of the build schedulers: a submit, cancel or finish in this process makes every
 * scheduler of the process look at the database at once instead of at its next tick; the
 * schedulers of the other processes sharing a PostgreSQL database are woken by the
 * announcement of {@link BUILDS_TOPIC}, made in the transaction of the change
 * (docs/architecture.md#processes-sharing-postgresql).
 */
import type { Db } from '../../db/database.js';
import { announce } from '../../db/notifications.js';

/** The topic waking the other processes' schedulers (src/db/notifications.ts). */
export const BUILDS_TOPIC = 'builds';

/**
 * Tells the schedulers of the other processes that builds changed (a build to run, a dependency
 * or a running build finished, a cancel): call it in the transaction of the change.
 */
export function announceBuildsChanged(db: Db): Promise<void> {
  return announce(db, BUILDS_TOPIC);
}

export interface WakeHint {
  /** A build that reached a final status (its dependents may become ready). */
  finished?: number;
}

type Listener = (hint: WakeHint) => void;
const listeners = new Set<Listener>();

/** Registers a scheduler's wake-up function; returns the unregister function. */
export function onWakeup(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Wakes every scheduler of this process. */
export function notifySchedulers(hint: WakeHint = {}): void {
  for (const listener of listeners) listener(hint);
}
