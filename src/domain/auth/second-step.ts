/**
 * The second step of a sign-in (docs/security.md#two-factor-authentication): after a right
 * password, a user with a second factor gets no session yet but a pending sign-in — a
 * server-side record (`two_factor_challenges`, kind `sign-in`) named by a random token the
 * browser keeps in a cookie, alive for {@link SECOND_STEP_TTL_MS}. The session starts only when
 * the record is answered with a TOTP code, a recovery code or a security key. Wrong answers count
 * as failed sign-ins of the account (src/domain/auth/sign-in-limits.ts: 429 past the limits) and
 * of the record, which ends after {@link SECOND_STEP_MAX_FAILURES}; each is audited as
 * `twoFactor.signInFailure`.
 */
import { hash, randomBytes } from 'node:crypto';
import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { Unauthorized } from '../../errors.js';
import { recordAudit } from '../audit/index.js';
import type { Context } from '../context.js';
import { findUserRow } from '../users/index.js';
import { beginSignInAttempt, signInSubjects } from './sign-in-limits.js';
import { acceptSecondFactor, authenticationOptions, secondFactorMethods, type SecondFactorAnswer } from './two-factor.js';

/** How long a pending sign-in waits for its second step: 5 minutes, in ms. */
export const SECOND_STEP_TTL_MS = 5 * 60_000;
/** Wrong answers a pending sign-in takes before it ends (the password must be given again). */
export const SECOND_STEP_MAX_FAILURES = 5;

const digest = (token: string) => hash('sha256', token, 'hex');

/** What the second-step page shows. */
export interface PendingSignIn {
  userId: number;
  name: string;
  totp: boolean;
  /** The WebAuthn options of this attempt when the user has security keys (a new challenge each time they are read). */
  securityKey: PublicKeyCredentialRequestOptionsJSON | null;
}

const expired = () => new Unauthorized('The sign-in waited too long or was ended: sign in again', { code: 'GITLOOM_ERR_TWO_FACTOR_EXPIRED' });

/**
 * Starts the second step for a user whose password was just verified: returns the token (43
 * base64url characters) the browser keeps. Ended pending sign-ins of every user are removed on the way.
 */
export async function startSecondStep(ctx: Context, userId: number): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  const now = ctx.now();
  await ctx.db.deleteFrom('twoFactorChallenges').where('expireDate', '<=', now).execute();
  await ctx.db
    .insertInto('twoFactorChallenges')
    .values({ tokenHash: digest(token), userId, kind: 'sign-in', challenge: null, failures: 0, expireDate: now + SECOND_STEP_TTL_MS })
    .execute();
  return token;
}

/** The live pending sign-in of a token. @throws Unauthorized (`GITLOOM_ERR_TWO_FACTOR_EXPIRED`) when none. */
async function liveRecord(ctx: Context, token: string) {
  const row = await ctx.db
    .selectFrom('twoFactorChallenges')
    .select(['id', 'userId', 'challenge', 'failures'])
    .where('tokenHash', '=', digest(token))
    .where('kind', '=', 'sign-in')
    .where('expireDate', '>', ctx.now())
    .executeTakeFirst();
  if (!row) throw expired();
  const user = await findUserRow(ctx.db, row.userId);
  if (!user) throw expired();
  return { ...row, name: user.name };
}

/**
 * The pending sign-in of a token, for its page: the user and the methods they may answer with;
 * when they have security keys, a new WebAuthn challenge is stored on the record.
 * @throws Unauthorized (`GITLOOM_ERR_TWO_FACTOR_EXPIRED`) for an unknown, ended or expired token.
 */
export async function pendingSignIn(ctx: Context, token: string): Promise<PendingSignIn> {
  const record = await liveRecord(ctx, token);
  const [methods, securityKey] = await Promise.all([secondFactorMethods(ctx.db, record.userId), authenticationOptions(ctx, record.userId)]);
  if (securityKey) await ctx.db.updateTable('twoFactorChallenges').set({ challenge: securityKey.challenge }).where('id', '=', record.id).execute();
  return { userId: record.userId, name: record.name, totp: methods.totp, securityKey };
}

/**
 * Answers a pending sign-in. Accepted: the record ends and the user's id is returned (the caller
 * starts the session); the answer is consumed in the same transaction (a TOTP step, a recovery
 * code, a key's counter), so it never serves twice.
 *
 * @throws Unauthorized (`GITLOOM_ERR_TWO_FACTOR_EXPIRED`) for an unknown, ended or expired
 *   token; Unauthorized (`GITLOOM_ERR_TWO_FACTOR_CODE`) for a wrong or used answer (the record ends
 *   after {@link SECOND_STEP_MAX_FAILURES}); TooManyRequests while the sign-in limits hold.
 */
export async function completeSecondStep(ctx: Context, token: string, answer: SecondFactorAnswer): Promise<number> {
  const record = await liveRecord(ctx, token);
  const address = ctx.client?.address ?? '';
  const attempt = await beginSignInAttempt(ctx.db, signInSubjects(record.userId, record.name, address), ctx.now());
  const refusal = await ctx.db.transaction().execute(async (tx) => {
    const refused = await acceptSecondFactor(ctx, tx, record.userId, answer, record.challenge);
    if (refused === null) {
      const ended = await tx.deleteFrom('twoFactorChallenges').where('id', '=', record.id).executeTakeFirst();
      // a concurrent answer ended the record first: this one signs nobody in
      if (Number(ended.numDeletedRows) !== 1) throw expired();
    }
    return refused;
  });
  if (refusal === null) {
    await attempt.succeeded();
    return record.userId;
  }
  const method = 'code' in answer ? 'totp' : 'recoveryCode' in answer ? 'recoveryCode' : 'securityKey';
  await ctx.db.transaction().execute(async (tx) => {
    const counted = await tx
      .updateTable('twoFactorChallenges')
      .set((eb) => ({ failures: eb('failures', '+', 1) }))
      .where('id', '=', record.id)
      .returning('failures')
      .executeTakeFirst();
    if (counted && counted.failures >= SECOND_STEP_MAX_FAILURES) await tx.deleteFrom('twoFactorChallenges').where('id', '=', record.id).execute();
    await recordAudit(ctx, tx, {
      action: 'twoFactor.signInFailure',
      targetType: 'user',
      targetId: record.userId,
      targetName: record.name,
      actor: { id: record.userId, name: record.name },
      after: { method },
    });
  });
  throw new Unauthorized(refusal, { code: 'GITLOOM_ERR_TWO_FACTOR_CODE' });
}
