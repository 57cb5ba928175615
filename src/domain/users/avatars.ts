/**
 * Users' avatars (docs/compatibility.md#gitloom-differs-web-ui "Avatars"): an uploaded image,
 * checked by its content and re-encoded by sharp (resized to 256×256, EXIF and every other
 * metadata dropped), kept in the data dir as `avatars/<user id>-<version>`; without one, the
 * identicon of identicon.ts. `users.avatar_version` counts the changes and versions the URL.
 * Also the user card of the profile page (names and avatar version).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import type { Db } from '../../db/database.js';
import type { UserRow } from '../../db/schema.js';
import { BadRequest, Conflict, NotFound, PayloadTooLarge } from '../../errors.js';
import { PRIVATE_DIR_MODE } from '../../data-dir.js';
import { requireUser } from '../actor.js';
import type { Context } from '../context.js';
import { avatarDir, avatarFile, removeAvatarFile } from './avatar-files.js';
import { identiconSvg } from './identicon.js';
import { getUserRow, requireSelfOrAdmin } from './users.js';

/** Largest accepted upload, bytes (5 MiB). */
const AVATAR_MAX_BYTES = 5 * 1024 * 1024;
/** Largest accepted image, pixels (width × height, read from its header before decoding). */
const AVATAR_MAX_PIXELS = 50_000_000;
/** Side of a stored avatar, pixels. */
const AVATAR_SIZE = 256;

/** The image formats accepted, by their leading bytes, with the format sharp must read. */
const SIGNATURES: { format: 'jpeg' | 'png' | 'gif' | 'webp'; matches: (data: Buffer) => boolean }[] = [
  { format: 'jpeg', matches: (d) => d.length > 3 && d[0] === 0xff && d[1] === 0xd8 && d[2] === 0xff },
  { format: 'png', matches: (d) => d.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) },
  { format: 'gif', matches: (d) => ['GIF87a', 'GIF89a'].includes(d.subarray(0, 6).toString('latin1')) },
  { format: 'webp', matches: (d) => d.subarray(0, 4).toString('latin1') === 'RIFF' && d.subarray(8, 12).toString('latin1') === 'WEBP' },
];

/** An avatar as served: its bytes, MIME type and the version of the user's avatar it is. */
export interface Avatar {
  body: Buffer;
  type: string;
  version: number;
  /** A strong entity tag: the user, the version and whether it is the identicon. */
  etag: string;
}

/**
 * The avatar of user `userId` for any visitor: the uploaded image, or the identicon (SVG) when
 * there is none (or its file went missing). NotFound for an unknown user.
 */
export async function userAvatar(ctx: Context, userId: number): Promise<Avatar> {
  const user = await getUserRow(ctx.db, userId);
  if (user.avatarType !== null) {
    const body = await readFile(avatarFile(ctx.config, user.id, user.avatarVersion)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    if (body) return { body, type: user.avatarType, version: user.avatarVersion, etag: `"${user.id}-${user.avatarVersion}"` };
  }
  return { body: Buffer.from(identiconSvg(user.id)), type: 'image/svg+xml', version: user.avatarVersion, etag: `"${user.id}-${user.avatarVersion}-i"` };
}

/** The avatar versions of these users, in one query (unknown ids are absent). */
export async function avatarVersions(db: Db, ids: Iterable<number>): Promise<Map<number, number>> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'avatarVersion']).where('id', 'in', wanted).execute();
  return new Map(rows.map((row) => [row.id, row.avatarVersion]));
}

/** Whether user `userId` uploaded an avatar (the user or an administrator asks). */
export async function hasUploadedAvatar(ctx: Context, userId: number): Promise<boolean> {
  requireSelfOrAdmin(ctx, userId);
  return (await getUserRow(ctx.db, userId)).avatarType !== null;
}

/**
 * Re-encodes an upload as a 256×256 avatar (cover: scaled and centred, cropping the overflow;
 * turned upright by its EXIF orientation): JPEG stays JPEG, the other formats become PNG (keeping
 * transparency; a GIF's first frame). sharp writes no metadata unless asked, so EXIF (GPS
 * position, camera), XMP, IPTC and ICC profiles are all dropped.
 *
 * @throws PayloadTooLarge over {@link AVATAR_MAX_BYTES}; BadRequest for an empty file, content
 *   that is no JPEG, PNG, WebP or GIF (whatever its name), an image over
 *   {@link AVATAR_MAX_PIXELS} (a decompression bomb is refused from its header) or one sharp
 *   cannot decode.
 */
