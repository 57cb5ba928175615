import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { Database } from '../db/schema.js';
import { createDefaultRoles } from './access/index.js';
import { ROOT_ID } from './context.js';
import { createBuiltInUsers, hashPassword, userExists } from './users/index.js';

/** Whether the administrator (user 1) exists, i.e. the first boot already happened. */
export async function administratorExists(db: Kysely<Database>): Promise<boolean> {
  return userExists(db, ROOT_ID);
}

/**
 * First boot (docs/compatibility.md#gitloom-differs-permissions-and-first-boot): creates the administrator (id 1), the system user (-1,
 * `gitloom`), the unknown user (-2) and the default roles, unless they exist. Returns the
 * generated administrator password when one had to be made (the caller prints it once).
 * Safe to run concurrently from several processes: inserts ignore existing rows.
 */
export async function bootstrap(db: Kysely<Database>, config: Config, now: number): Promise<string | null> {
  if (await userExists(db, ROOT_ID)) return null;
  const generated = config.initialUser.password ? null : randomBytes(12).toString('base64url');
  const passwordHash = await hashPassword(config.initialUser.password ?? generated!);
  let created = false;
  await db.transaction().execute(async (tx) => {
    created = await createBuiltInUsers(tx, { name: config.initialUser.name, email: config.initialUser.email, passwordHash }, now);
    if (created) await createDefaultRoles(tx);
  });
  return created ? generated : null;
}
