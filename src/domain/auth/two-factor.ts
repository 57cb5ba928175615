/**
 * Two-factor authentication (docs/security.md#two-factor-authentication): a user's second
 * factors — a TOTP authenticator app (RFC 6238 through `otpauth`: SHA-1, 6 digits, 30-second
 * steps, one step of clock drift either way) and WebAuthn security keys or passkeys (through
 * `@simplewebauthn/server`) — and ten single-use recovery codes, stored hashed. Every change is
 * written with its audit row (docs/audit-log.md, actions `twoFactor.*`) in one transaction.
 *
 * The relying party of WebAuthn is the server's configured external URL (`GITLOOM_SERVER_URL`):
 * its host name is the RP id, its origin the only origin accepted.
 */
import { hash, randomBytes } from 'node:crypto';
import type {
  AuthenticationResponseJSON,
  AuthenticatorTransportFuture,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { Secret, TOTP } from 'otpauth';
import type { Db } from '../../db/database.js';
import { BadRequest, Conflict, Forbidden, NotFound } from '../../errors.js';
import { recordAudit } from '../audit/index.js';
import type { Context } from '../context.js';
import { decryptSecret, encryptSecret, secretKey } from '../projects/index.js';
import { findUserRow } from '../users/index.js';

/** How many recovery codes a user is given at a time. */
export const RECOVERY_CODE_COUNT = 10;
/** How long a security key's registration may take, ms. */
const REGISTRATION_TTL_MS = 5 * 60_000;
const ISSUER = 'Gitloom';

/** The WebAuthn library, loaded on first use: with its ASN.1 and X.509 parsers it holds megabytes a server without security keys never needs. */
const webauthn = () => import('@simplewebauthn/server');

/** What a user has enrolled, as their settings page shows it. */
export interface TwoFactorState {
  /** An authenticator app is enrolled (confirmed with a code). */
  totp: boolean;
  /** The secret of an authenticator app waiting for its first code, with its `otpauth://` URI; null when none waits. */
  pendingTotp: { secret: string; uri: string } | null;
  /** Recovery codes not used yet. */
  recoveryCodesLeft: number;
  securityKeys: { id: number; name: string; createDate: number; lastUsedDate: number | null }[];
}

const sha256 = (value: string) => hash('sha256', value, 'hex');
/** A recovery code as typed: case, spaces and dashes do not matter. */
const normalizedRecoveryCode = (code: string) => code.toLowerCase().replace(/[\s-]/g, '');

/** Authenticated data of an encrypted TOTP secret: a ciphertext made for anything else does not decrypt as one. */
const TOTP_PURPOSE = Buffer.from('gitloom totp secret');
/** A TOTP secret (base32) as stored: encrypted with the server's secret key (docs/security.md#data-at-rest). */
const sealed = (ctx: Context, secret: string) => encryptSecret(secretKey(ctx.config), secret, TOTP_PURPOSE);
/** The base32 TOTP secret of a stored value. */
const opened = (ctx: Context, stored: string) => decryptSecret(secretKey(ctx.config), stored, TOTP_PURPOSE);

function totpOf(secret: string, label: string): TOTP {
  return new TOTP({ issuer: ISSUER, label, algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) });
}

/** The relying party of WebAuthn: the configured external URL's host name and origin. */
function relyingParty(ctx: Context): { id: string; origin: string } {
  const url = new URL(ctx.config.serverUrl);
  return { id: url.hostname, origin: url.origin };
}

/** The user row of `userId`, for names in ceremonies and audit rows. @throws NotFound */
async function userNamed(db: Db, userId: number): Promise<{ id: number; name: string; fullName: string | null }> {
  const user = userId > 0 ? await findUserRow(db, userId) : undefined;
  if (!user) throw new NotFound(`User not found: ${userId}`);
  return user;
}

/**
 * Whether a user has a second factor: an enrolled authenticator app or a security key. A
 * user who has one signs in in two steps and may not use their password for Basic auth.
 */
export async function hasSecondFactor(db: Db, userId: number): Promise<boolean> {
  const methods = await secondFactorMethods(db, userId);
  return methods.totp || methods.securityKeys;
}

/**
 * The second factors of a user (see {@link TwoFactorState}). The user themself or an administrator.
 * @throws NotFound for anybody else (existence is not leaked) or an unknown user.
 */
