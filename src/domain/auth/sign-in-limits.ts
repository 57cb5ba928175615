/**
 * Limits on failed password sign-ins (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input "Failed sign-ins are limited per
 * (account, client address) pair"). Every password attempt is counted under three subjects,
 * each in a fixed window of {@link SIGN_IN_WINDOW_MS} that starts at its first failure:
 *
 * | subject | after | then |
 * |---|---|---|
 * | the (account, address) pair | {@link SIGN_IN_PAIR_LIMIT} (10) failures | 429 for that pair until its window ends, even with the right password |
 * | the client address | {@link SIGN_IN_ADDRESS_CEILING} (100) failures, any accounts | 429 for every password sign-in from that address until its window ends |
 * | the account | {@link SIGN_IN_ACCOUNT_CEILING} (100) failures, any addresses | each further attempt waits {@link signInDelayMs} (250 ms doubling to 8 s) before its password is checked; never refused by this count |
 *
 * So one office behind one address (or every user behind a proxy the server does not trust)
 * shares a ceiling of 100 rather than 10, and nobody elsewhere can lock a known user out: a
 * distributed guesser only slows the account down.
 *
 * The waits are awaited timers (the event loop stays free) holding no database connection and
 * no password check; they are bounded per server process (the resources they hold are the
 * process's): at most {@link DELAYED_PER_PAIR} (2) waiting attempts per pair,
 * {@link DELAYED_PER_ACCOUNT} (8) per account and {@link DELAYED_PER_PROCESS} (1000) in all —
 * beyond that 429 with `Retry-After` (when the soonest wait ends; 8 s for the process bound).
 * Each waiting attempt holds only its request and a timer, so a flood of guesses against one
 * account costs a process at most 8 waiting requests and lets through at most 8 guesses per
 * 8 s, all from fresh addresses (the pair limit), and no single address can take more than 2
 * of the 8 places. The price: while a flood keeps every place of an account taken, a fresh
 * password sign-in of that account may get 429 with a Retry-After of a few seconds. Access
 * tokens and web sessions are untouched, and a password this process verified in the last five
 * minutes is no guess: it neither waits nor needs a place, so a user who signed in before the
 * attack goes on as before.
 *
 * Counts live in the database (`sign_in_failures`, migrations 0014 and 0018), so several server
 * processes share them. An attempt is counted before its password is checked, in one statement
 * returning the new counts, and given back when it succeeds (or is refused): concurrent guesses
 * cannot all pass a check made before any of them was counted. Statements touch the three rows
 * always in the order account, address, pair (and pruning skips locked rows), so concurrent
 * PostgreSQL statements cannot deadlock. Access tokens are neither counted nor refused (40
 * random characters are not guessable).
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../../db/database.js';
import { dialectOf } from '../../db/dialect.js';
import { TooManyRequests } from '../../errors.js';
import type { ErrorCode } from '../../error-codes.js';

/** Length of a failure window, ms: it starts at the subject's first failure and lasts 5 minutes. */
export const SIGN_IN_WINDOW_MS = 5 * 60_000;
/** Failed password sign-ins per (account, client address) pair in one window; the next is refused. */
export const SIGN_IN_PAIR_LIMIT = 10;
/** Failed password sign-ins from one client address (any accounts) in one window; then every password sign-in from it is refused. */
export const SIGN_IN_ADDRESS_CEILING = 100;
/** Failed password sign-ins of one account (any addresses) in one window; then its attempts are delayed. */
export const SIGN_IN_ACCOUNT_CEILING = 100;
/** Delay of the first attempt past {@link SIGN_IN_ACCOUNT_CEILING}, ms; each further failure doubles it. */
export const SIGN_IN_FIRST_DELAY_MS = 250;
/** Longest delay, ms. */
export const SIGN_IN_MAX_DELAY_MS = 8000;
/** Attempts of one (account, address) pair waiting at once in one process. */
export const DELAYED_PER_PAIR = 2;
/** Attempts on one account waiting at once in one process. */
export const DELAYED_PER_ACCOUNT = 8;
/** Attempts waiting at once in one process, all accounts together. */
export const DELAYED_PER_PROCESS = 1000;