async function reencode(data: Buffer): Promise<{ body: Buffer; type: string }> {
  if (data.length === 0) throw new BadRequest('Choose an image file to upload');
  if (data.length > AVATAR_MAX_BYTES) throw new PayloadTooLarge('The avatar is larger than 5 MiB');
  const format = SIGNATURES.find((s) => s.matches(data))?.format;
  if (!format) throw new BadRequest('The avatar must be a JPEG, PNG, WebP or GIF image');
  const unreadable = () => new BadRequest(`The avatar is no readable ${format.toUpperCase()} image`);
  // loaded on first use: sharp and its libvips hold about 10 MiB that a server without uploads never needs
  const { default: sharp } = await import('sharp');
  // the header alone first (no pixel limit: nothing is decoded), so a bomb gets its own message
  const meta = await sharp(data, { limitInputPixels: false })
    .metadata()
    .catch(() => {
      throw unreadable();
    });
  if (meta.format !== format || !meta.width || !meta.height) throw unreadable();
  if (meta.width * meta.height > AVATAR_MAX_PIXELS) {
    throw new BadRequest(`The image is too large: ${meta.width}×${meta.height} pixels, at most ${AVATAR_MAX_PIXELS / 1_000_000} megapixels`);
  }
  const resized = sharp(data, { limitInputPixels: AVATAR_MAX_PIXELS, failOn: 'error' }).rotate().resize(AVATAR_SIZE, AVATAR_SIZE, { fit: 'cover' });
  const jpeg = format === 'jpeg';
  const body = await (jpeg ? resized.jpeg({ quality: 85 }) : resized.png({ compressionLevel: 9 })).toBuffer().catch(() => {
    throw unreadable();
  });
  return { body, type: jpeg ? 'image/jpeg' : 'image/png' };
}

/**
 * Sets the avatar of user `userId` (the user or an administrator) from an uploaded file (see
 * {@link reencode} for what is accepted). The new file is written under a temporary name and
 * renamed into place, then the user's row moves to the next version (compare-and-set on the
 * version: a concurrent change makes this one fail with 409, its file removed) and the previous
 * file is removed. Nothing changes when the upload is refused.
 */
export async function uploadAvatar(ctx: Context, userId: number, data: Buffer): Promise<void> {
  requireSelfOrAdmin(ctx, userId);
  const user = await getUserRow(ctx.db, userId);
  const { body, type } = await reencode(data);
  const version = user.avatarVersion + 1;
  const target = avatarFile(ctx.config, userId, version);
  await mkdir(avatarDir(ctx.config), { recursive: true, mode: PRIVATE_DIR_MODE });
  const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temp, body, { mode: 0o600 });
    await rename(temp, target);
  } finally {
    await rm(temp, { force: true });
  }
  if (!(await moveVersion(ctx.db, user, type))) {
    await rm(target, { force: true });
    throw new Conflict('The avatar was changed meanwhile: try again');
  }
  await removeAvatarFile(ctx.config, user);
}

/**
 * Deletes the uploaded avatar of user `userId` (the user or an administrator): the identicon is
 * served again, under the next version. NotFound when the user has none.
 */
export async function deleteAvatar(ctx: Context, userId: number): Promise<void> {
  requireSelfOrAdmin(ctx, userId);
  const user = await getUserRow(ctx.db, userId);
  if (user.avatarType === null) throw new NotFound('No uploaded avatar');
  if (!(await moveVersion(ctx.db, user, null))) throw new Conflict('The avatar was changed meanwhile: try again');
  await removeAvatarFile(ctx.config, user);
}

/** Moves the user's avatar from the version read in `user` to the next one; false when it moved meanwhile. */
async function moveVersion(db: Db, user: UserRow, type: string | null): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ avatarVersion: user.avatarVersion + 1, avatarType: type })
    .where('id', '=', user.id)
    .where('avatarVersion', '=', user.avatarVersion)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** What the profile page shows of a user: names and avatar version, never email addresses. */
export interface UserCard {
  id: number;
  name: string;
  fullName: string | null;
  avatarVersion: number;
}

/**
 * The card of a user for the profile page `/~users/<id or name>`, for any signed-in caller (the
 * names are those shown beside the user's work anyway): `key` is the user's id (digits — a login
 * name of digits only is reached by its id) or login name (case-insensitive). NotFound for an
 * unknown user; Unauthorized for anonymous callers.
 */
export async function userCard(ctx: Context, key: string): Promise<UserCard> {
  requireUser(ctx.actor);
  const query = ctx.db.selectFrom('users').select(['id', 'name', 'fullName', 'avatarVersion']);
  const user = /^-?\d{1,9}$/.test(key)
    ? await query.where('id', '=', Number(key)).executeTakeFirst()
    : await query.where('name', '=', key.toLowerCase()).executeTakeFirst();
  if (!user) throw new NotFound(`User not found: ${key}`);
  return user;
}
