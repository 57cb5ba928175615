import { hash, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { trackChanges, type ChangeTracker, type Db } from '../../db/database.js';
import { Forbidden, Unauthorized, Unavailable } from '../../errors.js';
import { recordAudit } from '../audit/index.js';
import { ROOT_ID, SYSTEM_ID, type Actor, type ActorToken, type Context } from '../context.js';
import { getSecuritySetting, type SecuritySetting } from '../settings/index.js';
import { hashToken } from '../token-hash.js';
import { groupFlags, groupFlagsOfUser, type GroupFlags } from '../access/index.js';
import { accessTokenOwner, findUserRow, hashPassword, isExternalPassword, userBySignInName, verifyPassword } from '../users/index.js';
import { signInWithDirectory, usesDirectory } from '../sso/index.js';
import { assertSignInAllowed, beginSignInAttempt, signInSubjects, signInVerified, type SignInSubjects } from './sign-in-limits.js';
import { hasSecondFactor } from './two-factor.js';

/**
 * Successful password checks, keyed by a digest of (user, stored hash, password): scrypt costs
 * tens of milliseconds, and git clients send Basic credentials on every request. A password
 * change alters the stored hash, so stale entries can never match.
 */
const verifiedPasswords = new LRUCache<string, true>({ max: 10_000, ttl: 5 * 60_000 });

/**
 * A hash of a random password, verified when the name matches no user (or one without a
 * password) so the answer takes as long as for a real user: timing reveals no name.
 */
let dummyHash: Promise<string> | undefined;
const dummyPasswordHash = (): Promise<string> => (dummyHash ??= hashPassword(randomBytes(24).toString('base64')));

/** A user's profile as the actor carries it. */
interface Profile {
  id: number;
  name: string;
  fullName: string | null;
}

/**
 * Tables whose rows decide who a credential is and what its actor holds (a second factor refuses
 * the password for Basic auth and ends `mustEnrolSecondFactor`): a write to any of them
 * invalidates every cached actor — through this process at once, through another process sharing
 * a PostgreSQL database when its announcement arrives (docs/architecture.md#processes-sharing-postgresql).
 * Cached actors also expire after the tracker's `ttlMs` (1 s unless `GITLOOM_FALLBACK_POLL_MS`),
 * the bound when an announcement is lost.
 */
const ACTOR_TABLES = [
  'access_tokens',
  'access_token_projects',
  'users',
  'email_addresses',
  'memberships',
  'groups',
  'settings',
  'totp_secrets',
  'webauthn_credentials',
];

/**
 * The tables whose rows some process caches (the actors' and the settings'), for `openDatabase`'s
 * `watchTables`: a process announces its writes of them from its start, whether or not it has
 * cached anything itself.
 */
export const CACHED_TABLES: readonly string[] = ACTOR_TABLES;

interface CachedActor {
  actor: Actor;
  /** Signed in with a password (not a token): a hit is still refused while its pair or address is limited. */
  viaPassword: boolean;
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
    const tracker = trackChanges(db, ACTOR_TABLES);
    cache = { tracker, entries: new LRUCache<string, CachedActor>({ max: 10_000, ttl: tracker.ttlMs }) };
    actorCaches.set(db, cache);
  }
  return cache;
}

/** A cached actor is shared by every request it serves, so it is frozen: nothing may change it. */
const frozenActor = (actor: Actor): Actor => Object.freeze({ ...actor, groupIds: Object.freeze([...actor.groupIds]) as number[] });

/** What a credential resolves to. */
interface Resolved {
  actor: Actor;
  expireDate: number | null;
  viaPassword: boolean;
}

/** The cache entry of `key` while still current: tables unchanged since it was read, token unexpired. */
function currentEntry(db: Db, key: string, now: number): CachedActor | undefined {
  const cache = actorCache(db);
  const hit = cache.entries.get(key);
  return hit && hit.version === cache.tracker.version && (hit.expireDate === null || hit.expireDate > now) ? hit : undefined;
}

/**
 * Runs `resolve` through the actor cache: a hit needs the tables unchanged since the entry was
 * read and an unexpired token, and passes `onPasswordHit` when it was a password sign-in; a
 * miss resolves from the database (errors are never cached).
 */
