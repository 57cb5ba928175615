import { createHash } from 'node:crypto';
import { BadRequest, Conflict } from '../../errors.js';
import { uniquely } from '../unique.js';
import type { Context } from '../context.js';
import { loadRow } from '../entities.js';
import { requireUser } from '../actor.js';
import { getUserRow, requireSelfOrAdmin } from './users.js';

const KEY_TYPES = new Set([
  'ssh-rsa',
  'ssh-dss',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'ssh-ed25519',
  'sk-ecdsa-sha2-nistp256@openssh.com',
  'sk-ssh-ed25519@openssh.com',
]);

/**
 * Parses an OpenSSH public key line `<type> <base64> [comment]` (docs/compatibility.md#email-addresses-and-ssh-keys):
 * the type must be a supported one and the base64 blob must decode and name the same type.
 * Returns the normalized line and its fingerprint `SHA256:<unpadded base64>`; BadRequest
 * `Invalid OpenSSH public key` otherwise.
 */
export function parsePublicKey(text: string): { content: string; fingerprint: string } {
  const line = text.trim().split(/\r?\n/)[0]?.trim() ?? '';
  const [type, data, ...comment] = line.split(/\s+/);
  const invalid = () => new BadRequest('Invalid OpenSSH public key');
  if (!type || !data || !KEY_TYPES.has(type) || !/^[A-Za-z0-9+/]+={0,2}$/.test(data)) throw invalid();
  const blob = Buffer.from(data, 'base64');
  if (blob.length < 4) throw invalid();
  const length = blob.readUInt32BE(0);
  if (length + 4 > blob.length || blob.subarray(4, 4 + length).toString('latin1') !== type) throw invalid();
  const fingerprint = `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
  return { content: [type, data, ...comment].join(' '), fingerprint };
}

/** Get Ssh Keys of a user: administrator or self. */
export async function listSshKeys(ctx: Context, userId: number) {
  requireSelfOrAdmin(ctx, userId);
  await getUserRow(ctx.db, userId);
  return ctx.db.selectFrom('sshKeys').selectAll().where('ownerId', '=', userId).orderBy('id').execute();
}

/**
 * Add Ssh Key: the key is validated (400) and its fingerprint unique (409). The owner is the
 * path user when the caller is that user or an administrator (docs/compatibility.md#users-endpoints binds
 * it to the caller; an administrator adding for another user gets what the path says).
 */
export async function addSshKey(ctx: Context, userId: number, text: string): Promise<number> {
  requireUser(ctx.actor);
  requireSelfOrAdmin(ctx, userId);
  await getUserRow(ctx.db, userId);
  const { content, fingerprint } = parsePublicKey(text);
  const message = 'This key is already in use';
  return uniquely(message, () =>
    ctx.db.transaction().execute(async (tx) => {
      if (await tx.selectFrom('sshKeys').select('id').where('fingerprint', '=', fingerprint).executeTakeFirst()) throw new Conflict(message);
      return (await tx.insertInto('sshKeys').values({ ownerId: userId, content, fingerprint, createdAt: ctx.now() }).returning('id').executeTakeFirstOrThrow())
        .id;
    }),
  );
}

/** Get an SSH key: administrator or owner (`/ssh-keys/{id}`). */
export async function getSshKey(ctx: Context, id: number) {
  const row = await loadRow(ctx.db, 'sshKeys', id, 'SSH key');
  requireSelfOrAdmin(ctx, row.ownerId);
  return row;
}

/** Delete an SSH key: administrator or owner. */
export async function deleteSshKey(ctx: Context, id: number): Promise<void> {
  await getSshKey(ctx, id);
  await ctx.db.deleteFrom('sshKeys').where('id', '=', id).execute();
}
