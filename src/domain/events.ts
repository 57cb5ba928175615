/**
 * In-process domain events: how an area reacts to another's changes without the publisher
 * knowing it. The listeners are registered once at start-up (src/domain/event-handlers.ts).
 * `emit` runs them in the background after the emitting transaction committed (a failing one is
 * logged by the bus owner and never fails the emitter); `dispatch` runs them in order and waits,
 * for reactions that belong to the publisher's work.
 */
import type { Db } from '../db/database.js';

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
  /**
   * Refs moved, as one entry of the ref-change journal records (push, merge, branch deletion):
   * dispatched by the journal worker, which retries the entry while a handler fails — each
   * handler must be safe to run again for the same entry.
   */
  refsJournalEntry: { projectId: number; changes: RefChange[]; userId: number | null; journalId: number };
  /** An open pull request was checked (docs/compatibility.md#pull-requests-background-check): its updates and merge preview are current. */
  pullRequestChecked: { requestId: number };
  /** A build reached a final status (src/domain/builds/finish.ts), dispatched after its transaction committed. */
  buildFinished: { buildId: number };
  /** A pull request was merged or discarded (build triggers, docs/compatibility.md#builds-triggers). */
  pullRequestClosed: { requestId: number };
  /** A mirror became due now ("sync now", a new or changed mirror): the mirror worker should look (docs/compatibility.md#repository-mirrors). */
  mirrorsDue: { mirrorId: number };
}

/**
 * Events published inside the publisher's transaction (`db` is that transaction): the reactions
 * commit or roll back with the change, and a failing one refuses it
 * ({@link EventBus.dispatchInTransaction}).
 */
export interface TransactionEvents {
  /** A user's password changed: their web sessions end, but `keepSession` (the session token the change was made from). */
  passwordChanged: { db: Db; userId: number; keepSession: string | null };
  /** A user or group was renamed: settings that name it follow. */
  principalRenamed: { db: Db; kind: 'user' | 'group'; from: string; to: string };
  /**
   * A user or group is about to be deleted: each listener adds the places that still name it
   * to `usages` (the publisher refuses the deletion while any is left).
   */
  principalDeleting: { db: Db; kind: 'user' | 'group'; name: string; usages: string[] };
  /**
   * A role is about to be deleted: each listener adds the places that still use it to `usages`
   * (the publisher refuses the deletion while any is left).
   */
  roleDeleting: { db: Db; roleId: number; usages: string[] };
  /** A user is being deleted: records they authored and that outlive them move to the unknown user. */
  userDeleting: { db: Db; userId: number };
  /**
   * A pull request is being deleted: what other areas hang off it goes in the same transaction;
   * work that must wait for the commit (removing files) is added to `afterCommit`.
   */
  pullRequestDeleting: { db: Db; requestId: number; afterCommit: (() => Promise<void>)[] };
  /**
   * Recovery found applied a ref update that a merge journaled (its intent names the pull
   * request): the request is marked merged — `merged` set when it moved — and announced once
   * the recovery committed (`afterCommit`).
   */
  journaledMergeApplied: {
    db: Db;
    requestId: number;
    mergeCommitHash: string;
    userId: number | null;
    date: number;
    afterCommit: (() => Promise<void>)[];
    merged: boolean;
  };
  /**
   * Projects are being deleted (`projectIds`, a subtree) by `userId`: the open pull requests
   * from them into projects that stay are discarded, announced once the deletion committed.
   */
  projectsDeleting: { db: Db; projectIds: number[]; userId: number; date: number; afterCommit: (() => Promise<void>)[] };
  /** Something happened that watchers are told of and webhooks announce ({@link Activity}). */
  activity: { db: Db; activity: Activity };
  /**
   * Build agents are being removed (their token deleted, docs/compatibility.md#build-agents): the
   * builds that ran on them forget them, as OneDev's `removeReferences` does.
   */
  agentsDeleting: { db: Db; agentIds: number[] };
}