async function cachedActor(
  db: Db,
  key: string,
  now: number,
  resolve: () => Promise<Resolved>,
  onPasswordHit?: (actor: Actor) => Promise<void>,
): Promise<Actor> {
  const cache = actorCache(db);
  const hit = currentEntry(db, key, now);
  if (hit) {
    if (hit.viaPassword && onPasswordHit) await onPasswordHit(hit.actor);
    return hit.actor;
  }
  const version = cache.tracker.version;
  const resolved = await resolve();
  const actor = frozenActor(resolved.actor);
  cache.entries.set(key, { actor, version, expireDate: resolved.expireDate, viaPassword: resolved.viaPassword });
  return actor;
}

/**
 * The owner of an access token with the owner's profile and groups (the users area reads the
 * token and its owner, then the access area the groups); null for an unknown or expired token.
 */
async function actorByToken(db: Db, value: string, now: number): Promise<Resolved | null> {
  const [owner, security] = await Promise.all([accessTokenOwner(db, value), getSecuritySetting({ db })]);
  if (owner === undefined) return null;
  const { expireDate } = owner;
  if (expireDate !== null && expireDate <= now) return null;
  const actor = await buildActor(db, owner, await groupFlagsOfUser(db, owner.id), security, owner.token);
  return { actor, expireDate, viaPassword: false };
}

/**
 * HTTP Basic (docs/compatibility.md#gitloom-differs-authentication, docs/compatibility.md#platform-authentication): when the secret is a valid access
 * token the name is ignored; otherwise the name is a login name or any email of the user
 * (case-insensitive) and the secret its password, checked by {@link authenticatePassword}
 * (failed sign-ins limited per account and the context's client address). Successful credentials are cached
 * until a change of their rows (see `ACTOR_TABLES`); a cached password sign-in is still refused while its pair
 * or address is limited, but not delayed (those very credentials were just verified).
 * A user with a second factor may not use their password here (docs/security.md#two-factor-authentication):
 * Unauthorized with code `GITLOOM_ERR_TWO_FACTOR_REQUIRED`, pointing to access tokens.
 *
 * @param ctx the request's context (anonymous: nobody is signed in yet), for its database,
 *   client and clock.
 * @returns the caller's actor (see {@link buildActor}).
 * @throws Unauthorized('Invalid credentials'), TooManyRequests, or Unavailable when the
 *   directory that decides this user does not answer (docs/security.md#ldap-authenticator).
 */
export async function authenticateBasic(ctx: Context, name: string, secret: string): Promise<Actor> {
  const { db } = ctx;
  const now = ctx.now();
  const key = `basic:${hash('sha256', `${name}\0${secret}`, 'hex')}`;
  return cachedActor(
    db,
    key,
    now,
    async () => {
      const byToken = await actorByToken(db, secret, now);
      if (byToken !== null) return byToken;
      const actor = await authenticatePassword(ctx, name, secret);
      if (await hasSecondFactor(db, actor.userId)) throw passwordRefused();
      return { actor, expireDate: null, viaPassword: true };
    },
    async (actor) => {
      await assertSignInAllowed(db, signInSubjects(actor.userId, name, ctx.client?.address ?? ''), now);
    },
  );
}

/**
 * A password sign-in, for the API's Basic credentials and the web sign-in page alike: `name` is
 * a login name or any email of the user (case-insensitive). Limited through the database
 * (src/domain/auth/sign-in-limits.ts, docs/compatibility.md#gitloom-differs-cross-site-and-hostile-input): 10 failures in 5 minutes for one
 * (account, client address) pair or 100 from one address → 429 until the window ends, even for
 * the right password; past 100 failures of the account from anywhere, each attempt waits (250 ms
 * doubling to 8 s) before its password is checked — unless the password is one this process
 * verified in the last 5 minutes (no guess). An unknown name is limited and costs the same
 * scrypt verification as a known one.
 * A wrong password or unknown name is audited as `signIn.failure` (docs/audit-log.md#actions),
 * naming the login tried and, when it names a user, that user as the target; a refusal by the
 * limits is not (it checked no password).
 *
 * When an authenticator is set, users of an external system and names of no user are checked by
 * the directory instead (docs/security.md#ldap-authenticator); local users — the root
 * administrator always — are checked here, so a directory outage locks none of them out.
 *
 * @param ctx the request's context: database, clock, client (its address keys the limits).
 * @returns the user's actor (see {@link buildActor}).
 * @throws TooManyRequests while a limit holds (or too many attempts on the account wait);
 *   Unavailable (503) when the directory does not answer; Unauthorized('Invalid credentials')
 *   otherwise (or another 401 saying why the directory's user may not sign in).
 */
