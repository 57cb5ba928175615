/**
 * Web UI sessions (docs/compatibility.md#gitloom-differs-web-ui), stored in the database (`web_sessions`, migration 0015)
 * so every server process sharing it knows them. A session is a random token kept by the browser
 * in a signed cookie (the HTTP layer signs it); the table holds only its SHA-256. Each session
 * carries the synchronizer CSRF token of its forms. Sign-in itself goes through
 * {@link authenticateBasic} (same credentials, same rules as the API).
 */
import { hash, randomBytes } from 'node:crypto';
import type { Db } from '../../db/database.js';
import type { Actor } from '../context.js';
import { userExists } from '../users/index.js';
import { actorOfUser } from './authenticate.js';

/** How long a session lasts after sign-in: 14 days, in ms. */
export const SESSION_TTL_MS = 14 * 24 * 3600_000;

/** A session as the web layer needs it. */
export interface WebSession {
  /** The signed-in user's actor. */
  actor: Actor;
  /** The synchronizer token every state-changing form of this session must send back. */
  csrfToken: string;
}

const digest = (token: string) => hash('sha256', token, 'hex');

/**
 * Starts a session for a user whose credentials were just checked: returns the cookie token
 * (43 base64url characters, shown to nobody else) and the session's CSRF token. Expired
 * sessions of every user are removed on the way.
 */
export async function createSession(db: Db, userId: number, now: number): Promise<{ token: string; csrfToken: string }> {
  const token = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(32).toString('base64url');
  await db.deleteFrom('webSessions').where('expireDate', '<=', now).execute();
  await db
    .insertInto('webSessions')
    .values({ tokenHash: digest(token), userId, csrfToken, createDate: now, expireDate: now + SESSION_TTL_MS })
    .execute();
  return { token, csrfToken };
}

/**
 * The session of a cookie token: its user's actor and CSRF token; null when the token names no
 * live session (unknown, ended or expired) or its user was deleted.
 */
export async function findSession(db: Db, token: string, now: number): Promise<WebSession | null> {
  const row = await db
    .selectFrom('webSessions')
    .select(['userId', 'csrfToken'])
    .where('tokenHash', '=', digest(token))
    .where('expireDate', '>', now)
    .executeTakeFirst();
  if (!row) return null;
  if (!(await userExists(db, row.userId))) return null;
  return { actor: await actorOfUser(db, row.userId, now), csrfToken: row.csrfToken };
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
