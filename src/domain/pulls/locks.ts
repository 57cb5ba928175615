const tails = new Map<string, Promise<unknown>>();

/**
 * Runs `work` after every earlier holder of `key` finished (an in-process mutex per key, e.g.
 * `pull-request:7`). Cross-process safety comes from conditional updates and ref
 * compare-and-swap; this lock only keeps one process from racing itself.
 */
export async function withLock<T>(key: string, work: () => Promise<T>): Promise<T> {
  const previous = tails.get(key) ?? Promise.resolve();
  const run = previous.then(work, work);
  const tail = run.catch(() => undefined);
  tails.set(key, tail);
  try {
    return await run;
  } finally {
    if (tails.get(key) === tail) tails.delete(key);
  }
}