export async function authenticatePassword(ctx: Context, name: string, password: string): Promise<Actor> {
  const { db } = ctx;
  const now = ctx.now();
  const login = name.toLowerCase();
  // no user's name or email holds a NUL (and PostgreSQL text cannot even compare one)
  const [user, security, directory] = await Promise.all([
    login.includes('\0') ? undefined : userBySignInName(db, login),
    getSecuritySetting({ db }),
    usesDirectory(ctx),
  ]);
  const subjects = signInSubjects(user?.id ?? null, name, ctx.client?.address ?? '');
  if (directory && !login.includes('\0') && user?.id !== ROOT_ID && (user === undefined || isExternalPassword(user.passwordHash))) {
    const userId = await directorySignIn(ctx, subjects, user?.name ?? name.trim(), password);
    const signedIn = await findUserRow(db, userId);
    if (signedIn === undefined) throw new Unauthorized('Invalid credentials');
    return buildActor(db, signedIn, await groupFlagsOfUser(db, userId), security);
  }
  const digest = user?.passwordHash ? hash('sha256', `${user.id}\0${user.passwordHash}\0${password}`, 'hex') : null;
  if (user && digest !== null && verifiedPasswords.has(digest)) {
    await signInVerified(db, subjects, now);
    return buildActor(db, user, await groupFlagsOfUser(db, user.id), security);
  }
  // counted as a failure from here until it turns out right
  const attempt = await beginSignInAttempt(db, subjects, now);
  if (user?.passwordHash && digest !== null) {
    if (await verifyPassword(password, user.passwordHash)) {
      verifiedPasswords.set(digest, true);
      await attempt.succeeded();
      return buildActor(db, user, await groupFlagsOfUser(db, user.id), security);
    }
  } else {
    await verifyPassword(password, await dummyPasswordHash());
  }
  await recordAudit(ctx, db, {
    action: 'signIn.failure',
    targetType: 'user',
    targetId: user?.id ?? null,
    targetName: user?.name ?? name,
    actor: { id: null, name },
  });
  throw new Unauthorized('Invalid credentials');
}

/**
 * A password attempt decided by the directory, under the same limits as a local one: the id of
 * the user it signed in. An attempt the directory could not decide is given back (an outage
 * counts against nobody).
 */
async function directorySignIn(ctx: Context, subjects: SignInSubjects, name: string, password: string): Promise<number> {
  const attempt = await beginSignInAttempt(ctx.db, subjects, ctx.now());
  let signedIn: { id: number } | null;
  try {
    signedIn = await signInWithDirectory(ctx, name, password);
  } catch (error) {
    if (error instanceof Unavailable) await attempt.undecided();
    throw error;
  }
  if (signedIn === null) throw new Unauthorized('Invalid credentials');
  await attempt.succeeded();
  return signedIn.id;
}

const bearerKey = (token: string) => `bearer:${hashToken(token)}`;

/**
 * The actor of a Bearer token from the actor cache alone, synchronously: what
 * {@link authenticateBearer} would return when it needs no database query; undefined otherwise
 * (then call it).
 */
export function cachedBearerActor(db: Db, token: string, now: number): Actor | undefined {
  const hit = currentEntry(db, bearerKey(token), now);
  return hit?.actor;
}

/**
 * Bearer token (docs/compatibility.md#gitloom-differs-authentication): the owner's actor (see {@link buildActor}); an unknown or
 * expired token is 401. Two queries (the token with its owner, then the owner's groups), none
 * while the actor cache holds the token.
 */
export async function authenticateBearer(db: Db, token: string, now: number): Promise<Actor> {
  return cachedActor(db, bearerKey(token), now, async () => {
    const found = await actorByToken(db, token, now);
    if (found === null) throw new Unauthorized('Invalid or expired access token');
    return found;
  });
}

/**
 * The actor of a user and its groups: the user's profile (so `/users/me` and the pages' header
 * need no query of their own), the default login group joining when set and missing,
 * administrator status (root, system, administrator group), root-project creation
 * (docs/compatibility.md#platform-permissions) and whether the user must still enrol a second
 * factor (`enforce2FA` of the security setting or a group, docs/security.md#two-factor-authentication).
 * With the access token used, its limits (docs/compatibility.md#gitloom-differs-sessions-and-tokens):
 * a token limited to projects carries no administrator rights, and neither it nor a read-only one
 * creates root projects.
 */
