import { preparedQuery, type Db } from '../../db/database.js';
import type { UserRow } from '../../db/schema.js';
import { BadRequest, Conflict, NotFound } from '../../errors.js';
import { ROOT_ID, type Context } from '../context.js';
import { deny, requireAdmin, requireUser } from '../actor.js';
import { auditChanges, recordAudit } from '../audit/index.js';
import { isUniqueViolation } from '../unique.js';
import { hashPassword } from './passwords.js';
import { removeAvatarFile } from './avatar-files.js';
import { externalProvidersOf, isExternalPassword } from './external-identities.js';

/**
 * Refuses a password change of a user of an external system with OneDev's message: the SSO
 * provider's name when the user is linked to one, "external system" (the directory) otherwise.
 */
async function refuseExternalPassword(db: Db, userId: number): Promise<never> {
  const sso = (await externalProvidersOf(db, userId)).find((p) => p.startsWith('oidc:'));
  const via = sso ? `SSO provider '${sso.slice('oidc:'.length)}'` : 'external system';
  throw new Conflict(`The user is currently authenticated via ${via}, please change password there instead`, { code: 'GITLOOM_ERR_EXTERNAL_ACCOUNT' });
}

/** The wire shape of a user (docs/compatibility.md#users-json-and-names): id, name, fullName only. */
export type User = Pick<UserRow, 'id' | 'name' | 'fullName'>;

const NAME_PATTERN = /^\w[\w.-]*$/;
const RESERVED_NAMES = new Set(['new', 'onedev', 'gitloom', 'unknown']);
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/;

/**
 * Validates and normalizes a login name (docs/compatibility.md#users-json-and-names "Name rule"): ASCII
 * `\w[\w-.]*`, not reserved; returns it lower-cased. Throws BadRequest.
 */
export function normalizeUserName(name: unknown): string {
  if (typeof name !== 'string' || name === '') throw new BadRequest('Login name is required');
  if (!NAME_PATTERN.test(name)) {
    throw new BadRequest('Should start with alphanumeric or underscore, and contains only alphanumeric, underscore, dash, or dot');
  }
  if (RESERVED_NAMES.has(name.toLowerCase())) throw new BadRequest(`'${name}' is a reserved name`);
  return name.toLowerCase();
}

/** Validates an email address (lenient, like Hibernate's check) and lower-cases it. */
export function normalizeEmail(email: unknown): string {
  if (typeof email !== 'string' || !EMAIL_PATTERN.test(email)) throw new BadRequest('Malformed email address');
  return email.toLowerCase();
}

/** Self or administrator; anything else is 401/403 (docs/compatibility.md#users-endpoints). */
export function requireSelfOrAdmin(ctx: Context, userId: number): void {
  if (!ctx.actor.isAdmin && ctx.actor.userId !== userId) deny(ctx.actor);
}

const userById = preparedQuery((db, id: number) => db.selectFrom('users').selectAll().where('id', '=', id));

/** Loads a user by id; NotFound when missing. */
export async function getUserRow(db: Db, userId: number): Promise<UserRow> {
  const [user] = await userById(db, userId);
  if (!user) throw new NotFound(`User not found: ${userId}`);
  return user;
}

/**
 * Get My Profile (docs/compatibility.md#users-endpoints): the caller's own profile as authentication read
 * it, with no query of its own (a change to any user renews every cached actor). Throws
 * Unauthorized for anonymous.
 */
export function getMyProfile(ctx: Context): User {
  const id = requireUser(ctx.actor);
  return { id, name: ctx.actor.name, fullName: ctx.actor.fullName };
}

/** Get Profile: administrator or self (docs/compatibility.md#users-endpoints). */
export async function getUser(ctx: Context, userId: number): Promise<User> {
  requireSelfOrAdmin(ctx, userId);
  return getUserRow(ctx.db, userId);
}

/**
 * Query Profile: administrators only; ordinary users (id > 0) whose name, full name or any
 * email contains `term` (case-insensitive, literal), ordered by name.
 */