export async function twoFactorState(ctx: Context, userId: number): Promise<TwoFactorState> {
  if (ctx.actor.userId !== userId && !ctx.actor.isAdmin) throw new NotFound(`User not found: ${userId}`);
  const user = await userNamed(ctx.db, userId);
  const [totp, codes, keys] = await Promise.all([
    ctx.db.selectFrom('totpSecrets').select(['secret', 'confirmed']).where('userId', '=', userId).executeTakeFirst(),
    ctx.db
      .selectFrom('recoveryCodes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('userId', '=', userId)
      .where('usedDate', 'is', null)
      .executeTakeFirstOrThrow(),
    ctx.db.selectFrom('webauthnCredentials').select(['id', 'name', 'createDate', 'lastUsedDate']).where('userId', '=', userId).orderBy('id').execute(),
  ]);
  const pending = totp && totp.confirmed === 0 && ctx.actor.userId === userId ? opened(ctx, totp.secret) : null;
  return {
    totp: totp?.confirmed === 1,
    pendingTotp: pending === null ? null : { secret: pending, uri: totpOf(pending, user.name).toString() },
    recoveryCodesLeft: Number(codes.n),
    securityKeys: keys,
  };
}

/**
 * Starts enrolling an authenticator app for the calling user: a new random 160-bit secret,
 * waiting for its first code ({@link confirmTotp}); a secret already waiting is replaced.
 * @throws Conflict when an authenticator app is already enrolled.
 */
export async function startTotpEnrolment(ctx: Context): Promise<void> {
  const userId = ctx.actor.userId;
  await ctx.db.transaction().execute(async (tx) => {
    const existing = await tx.selectFrom('totpSecrets').select('confirmed').where('userId', '=', userId).executeTakeFirst();
    if (existing?.confirmed === 1) throw new Conflict('An authenticator app is already set up: remove it first to set up another');
    await tx.deleteFrom('totpSecrets').where('userId', '=', userId).execute();
    await tx
      .insertInto('totpSecrets')
      .values({ userId, secret: sealed(ctx, new Secret({ size: 20 }).base32), confirmed: 0, lastStep: null, createDate: ctx.now() })
      .execute();
  });
}

/**
 * The time step a TOTP `code` was made for, when it is right for `secret` at `now` (epoch ms)
 * within one step of drift and newer than `lastStep` (a code is accepted once: RFC 6238 §5.2);
 * otherwise a refusal message.
 */
function totpStep(secret: string, code: string, now: number, lastStep: number | null): { step: number } | { refusal: string } {
  const token = code.replace(/\s/g, '');
  const totp = totpOf(secret, '');
  const delta = /^\d{6}$/.test(token) ? totp.validate({ token, timestamp: now, window: 1 }) : null;
  if (delta === null) return { refusal: 'Wrong code' };
  const step = totp.counter({ timestamp: now }) + delta;
  if (lastStep !== null && step <= lastStep) return { refusal: 'This code was used already: wait for the next one' };
  return { step };
}

/**
 * Accepts a TOTP code of a user's enrolled authenticator app once: records its time step as the
 * last accepted (a compare-and-set, so two requests with one code cannot both pass). Returns a
 * refusal message, or null when accepted.
 */
async function consumeTotp(ctx: Context, db: Db, userId: number, code: string, now: number): Promise<string | null> {
  const row = await db.selectFrom('totpSecrets').select(['secret', 'lastStep']).where('userId', '=', userId).where('confirmed', '=', 1).executeTakeFirst();
  if (!row) return 'No authenticator app is set up';
  const checked = totpStep(opened(ctx, row.secret), code, now, row.lastStep === null ? null : Number(row.lastStep));
  if ('refusal' in checked) return checked.refusal;
  const updated = await db
    .updateTable('totpSecrets')
    .set({ lastStep: checked.step })
    .where('userId', '=', userId)
    .where((eb) => eb.or([eb('lastStep', 'is', null), eb('lastStep', '<', checked.step)]))
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1 ? null : 'This code was used already: wait for the next one';
}

/** Accepts an unused recovery code of a user once. Returns whether it was one. */
async function consumeRecoveryCode(db: Db, userId: number, code: string, now: number): Promise<boolean> {
  const normalized = normalizedRecoveryCode(code);
  if (!/^[0-9a-f]{10}$/.test(normalized)) return false;
  const updated = await db
    .updateTable('recoveryCodes')
    .set({ usedDate: now })
    .where('userId', '=', userId)
    .where('codeHash', '=', sha256(normalized))
    .where('usedDate', 'is', null)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1;
}

/** Replaces a user's recovery codes by {@link RECOVERY_CODE_COUNT} new ones (`xxxxx-xxxxx`, 40 random bits each); returns them. */
async function newRecoveryCodes(db: Db, userId: number): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const hex = randomBytes(5).toString('hex');
    return `${hex.slice(0, 5)}-${hex.slice(5)}`;
  });
  await db.deleteFrom('recoveryCodes').where('userId', '=', userId).execute();
  await db
    .insertInto('recoveryCodes')
    .values(codes.map((code) => ({ userId, codeHash: sha256(normalizedRecoveryCode(code)), usedDate: null })))
    .execute();
  return codes;
}