async function buildActor(db: Db, user: Profile, groups: GroupFlags[], security: SecuritySetting, token?: ActorToken): Promise<Actor> {
  const { defaultLoginGroupId } = security;
  if (defaultLoginGroupId !== null && !groups.some((g) => g.id === defaultLoginGroupId)) {
    const group = await groupFlags(db, defaultLoginGroupId);
    if (group) groups.push(group);
  }
  const limited = token !== undefined && token.projectIds !== null;
  const isAdmin = !limited && (user.id === ROOT_ID || user.id === SYSTEM_ID || groups.some((g) => g.administrator === 1));
  const twoFactorApplies = user.id > 0 && (security.enforce2FA || groups.some((g) => g.enforce2fa === 1));
  const actor: Actor = {
    userId: user.id,
    name: user.name,
    fullName: user.fullName,
    isAdmin,
    groupIds: groups.map((g) => g.id),
    canCreateRootProjects: !limited && !token?.readOnly && (isAdmin || groups.some((g) => g.createRootProjects === 1)),
    ...(twoFactorApplies && !(await hasSecondFactor(db, user.id)) && { mustEnrolSecondFactor: true }),
  };
  if (token) actor.token = Object.freeze({ ...token, projectIds: token.projectIds && Object.freeze([...token.projectIds]) });
  return actor;
}

/**
 * The actor of an existing user by id (see {@link buildActor}), through the actor cache: used
 * for a signed-in web session, whose credentials were checked at sign-in. Throws
 * Unauthorized('Not authenticated') when the user no longer exists.
 */
export async function actorOfUser(db: Db, userId: number, now: number): Promise<Actor> {
  return cachedActor(db, `user:${userId}`, now, async () => {
    const [user, groups, security] = await Promise.all([
      userId > 0 ? findUserRow(db, userId) : undefined,
      groupFlagsOfUser(db, userId),
      getSecuritySetting({ db }),
    ]);
    if (user === undefined) throw new Unauthorized();
    return { actor: await buildActor(db, user, groups, security), expireDate: null, viaPassword: false };
  });
}

/** The refusal of a password for Basic auth once the user has a second factor (as GitHub's). */
const passwordRefused = () =>
  new Unauthorized(
    'Two-factor authentication is on for this account: a password is not accepted here. Use an access token instead (My settings → Access tokens), as the password of git or in an Authorization header.',
    { code: 'GITLOOM_ERR_TWO_FACTOR_REQUIRED' },
  );

/**
 * The first step of a web sign-in (docs/security.md#two-factor-authentication): `secret` is an
 * access token (any `name`) or the password of the user `name` (login name or email, checked by
 * {@link authenticatePassword} under the sign-in limits). Returns the user's id and whether a
 * second step must follow before a session starts: a password of a user with a second factor.
 * An access token is a credential the user made while signed in, so it needs none.
 * @throws Unauthorized('Invalid credentials') or TooManyRequests; Forbidden for a read-only or
 *   project-limited access token.
 */
export async function signInFirstStep(ctx: Context, name: string, secret: string): Promise<{ userId: number; secondStep: boolean }> {
  const { db } = ctx;
  const byToken = await actorByToken(db, secret, ctx.now());
  if (byToken !== null) {
    // a session carries every right of its user: a limited access token opens none (docs/compatibility.md#gitloom-differs-sessions-and-tokens)
    const token = byToken.actor.token;
    if (token?.readOnly || token?.projectIds) throw new Forbidden('A read-only or project-limited access token cannot sign in to the pages');
    return { userId: byToken.actor.userId, secondStep: false };
  }
  const actor = await authenticatePassword(ctx, name, secret);
  return { userId: actor.userId, secondStep: await hasSecondFactor(db, actor.userId) };
}

/**
 * Whether `password` is the password of the user `name`, checked as a sign-in (the limits
 * count a wrong one; TooManyRequests while they hold): for pages that ask the signed-in user for
 * their password again (a password change, turning two-factor authentication off).
 */
export async function isPasswordOf(ctx: Context, name: string, password: string): Promise<boolean> {
  try {
    await authenticatePassword(ctx, name, password);
    return true;
  } catch (error) {
    if (error instanceof Unauthorized) return false;
    throw error;
  }
}
