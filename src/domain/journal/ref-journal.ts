/**
 * The ref-change journal (docs/architecture.md#a-push, docs/architecture.md#the-ref-journal): every ref change of a
 * repository — a push (an intent written by the pre-receive hook, confirmed by the post-receive
 * hook), a merge, a branch or tag edit through
 * the API, a deletion — becomes a `ref_journal` row before the change is reported done, and the
 * journal worker (journal-worker.ts) reacts to each row exactly once.
 *
 * Changes the server makes itself go through {@link journaledRefChange}: the row is first written
 * as an intent (`appliedDate` null), then git moves the ref (compare-and-swap), then one
 * transaction confirms the row together with what the change means in the database (a merged
 * request). A crash anywhere in between is repaired by {@link recoverRefIntents} (at start-up,
 * and by the journal worker while the server runs): the ref tells whether the change happened.
 */
import type { Db } from '../../db/database.js';
import { dialectOf } from '../../db/dialect.js';
import { announce } from '../../db/notifications.js';
import type { RefJournalRow } from '../../db/schema.js';
import { getDefaultBranch, isAncestor, pickDefaultBranch, refHead, setDefaultBranch, ZERO_HASH } from '../../git/repository.js';
import type { Context } from '../context.js';
import type { RefChange } from '../events.js';

/** What a journal row is written for, beyond the ref change itself. */
export interface JournalWriter {
  /** The pusher or acting user; null for the system. */
  userId: number | null;
  /** The pull request a merge closes (recovery finishes the merge when the ref moved). */
  requestId?: number | null;
}

/**
 * Intent rows of this process whose change is still under way (between their insert and the end
 * of the transaction that confirms them), per database handle: recovery leaves them alone.
 */
const inFlight = new WeakMap<object, Set<number>>();

function inFlightOf(db: Db): Set<number> {
  let ids = inFlight.get(db);
  if (!ids) inFlight.set(db, (ids = new Set()));
  return ids;
}

/**
 * The topic announcing applied journal rows to the journal workers of the other processes
 * (src/db/notifications.ts), in the transaction that applies them.
 */
export const JOURNAL_TOPIC = 'journal';

/** Wakes the journal worker of this process (the rows are in the database whatever happens). */
function wakeWorker(ctx: Pick<Context, 'events'>): void {
  ctx.events.emit('refsJournaled', {});
}

/** A push's ref update as git's hooks give it (`ZERO_HASH` for a created or deleted ref). */
export interface PushedUpdate {
  oldHash: string;
  newHash: string;
  ref: string;
}

/** The intent row written for one update of a push, before git moves the ref ({@link journalPushIntents}). */
export interface PushIntent extends PushedUpdate {
  id: number;
}

function changeOfUpdate(u: PushedUpdate): RefChange {
  return { ref: u.ref, oldHash: u.oldHash === ZERO_HASH ? null : u.oldHash, newHash: u.newHash === ZERO_HASH ? null : u.newHash };
}

/**
 * The pre-receive half of journaling a push: writes one intent row (`appliedDate` null) per ref
 * update git is about to make, before any ref moves. When the database cannot take them this
 * throws (a DatabaseUnavailable during an outage) and the hook refuses the push, so no ref
 * moves unrecorded. Intents whose ref never moves (git failed the update, the push died) are
 * dropped by {@link recoverRefIntents}; those whose ref moved but whose post-receive could not
 * confirm them are confirmed by it.
 *
 * @returns the intents, in the order of `updates`.
 */
export async function journalPushIntents(ctx: Context, projectId: number, userId: number, updates: readonly PushedUpdate[]): Promise<PushIntent[]> {
  if (updates.length === 0) return [];
  const now = ctx.now();
  const rows = await ctx.db
    .insertInto('refJournal')
    .values(updates.map((u) => row(projectId, changeOfUpdate(u), { userId }, now)))
    .returning('id')
    .execute();
  return updates.map((u, i) => ({ ...u, id: rows[i].id }));
}

/**
 * Records a push as the post-receive hook reported it — git's `old new ref` lines of the updates
 * it made, and the pusher — in one transaction, and wakes the worker: the intent written for an
 * update by {@link journalPushIntents} is confirmed (unless recovery confirmed it already); an
 * update without one (its intent was dropped by recovery before the ref moved, or none was
 * written) gets an applied row; intents of updates git did not make are removed. A pushed branch
 * becomes the default branch of a repository that had none (HEAD unborn before the push)
 * (`main`, else `master`, else the alphabetically first;
 * docs/compatibility.md#projects-repository-and-default-branch).
 *
 * @param userId the pusher; null for a change found in git afterwards (restore's reconciliation).
 * @param intents what the pre-receive hook of the same push wrote (empty when unknown).
 * @param confirm runs in the same transaction (the push's audit rows, docs/audit-log.md#actions).
 */
