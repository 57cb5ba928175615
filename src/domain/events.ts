/**
 * In-process domain events. Listeners run after the emitting transaction committed; a failing
 * listener is logged by the bus owner and never fails the emitter.
 */
export interface RefChange {
  ref: string;
  oldHash: string | null;
  newHash: string | null;
}

export interface DomainEvents {
  /** Refs of a project's repository moved (push, merge, branch deletion): a journal entry was processed. */
  refsUpdated: { projectId: number; changes: RefChange[]; userId: number | null };
  /** Rows were added to the ref-change journal: the journal worker should look now. */
  refsJournaled: Record<string, never>;
  /** A pull request was opened, reopened or changed in a way that needs a re-check. */
  pullRequestChanged: { requestId: number };
  /** A pull request was merged or discarded (build triggers, docs/compatibility.md#builds-triggers). */
  pullRequestClosed: { requestId: number };
}

type Listener<K extends keyof DomainEvents> = (event: DomainEvents[K]) => void | Promise<void>;

export class EventBus {
  private readonly listeners = new Map<keyof DomainEvents, Listener<any>[]>();
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly onError: (error: unknown, event: keyof DomainEvents) => void) {}

  /** Registers a listener for an event kind. */
  on<K extends keyof DomainEvents>(kind: K, listener: Listener<K>): void {
    const list = this.listeners.get(kind) ?? [];
    list.push(listener);
    this.listeners.set(kind, list);
  }

  /** Runs every listener of `kind` in the background; errors go to `onError`. */
  emit<K extends keyof DomainEvents>(kind: K, event: DomainEvents[K]): void {
    for (const listener of this.listeners.get(kind) ?? []) {
      const run = (async () => {
        try {
          await listener(event);
        } catch (error) {
          this.onError(error, kind);
        }
      })();
      this.pending.add(run);
      void run.finally(() => this.pending.delete(run));
    }
  }

  /** Resolves once every listener started so far has finished (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}
