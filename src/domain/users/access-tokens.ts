import { randomInt } from 'node:crypto';
import { BadRequest, Conflict, NotFound } from '../../errors.js';
import type { Db } from '../../db/database.js';
import type { ActorToken, Client, Context } from '../context.js';
import { getSecuritySetting } from '../settings/index.js';
import { getUserRow, requireSelfOrAdmin } from './users.js';
import { hashToken } from '../token-hash.js';

/** Milliseconds in a day. */
const DAY_MS = 86_400_000;

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
  /** The token reads and fetches only (docs/compatibility.md#gitloom-differs-sessions-and-tokens). */
  readOnly: boolean;
  /** The ids of the projects a limited token reaches, null when it is not limited. */
  projectIds: number[] | null;
  /** Its last use, null when never used. */
  lastUse: CredentialUse | null;
}

/** When and from where a credential was last used. */
export interface CredentialUse {
  /** Epoch ms. */
  date: number;
  address: string | null;
  userAgent: string | null;
}

/** What a new access token may do (docs/compatibility.md#gitloom-differs-sessions-and-tokens). */
export interface AccessTokenData {
  description?: string | null;
  /** Epoch ms or null (never); within the security setting's `maxTokenLifetimeDays` when set. */
  expireDate?: number | null;
  readOnly?: boolean;
  /** Project ids the token is limited to (the caller resolved and checked them); null or absent: unlimited. */
  projectIds?: readonly number[] | null;
}

/** Get Access Tokens: administrator or self. */
export async function listAccessTokens(ctx: Context, userId: number): Promise<AccessTokenInfo[]> {
  await getUserRow(ctx.db, userId);
  requireSelfOrAdmin(ctx, userId);
  const [rows, limits] = await Promise.all([
    ctx.db
      .selectFrom('accessTokens as t')
      .leftJoin('accessTokenUses as u', 'u.tokenId', 't.id')
      .select([
        't.id',
        't.prefix',
        't.description',
        't.createDate',
        't.expireDate',
        't.readOnly',
        't.projectsLimited',
        'u.lastUsedDate',
        'u.address',
        'u.userAgent',
      ])
      .where('t.ownerId', '=', userId)
      .orderBy('t.id')
      .execute(),
    ctx.db
      .selectFrom('accessTokenProjects as p')
      .innerJoin('accessTokens as t', 't.id', 'p.tokenId')
      .select(['p.tokenId', 'p.projectId'])
      .where('t.ownerId', '=', userId)
      .orderBy('p.projectId')
      .execute(),
  ]);
  return rows.map((r) => ({
    id: r.id,
    value: `${r.prefix}…`,
    description: r.description,
    createDate: r.createDate,
    expireDate: r.expireDate,
    readOnly: r.readOnly === 1,
    projectIds: r.projectsLimited === 1 ? limits.filter((l) => l.tokenId === r.id).map((l) => l.projectId) : null,
    lastUse: r.lastUsedDate === null ? null : { date: Number(r.lastUsedDate), address: r.address, userAgent: r.userAgent },
  }));
}

/**
 * Create Access Token: administrator or self. Stores only the hash; returns the value, which is
 * never shown again. `expireDate` in epoch ms or null (a past date is accepted, and useless);
 * when the security setting bounds token lifetimes (`maxTokenLifetimeDays`), a token without
 * expiry expires at the bound and one past it is refused. A read-only or project-limited token is
 * stored with its limits (docs/compatibility.md#gitloom-differs-sessions-and-tokens).
 * Conflict for the built-in system and unknown users, who never log in; BadRequest
 * (`GITLOOM_ERR_TOKEN_LIFETIME`) past the lifetime bound; a token may not reach more than its
 * caller may: a limited caller's token is limited to at most the caller's projects and read-only
 * when the caller is.
 */
