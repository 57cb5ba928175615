/**
 * Where uploaded avatars live: `avatars/<user id>-<version>` in the data dir
 * (docs/architecture.md#data-layout), one file per user, named by the version of its row.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../config.js';
import type { UserRow } from '../../db/schema.js';

/** The directory of uploaded avatars. */
export const avatarDir = (config: Config): string => path.join(config.dataDir, 'avatars');

/** The file of version `version` of user `userId`'s uploaded avatar. */
export const avatarFile = (config: Config, userId: number, version: number): string => path.join(avatarDir(config), `${userId}-${version}`);

/** Removes the uploaded avatar file of `user` as its row read (nothing without an upload; a missing file is no error). */
export async function removeAvatarFile(config: Config, user: Pick<UserRow, 'id' | 'avatarVersion' | 'avatarType'>): Promise<void> {
  if (user.avatarType !== null) await rm(avatarFile(config, user.id, user.avatarVersion), { force: true });
}
