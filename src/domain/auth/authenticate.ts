import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Db } from '../../db/database.js';
import { Unauthorized } from '../../errors.js';
import { ROOT_ID, SYSTEM_ID, type Actor } from '../context.js';
import { getSecuritySetting } from '../settings/settings.js';
import { hashToken } from '../users/access-tokens.js';
import { verifyPassword } from '../users/passwords.js';

/**
 * Successful password checks, keyed by a digest of (user, stored hash, password): scrypt costs
 * tens of milliseconds, and git clients send Basic credentials on every request. A password
 * change alters the stored hash, so stale entries can never match.
 */
const verifiedPasswords = new LRUCache<string, true>({ max: 10_000, ttl: 5 * 60_000 });

async function userIdByToken(db: Db, value: string, now: number): Promise<number | null> {
  const row = await db
    .selectFrom('accessTokens')
    .select(['ownerId', 'expireDate'])
    .where('hash', '=', hashToken(value))
    .executeTakeFirst();
  if (!row || (row.expireDate !== null && row.expireDate <= now)) return null;
  return row.ownerId;
}

/**
 * HTTP Basic (CONTRACT.md §5, reference/platform.md §2): when the secret is a valid access
 * token the name is ignored; otherwise the name is a login name or any email of the user
 * (case-insensitive) and the secret its password. Returns the user id; throws
 * Unauthorized('Invalid credentials').
 */
export async function authenticateBasic(db: Db, name: string, secret: string, now: number): Promise<number> {
  const byToken = await userIdByToken(db, secret, now);
  if (byToken !== null) return byToken;
  const login = name.toLowerCase();
  const user = await db
    .selectFrom('users')
    .select(['id', 'passwordHash'])
    .where('id', '>', 0)
    .where((eb) => eb.or([
      eb('name', '=', login),
      eb('id', '=', eb.selectFrom('emailAddresses').select('ownerId').where('value', '=', login)),
    ]))
    .executeTakeFirst();
  if (user?.passwordHash) {
    const key = createHash('sha256').update(`${user.id}\0${user.passwordHash}\0${secret}`).digest('hex');
    if (verifiedPasswords.has(key)) return user.id;
    if (await verifyPassword(secret, user.passwordHash)) {
      verifiedPasswords.set(key, true);
      return user.id;
    }
  }
  throw new Unauthorized('Invalid credentials');
}

/** Bearer token: the owner's id; an unknown or expired token is 401 (CONTRACT.md §5). */
export async function authenticateBearer(db: Db, token: string, now: number): Promise<number> {
  const userId = await userIdByToken(db, token, now);
  if (userId === null) throw new Unauthorized('Invalid or expired access token');
  return userId;
}

/**
 * Builds the actor for a user id: groups (plus the default login group), administrator status
 * (root, system, administrator group) and root-project creation (reference/platform.md §7).
 */
export async function loadActor(db: Db, userId: number): Promise<Actor> {
  const [groups, security] = await Promise.all([
    db
      .selectFrom('memberships')
      .innerJoin('groups', 'groups.id', 'memberships.groupId')
      .select(['groups.id', 'groups.administrator', 'groups.createRootProjects'])
      .where('memberships.userId', '=', userId)
      .execute(),
    getSecuritySetting({ db } as never),
  ]);
  if (security.defaultLoginGroupId !== null && !groups.some((g) => g.id === security.defaultLoginGroupId)) {
    const group = await db
      .selectFrom('groups')
      .select(['id', 'administrator', 'createRootProjects'])
      .where('id', '=', security.defaultLoginGroupId)
      .executeTakeFirst();
    if (group) groups.push(group);
  }
  const isAdmin = userId === ROOT_ID || userId === SYSTEM_ID || groups.some((g) => g.administrator === 1);
  return {
    userId,
    isAdmin,
    groupIds: groups.map((g) => g.id),
    canCreateRootProjects: isAdmin || groups.some((g) => g.createRootProjects === 1),
  };
}