/**
 * Recovery codes for a user enrolling a factor: new ones when they had no second factor before
 * (the first factor comes with codes), none otherwise (theirs stay valid).
 */
async function codesForFirstFactor(db: Db, userId: number, hadFactor: boolean): Promise<string[] | null> {
  return hadFactor ? null : newRecoveryCodes(db, userId);
}

/**
 * Confirms the calling user's waiting authenticator app with a current `code`: it is enrolled
 * from then on (and the code's step counts as used). Audited as `twoFactor.enrolTotp`.
 *
 * @returns the new recovery codes — shown once, only their hashes are kept — when this is the
 *   user's first second factor; null otherwise.
 * @throws Conflict when no authenticator app waits for its code; BadRequest for a wrong code.
 */
export async function confirmTotp(ctx: Context, code: string): Promise<string[] | null> {
  const userId = ctx.actor.userId;
  return ctx.db.transaction().execute(async (tx) => {
    const row = await tx.selectFrom('totpSecrets').select(['secret', 'confirmed']).where('userId', '=', userId).executeTakeFirst();
    if (!row || row.confirmed === 1) throw new Conflict('No authenticator app is waiting for its first code: start again');
    const checked = totpStep(opened(ctx, row.secret), code, ctx.now(), null);
    if ('refusal' in checked) throw new BadRequest(`${checked.refusal}: enter the code your authenticator app shows now`);
    const hadFactor = await hasSecondFactor(tx, userId);
    await tx.updateTable('totpSecrets').set({ confirmed: 1, lastStep: checked.step }).where('userId', '=', userId).execute();
    const codes = await codesForFirstFactor(tx, userId, hadFactor);
    await recordAudit(ctx, tx, { action: 'twoFactor.enrolTotp', targetType: 'user', targetId: userId, targetName: ctx.actor.name, after: { totp: true } });
    return codes;
  });
}

/** A proof shaped as a TOTP code or a recovery code (a password so shaped is tried as one first). */
const codeShaped = (proof: string) => /^\d{6}$/.test(proof.replace(/\s/g, '')) || /^[0-9a-f]{10}$/.test(normalizedRecoveryCode(proof));

/** Thrown inside a change's transaction when its proof is not a right code (rolls the change back). */
class WrongCode extends Error {}

/**
 * Runs `change` of the calling user's second factors in one transaction once they prove who they
 * are: `proof` is a current TOTP code of their authenticator app or an unused recovery code
 * (consumed in that transaction), or their password (checked through the sign-in limits, outside
 * it: a wrong one counts as a failed sign-in). `change` calls `prove()` after its own checks.
 * @throws Forbidden('Wrong password or code') when the proof is none of these.
 */
async function withProof<T>(
  ctx: Context,
  proof: string,
  verifyPassword: PasswordCheck,
  change: (tx: Db, prove: () => Promise<void>) => Promise<T>,
): Promise<T> {
  const userId = ctx.actor.userId;
  const wrong = () => new Forbidden('Wrong password or code');
  const run = (passwordRight: boolean) =>
    ctx.db.transaction().execute((tx) =>
      change(tx, async () => {
        if (passwordRight) return;
        if (!codeShaped(proof)) throw wrong();
        if ((await consumeTotp(ctx, tx, userId, proof, ctx.now())) === null) return;
        if (await consumeRecoveryCode(tx, userId, proof, ctx.now())) return;
        throw new WrongCode();
      }),
    );
  const password = () => proof !== '' && verifyPassword(ctx.actor.name, proof);
  if (!codeShaped(proof)) return run(await password());
  try {
    return await run(false);
  } catch (error) {
    if (!(error instanceof WrongCode)) throw error;
  }
  if (!(await password())) throw wrong();
  return run(true);
}

