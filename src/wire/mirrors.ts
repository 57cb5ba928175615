import { Type } from '@sinclair/typebox';
import type { RepositoryMirrorRow } from '../db/schema.js';
import { toWireDate } from './dates.js';
import { Nullable, WireDate } from './schema.js';

/**
 * A repository mirror (Gitloom addition, docs/compatibility.md#repository-mirrors): its settings
 * and the outcome of its syncs. The password is never shown, only whether one is set.
 */
export const MirrorSchema = Type.Object(
  {
    id: Type.Integer(),
    projectId: Type.Integer(),
    direction: Type.Union([Type.Literal('PULL'), Type.Literal('PUSH')], {
      description: 'PULL: the project follows the remote; PUSH: the remote follows the project',
    }),
    url: Type.String({ description: 'the remote http(s) URL' }),
    userName: Nullable(Type.String()),
    passwordSet: Type.Boolean({ description: 'whether a password or access token is stored (it is never shown)' }),
    intervalMinutes: Nullable(Type.Integer({ description: 'minutes between two syncs of a pull mirror; null for a push mirror' })),
    enabled: Type.Boolean(),
    createDate: WireDate,
    syncing: Type.Boolean({ description: 'whether a server process is syncing it now' }),
    nextSyncDate: Nullable(Type.String({ description: 'when it is due (ISO-8601); null: disabled, or a push mirror with nothing to push' })),
    lastAttemptDate: Nullable(WireDate),
    lastSuccessDate: Nullable(WireDate),
    lastError: Nullable(Type.String({ description: 'why the last attempt failed; null after a success' })),
    failureCount: Type.Integer({ description: 'failed attempts since the last success (the retries back off)' }),
    attemptCount: Type.Integer({ description: 'attempts so far' }),
  },
  { $id: 'Mirror' },
);

/** What {@link toWireMirror} reads: a mirror's row without its secrets, as the mirrors area shows it. */
export type MirrorShown = Omit<RepositoryMirrorRow, 'password' | 'leaseOwner' | 'leaseExpires' | 'pendingDate'> & { passwordSet: boolean; syncing: boolean };

/** Maps a mirror to the wire shape of {@link MirrorSchema}. */
export function toWireMirror(mirror: MirrorShown) {
  return {
    id: mirror.id,
    projectId: mirror.projectId,
    direction: mirror.direction,
    url: mirror.url,
    userName: mirror.userName,
    passwordSet: mirror.passwordSet,
    intervalMinutes: mirror.intervalMinutes,
    enabled: Boolean(mirror.enabled),
    createDate: toWireDate(mirror.createDate),
    syncing: mirror.syncing,
    nextSyncDate: mirror.enabled ? toWireDate(mirror.nextAttemptDate) : null,
    lastAttemptDate: toWireDate(mirror.lastAttemptDate),
    lastSuccessDate: toWireDate(mirror.lastSuccessDate),
    lastError: mirror.lastError,
    failureCount: mirror.failureCount,
    attemptCount: mirror.attemptCount,
  };
}
