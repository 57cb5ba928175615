import type { Selectable } from 'kysely';
import type { EmailAddressTable } from '../../db/schema.js';
import type { Context } from '../context.js';
import { getUserRow, requireSelfOrAdmin } from './users.js';

/** Get Email Addresses: administrator or self (reference/users-roles.md §2, §6). */
export async function listEmailAddresses(ctx: Context, userId: number): Promise<Selectable<EmailAddressTable>[]> {
  await getUserRow(ctx.db, userId);
  requireSelfOrAdmin(ctx, userId);
  return ctx.db.selectFrom('emailAddresses').selectAll().where('ownerId', '=', userId).orderBy('id').execute();
}
