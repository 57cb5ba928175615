import type { Db } from '../../db/database.js';
import { dialectOf } from '../../db/dialect.js';
import { ROOT_ID, SYSTEM_ID, UNKNOWN_ID } from '../context.js';
import { normalizeEmail, normalizeUserName } from './users.js';

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
