import { createHash, timingSafeEqual } from 'node:crypto';
import type { Db } from '../../db/database.js';
import { BadRequest } from '../../errors.js';
import { isUniqueViolation } from '../unique.js';
import { recordAudit } from '../audit/index.js';
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
 * The fingerprint of an SSH public key as `ssh-keygen -l` prints it: `SHA256:` and the unpadded
 * base64 of the SHA-256 of the key blob (the wire encoding of the public key).
 */
export function sshKeyFingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/**
 * ssh2's key parser, loaded on first use: the library (and its WebAssembly) costs memory a server
 * with SSH off and no key added never needs.
 */
async function parseKey(line: string): Promise<unknown> {
  const { default: ssh2 } = await import('ssh2');
  return ssh2.utils.parseKey(line);
}

/** The key blob of a public key line `<type> <base64> [comment]`, or null when it does not read as one. */
async function keyBlob(line: string): Promise<Buffer | null> {
  const [type, data] = line.split(/\s+/);
  if (!type || !data || !KEY_TYPES.has(type) || !/^[A-Za-z0-9+/]+={0,2}$/.test(data)) return null;
  const blob = Buffer.from(data, 'base64');
  if (blob.length < 4) return null;
  const length = blob.readUInt32BE(0);
  if (length + 4 > blob.length || blob.subarray(4, 4 + length).toString('latin1') !== type) return null;
  // the key itself must parse too (its numbers, points and lengths); ssh2 reads no security-key
  // (`sk-`) type, whose blobs are only checked to name their type
  if (!type.startsWith('sk-') && (await parseKey(line)) instanceof Error) return null;
  return blob;
}

/**
 * Parses an OpenSSH public key line `<type> <base64> [comment]` (docs/compatibility.md#email-addresses-and-ssh-keys):
 * the type must be a supported one, the base64 blob must decode, name the same type and hold a
 * well-formed key of it. Returns the normalized line and its fingerprint (see {@link sshKeyFingerprint}).
 *
 * @throws BadRequest `Invalid OpenSSH public key` (`GITLOOM_ERR_SSH_KEY_INVALID`) otherwise.
 */
export async function parsePublicKey(text: string): Promise<{ content: string; fingerprint: string }> {
  const line = text.trim().split(/\r?\n/)[0]?.trim() ?? '';
  const [type, data, ...comment] = line.split(/\s+/);
  const blob = await keyBlob(line);
  if (blob === null) throw new BadRequest('Invalid OpenSSH public key', { code: 'GITLOOM_ERR_SSH_KEY_INVALID' });
  return { content: [type, data, ...comment].join(' '), fingerprint: sshKeyFingerprint(blob) };
}

/**
 * The owner of the SSH key whose blob is `blob` (the public key a client authenticates with over
 * SSH, docs/compatibility.md#git-over-ssh): found by fingerprint, then the stored key's blob
 * compared byte for byte. Read anew for every call, so a deleted key or user stops
 * authenticating at once. Returns the owner's id and login and the stored key line, or null.
 */
export async function sshKeyOwner(db: Db, blob: Buffer): Promise<{ userId: number; login: string; content: string } | null> {
  const row = await db
    .selectFrom('sshKeys')
    .innerJoin('users', 'users.id', 'sshKeys.ownerId')
    .select(['sshKeys.ownerId', 'sshKeys.content', 'users.name'])
    .where('sshKeys.fingerprint', '=', sshKeyFingerprint(blob))
    .executeTakeFirst();
  if (!row) return null;
  const stored = await keyBlob(row.content);
  if (stored === null || stored.length !== blob.length || !timingSafeEqual(stored, blob)) return null;
  return { userId: row.ownerId, login: row.name, content: row.content };
}

/** Get Ssh Keys of a user: administrator or self. */
export async function listSshKeys(ctx: Context, userId: number) {
  requireSelfOrAdmin(ctx, userId);
  await getUserRow(ctx.db, userId);
  return ctx.db.selectFrom('sshKeys').selectAll().where('ownerId', '=', userId).orderBy('id').execute();
}

/**
 * Add Ssh Key: the key is validated and its fingerprint unique, both 400 with their own codes
 * (`GITLOOM_ERR_SSH_KEY_INVALID`, `GITLOOM_ERR_SSH_KEY_IN_USE` `This key is already in use`;
 * docs/compatibility.md#gitloom-differs-ssh-and-lfs — OneDev answers 500). The owner is the path
 * user when the caller is that user or an administrator (docs/compatibility.md#users-endpoints binds
 * it to the caller; an administrator adding for another user gets what the path says).
 */
export async function addSshKey(ctx: Context, userId: number, text: string): Promise<number> {
  requireUser(ctx.actor);
  requireSelfOrAdmin(ctx, userId);
  const owner = await getUserRow(ctx.db, userId);
  const { content, fingerprint } = await parsePublicKey(text);
  const inUse = () => new BadRequest('This key is already in use', { code: 'GITLOOM_ERR_SSH_KEY_IN_USE' });
  try {
    return await ctx.db.transaction().execute(async (tx) => {
      if (await tx.selectFrom('sshKeys').select('id').where('fingerprint', '=', fingerprint).executeTakeFirst()) throw inUse();
      const { id } = await tx
        .insertInto('sshKeys')
        .values({ ownerId: userId, content, fingerprint, createdAt: ctx.now() })
        .returning('id')
        .executeTakeFirstOrThrow();
      await recordAudit(ctx, tx, { ...sshKeyAudit(owner.name, id, fingerprint), action: 'sshKey.create', after: { owner: owner.name, fingerprint } });
      return id;
    });
  } catch (error) {
    // a concurrent add of the same key won the race
    if (isUniqueViolation(error)) throw inUse();
    throw error;
  }
}

/** Get an SSH key: administrator or owner (`/ssh-keys/{id}`). */
export async function getSshKey(ctx: Context, id: number) {
  const row = await loadRow(ctx.db, 'sshKeys', id, 'SSH key');
  requireSelfOrAdmin(ctx, row.ownerId);
  return row;
}

/** Delete an SSH key: administrator or owner; audited as `sshKey.delete` (docs/audit-log.md#actions). */
export async function deleteSshKey(ctx: Context, id: number): Promise<void> {
  const key = await getSshKey(ctx, id);
  const owner = await getUserRow(ctx.db, key.ownerId);
  await ctx.db.transaction().execute(async (tx) => {
    await tx.deleteFrom('sshKeys').where('id', '=', id).execute();
    await recordAudit(ctx, tx, {
      ...sshKeyAudit(owner.name, id, key.fingerprint),
      action: 'sshKey.delete',
      before: { owner: owner.name, fingerprint: key.fingerprint },
    });
  });
}

/** The target of an SSH key's audit rows: the key by id, named by its owner and fingerprint. */
function sshKeyAudit(owner: string, id: number, fingerprint: string) {
  return { targetType: 'sshKey', targetId: id, targetName: `${owner}/${fingerprint}` };
}