/** A user put in a user field of an issue (`Assignees`): the field's name and the user's id. */
export interface FieldUser {
  field: string;
  userId: number;
}

interface ActivityCommon {
  /** The acting user (never notified); null for the system. */
  actorId: number | null;
  /** Epoch ms of the event. */
  date: number;
  /** Text the event carries (comment, description, note): its @mentions are notified. */
  text?: string | null;
}

/**
 * Something users hear of and webhooks announce (docs/compatibility.md#gitloom-differs-webhooks-and-notifications), by type. A build event's action is the build's status at the time. */
export type Activity = ActivityCommon &
  (
    | {
        type: 'PULL_REQUEST';
        action: 'OPENED' | 'REOPENED' | 'MERGED' | 'DISCARDED' | 'COMMENTED' | 'REVIEW_REQUESTED' | 'ASSIGNED';
        requestId: number;
        /** The reviewer asked (`REVIEW_REQUESTED`). */
        reviewerId?: number;
        /** The user assigned (`ASSIGNED`). */
        assigneeId?: number;
      }
    | {
        type: 'ISSUE';
        action: 'OPENED' | 'STATE_CHANGED' | 'COMMENTED' | 'FIELDS_CHANGED';
        issueId: number;
        /** The users newly put in user fields (`OPENED`, `STATE_CHANGED`, `FIELDS_CHANGED`). */
        fieldUsers?: FieldUser[];
      }
    | { type: 'CODE_COMMENT'; action: 'CREATED'; commentId: number }
    | { type: 'BUILD'; buildId: number }
    | { type: 'CODE_PUSH'; projectId: number; refName: string; oldCommitId: string | null; newCommitId: string | null }
  );

type Listener<K extends keyof DomainEvents> = (event: DomainEvents[K]) => void | Promise<void>;

export class EventBus {
  private readonly listeners = new Map<keyof DomainEvents, Listener<any>[]>();
  private readonly pending = new Set<Promise<void>>();
  private readonly transactionListeners = new Map<keyof TransactionEvents, ((event: any) => Promise<void>)[]>();

  constructor(private readonly onError: (error: unknown, event: keyof DomainEvents) => void) {}

  /** Registers a listener for an event kind. */
  on<K extends keyof DomainEvents>(kind: K, listener: Listener<K>): void {
    const list = this.listeners.get(kind) ?? [];
    list.push(listener);
    this.listeners.set(kind, list);
  }

  /** Registers a listener that runs inside the publisher's transaction. */
  onTransaction<K extends keyof TransactionEvents>(kind: K, listener: (event: TransactionEvents[K]) => Promise<void>): void {
    const list = this.transactionListeners.get(kind) ?? [];
    list.push(listener);
    this.transactionListeners.set(kind, list);
  }

  /**
   * Runs every transaction listener of `kind` in registration order and waits for them; the
   * first failure propagates to the publisher, which then rolls its transaction back.
   */
  async dispatchInTransaction<K extends keyof TransactionEvents>(kind: K, event: TransactionEvents[K]): Promise<void> {
    for (const listener of this.transactionListeners.get(kind) ?? []) await listener(event);
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

  /**
   * Runs every listener of `kind` one after another, in the order they were registered, and
   * waits for them: for reactions that are part of the caller's work (the journal worker retries
   * an entry until its reactions succeeded). A failing listener does not stop the others.
   *
   * @returns the errors of the listeners that failed (empty when all succeeded).
   */
  async dispatch<K extends keyof DomainEvents>(kind: K, event: DomainEvents[K]): Promise<unknown[]> {
    const errors: unknown[] = [];
    for (const listener of this.listeners.get(kind) ?? []) {
      try {
        await listener(event);
      } catch (error) {
        errors.push(error);
      }
    }
    return errors;
  }

  /** Resolves once every listener started so far has finished (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}
