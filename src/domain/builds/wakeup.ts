/**
 * In-process wake-up of the build schedulers: a submit, cancel or finish in this process makes
 * every scheduler of the process look at the database at once instead of at its next tick.
 * Schedulers in other processes see the change at their next tick.
 */
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