/**
 * Checks a user's password through the sign-in limits; true when right. Given by the caller (the
 * auth area's password sign-in), so this module needs no cycle to reach it.
 */
export type PasswordCheck = (name: string, password: string) => Promise<boolean>;

/**
 * Replaces the calling user's recovery codes by new ones (the old ones stop working), after
 * {@link withProof}. Audited as `twoFactor.regenerateRecoveryCodes`.
 * @returns the new codes (shown once).
 * @throws Conflict when the user has no second factor; Forbidden for a wrong proof.
 */
export async function regenerateRecoveryCodes(ctx: Context, proof: string, verifyPassword: PasswordCheck): Promise<string[]> {
  const userId = ctx.actor.userId;
  return withProof(ctx, proof, verifyPassword, async (tx, prove) => {
    if (!(await hasSecondFactor(tx, userId))) throw new Conflict('Two-factor authentication is not on');
    await prove();
    const codes = await newRecoveryCodes(tx, userId);
    await recordAudit(ctx, tx, { action: 'twoFactor.regenerateRecoveryCodes', targetType: 'user', targetId: userId, targetName: ctx.actor.name });
    return codes;
  });
}

/** Deletes every second factor of a user, their recovery codes and ceremonies in progress. */
async function removeFactors(db: Db, userId: number): Promise<{ totp: boolean; securityKeys: number }> {
  const totp = await db.deleteFrom('totpSecrets').where('userId', '=', userId).where('confirmed', '=', 1).executeTakeFirst();
  const keys = await db.deleteFrom('webauthnCredentials').where('userId', '=', userId).executeTakeFirst();
  await db.deleteFrom('totpSecrets').where('userId', '=', userId).execute();
  await db.deleteFrom('recoveryCodes').where('userId', '=', userId).execute();
  await db.deleteFrom('twoFactorChallenges').where('userId', '=', userId).execute();
  return { totp: Number(totp.numDeletedRows) > 0, securityKeys: Number(keys.numDeletedRows) };
}

/**
 * Turns two-factor authentication off for the calling user, after {@link withProof}: the
 * authenticator app, every security key and the recovery codes go. Audited as `twoFactor.disable`.
 * @throws Conflict when it is not on; Forbidden for a wrong proof.
 */
export async function disableTwoFactor(ctx: Context, proof: string, verifyPassword: PasswordCheck): Promise<void> {
  const userId = ctx.actor.userId;
  await withProof(ctx, proof, verifyPassword, async (tx, prove) => {
    if (!(await hasSecondFactor(tx, userId))) throw new Conflict('Two-factor authentication is not on');
    await prove();
    const before = await removeFactors(tx, userId);
    await recordAudit(ctx, tx, { action: 'twoFactor.disable', targetType: 'user', targetId: userId, targetName: ctx.actor.name, before });
  });
}

/**
 * An administrator resets a user's second factors (a lost phone and lost recovery codes): as
 * {@link disableTwoFactor}, without proof. Audited as `twoFactor.reset`.
 * @throws NotFound for a non-administrator (the page is not advertised) or an unknown user;
 *   Conflict when the user has no second factor.
 */
export async function resetTwoFactor(ctx: Context, userId: number): Promise<void> {
  if (!ctx.actor.isAdmin) throw new NotFound(`User not found: ${userId}`);
  await ctx.db.transaction().execute(async (tx) => {
    const user = await userNamed(tx, userId);
    if (!(await hasSecondFactor(tx, userId))) throw new Conflict(`${user.name} has no second factor`);
    const before = await removeFactors(tx, userId);
    await recordAudit(ctx, tx, { action: 'twoFactor.reset', targetType: 'user', targetId: userId, targetName: user.name, before });
  });
}

/** The security keys of a user as WebAuthn descriptors. */
async function credentialsOf(db: Db, userId: number) {
  const rows = await db.selectFrom('webauthnCredentials').selectAll().where('userId', '=', userId).orderBy('id').execute();
  return rows.map((row) => ({
    row,
    descriptor: { id: row.credentialId, transports: (row.transports ? row.transports.split(',') : []) as AuthenticatorTransportFuture[] },
  }));
}

/**
 * Starts registering a security key or passkey for the calling user (WebAuthn registration
 * ceremony): the options for `navigator.credentials.create()` (as `startRegistration` of
 * `@simplewebauthn/browser` takes them), their challenge kept server-side for 5 minutes in place
 * of any earlier registration of the user. The user's keys are excluded (no key twice).
 */