export async function createAccessToken(ctx: Context, userId: number, data: AccessTokenData): Promise<string> {
  const user = await getUserRow(ctx.db, userId);
  requireSelfOrAdmin(ctx, userId);
  // the system and unknown users never log in (docs/compatibility.md#gitloom-differs-permissions-and-first-boot), not even by token
  if (user.id < 0) throw new Conflict('This user can not log in');
  const now = ctx.now();
  const { maxTokenLifetimeDays } = await getSecuritySetting(ctx);
  let expireDate = data.expireDate ?? null;
  if (maxTokenLifetimeDays !== null) {
    const latest = now + maxTokenLifetimeDays * DAY_MS;
    if (expireDate === null) expireDate = latest;
    else if (expireDate > latest) throw new BadRequest(`Access tokens must expire within ${maxTokenLifetimeDays} days`, { code: 'GITLOOM_ERR_TOKEN_LIFETIME' });
  }
  // a token made with a limited token is at most as limited as it
  const caller = ctx.actor.token;
  const readOnly = Boolean(data.readOnly) || Boolean(caller?.readOnly);
  let projectIds = data.projectIds ? [...new Set(data.projectIds)] : null;
  if (caller?.projectIds) projectIds = (projectIds ?? caller.projectIds).filter((id) => caller.projectIds!.includes(id));
  const value = generateTokenValue();
  await ctx.db.transaction().execute(async (trx) => {
    const { id } = await trx
      .insertInto('accessTokens')
      .values({
        ownerId: user.id,
        hash: hashToken(value),
        prefix: value.slice(0, 4),
        description: data.description ?? null,
        createDate: now,
        expireDate,
        readOnly: readOnly ? 1 : 0,
        projectsLimited: projectIds ? 1 : 0,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    if (projectIds && projectIds.length > 0)
      await trx
        .insertInto('accessTokenProjects')
        .values(projectIds.map((projectId) => ({ tokenId: id, projectId })))
        .execute();
  });
  return value;
}

/** Delete Access Token by its full value: administrator or self; NotFound when no such token. */
export async function deleteAccessToken(ctx: Context, userId: number, value: string): Promise<void> {
  await getUserRow(ctx.db, userId);
  requireSelfOrAdmin(ctx, userId);
  const result = await ctx.db.deleteFrom('accessTokens').where('ownerId', '=', userId).where('hash', '=', hashToken(value)).executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) throw new NotFound('No access token found with specified value');
}

/**
 * Deletes one of a user's access tokens by its listing id (the web pages, which never hold the
 * value again): administrator or self; NotFound when the user has no such token.
 */
export async function deleteAccessTokenById(ctx: Context, userId: number, tokenId: number): Promise<void> {
  await getUserRow(ctx.db, userId);
  requireSelfOrAdmin(ctx, userId);
  const result = await ctx.db.deleteFrom('accessTokens').where('ownerId', '=', userId).where('id', '=', tokenId).executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) throw new NotFound(`No access token found: ${tokenId}`);
}

/**
 * The owner of an access token by its value (docs/compatibility.md#gitloom-differs-authentication), in one query:
 * the owner's profile and the token's expiry (epoch ms, null: never); undefined for an unknown
 * token. Expiry is the caller's to check.
 */
export async function accessTokenOwner(
  db: Db,
  value: string,
): Promise<{ id: number; name: string; fullName: string | null; expireDate: number | null; token: ActorToken } | undefined> {
  const row = await db
    .selectFrom('accessTokens as t')
    .innerJoin('users as u', 'u.id', 't.ownerId')
    .select(['u.id', 'u.name', 'u.fullName', 't.expireDate', 't.id as tokenId', 't.readOnly', 't.projectsLimited'])
    .where('t.hash', '=', hashToken(value))
    .executeTakeFirst();
  if (row === undefined) return undefined;
  const projectIds =
    row.projectsLimited === 1
      ? (await db.selectFrom('accessTokenProjects').select('projectId').where('tokenId', '=', row.tokenId).orderBy('projectId').execute()).map(
          (p) => p.projectId,
        )
      : null;
  return {
    id: row.id,
    name: row.name,
    fullName: row.fullName,
    expireDate: row.expireDate,
    token: { id: row.tokenId, readOnly: row.readOnly === 1, projectIds },
  };
}

/** How long the recorded last use of a token or session may lag behind its real last use, in ms. */
export const CREDENTIAL_USE_GRANULARITY_MS = 60_000;

/**
 * Records that an access token was used now, from `client` (docs/compatibility.md#gitloom-differs-sessions-and-tokens):
 * upserts its `access_token_uses` row unless the stored use is less than
 * {@link CREDENTIAL_USE_GRANULARITY_MS} old, so a busy token costs one write a minute. A token
 * deleted meanwhile is ignored.
 */
export async function noteAccessTokenUse(db: Db, tokenId: number, client: Client, now: number): Promise<void> {
  const values = { lastUsedDate: now, address: client.address, userAgent: client.userAgent };
  await db
    .insertInto('accessTokenUses')
    .columns(['tokenId', 'lastUsedDate', 'address', 'userAgent'])
    .expression((eb) =>
      eb
        .selectFrom('accessTokens')
        .select(['id', eb.val(values.lastUsedDate).as('lastUsedDate'), eb.val(values.address).as('address'), eb.val(values.userAgent).as('userAgent')])
        .where('id', '=', tokenId),
    )
    .onConflict((oc) =>
      oc
        .column('tokenId')
        .doUpdateSet(values)
        .where('accessTokenUses.lastUsedDate', '<=', now - CREDENTIAL_USE_GRANULARITY_MS),
    )
    .execute();
}