/** Longest text kept as is in a subject (longer ones are digested), so a key fits an index entry. */
const MAX_KEY_LENGTH = 255;
/** How often one process deletes windows that ended, ms. */
const PRUNE_EVERY_MS = 60_000;
/** Rows deleted per pruning at most. */
const PRUNE_BATCH = 1000;
const CODE = 'GITLOOM_ERR_SIGN_IN_LIMIT' satisfies ErrorCode;

/** The three subjects one password attempt is counted under (keys of `sign_in_failures`). */
export interface SignInSubjects {
  /** `account:#<user id>`, or `account:<name as typed>` for a name that names nobody. */
  account: string;
  /** `address:<client address>`. */
  address: string;
  /** `pair:<account>|<address>` (the address last: addresses hold no `|`). */
  pair: string;
}

const keyPart = (text: string) => (text.length <= MAX_KEY_LENGTH ? text : `sha256:${createHash('sha256').update(text).digest('hex')}`);

/**
 * The subjects of a password sign-in. The account is the user's id when the name (login or any
 * email) names one, so every alias shares one count; else the name as typed, lower-cased, NUL
 * bytes dropped, so unknown names are limited alike and the limits reveal nothing about
 * existence. Texts longer than 255 characters are kept as their SHA-256 digest.
 *
 * @param userId the user the name resolved to, or null.
 * @param clientAddress the caller's IP address as the server sees it (`request.ip`).
 */
export function signInSubjects(userId: number | null, name: string, clientAddress: string): SignInSubjects {
  const account = userId !== null ? `#${userId}` : keyPart(name.replaceAll('\0', '').trim().toLowerCase());
  const address = keyPart(clientAddress.replaceAll('\0', ''));
  return { account: `account:${account}`, address: `address:${address}`, pair: `pair:${account}|${address}` };
}

/**
 * The delay before the password of an attempt on an account with `accountFailures` failures in
 * its window is checked, ms: none below {@link SIGN_IN_ACCOUNT_CEILING}, then 250 ms doubling
 * per further failure — 250, 500, 1000, 2000, 4000 — up to 8000 ms from the 105th failure on.
 */
export function signInDelayMs(accountFailures: number): number {
  if (accountFailures < SIGN_IN_ACCOUNT_CEILING) return 0;
  return Math.min(SIGN_IN_FIRST_DELAY_MS * 2 ** (accountFailures - SIGN_IN_ACCOUNT_CEILING), SIGN_IN_MAX_DELAY_MS);
}

/** 429 `GITLOOM_ERR_SIGN_IN_LIMIT` whose detail says how long to wait, as `Retry-After` does. */
function limited(retryAfterSeconds: number): TooManyRequests {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  const minutes = Math.ceil(seconds / 60);
  const wait = seconds < 60 ? `${seconds} second${seconds === 1 ? '' : 's'}` : `${minutes} minute${minutes === 1 ? '' : 's'}`;
  return new TooManyRequests(`Too many failed sign-ins, try again in ${wait}`, seconds, { code: CODE });
}

interface Count {
  subject: string;
  windowStart: number;
  failures: number;
}

/** The 429 owed when a pair or address count (this attempt's included when `counted`) is over its limit, or null. */
function refusal(counts: Count[], subjects: SignInSubjects, now: number, counted: boolean): TooManyRequests | null {
  const over = counts.filter((c) => {
    const limit = c.subject === subjects.pair ? SIGN_IN_PAIR_LIMIT : c.subject === subjects.address ? SIGN_IN_ADDRESS_CEILING : Infinity;
    return counted ? c.failures > limit : c.failures >= limit;
  });
  if (over.length === 0) return null;
  const until = Math.max(...over.map((c) => c.windowStart + SIGN_IN_WINDOW_MS));
  // a concurrent attempt may have started the window at a later `now` than this one's
  return limited(Math.min(until - now, SIGN_IN_WINDOW_MS) / 1000);
}

/**
 * Refuses a password sign-in whose pair or address is over its limit in the current window —
 * even with the right password, so guessing on stops paying. Reads only (one query by primary
 * key); used before every attempt and for credentials the actor cache already holds.
 *
 * @param now epoch ms.
 * @returns the account's failures in its current window (0 when none).
 * @throws TooManyRequests (429) with `retryAfter` seconds until the last blocking window ends.
 */