export async function startSecurityKeyRegistration(ctx: Context): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const userId = ctx.actor.userId;
  const rp = relyingParty(ctx);
  const user = await userNamed(ctx.db, userId);
  const existing = await credentialsOf(ctx.db, userId);
  const { generateRegistrationOptions } = await webauthn();
  const options = await generateRegistrationOptions({
    rpName: ISSUER,
    rpID: rp.id,
    userName: user.name,
    userDisplayName: user.fullName ?? user.name,
    userID: new TextEncoder().encode(`gitloom-user-${userId}`),
    attestationType: 'none',
    excludeCredentials: existing.map((c) => c.descriptor),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
  });
  await ctx.db.transaction().execute(async (tx) => {
    await tx.deleteFrom('twoFactorChallenges').where('userId', '=', userId).where('kind', '=', 'register').execute();
    await tx
      .insertInto('twoFactorChallenges')
      .values({
        tokenHash: sha256(`register:${randomBytes(16).toString('hex')}`),
        userId,
        kind: 'register',
        challenge: options.challenge,
        failures: 0,
        expireDate: ctx.now() + REGISTRATION_TTL_MS,
      })
      .execute();
  });
  return options;
}

/** Parses a WebAuthn response posted by the browser as JSON. @throws BadRequest */
function parsedResponse<T>(json: string): T {
  try {
    const value = JSON.parse(json) as unknown;
    if (typeof value === 'object' && value !== null && 'id' in value && 'response' in value) return value as T;
  } catch {
    // answered below
  }
  throw new BadRequest('The security key answered nothing usable: try again');
}

/**
 * Finishes the calling user's security key registration: verifies the authenticator's answer
 * (`responseJson`, from `startRegistration`) against the stored challenge, the RP id and origin,
 * and keeps the credential named `name`. Audited as `twoFactor.addSecurityKey`.
 *
 * @returns new recovery codes when this is the user's first second factor (shown once); else null.
 * @throws BadRequest for an empty or too long name or an answer that does not verify; Conflict
 *   when no registration is in progress (or it expired).
 */
