import { expressionBuilder, type Expression } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database, UserRow } from '../../db/schema.js';
import { BadRequest } from '../../errors.js';
import { parseMentions } from '../mentions.js';

/**
 * Lookups of users by id or login name for the other areas (docs/architecture.md#domain-areas):
 * each is one query, batched by ids or names where a caller has several.
 */

/** The user row of this id, or undefined when none (the built-in system and unknown users included). */
export async function findUserRow(db: Db, userId: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
}

/** Whether a user of this id exists (the built-in system and unknown users included). */
export async function userExists(db: Db, userId: number): Promise<boolean> {
  const row = await db.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst();
  return row !== undefined;
}

/** Login names of users by id, in one query: id → name; unknown ids are absent. */
export async function userNamesByIds(db: Db, ids: Iterable<number>): Promise<Map<number, string>> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'name']).where('id', 'in', wanted).execute();
  return new Map(rows.map((row) => [row.id, row.name]));
}

/** Of these ids, those naming an ordinary user (id > 0), in one query. */
export async function ordinaryUserIds(db: Db, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('users').select('id').where('id', 'in', ids).where('id', '>', 0).execute();
  return new Set(rows.map((row) => row.id));
}

/** Ids of the users with these login names (stored names are lower-case), in one query; unknown names are left out. */
export async function userIdsByNames(db: Db, names: readonly string[]): Promise<number[]> {
  if (names.length === 0) return [];
  const rows = await db.selectFrom('users').select('id').where('name', 'in', names).execute();
  return rows.map((row) => row.id);
}

/**
 * The id of the ordinary user (id > 0) with this login name, compared case-insensitively (names
 * are stored lower-case); undefined when none. Callers word their own 400.
 */
export async function findUserIdByName(db: Db, name: string): Promise<number | undefined> {
  const row = await db.selectFrom('users').select('id').where('name', '=', name.toLowerCase()).where('id', '>', 0).executeTakeFirst();
  return row?.id;
}

/**
 * The id of the ordinary user (id > 0) a form names by login name: trimmed, compared
 * case-insensitively. Throws BadRequest `<notFound>: <name>` (the trimmed name) when there is
 * none, each page wording its own (`User not found` on the project settings, `Unable to find
 * user` on the pull request and group pages).
 */
export async function userIdByName(db: Db, name: string, notFound: string): Promise<number> {
  const login = name.trim();
  const id = login ? await findUserIdByName(db, login) : undefined;
  if (id === undefined) throw new BadRequest(`${notFound}: ${login}`);
  return id;
}

/**
 * The ordinary user (id > 0) a sign-in name names, in one query: `login` (lower-case) is a login
 * name or any email address of the user (docs/compatibility.md#gitloom-differs-authentication). Returns the profile and
 * password hash (null: no password), or undefined.
 */
export async function userBySignInName(db: Db, login: string): Promise<Pick<UserRow, 'id' | 'name' | 'fullName' | 'passwordHash'> | undefined> {
  return db
    .selectFrom('users')
    .select(['id', 'name', 'fullName', 'passwordHash'])
    .where('id', '>', 0)
    .where((eb) => eb.or([eb('name', '=', login), eb('id', '=', eb.selectFrom('emailAddresses').select('ownerId').where('value', '=', login))]))
    .executeTakeFirst();
}

/** A query fragment: the login name of the user whose id is `userId`, as a scalar subquery (typed non-null: `userId` must reference a user, as a foreign key does). */
export function userNameOf(userId: Expression<number>) {
  return expressionBuilder<Database, never>().selectFrom('users').select('users.name').where('users.id', '=', userId).$asScalar().$notNull();
}

/**
 * The ids of the users a markdown text mentions (docs/compatibility.md#mentions-and-notifications):
 * the names {@link parseMentions} finds that are logins of real users (ids > 0), unknown names
 * ignored; `[]` for a text without mentions.
 */
export async function mentionedUserIds(db: Db, markdown: string | null | undefined): Promise<number[]> {
  const names = parseMentions(markdown);
  if (names.length === 0) return [];
  return (await db.selectFrom('users').select('id').where('name', 'in', names).where('id', '>', 0).execute()).map((u) => u.id);
}

/** The verified primary email address of each of `userIds` that has one, by user id. */
export async function primaryEmails(db: Db, userIds: readonly number[]): Promise<Map<number, string>> {
  if (userIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('emailAddresses')
    .select(['ownerId', 'value'])
    .where('ownerId', 'in', userIds)
    .where('primary', '=', 1)
    .where('verificationCode', 'is', null)
    .execute();
  return new Map(rows.map((r) => [r.ownerId, r.value]));
}

/** A user's full name, else login name; null when the user does not exist. */
export async function userDisplayName(db: Db, userId: number): Promise<string | null> {
  const user = await db.selectFrom('users').select(['name', 'fullName']).where('id', '=', userId).executeTakeFirst();
  return user?.fullName || user?.name || null;
}