export async function journalPush(
  ctx: Context,
  projectId: number,
  userId: number | null,
  updates: readonly PushedUpdate[],
  intents: readonly PushIntent[] = [],
  confirm?: (tx: Db) => Promise<void>,
): Promise<void> {
  if (updates.length === 0) return;
  const changes = updates.map(changeOfUpdate);
  const repo = ctx.repoPath(projectId);
  const current = await getDefaultBranch(repo);
  // HEAD names a branch that did not exist before this push (an unborn HEAD): choose anew
  if (current === null || changes.some((c) => c.oldHash === null && c.ref === `refs/heads/${current}`)) {
    const pushed = changes.filter((c) => c.newHash !== null && c.ref.startsWith('refs/heads/')).map((c) => c.ref.slice('refs/heads/'.length));
    const branch = pickDefaultBranch(pushed);
    if (branch !== null) await setDefaultBranch(repo, branch);
  }
  const now = ctx.now();
  const unmatched = [...intents];
  await ctx.db.transaction().execute(async (tx) => {
    const missing: RefChange[] = [];
    for (const [i, update] of updates.entries()) {
      const at = unmatched.findIndex((t) => t.ref === update.ref && t.oldHash === update.oldHash && t.newHash === update.newHash);
      const intent = at < 0 ? undefined : unmatched.splice(at, 1)[0];
      const confirmed =
        intent &&
        (await tx
          .updateTable('refJournal')
          .set({ appliedDate: now })
          .where('id', '=', intent.id)
          .where('appliedDate', 'is', null)
          .returning('id')
          .executeTakeFirst());
      const kept = intent && (confirmed || (await tx.selectFrom('refJournal').select('id').where('id', '=', intent.id).executeTakeFirst()));
      if (!kept) missing.push(changes[i]);
    }
    if (missing.length > 0)
      await tx
        .insertInto('refJournal')
        .values(missing.map((c) => ({ ...row(projectId, c, { userId }, now), appliedDate: now })))
        .execute();
    if (unmatched.length > 0)
      await tx
        .deleteFrom('refJournal')
        .where(
          'id',
          'in',
          unmatched.map((t) => t.id),
        )
        .where('appliedDate', 'is', null)
        .execute();
    await confirm?.(tx);
    await announce(tx, JOURNAL_TOPIC);
  });
  wakeWorker(ctx);
}

function row(projectId: number, change: RefChange, writer: JournalWriter, now: number) {
  return {
    projectId,
    ref: change.ref,
    oldHash: change.oldHash,
    newHash: change.newHash,
    userId: writer.userId,
    requestId: writer.requestId ?? null,
    date: now,
    appliedDate: null,
    processedDate: null,
    leaseOwner: null,
    leaseExpires: null,
    retryDate: null,
  };
}

/**
 * Makes a ref change of the server's own durable: writes the intent rows, then, in one
 * transaction that holds the rows locked (PostgreSQL: `FOR UPDATE`, so recovery in another
 * process leaves them alone while this one lives; SQLite has one writer), runs `apply` (the git
 * compare-and-swap moving exactly `changes`), confirms the rows and runs `confirm` (e.g. the
 * request marked MERGED), and finally wakes the worker. When `apply` throws, the intent rows are
 * removed and the error propagates; when `confirm` throws after the ref moved, the rows stay
 * intents and {@link recoverRefIntents} finishes them (the journal worker runs it every few seconds).
 *
 * @returns what `confirm` returned.
 */
export async function journaledRefChange<T>(
  ctx: Context,
  projectId: number,
  changes: readonly RefChange[],
  writer: JournalWriter,
  apply: () => Promise<void>,
  confirm?: (tx: Db) => Promise<T>,
): Promise<T | undefined> {
  const now = ctx.now();
  const ids = (
    await ctx.db
      .insertInto('refJournal')
      .values(changes.map((c) => row(projectId, c, writer, now)))
      .returning('id')
      .execute()
  ).map((r) => r.id);
  const running = inFlightOf(ctx.db);
  for (const id of ids) running.add(id);
  let moved = false;
  try {
    const result = await ctx.db.transaction().execute(async (tx) => {
      await dialectOf(tx).lockRows(tx.selectFrom('refJournal').select('id').where('id', 'in', ids));
      await apply();
      moved = true;
      await tx.updateTable('refJournal').set({ appliedDate: ctx.now() }).where('id', 'in', ids).execute();
      await announce(tx, JOURNAL_TOPIC);
      return confirm?.(tx);
    });
    wakeWorker(ctx);
    return result;
  } catch (error) {
    if (!moved) await ctx.db.deleteFrom('refJournal').where('id', 'in', ids).execute();
    throw error;
  } finally {
    for (const id of ids) running.delete(id);
  }
}