export async function finishSecurityKeyRegistration(ctx: Context, name: string, responseJson: string): Promise<string[] | null> {
  const userId = ctx.actor.userId;
  const keyName = name.trim();
  if (keyName === '' || keyName.length > 100) throw new BadRequest('Name the security key (at most 100 characters)');
  const response = parsedResponse<RegistrationResponseJSON>(responseJson);
  const rp = relyingParty(ctx);
  // loaded before the transaction, which its first import would otherwise hold open
  const { verifyRegistrationResponse } = await webauthn();
  return ctx.db.transaction().execute(async (tx) => {
    const pending = await tx
      .deleteFrom('twoFactorChallenges')
      .where('userId', '=', userId)
      .where('kind', '=', 'register')
      .returning(['challenge', 'expireDate'])
      .executeTakeFirst();
    if (!pending?.challenge || Number(pending.expireDate) <= ctx.now()) throw new Conflict('No security key registration in progress: start again');
    let verified;
    try {
      verified = await verifyRegistrationResponse({ response, expectedChallenge: pending.challenge, expectedOrigin: rp.origin, expectedRPID: rp.id });
    } catch (error) {
      throw new BadRequest(`The security key's answer does not verify: ${(error as Error).message}`);
    }
    if (!verified.verified) throw new BadRequest("The security key's answer does not verify");
    const { credential } = verified.registrationInfo;
    const taken = await tx.selectFrom('webauthnCredentials').select('id').where('credentialId', '=', credential.id).executeTakeFirst();
    if (taken) throw new Conflict('This security key is registered already');
    const hadFactor = await hasSecondFactor(tx, userId);
    const id = await tx
      .insertInto('webauthnCredentials')
      .values({
        userId,
        credentialId: credential.id,
        publicKey: Buffer.from(credential.publicKey).toString('base64url'),
        counter: credential.counter,
        transports: (credential.transports ?? []).join(','),
        name: keyName,
        createDate: ctx.now(),
        lastUsedDate: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const codes = await codesForFirstFactor(tx, userId, hadFactor);
    await recordAudit(ctx, tx, {
      action: 'twoFactor.addSecurityKey',
      targetType: 'user',
      targetId: userId,
      targetName: ctx.actor.name,
      after: { securityKey: { id: id.id, name: keyName } },
    });
    return codes;
  });
}

/**
 * Removes one of the calling user's security keys after {@link withProof}; the last factor
 * removed takes the recovery codes with it. Audited as `twoFactor.removeSecurityKey`.
 * @throws NotFound for a key of nobody or of another user; Forbidden for a wrong proof.
 */
export async function removeSecurityKey(ctx: Context, keyId: number, proof: string, verifyPassword: PasswordCheck): Promise<void> {
  const userId = ctx.actor.userId;
  await withProof(ctx, proof, verifyPassword, async (tx, prove) => {
    const key = await tx.selectFrom('webauthnCredentials').select(['id', 'name']).where('id', '=', keyId).where('userId', '=', userId).executeTakeFirst();
    if (!key) throw new NotFound(`Security key not found: ${keyId}`);
    await prove();
    await tx.deleteFrom('webauthnCredentials').where('id', '=', keyId).execute();
    if (!(await hasSecondFactor(tx, userId))) await tx.deleteFrom('recoveryCodes').where('userId', '=', userId).execute();
    await recordAudit(ctx, tx, {
      action: 'twoFactor.removeSecurityKey',
      targetType: 'user',
      targetId: userId,
      targetName: ctx.actor.name,
      before: { securityKey: { id: key.id, name: key.name } },
    });
  });
}

/**
 * The options of a WebAuthn authentication ceremony for a user's security keys (for
 * `startAuthentication` of `@simplewebauthn/browser`), or null when the user has none.
 */
export async function authenticationOptions(ctx: Context, userId: number): Promise<PublicKeyCredentialRequestOptionsJSON | null> {
  const credentials = await credentialsOf(ctx.db, userId);
  if (credentials.length === 0) return null;
  const { generateAuthenticationOptions } = await webauthn();
  return generateAuthenticationOptions({ rpID: relyingParty(ctx).id, allowCredentials: credentials.map((c) => c.descriptor), userVerification: 'preferred' });
}

/** A second-step answer: a TOTP code, a recovery code, or a security key's answer (JSON). */
export type SecondFactorAnswer = { code: string } | { recoveryCode: string } | { securityKey: string };

/**
 * Checks a second-step answer of a user and consumes it (a TOTP step, a recovery code, a key's
 * signature counter) in `db`, the transaction of the sign-in. `challenge` is the WebAuthn
 * challenge given out for this attempt. Returns a refusal message, or null when accepted.
 */
export async function acceptSecondFactor(ctx: Context, db: Db, userId: number, answer: SecondFactorAnswer, challenge: string | null): Promise<string | null> {
  const now = ctx.now();
  if ('code' in answer) return consumeTotp(ctx, db, userId, answer.code, now);
  if ('recoveryCode' in answer) return (await consumeRecoveryCode(db, userId, answer.recoveryCode, now)) ? null : 'Wrong or used recovery code';
  if (challenge === null) return 'No security key challenge was given: reload the page';
  const response = parsedResponse<AuthenticationResponseJSON>(answer.securityKey);
  const row = await db.selectFrom('webauthnCredentials').selectAll().where('userId', '=', userId).where('credentialId', '=', response.id).executeTakeFirst();
  if (!row) return 'This security key is not registered for this account';
  const rp = relyingParty(ctx);
  const { verifyAuthenticationResponse } = await webauthn();
  let result;
  try {
    result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: {
        id: row.credentialId,
        publicKey: Buffer.from(row.publicKey, 'base64url'),
        counter: Number(row.counter),
        transports: (row.transports ? row.transports.split(',') : []) as AuthenticatorTransportFuture[],
      },
    });
  } catch {
    return "The security key's answer does not verify";
  }
  if (!result.verified) return "The security key's answer does not verify";
  await db.updateTable('webauthnCredentials').set({ counter: result.authenticationInfo.newCounter, lastUsedDate: now }).where('id', '=', row.id).execute();
  return null;
}

/** The second factors a user has enrolled: what they may answer a second step with. */
export async function secondFactorMethods(db: Db, userId: number): Promise<{ totp: boolean; securityKeys: boolean }> {
  const [totp, key] = await Promise.all([
    db.selectFrom('totpSecrets').select('userId').where('userId', '=', userId).where('confirmed', '=', 1).executeTakeFirst(),
    db.selectFrom('webauthnCredentials').select('id').where('userId', '=', userId).limit(1).executeTakeFirst(),
  ]);
  return { totp: totp !== undefined, securityKeys: key !== undefined };
}
