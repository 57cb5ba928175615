import { Type } from '@sinclair/typebox';
import { toWireDate } from './dates.js';

import { Nullable } from './schema.js';

/** User JSON (docs/compatibility.md#users-json-and-names): id, name, fullName — in that order. */
export const UserSchema = Type.Object({ id: Type.Integer(), name: Type.String(), fullName: Nullable(Type.String()) }, { $id: 'User' });

/** Maps a user row to its wire shape. */
export function toWireUser(user: { id: number; name: string; fullName: string | null }) {
  return { id: user.id, name: user.name, fullName: user.fullName };
}

/** AccessToken JSON (docs/compatibility.md#gitloom-differs-authentication): value masked in listings. */
export const AccessTokenSchema = Type.Object({
  value: Type.String(),
  description: Nullable(Type.String()),
  createDate: Type.String(),
  expireDate: Nullable(Type.String()),
  // Gitloom's own (docs/compatibility.md#gitloom-differs-sessions-and-tokens)
  readOnly: Type.Boolean(),
  projectIds: Nullable(Type.Array(Type.Integer())),
  lastUsedDate: Nullable(Type.String()),
  lastUsedAddress: Nullable(Type.String()),
});

/** Maps a token listing entry to its wire shape. */
export function toWireAccessToken(token: {
  value: string;
  description: string | null;
  createDate: number;
  expireDate: number | null;
  readOnly: boolean;
  projectIds: number[] | null;
  lastUse: { date: number; address: string | null } | null;
}) {
  return {
    value: token.value,
    description: token.description,
    createDate: toWireDate(token.createDate),
    expireDate: toWireDate(token.expireDate),
    readOnly: token.readOnly,
    projectIds: token.projectIds,
    lastUsedDate: toWireDate(token.lastUse?.date ?? null),
    lastUsedAddress: token.lastUse?.address ?? null,
  };
}

/** EmailAddress JSON (docs/compatibility.md#email-addresses-and-ssh-keys). */
export const EmailAddressSchema = Type.Object({
  id: Type.Integer(),
  value: Type.String(),
  primary: Type.Boolean(),
  git: Type.Boolean(),
  ownerId: Type.Integer(),
});

/** Maps an email address row to its wire shape. */
export function toWireEmailAddress(row: { id: number; value: string; primary: number; git: number; ownerId: number }) {
  return { id: row.id, value: row.value, primary: row.primary === 1, git: row.git === 1, ownerId: row.ownerId };
}
