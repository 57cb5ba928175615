import { createHash } from 'node:crypto';
import type { Db } from '../../db/database.js';
import { TooManyRequests } from '../../errors.js';

/** Failed password sign-ins allowed per subject within one window (CONTRACT.md §4). */
export const SIGN_IN_FAILURE_LIMIT = 10;
/** Longest typed name kept as typed in a subject (longer ones are digested). */
const MAX_NAME_LENGTH = 255;
/** Length of the failure window, ms: it starts at the first failure and lasts 5 minutes. */
export const SIGN_IN_WINDOW_MS = 5 * 60_000;

/**
 * The subjects a password sign-in is counted under: the account — the user's id when the name
 * (login or any email) names one, so every alias shares one count; else the name as typed,
 * lower-cased, NUL bytes dropped, so unknown names are limited alike and the limit reveals
 * nothing about existence — and the client address the attempt came from.
 *
 * @param userId the user the name resolved to, or null.
 */
export function signInSubjects(userId: number | null, name: string, clientAddress: string): string[] {
  const typed = name.replaceAll('\0', '').trim().toLowerCase();
  // a name longer than any login or email is kept as its digest: a key fits an index entry
  const account = userId !== null ? `account:#${userId}`
    : typed.length <= MAX_NAME_LENGTH ? `account:${typed}` : `account:sha256:${createHash('sha256').update(typed).digest('hex')}`;
  return [account, `address:${clientAddress}`];
}

/**
 * Refuses a sign-in while any of its subjects has {@link SIGN_IN_FAILURE_LIMIT} failures in its
 * current window — even one whose password is right, so guessing on stops paying. The counters
 * live in the database (`sign_in_failures`), so several server processes agree.
 *
 * Semantics: per account, 10 failed passwords (from any addresses, under any of its names:
 * login or emails) block that account's password sign-ins from every address; per address, 10 failed passwords (for any accounts) block every
 * password sign-in from that address. Access tokens are not counted or blocked (40 random
 * characters are not guessable). A window lasts 5 minutes from its first failure.
 *
 * @param now epoch ms.
 * @throws TooManyRequests (429) with `retryAfter` seconds until the last blocking window ends.
 */
export async function assertSignInAllowed(db: Db, subjects: string[], now: number): Promise<void> {
  const blocking = await db
    .selectFrom('signInFailures')
    .select(['windowStart'])
    .where('subject', 'in', subjects)
    .where('failures', '>=', SIGN_IN_FAILURE_LIMIT)
    .where('windowStart', '>', now - SIGN_IN_WINDOW_MS)
    .execute();
  if (blocking.length === 0) return;
  const until = Math.max(...blocking.map((row) => row.windowStart + SIGN_IN_WINDOW_MS));
  throw new TooManyRequests('Too many failed sign-ins, try again later', Math.max(1, Math.ceil((until - now) / 1000)), { code: 'GITLOOM_ERR_SIGN_IN_LIMIT' });
}

/**
 * Counts one failed sign-in for each subject: one upsert per subject, so concurrent failures in
 * several processes all count; a window older than {@link SIGN_IN_WINDOW_MS} restarts at `now`.
 * Windows that ended are deleted on the way.
 */
export async function recordSignInFailure(db: Db, subjects: string[], now: number): Promise<void> {
  const expired = now - SIGN_IN_WINDOW_MS;
  await db.deleteFrom('signInFailures').where('windowStart', '<=', expired).execute();
  for (const subject of subjects) {
    await db
      .insertInto('signInFailures')
      .values({ subject, windowStart: now, failures: 1 })
      .onConflict((oc) => oc.column('subject').doUpdateSet((eb) => ({
        failures: eb.case().when('signInFailures.windowStart', '<=', expired).then(1).else(eb('signInFailures.failures', '+', 1)).end(),
        windowStart: eb.case().when('signInFailures.windowStart', '<=', expired).then(now).else(eb.ref('signInFailures.windowStart')).end(),
      })))
      .execute();
  }
}

/** Forgets the failures of an account after a successful sign-in (its address keeps counting). */
export async function clearAccountFailures(db: Db, accountSubject: string): Promise<void> {
  await db.deleteFrom('signInFailures').where('subject', '=', accountSubject).execute();
}