export async function assertSignInAllowed(db: Db, subjects: SignInSubjects, now: number): Promise<number> {
  const counts = await allowedCounts(db, subjects, now);
  return counts.find((c) => c.subject === subjects.account)?.failures ?? 0;
}

/**
 * A sign-in with a password this process verified in the last five minutes (no guess): refused
 * only while its pair or address is limited, as by {@link assertSignInAllowed}; neither delayed
 * nor counted — so many requests sent at once with it are not taken for a burst of failures —
 * and, when its pair has failures, it clears them as every successful sign-in does. Ended
 * windows are pruned on the way, as by every attempt.
 *
 * @param now epoch ms.
 * @throws TooManyRequests (429) as {@link assertSignInAllowed}.
 */
export async function signInVerified(db: Db, subjects: SignInSubjects, now: number): Promise<void> {
  await prune(db, now);
  const counts = await allowedCounts(db, subjects, now);
  if ((counts.find((c) => c.subject === subjects.pair)?.failures ?? 0) > 0) {
    await db.updateTable('signInFailures').set({ failures: 0 }).where('subject', '=', subjects.pair).execute();
  }
}

/** The subjects' counts in their current windows (one query by primary key); throws the 429 owed. */
async function allowedCounts(db: Db, subjects: SignInSubjects, now: number): Promise<Count[]> {
  const counts = await db
    .selectFrom('signInFailures')
    .select(['subject', 'windowStart', 'failures'])
    .where('subject', 'in', [subjects.account, subjects.address, subjects.pair])
    .where('windowStart', '>', now - SIGN_IN_WINDOW_MS)
    .execute();
  const refused = refusal(counts, subjects, now, false);
  if (refused) throw refused;
  return counts;
}

/** An attempt that passed the limits and was counted as a failure until it reports success. */
export interface SignInAttempt {
  /** The password was right: gives the attempt back and clears the pair's failures. */
  succeeded(): Promise<void>;
  /** The password could not be checked (the directory did not answer): gives the attempt back, clearing nothing. */
  undecided(): Promise<void>;
}

/**
 * Starts a password attempt: refuses it while its pair or address is limited
 * ({@link assertSignInAllowed}), waits {@link signInDelayMs} when the account is past its
 * ceiling, then
 * counts it as a failure — the caller checks the password and calls `succeeded()` when it was
 * right. Counting is one statement returning the new counts, so concurrent attempts past a limit
 * are refused (and given back) even when they all passed the first check.
 *
 * @param now epoch ms; the wait moves it on.
 * @throws TooManyRequests (429, `Retry-After`) while the pair or address is limited, or when too
 *   many attempts on the account already wait (see the module's notes).
 */
export async function beginSignInAttempt(db: Db, subjects: SignInSubjects, now: number): Promise<SignInAttempt> {
  const accountFailures = await assertSignInAllowed(db, subjects, now);
  const waitMs = signInDelayMs(accountFailures);
  if (waitMs > 0) await waitMyTurn(db, subjects, waitMs);
  const at = now + waitMs;
  const counts = await countFailure(db, subjects, at);
  const refused = refusal(counts, subjects, at, true);
  if (refused) {
    await giveBack(db, counts, null);
    throw refused;
  }
  return { succeeded: () => giveBack(db, counts, subjects.pair), undecided: () => giveBack(db, counts, null) };
}

/**
 * One failure more for each subject, in one upsert (rows in the order account, address, pair);
 * a window that ended restarts at `now`. Returns the rows as counted. Windows that ended are
 * pruned now and then on the way.
 */
async function countFailure(db: Db, subjects: SignInSubjects, now: number): Promise<Count[]> {
  const expired = now - SIGN_IN_WINDOW_MS;
  await prune(db, now);
  return db
    .insertInto('signInFailures')
    .values([subjects.account, subjects.address, subjects.pair].map((subject) => ({ subject, windowStart: now, failures: 1 })))
    .onConflict((oc) =>
      oc.column('subject').doUpdateSet((eb) => ({
        failures: eb
          .case()
          .when('signInFailures.windowStart', '<=', expired)
          .then(1)
          .else(eb('signInFailures.failures', '+', 1))
          .end(),
        windowStart: eb.case().when('signInFailures.windowStart', '<=', expired).then(now).else(eb.ref('signInFailures.windowStart')).end(),
      })),
    )
    .returning(['subject', 'windowStart', 'failures'])
    .execute();
}

