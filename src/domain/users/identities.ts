import type { CommitIdentityInput } from '../../git/repository.js';
import type { Db } from '../../db/database.js';
import { Conflict } from '../../errors.js';
import { SYSTEM_ID } from '../context.js';

/**
 * The git identity of a user: display name (full name, else login name) and the verified git
 * email (docs/compatibility.md#pull-requests-merge-checks: "Merging user must have a verified git email"). Throws
 * Conflict('No verified email for git operations') when the user has none.
 */
export async function gitIdentity(db: Db, userId: number, date?: Date): Promise<CommitIdentityInput> {
  const row = await db
    .selectFrom('users')
    .leftJoin('emailAddresses', (join) => join.onRef('emailAddresses.ownerId', '=', 'users.id').on('emailAddresses.verificationCode', 'is', null))
    .select(['users.name', 'users.fullName', 'emailAddresses.value', 'emailAddresses.git', 'emailAddresses.primary'])
    .where('users.id', '=', userId)
    .orderBy('emailAddresses.git', 'desc')
    .orderBy('emailAddresses.primary', 'desc')
    .executeTakeFirst();
  if (!row?.value) throw new Conflict('No verified email for git operations');
  return { name: row.fullName || row.name, email: row.value, ...(date && { date }) };
}

/** The identity of preview and system commits. */
export function systemIdentity(date?: Date): CommitIdentityInput {
  return { name: 'Gitloom', email: 'noreply@gitloom.local', ...(date && { date }) };
}

export { SYSTEM_ID };