/** Whether the ref now shows the change of an intent row (created/moved to `newHash` or beyond, or deleted). */
async function applied(repo: string, entry: RefJournalRow): Promise<boolean> {
  const current = await refHead(repo, entry.ref);
  if (entry.newHash === null) return current === null;
  if (current === null) return false;
  if (current === entry.newHash) return true;
  return isAncestor(repo, entry.newHash, current, { missing: false });
}

/** Intents younger than this are left alone on PostgreSQL (their writer may not have locked them yet). */
const INTENT_GRACE_MS = 5000;

/**
 * Repairs intent rows a crashed process, or a confirmation that failed after its ref moved, left
 * (docs/architecture.md#start-up-recovery): a change the ref shows is confirmed — and a merge's request marked
 * MERGED by its merger, with its change record and event — any other intent is removed (the ref
 * never moved; the request stays open). An intent is repaired only when it is older than a few
 * seconds and no change of this process is still under way on it; on PostgreSQL also only when
 * no live process holds it locked (`FOR UPDATE SKIP LOCKED`), so any process may run this at any
 * time. `atStartUp` on SQLite (one process owns the file), and `alone` (a restore: no server uses
 * the database): every intent is stale, whatever its age. Logs one line per repair.
 */
export async function recoverRefIntents(ctx: Context, log: (message: string) => void, options: { atStartUp?: boolean; alone?: boolean } = {}): Promise<void> {
  const dialect = dialectOf(ctx.db);
  let query = ctx.db.selectFrom('refJournal').select('id').where('appliedDate', 'is', null);
  if (!options.alone && !(options.atStartUp && dialect.ownedByOneProcess)) query = query.where('date', '<', ctx.now() - INTENT_GRACE_MS);
  const running = inFlightOf(ctx.db);
  let repaired = 0;
  for (const { id } of await query.orderBy('id').execute()) {
    if (running.has(id)) continue;
    const afterCommit: (() => Promise<void>)[] = [];
    const outcome = await ctx.db.transaction().execute(async (tx) => {
      const entry = await dialect.skipLocked(tx.selectFrom('refJournal').selectAll().where('id', '=', id).where('appliedDate', 'is', null)).executeTakeFirst();
      if (!entry) return null;
      if (!(await applied(ctx.repoPath(entry.projectId), entry))) {
        await tx.deleteFrom('refJournal').where('id', '=', entry.id).execute();
        return { entry, moved: false, merged: false };
      }
      await tx.updateTable('refJournal').set({ appliedDate: ctx.now() }).where('id', '=', entry.id).execute();
      await announce(tx, JOURNAL_TOPIC);
      if (entry.requestId === null || entry.newHash === null) return { entry, moved: true, merged: false };
      const event = { db: tx, requestId: entry.requestId, mergeCommitHash: entry.newHash, userId: entry.userId, date: ctx.now(), afterCommit, merged: false };
      await ctx.events.dispatchInTransaction('journaledMergeApplied', event);
      return { entry, moved: true, merged: event.merged };
    });
    if (!outcome) continue;
    repaired++;
    const { entry, moved, merged } = outcome;
    for (const step of afterCommit) await step();
    log(
      moved
        ? `Recovery: ref ${entry.ref} of project ${entry.projectId} moved; confirmed journal entry ${entry.id}${merged ? ` and merged pull request ${entry.requestId}` : ''}`
        : `Recovery: ref ${entry.ref} of project ${entry.projectId} did not move; dropped journal intent ${entry.id}`,
    );
  }
  if (repaired > 0) wakeWorker(ctx);
}

/**
 * Journal lag in milliseconds (for readiness and metrics, README "Operations"): the age of the oldest
 * entry whose ref moved but whose reactions have not run yet, 0 when the worker is caught up.
 */
export async function journalLag(db: Db, now: number): Promise<number> {
  const row = await db
    .selectFrom('refJournal')
    .select((eb) => eb.fn.min('appliedDate').as('oldest'))
    .where('processedDate', 'is', null)
    .where('appliedDate', 'is not', null)
    .executeTakeFirst();
  const oldest = row?.oldest;
  return oldest === null || oldest === undefined ? 0 : Math.max(0, now - Number(oldest));
}
