import { randomInt } from 'node:crypto';
import { Conflict, NotFound } from '../../errors.js';
import type { Db } from '../../db/database.js';
import { recordAudit, type AuditEvent } from '../audit/index.js';
import type { Context } from '../context.js';
import { getUserRow, requireSelfOrAdmin } from './users.js';
import { hashToken } from '../token-hash.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A new token value: 40 characters of `[A-Za-z0-9]` from the CSPRNG (docs/compatibility.md#gitloom-differs-authentication). */
export function generateTokenValue(): string {
  let value = '';
  for (let i = 0; i < 40; i++) value += ALPHABET[randomInt(ALPHABET.length)];
  return value;
}

/** Listing shape: the value masked to its first 4 characters + `…` (docs/compatibility.md#gitloom-differs-authentication). */
export interface AccessTokenInfo {
  /** The token's row id (not on the wire): how the pages name a token whose value is gone. */
  id: number;
  value: string;
  description: string | null;
  createDate: number;
  expireDate: number | null;
}

/** Get Access Tokens: administrator or self. */
export async function listAccessTokens(ctx: Context, userId: number): Promise<AccessTokenInfo[]> {
  await getUserRow(ctx.db, userId);
  requireSelfOrAdmin(ctx, userId);
  const rows = await ctx.db
    .selectFrom('accessTokens')
    .select(['id', 'prefix', 'description', 'createDate', 'expireDate'])
    .where('ownerId', '=', userId)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ id: r.id, value: `${r.prefix}…`, description: r.description, createDate: r.createDate, expireDate: r.expireDate }));
}

/**
 * Create Access Token: administrator or self. Stores only the hash; returns the value, which is
 * never shown again. `expireDate` in epoch ms or null (a past date is accepted, and useless).
 * Conflict for the built-in system and unknown users, who never log in.
 */
export async function createAccessToken(ctx: Context, userId: number, data: { description?: string | null; expireDate?: number | null }): Promise<string> {
  const user = await getUserRow(ctx.db, userId);
  requireSelfOrAdmin(ctx, userId);
  // the system and unknown users never log in (docs/compatibility.md#gitloom-differs-permissions-and-first-boot), not even by token
  if (user.id < 0) throw new Conflict('This user can not log in');
  const value = generateTokenValue();
  await ctx.db.transaction().execute(async (tx) => {
    const { id } = await tx
      .insertInto('accessTokens')
      .values({
        ownerId: user.id,
        hash: hashToken(value),
        prefix: value.slice(0, 4),
        description: data.description ?? null,
        createDate: ctx.now(),
        expireDate: data.expireDate ?? null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await recordAudit(ctx, tx, tokenAudit('accessToken.create', user, { id, prefix: value.slice(0, 4), description: data.description ?? null }));
  });
  return value;
}

/**
 * The audit row of an access token's creation or deletion (docs/audit-log.md#actions): the token
 * by id, named by its owner and its first four characters — never its value.
 */
function tokenAudit(action: string, owner: { id: number; name: string }, token: { id: number; prefix: string; description: string | null }): AuditEvent {
  const values = { owner: owner.name, prefix: `${token.prefix}…`, description: token.description };
  return {
    action,
    targetType: 'accessToken',
    targetId: token.id,
    targetName: `${owner.name}/${token.prefix}…`,
    ...(action.endsWith('.create') ? { after: values } : { before: values }),
  };
}

/** Deletes the token of `userId` that `where` selects, audited as `accessToken.delete`; false when there is none. */
async function deleteToken(ctx: Context, user: { id: number; name: string }, where: { hash: string } | { id: number }): Promise<boolean> {
  return ctx.db.transaction().execute(async (tx) => {
    let query = tx.selectFrom('accessTokens').select(['id', 'prefix', 'description']).where('ownerId', '=', user.id);
    query = 'hash' in where ? query.where('hash', '=', where.hash) : query.where('id', '=', where.id);
    const token = await query.executeTakeFirst();
    if (!token) return false;
    await tx.deleteFrom('accessTokens').where('id', '=', token.id).execute();
    await recordAudit(ctx, tx, tokenAudit('accessToken.delete', user, token));
    return true;
  });
}

/** Delete Access Token by its full value: administrator or self; NotFound when no such token. */
export async function deleteAccessToken(ctx: Context, userId: number, value: string): Promise<void> {
  const user = await getUserRow(ctx.db, userId);
  requireSelfOrAdmin(ctx, userId);
  if (!(await deleteToken(ctx, user, { hash: hashToken(value) }))) throw new NotFound('No access token found with specified value');
}

/**
 * Deletes one of a user's access tokens by its listing id (the web pages, which never hold the
 * value again): administrator or self; NotFound when the user has no such token.
 */
export async function deleteAccessTokenById(ctx: Context, userId: number, tokenId: number): Promise<void> {
  const user = await getUserRow(ctx.db, userId);
  requireSelfOrAdmin(ctx, userId);
  if (!(await deleteToken(ctx, user, { id: tokenId }))) throw new NotFound(`No access token found: ${tokenId}`);
}

/**
 * The owner of an access token by its value (docs/compatibility.md#gitloom-differs-authentication), in one query:
 * the owner's profile and the token's expiry (epoch ms, null: never); undefined for an unknown
 * token. Expiry is the caller's to check.
 */
export async function accessTokenOwner(
  db: Db,
  value: string,
): Promise<{ id: number; name: string; fullName: string | null; expireDate: number | null } | undefined> {
  return db
    .selectFrom('accessTokens as t')
    .innerJoin('users as u', 'u.id', 't.ownerId')
    .select(['u.id', 'u.name', 'u.fullName', 't.expireDate'])
    .where('t.hash', '=', hashToken(value))
    .executeTakeFirst();
}