/**
 * Takes back one counted failure from each of `counts` whose window is still the one it was
 * counted in; the subject `clear` (the pair of a successful sign-in) drops to zero instead. An
 * upsert in the same row order as {@link countFailure} (a row pruned meanwhile comes back at 0).
 */
async function giveBack(db: Db, counts: Count[], clear: string | null): Promise<void> {
  const order = (c: Count) => ['account:', 'address:', 'pair:'].findIndex((prefix) => c.subject.startsWith(prefix));
  await db
    .insertInto('signInFailures')
    .values([...counts].sort((a, b) => order(a) - order(b)).map((c) => ({ subject: c.subject, windowStart: c.windowStart, failures: 0 })))
    .onConflict((oc) =>
      oc.column('subject').doUpdateSet((eb) => {
        const decremented = eb
          .case()
          .when(eb.and([eb('signInFailures.windowStart', '=', eb.ref('excluded.windowStart')), eb('signInFailures.failures', '>', 0)]))
          .then(eb('signInFailures.failures', '-', 1))
          .else(eb.ref('signInFailures.failures'))
          .end();
        return { failures: clear === null ? decremented : eb.case().when('signInFailures.subject', '=', clear).then(0).else(decremented).end() };
      }),
    )
    .execute();
}

/** Epoch ms of each database's last pruning by this process. */
const lastPrune = new WeakMap<object, number>();

/**
 * Deletes up to 1000 windows that ended, at most once a minute per process, by the
 * `sign_in_failures_window_start` index; rows another statement holds are skipped (PostgreSQL
 * `skip locked`), so pruning never waits for nor deadlocks with an attempt.
 */
async function prune(db: Db, now: number): Promise<void> {
  if (now - (lastPrune.get(db) ?? -Infinity) < PRUNE_EVERY_MS) return;
  lastPrune.set(db, now);
  const ended = db
    .selectFrom('signInFailures')
    .select('subject')
    .where('windowStart', '<=', now - SIGN_IN_WINDOW_MS)
    .limit(PRUNE_BATCH);
  await db.deleteFrom('signInFailures').where('subject', 'in', dialectOf(db).skipLocked(ended)).execute();
}

/** An attempt waiting before its password is checked. */
interface Waiting {
  address: string;
  /** Epoch ms when its wait ends. */
  until: number;
}

/** Per database: the attempts waiting in this process, by account subject. */
const waitingByDb = new WeakMap<object, Map<string, Waiting[]>>();
let waitingInProcess = 0;

/** Seconds until the soonest of `waiting` ends its wait (at least 1). */
const soonest = (waiting: Waiting[], now: number) => (Math.min(...waiting.map((w) => w.until)) - now) / 1000;

/**
 * Waits `ms` on a timer, holding one of the bounded places (see the module's notes).
 * @throws TooManyRequests when the process, the account or the pair has no place left.
 */
async function waitMyTurn(db: Db, subjects: SignInSubjects, ms: number): Promise<void> {
  let accounts = waitingByDb.get(db);
  if (!accounts) waitingByDb.set(db, (accounts = new Map()));
  const waiting = accounts.get(subjects.account) ?? [];
  const now = Date.now();
  if (waitingInProcess >= DELAYED_PER_PROCESS) throw limited(SIGN_IN_MAX_DELAY_MS / 1000);
  if (waiting.length >= DELAYED_PER_ACCOUNT) throw limited(soonest(waiting, now));
  const samePair = waiting.filter((w) => w.address === subjects.address);
  if (samePair.length >= DELAYED_PER_PAIR) throw limited(soonest(samePair, now));
  const mine: Waiting = { address: subjects.address, until: now + ms };
  waiting.push(mine);
  accounts.set(subjects.account, waiting);
  waitingInProcess++;
  try {
    await sleep(ms);
  } finally {
    waitingInProcess--;
    waiting.splice(waiting.indexOf(mine), 1);
    if (waiting.length === 0) accounts.delete(subjects.account);
  }
}
