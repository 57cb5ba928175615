/**
 * Web UI sessions (docs/compatibility.md#gitloom-differs-web-ui), stored in the database (`web_sessions`, migration 0015)
 * so every server process sharing it knows them. A session is a random token kept by the browser
 * in a signed cookie (the HTTP layer signs it); the table holds only its SHA-256. Each session
 * carries the synchronizer CSRF token of its forms. Sign-in itself goes through
 * {@link authenticateBasic} (same credentials, same rules as the API).
 */
import { hash, randomBytes } from 'node:crypto';
import type { Db } from '../../db/database.js';
import { NotFound } from '../../errors.js';
import { requireSelfOrAdmin, userExists, CREDENTIAL_USE_GRANULARITY_MS, type CredentialUse } from '../users/index.js';
import type { Actor, Client, Context } from '../context.js';
import { getSecuritySetting } from '../settings/index.js';
import { actorOfUser } from './authenticate.js';

/** Milliseconds in a day. */
const DAY_MS = 86_400_000;

/** A session as the web layer needs it. */
export interface WebSession {
  /** The signed-in user's actor. */
  actor: Actor;
  /** The synchronizer token every state-changing form of this session must send back. */
  csrfToken: string;
}

const digest = (token: string) => hash('sha256', token, 'hex');

/**
 * Starts a session for a user whose credentials were just checked, from `client`: returns the
 * cookie token (43 base64url characters, shown to nobody else), the session's CSRF token and when
 * it expires (epoch ms: the security setting's `sessionTimeoutDays` from now). Expired sessions of
 * every user are removed on the way.
 */
export async function createSession(db: Db, userId: number, now: number, client: Client): Promise<{ token: string; csrfToken: string; expireDate: number }> {
  const token = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(32).toString('base64url');
  const expireDate = now + (await getSecuritySetting({ db })).sessionTimeoutDays * DAY_MS;
  await db.deleteFrom('webSessions').where('expireDate', '<=', now).execute();
  await db
    .insertInto('webSessions')
    .values({
      tokenHash: digest(token),
      userId,
      csrfToken,
      createDate: now,
      expireDate,
      lastUsedDate: now,
      address: client.address,
      userAgent: client.userAgent,
    })
    .execute();
  return { token, csrfToken, expireDate };
}

/**
 * The session of a cookie token used now by `client`: its user's actor and CSRF token; null when
 * the token names no live session (unknown, ended or expired) or its user was deleted. Records
 * the use when the recorded one is a minute old or more (docs/compatibility.md#gitloom-differs-sessions-and-tokens).
 */
export async function findSession(db: Db, token: string, now: number, client: Client): Promise<WebSession | null> {
  const tokenHash = digest(token);
  const row = await db
    .selectFrom('webSessions')
    .select(['userId', 'csrfToken', 'lastUsedDate'])
    .where('tokenHash', '=', tokenHash)
    .where('expireDate', '>', now)
    .executeTakeFirst();
  if (!row) return null;
  if (!(await userExists(db, row.userId))) return null;
  if (row.lastUsedDate === null || now - Number(row.lastUsedDate) >= CREDENTIAL_USE_GRANULARITY_MS) {
    await db
      .updateTable('webSessions')
      .set({ lastUsedDate: now, address: client.address, userAgent: client.userAgent })
      .where('tokenHash', '=', tokenHash)
      .execute();
  }
  return { actor: await actorOfUser(db, row.userId, now), csrfToken: row.csrfToken };
}

/** A web session as its user sees it in the list of their sessions. */
export interface SessionInfo {
  /** The session's public id: the first 16 hex digits of its token's SHA-256 (never the token). */
  id: string;
  /** Epoch ms. */
  createDate: number;
  expireDate: number;
  /** The last recorded use (at most a minute behind). */
  lastUse: CredentialUse | null;
  /** The session of the cookie token `current` passed to {@link listSessions}. */
  current: boolean;
}

const publicId = (tokenHash: string) => tokenHash.slice(0, 16);

/**
 * A user's live web sessions, most recently used first: administrator or self. `current` is the
 * cookie token of the caller's own session, marked in the list.
 */
export async function listSessions(ctx: Context, userId: number, current: string | null): Promise<SessionInfo[]> {
  requireSelfOrAdmin(ctx, userId);
  const currentHash = current ? digest(current) : null;
  const rows = await ctx.db
    .selectFrom('webSessions')
    .select(['tokenHash', 'createDate', 'expireDate', 'lastUsedDate', 'address', 'userAgent'])
    .where('userId', '=', userId)
    .where('expireDate', '>', ctx.now())
    .orderBy('lastUsedDate', 'desc')
    .orderBy('createDate', 'desc')
    .execute();
  return rows.map((r) => ({
    id: publicId(r.tokenHash),
    createDate: Number(r.createDate),
    expireDate: Number(r.expireDate),
    lastUse: r.lastUsedDate === null ? null : { date: Number(r.lastUsedDate), address: r.address, userAgent: r.userAgent },
    current: r.tokenHash === currentHash,
  }));
}

/**
 * Ends one of a user's web sessions by its public id (see {@link SessionInfo.id}): administrator
 * or self. NotFound when the user has no live session of that id.
 */
export async function endSessionById(ctx: Context, userId: number, id: string): Promise<void> {
  requireSelfOrAdmin(ctx, userId);
  if (!/^[0-9a-f]{16}$/.test(id)) throw new NotFound(`No session found: ${id}`);
  const result = await ctx.db.deleteFrom('webSessions').where('userId', '=', userId).where('tokenHash', 'like', `${id}%`).executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) throw new NotFound(`No session found: ${id}`);
}

/** Ends a session server-side (sign-out): its cookie no longer signs anybody in. */
export async function endSession(db: Db, token: string): Promise<void> {
  await db.deleteFrom('webSessions').where('tokenHash', '=', digest(token)).execute();
}

/**
 * Ends every web session of a user but the one whose cookie token is `keep` (when given): a
 * password change signs the user out everywhere else (docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input). Access tokens are not
 * sessions and stay. Pass the transaction that changes the password, so both happen or neither.
 */
export async function endUserSessions(db: Db, userId: number, keep: string | null = null): Promise<void> {
  let query = db.deleteFrom('webSessions').where('userId', '=', userId);
  if (keep) query = query.where('tokenHash', '!=', digest(keep));
  await query.execute();
}
