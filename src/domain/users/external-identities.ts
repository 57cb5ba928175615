/**
 * Users who sign in through an external system (docs/security.md#single-sign-on): the directory
 * of the authenticator (LDAP) or an OpenID Connect connector. Such a user's password is OneDev's
 * marker `external_managed` (no local password matches it) and each of its identities there is a
 * row of `external_identities` (migration 0031): `provider` `ldap` or `oidc:<connector name>`,
 * `subject` the entry's DN or the ID token's `sub`.
 */
import type { Db } from '../../db/database.js';
import type { UserRow } from '../../db/schema.js';
import { Conflict } from '../../errors.js';
import { ROOT_ID } from '../context.js';
import { isUniqueViolation } from '../unique.js';

/** The stored password of a user whose password lives elsewhere (OneDev's `User.EXTERNAL_MANAGED`). */
export const EXTERNAL_MANAGED = 'external_managed';

/** The provider name of the authenticator's directory in `external_identities`. */
export const LDAP_PROVIDER = 'ldap';

/** The provider name of an OpenID Connect connector in `external_identities`. */
export const oidcProvider = (connectorName: string): string => `oidc:${connectorName}`;

/** Whether a stored password hash marks a user of an external system. */
export const isExternalPassword = (passwordHash: string | null): boolean => passwordHash === EXTERNAL_MANAGED;

/** The user an external identity is linked to, or undefined. */
export async function linkedUser(db: Db, provider: string, subject: string): Promise<Pick<UserRow, 'id' | 'name' | 'fullName'> | undefined> {
  return db
    .selectFrom('externalIdentities as x')
    .innerJoin('users as u', 'u.id', 'x.userId')
    .select(['u.id', 'u.name', 'u.fullName'])
    .where('x.provider', '=', provider)
    .where('x.subject', '=', subject)
    .executeTakeFirst();
}

/**
 * The providers a user is linked to (`ldap`, `oidc:<name>`), oldest link first; empty for a local user.
 */
export async function externalProvidersOf(db: Db, userId: number): Promise<string[]> {
  const rows = await db.selectFrom('externalIdentities').select('provider').where('userId', '=', userId).orderBy('id').execute();
  return rows.map((r) => r.provider);
}

/** What an external system says about a person signing in. */
export interface ExternalProfile {
  /** `ldap` or `oidc:<connector name>`. */
  provider: string;
  /** The identity there (DN, `sub`). */
  subject: string;
  /** The login name it proposes, as `normalizeUserName` returns it (docs/compatibility.md#users-json-and-names). */
  name: string;
  fullName: string | null;
  /** Lower-cased email address, or null when the system gave none. */
  email: string | null;
}

/**
 * Creates the account of an external identity met for the first time, in `db` (the caller's
 * transaction): a user named `profile.name` (lower-cased) with the password marker, the email
 * (verified, primary, git) when given, and the link. Returns the new id.
 *
 * @param now epoch ms, the creation date.
 * @throws Conflict when the name or the email is another user's.
 */
export async function createExternalUser(db: Db, profile: ExternalProfile, now: number): Promise<number> {
  const { name } = profile;
  if (await db.selectFrom('users').select('id').where('name', '=', name).executeTakeFirst()) {
    throw new Conflict(`Login name '${name}' already used by another user`);
  }
  if (profile.email && (await db.selectFrom('emailAddresses').select('id').where('value', '=', profile.email).executeTakeFirst())) {
    throw new Conflict(`Email address '${profile.email}' already used by another user`);
  }
  try {
    const { id } = await db
      .insertInto('users')
      .values({ name, fullName: profile.fullName, passwordHash: EXTERNAL_MANAGED, createDate: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    if (profile.email)
      await db.insertInto('emailAddresses').values({ ownerId: id, value: profile.email, primary: 1, git: 1, verificationCode: null }).execute();
    await db.insertInto('externalIdentities').values({ userId: id, provider: profile.provider, subject: profile.subject, createDate: now }).execute();
    return id;
  } catch (error) {
    // a concurrent sign-in of the same person (or a user created meanwhile) took the name first
    if (isUniqueViolation(error)) throw new Conflict(`Login name '${name}' or email address already used by another user`);
    throw error;
  }
}

/**
 * Links an external identity to the existing user owning the verified email `email`, in `db`
 * (the caller's transaction): the user's password becomes the external marker (it signs in
 * through the external system from now on, as OneDev does). Returns the user, or undefined when
 * no user has that verified email. The root administrator is never linked: it always signs in
 * locally.
 *
 * @param now epoch ms, the link's date.
 * @throws Conflict when the email is the root administrator's.
 */
export async function linkByVerifiedEmail(
  db: Db,
  provider: string,
  subject: string,
  email: string,
  now: number,
): Promise<Pick<UserRow, 'id' | 'name' | 'fullName'> | undefined> {
  const user = await db
    .selectFrom('emailAddresses as e')
    .innerJoin('users as u', 'u.id', 'e.ownerId')
    .select(['u.id', 'u.name', 'u.fullName'])
    .where('e.value', '=', email)
    .where('e.verificationCode', 'is', null)
    .where('u.id', '>', 0)
    .executeTakeFirst();
  if (!user) return undefined;
  if (user.id === ROOT_ID) throw new Conflict('The root administrator signs in with its own password only');
  await db.updateTable('users').set({ passwordHash: EXTERNAL_MANAGED }).where('id', '=', user.id).execute();
  await db.insertInto('externalIdentities').values({ userId: user.id, provider, subject, createDate: now }).execute();
  return user;
}

/** Sets a signed-in external user's full name to what its system says (when it says one). */
export async function updateExternalFullName(db: Db, userId: number, fullName: string | null): Promise<void> {
  if (fullName !== null) await db.updateTable('users').set({ fullName }).where('id', '=', userId).where('fullName', 'is distinct from', fullName).execute();
}
