import type { Db } from '../../db/database.js';
import { QuerySyntaxError } from '../../query/index.js';
import type { Context } from '../context.js';
import { currentUserOrFail } from '../query/index.js';

/** The id of a user by login name; `Unable to find user with login: x` (400) otherwise. */
export async function userIdByLogin(db: Db, login: string): Promise<number> {
  const user = await db.selectFrom('users').select('id').where('name', '=', login.toLowerCase()).executeTakeFirst();
  if (!user) throw new QuerySyntaxError(`Unable to find user with login: ${login}`);
  return user.id;
}

/**
 * The user a `… by me` / `… by "login"` style criterion names: the caller when `value` is null
 * (400 for anonymous callers, {@link currentUserOrFail}), else the user of that login (400 unknown).
 */
export function criterionUser(ctx: Context, value: string | null): Promise<number> | number {
  return value === null ? currentUserOrFail(ctx) : userIdByLogin(ctx.db, value);
}