export async function queryUsers(ctx: Context, term: string | undefined, offset: number, count: number): Promise<User[]> {
  requireAdmin(ctx.actor);
  let query = ctx.db.selectFrom('users').select(['id', 'name', 'fullName']).where('id', '>', 0);
  if (term) {
    const pattern = `%${term.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where((eb) =>
      eb.or([
        eb('name', 'like', pattern),
        eb(eb.fn('lower', ['fullName']), 'like', pattern),
        eb('id', 'in', eb.selectFrom('emailAddresses').select('ownerId').where('value', 'like', pattern)),
      ]),
    );
  }
  return query.orderBy('name').offset(offset).limit(count).execute();
}

/**
 * Runs a write whose uniqueness was checked inside it; when a concurrent writer won the race
 * anyway (a unique-constraint violation once the transaction ended), `onClash` explains it —
 * by throwing the matching Conflict. Any other error passes through.
 */
async function onUniqueViolation<T>(write: () => Promise<T>, onClash: () => Promise<never> | never): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error)) await onClash();
    throw error;
  }
}

async function assertNameFree(db: Db, name: string, exceptId?: number): Promise<void> {
  let query = db.selectFrom('users').select('id').where('name', '=', name);
  if (exceptId !== undefined) query = query.where('id', '<>', exceptId);
  if (await query.executeTakeFirst()) throw new Conflict('Login name is already used by another user');
}

export interface UserCreateData {
  name: string;
  password: string;
  fullName?: string | null;
  emailAddress: string;
}

/**
 * Create: administrators only. Creates the user and one primary, git, verified email.
 * Returns the id. BadRequest for invalid fields, Conflict for a used name or email.
 */
export async function createUser(ctx: Context, data: UserCreateData): Promise<number> {
  requireAdmin(ctx.actor);
  const name = normalizeUserName(data.name);
  const email = normalizeEmail(data.emailAddress);
  if (!data.password) throw new BadRequest('Password is required');
  const passwordHash = await hashPassword(data.password);
  // a concurrent create that won the race surfaces as the same 409 as the checks below
  return onUniqueViolation(
    () =>
      ctx.db.transaction().execute(async (tx) => {
        await assertNameFree(tx, name);
        if (await tx.selectFrom('emailAddresses').select('id').where('value', '=', email).executeTakeFirst()) {
          throw new Conflict('Email address is already used by another user');
        }
        const { id } = await tx
          .insertInto('users')
          .values({ name, fullName: data.fullName ?? null, passwordHash, createDate: ctx.now() })
          .returning('id')
          .executeTakeFirstOrThrow();
        await tx.insertInto('emailAddresses').values({ ownerId: id, value: email, primary: 1, git: 1, verificationCode: null }).execute();
        await recordAudit(ctx, tx, {
          action: 'user.create',
          targetType: 'user',
          targetId: id,
          targetName: name,
          after: { name, fullName: data.fullName ?? null, email },
        });
        return id;
      }),
    async () => {
      await assertNameFree(ctx.db, name);
      throw new Conflict('Email address is already used by another user');
    },
  );
}

/**
 * Update Profile: administrator or self; partial merge of `name` and `fullName`
 * (absent keeps, null clears fullName). Names are validated and unique (409).
 */
export async function updateUser(ctx: Context, userId: number, patch: { name?: string; fullName?: string | null }): Promise<void> {
  const user = await getUserRow(ctx.db, userId);
  requireSelfOrAdmin(ctx, userId);
  const name = patch.name === undefined ? user.name : normalizeUserName(patch.name);
  const fullName = patch.fullName === undefined ? user.fullName : patch.fullName;
  await onUniqueViolation(
    () =>
      ctx.db.transaction().execute(async (tx) => {
        if (name !== user.name) await assertNameFree(tx, name, userId);
        if (name !== user.name) await ctx.events.dispatchInTransaction('principalRenamed', { db: tx, kind: 'user', from: user.name, to: name });
        await tx.updateTable('users').set({ name, fullName }).where('id', '=', userId).execute();
        await recordAudit(ctx, tx, {
          action: 'user.update',
          targetType: 'user',
          targetId: userId,
          targetName: name,
          ...auditChanges({ name: user.name, fullName: user.fullName }, { name, fullName }),
        });
      }),
    () => {
      throw new Conflict('Login name is already used by another user');
    },
  );
}

/**
 * Set Password: administrator or self; raw text body, must not be empty. Ends the user's web
 * sessions in the same transaction (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input): a change by the user keeps only
 * `currentSession` (the cookie token of the web session it was made from; null from the API), an
 * administrator's reset of another user's password ends them all. Access tokens stay.
 *
 * @throws NotFound (no such user), Forbidden (neither self nor administrator), Conflict (a
 *   built-in user; a user of an external system, with OneDev's message naming it,
 *   docs/security.md#single-sign-on), BadRequest (empty password).
 */
export async function setPassword(ctx: Context, userId: number, password: string, currentSession: string | null = null): Promise<void> {
  const user = await getUserRow(ctx.db, userId);
  requireSelfOrAdmin(ctx, userId);
  if (user.id < 0) throw new Conflict('This user can not log in');
  if (isExternalPassword(user.passwordHash)) await refuseExternalPassword(ctx.db, userId);
  if (!password) throw new BadRequest('Password is required');
  const passwordHash = await hashPassword(password);
  await ctx.db.transaction().execute(async (tx) => {
    await tx.updateTable('users').set({ passwordHash }).where('id', '=', userId).execute();
    await ctx.events.dispatchInTransaction('passwordChanged', { db: tx, userId, keepSession: ctx.actor.userId === userId ? currentSession : null });
    // that it changed, never the value
    await recordAudit(ctx, tx, { action: 'user.changePassword', targetType: 'user', targetId: userId, targetName: user.name });
  });
}

/**
 * Delete: administrators only; not root, not yourself (409); refused while a project's
 * protections name the user. Records that outlive their author (pull requests, issues, comments,
 * builds) go to the unknown user (docs/compatibility.md#users-deletion) through the `userDeleting`
 * reactions of their areas; rows the user owns (tokens, emails, authorizations, reviews,
 * watches, …) cascade in the schema.
 */
export async function deleteUser(ctx: Context, userId: number): Promise<void> {
  requireAdmin(ctx.actor);
  const user = await getUserRow(ctx.db, userId);
  if (user.id === ROOT_ID) throw new Conflict('Root user can not be deleted');
  if (user.id === ctx.actor.userId) throw new Conflict('Can not delete yourself');
  if (user.id < 0) throw new Conflict('Built-in users can not be deleted');
  const usages: string[] = [];
  await ctx.events.dispatchInTransaction('principalDeleting', { db: ctx.db, kind: 'user', name: user.name, usages });
  if (usages.length > 0) {
    throw new Conflict(`User '${user.name}' is still being used in below places:\n${usages.map((p) => `    -> ${p}`).join('\n')}`);
  }
  await ctx.db.transaction().execute(async (tx) => {
    await recordAudit(ctx, tx, {
      action: 'user.delete',
      targetType: 'user',
      targetId: userId,
      targetName: user.name,
      before: { name: user.name, fullName: user.fullName },
    });
    await ctx.events.dispatchInTransaction('userDeleting', { db: tx, userId });
    await tx.deleteFrom('users').where('id', '=', userId).execute();
  });
  await removeAvatarFile(ctx.config, user);
}
