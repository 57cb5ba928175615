/**
 * Users as other areas need them: the ids a text mentions, primary email addresses, display
 * names, and the built-in users of the first boot.
 */
import type { Db } from '../../db/database.js';
import { dialectOf } from '../../db/dialect.js';
import { ROOT_ID, SYSTEM_ID, UNKNOWN_ID } from '../context.js';
import { parseMentions } from '../mentions.js';
import { normalizeEmail, normalizeUserName } from './users.js';

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

/** Whether the user of id `userId` exists. */
export async function userExists(db: Db, userId: number): Promise<boolean> {
  return (await db.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst()) !== undefined;
}

/**
 * The built-in users of the first boot (docs/compatibility.md#gitloom-differs-permissions-and-first-boot):
 * the administrator (id 1, with `admin`'s name, password hash and verified primary email), and —
 * only when that insert created the administrator — the system user (-1, `gitloom`,
 * `noreply@gitloom.local`) and the unknown user (-2), then the users' id sequence is reset. An existing administrator is kept (the
 * insert ignores it), so concurrent first boots create them once. Run it in a transaction.
 * @returns whether the administrator was created.
 */
export async function createBuiltInUsers(db: Db, admin: { name: string; email: string; passwordHash: string }, now: number): Promise<boolean> {
  const rootInsert = await db
    .insertInto('users')
    .values({ id: ROOT_ID, name: normalizeUserName(admin.name), fullName: null, passwordHash: admin.passwordHash, createDate: now })
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  if (Number(rootInsert.numInsertedOrUpdatedRows ?? 0) === 0) return false;
  await db
    .insertInto('users')
    .values([
      { id: SYSTEM_ID, name: 'gitloom', fullName: 'Gitloom', passwordHash: null, createDate: now },
      { id: UNKNOWN_ID, name: 'unknown', fullName: 'Unknown', passwordHash: null, createDate: now },
    ])
    .execute();
  await db
    .insertInto('emailAddresses')
    .values({ ownerId: ROOT_ID, value: normalizeEmail(admin.email), primary: 1, git: 1, verificationCode: null })
    .execute();
  await db.insertInto('emailAddresses').values({ ownerId: SYSTEM_ID, value: 'noreply@gitloom.local', primary: 1, git: 1, verificationCode: null }).execute();
  await dialectOf(db).resetSequence(db, 'users');
  return true;
}
