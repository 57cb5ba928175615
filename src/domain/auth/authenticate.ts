import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import { trackChanges, type ChangeTracker, type Db } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
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

/** A group as the actor needs it. */
interface GroupFlags {
  id: number;
  administrator: number;
  createRootProjects: number;
}

/**
 * Tables whose rows decide who a credential is and what its actor holds: a write to any of them
 * (through this process) invalidates every cached actor.
 */
const ACTOR_TABLES = ['access_tokens', 'users', 'email_addresses', 'memberships', 'groups', 'settings'];
/**
 * Cached actors also expire after this long, the bound for changes made by another server
 * process sharing a PostgreSQL database (the same bound as the settings cache).
 */
const ACTOR_TTL_MS = 1000;

interface CachedActor {
  actor: Actor;
  /** The tracker version read before the rows behind `actor` were. */
  version: number;
  /** Expiry of the access token used, epoch ms (null: none). */
  expireDate: number | null;
}

/** Per-database actor caches keyed by a digest of the credentials. */
const actorCaches = new WeakMap<object, { tracker: ChangeTracker; entries: LRUCache<string, CachedActor> }>();

function actorCache(db: Db) {
  let cache = actorCaches.get(db);
  if (!cache) {
    cache = {
      tracker: trackChanges(db as Kysely<Database>, ACTOR_TABLES),
      entries: new LRUCache<string, CachedActor>({ max: 10_000, ttl: ACTOR_TTL_MS }),
    };
    actorCaches.set(db, cache);
  }
  return cache;
}

/** A copy of a cached actor (callers own their actor). */
const copyActor = (actor: Actor): Actor => ({ ...actor, groupIds: [...actor.groupIds] });

/**
 * Runs `resolve` through the actor cache: a hit needs the tables unchanged since the entry was
 * read and an unexpired token; a miss resolves from the database (errors are never cached).
 */
async function cachedActor(db: Db, key: string, now: number, resolve: () => Promise<{ actor: Actor; expireDate: number | null }>): Promise<Actor> {
  const cache = actorCache(db);
  const hit = cache.entries.get(key);
  if (hit && hit.version === cache.tracker.version && (hit.expireDate === null || hit.expireDate > now)) return copyActor(hit.actor);
  const version = cache.tracker.version;
  const { actor, expireDate } = await resolve();
  cache.entries.set(key, { actor: copyActor(actor), version, expireDate });
  return actor;
}

/**
 * The owner of an access token with the owner's groups, in one query; null for an unknown or
 * expired token.
 */
async function actorByToken(db: Db, value: string, now: number): Promise<{ actor: Actor; expireDate: number | null } | null> {
  const [rows, security] = await Promise.all([
    db
      .selectFrom('accessTokens as t')
      .leftJoin('memberships as m', 'm.userId', 't.ownerId')
      .leftJoin('groups as g', 'g.id', 'm.groupId')
      .select(['t.ownerId', 't.expireDate', 'g.id as groupId', 'g.administrator', 'g.createRootProjects'])
      .where('t.hash', '=', hashToken(value))
      .execute(),
    getSecuritySetting({ db }),
  ]);
  if (rows.length === 0) return null;
  const { ownerId, expireDate } = rows[0];
  if (expireDate !== null && expireDate <= now) return null;
  return { actor: await buildActor(db, ownerId, groupsOf(rows), security.defaultLoginGroupId), expireDate };
}

/** The groups of joined membership rows (rows without a group are skipped). */
function groupsOf(rows: { groupId: number | null; administrator: number | null; createRootProjects: number | null }[]): GroupFlags[] {
  const groups: GroupFlags[] = [];
  for (const row of rows) {
    if (row.groupId !== null) groups.push({ id: row.groupId, administrator: row.administrator ?? 0, createRootProjects: row.createRootProjects ?? 0 });
  }
  return groups;
}

/**
 * HTTP Basic (CONTRACT.md §5, reference/platform.md §2): when the secret is a valid access
 * token the name is ignored; otherwise the name is a login name or any email of the user
 * (case-insensitive) and the secret its password. Returns the caller's actor (see
 * {@link loadActor}); throws Unauthorized('Invalid credentials').
 */
export async function authenticateBasic(db: Db, name: string, secret: string, now: number): Promise<Actor> {
  const key = `basic:${createHash('sha256').update(`${name}\0${secret}`).digest('hex')}`;
  return cachedActor(db, key, now, async () => {
    const byToken = await actorByToken(db, secret, now);
    if (byToken !== null) return byToken;
    const login = name.toLowerCase();
    const [rows, security] = await Promise.all([
      db
        .selectFrom('users as u')
        .leftJoin('memberships as m', 'm.userId', 'u.id')
        .leftJoin('groups as g', 'g.id', 'm.groupId')
        .select(['u.id', 'u.passwordHash', 'g.id as groupId', 'g.administrator', 'g.createRootProjects'])
        .where('u.id', '>', 0)
        .where((eb) => eb.or([
          eb('u.name', '=', login),
          eb('u.id', '=', eb.selectFrom('emailAddresses').select('ownerId').where('value', '=', login)),
        ]))
        .execute(),
      getSecuritySetting({ db }),
    ]);
    const user = rows[0];
    if (user?.passwordHash) {
      const digest = createHash('sha256').update(`${user.id}\0${user.passwordHash}\0${secret}`).digest('hex');
      if (verifiedPasswords.has(digest) || (await verifyPassword(secret, user.passwordHash))) {
        verifiedPasswords.set(digest, true);
        return { actor: await buildActor(db, user.id, groupsOf(rows), security.defaultLoginGroupId), expireDate: null };
      }
    }
    throw new Unauthorized('Invalid credentials');
  });
}

/**
 * Bearer token (CONTRACT.md §5): the owner's actor (see {@link loadActor}); an unknown or
 * expired token is 401. One query (token, memberships and groups joined), none while the
 * actor cache holds the token.
 */
export async function authenticateBearer(db: Db, token: string, now: number): Promise<Actor> {
  return cachedActor(db, `bearer:${hashToken(token)}`, now, async () => {
    const found = await actorByToken(db, token, now);
    if (found === null) throw new Unauthorized('Invalid or expired access token');
    return found;
  });
}

/**
 * The actor of a user and its groups: the default login group joins when set and missing,
 * administrator status (root, system, administrator group) and root-project creation
 * (reference/platform.md §7).
 */
async function buildActor(db: Db, userId: number, groups: GroupFlags[], defaultLoginGroupId: number | null): Promise<Actor> {
  if (defaultLoginGroupId !== null && !groups.some((g) => g.id === defaultLoginGroupId)) {
    const group = await db
      .selectFrom('groups')
      .select(['id', 'administrator', 'createRootProjects'])
      .where('id', '=', defaultLoginGroupId)
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
