import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { EmailAddressTable } from '../../db/schema.js';
import { BadRequest, Conflict, NotFound } from '../../errors.js';
import { recordAudit } from '../audit/index.js';
import { uniquely } from '../unique.js';
import type { Context } from '../context.js';
import { requireAdmin } from '../actor.js';
import { getUserRow, normalizeEmail, requireSelfOrAdmin } from './users.js';

/** An email address row: `{id, value, primary, git, ownerId, verificationCode}` (null code: verified). */
export type EmailAddress = Selectable<EmailAddressTable>;

const USED = 'Email address is already used by another user';

/** Get Email Addresses: administrator or self (docs/compatibility.md#users-endpoints, docs/compatibility.md#email-addresses-and-ssh-keys). */
export async function listEmailAddresses(ctx: Context, userId: number): Promise<EmailAddress[]> {
  await getUserRow(ctx.db, userId);
  requireSelfOrAdmin(ctx, userId);
  return ctx.db.selectFrom('emailAddresses').selectAll().where('ownerId', '=', userId).orderBy('id').execute();
}

/**
 * Adds an email address to a user, as an administrator does (docs/compatibility.md#email-addresses-and-ssh-keys): it
 * is verified at once, and a user's first address becomes primary and git. Lower-cased, unique
 * across users. Returns its id. Throws Unauthorized/Forbidden for non-administrators, NotFound
 * for an unknown user, BadRequest for a malformed address, Conflict when any user has it.
 */
export async function addEmailAddress(ctx: Context, userId: number, value: string): Promise<number> {
  requireAdmin(ctx.actor);
  const owner = await getUserRow(ctx.db, userId);
  const email = normalizeEmail(value.trim());
  // a concurrent add of the same address that won the race is the same 409
  return uniquely(USED, () =>
    ctx.db.transaction().execute(async (tx) => {
      if (await tx.selectFrom('emailAddresses').select('id').where('value', '=', email).executeTakeFirst()) throw new Conflict(USED);
      const first = !(await tx.selectFrom('emailAddresses').select('id').where('ownerId', '=', userId).executeTakeFirst());
      const { id } = await tx
        .insertInto('emailAddresses')
        .values({ ownerId: userId, value: email, primary: first ? 1 : 0, git: first ? 1 : 0, verificationCode: null })
        .returning('id')
        .executeTakeFirstOrThrow();
      await recordAudit(ctx, tx, { ...addressAudit(owner.name, id, email), action: 'emailAddress.create', after: { owner: owner.name, value: email } });
      return id;
    }),
  );
}

/** The target of an email address's audit rows (docs/audit-log.md#actions): the address by id, named by its owner and value. */
function addressAudit(owner: string, id: number, value: string) {
  return { targetType: 'emailAddress', targetId: id, targetName: `${owner}/${value}` };
}

/** The address `addressId` of user `userId`; NotFound otherwise. */
async function addressOf(db: Db, userId: number, addressId: number): Promise<EmailAddress> {
  const address = await db.selectFrom('emailAddresses').selectAll().where('id', '=', addressId).where('ownerId', '=', userId).executeTakeFirst();
  if (!address) throw new NotFound(`Email address not found: ${addressId}`);
  return address;
}

/**
 * Makes a verified address its owner's primary one (where notifications go) or git one (the
 * identity of the owner's merges and web edits, src/domain/users/identities.ts): the owner's
 * other addresses lose that role. The owner or an administrator; NotFound when user `userId` has
 * no such address, BadRequest when it is not verified.
 */
export async function setEmailAddressRole(ctx: Context, userId: number, addressId: number, role: 'primary' | 'git'): Promise<void> {
  requireSelfOrAdmin(ctx, userId);
  await ctx.db.transaction().execute(async (tx) => {
    const address = await addressOf(tx, userId, addressId);
    const owner = await getUserRow(tx, userId);
    if (address.verificationCode !== null) throw new BadRequest(`Email address is not verified: ${address.value}`);
    await tx
      .updateTable('emailAddresses')
      .set({ [role]: 0 })
      .where('ownerId', '=', userId)
      .where('id', '<>', addressId)
      .execute();
    await tx
      .updateTable('emailAddresses')
      .set({ [role]: 1 })
      .where('id', '=', addressId)
      .execute();
    await recordAudit(ctx, tx, {
      ...addressAudit(owner.name, addressId, address.value),
      action: 'emailAddress.update',
      before: { [role]: address[role] === 1 },
      after: { [role]: true },
    });
  });
}

/**
 * Deletes an address of user `userId`: never the primary one (BadRequest: make another primary
 * first); when it was the git address, the primary one takes that role. The owner or an
 * administrator; NotFound when the user has no such address.
 */
export async function deleteEmailAddress(ctx: Context, userId: number, addressId: number): Promise<void> {
  requireSelfOrAdmin(ctx, userId);
  await ctx.db.transaction().execute(async (tx) => {
    const address = await addressOf(tx, userId, addressId);
    const owner = await getUserRow(tx, userId);
    if (address.primary === 1) throw new BadRequest('Can not delete the primary email address');
    await tx.deleteFrom('emailAddresses').where('id', '=', addressId).execute();
    if (address.git === 1) await tx.updateTable('emailAddresses').set({ git: 1 }).where('ownerId', '=', userId).where('primary', '=', 1).execute();
    await recordAudit(ctx, tx, {
      ...addressAudit(owner.name, addressId, address.value),
      action: 'emailAddress.delete',
      before: { owner: owner.name, value: address.value },
    });
  });
}

/** A user's verified email addresses (lower-case values), in one query; none for an unknown user. */
export async function verifiedEmailAddresses(db: Db, userId: number): Promise<string[]> {
  const rows = await db.selectFrom('emailAddresses').select('value').where('ownerId', '=', userId).where('verificationCode', 'is', null).execute();
  return rows.map((row) => row.value);
}

/** The owners of these verified addresses (lower-case values), in one query: address → user id; unverified and unknown addresses are absent. */
export async function verifiedEmailOwners(db: Db, emails: readonly string[]): Promise<Map<string, number>> {
  if (emails.length === 0) return new Map();
  const rows = await db.selectFrom('emailAddresses').select(['value', 'ownerId']).where('value', 'in', emails).where('verificationCode', 'is', null).execute();
  return new Map(rows.map((row) => [row.value, row.ownerId]));
}

/** A user as a verified address of theirs names them: login, full name and primary address. */
export interface EmailUser {
  email: string;
  name: string;
  fullName: string | null;
  primaryEmail: string;
}

/**
 * The users owning these verified addresses (lower-case values) with their primary address, in
 * one query (for the top contributors, docs/compatibility.md#projects-endpoints item 11); addresses of no
 * user, unverified ones and users without a primary address are left out.
 */
export async function usersByVerifiedEmails(db: Db, emails: readonly string[]): Promise<EmailUser[]> {
  if (emails.length === 0) return [];
  return db
    .selectFrom('emailAddresses as e')
    .innerJoin('users as u', 'u.id', 'e.ownerId')
    .innerJoin('emailAddresses as p', (join) => join.onRef('p.ownerId', '=', 'u.id').on('p.primary', '=', 1))
    .select(['e.value as email', 'u.name', 'u.fullName', 'p.value as primaryEmail'])
    .where('e.value', 'in', emails)
    .where('e.verificationCode', 'is', null)
    .execute();
}
