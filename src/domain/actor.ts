import { Forbidden, Unauthorized } from '../errors.js';
import { ANONYMOUS_ID, type Actor } from './context.js';

/** Throws 401 for anonymous callers, else 403 (docs/compatibility.md#platform-permissions: a denial). */
export function deny(actor: Actor, detail?: string): never {
  if (actor.userId === ANONYMOUS_ID) throw new Unauthorized(detail ?? 'Permission denied');
  throw new Forbidden(detail);
}

/** Requires a logged-in caller; throws Unauthorized otherwise. */
export function requireUser(actor: Actor): number {
  if (actor.userId === ANONYMOUS_ID) throw new Unauthorized();
  return actor.userId;
}

/** Requires an administrator: 401 anonymous, 403 otherwise. */
export function requireAdmin(actor: Actor): void {
  if (!actor.isAdmin) deny(actor);
}

/**
 * Refuses a change made with a read-only access token (docs/compatibility.md#gitloom-differs-sessions-and-tokens):
 * throws Forbidden with `GITLOOM_ERR_TOKEN_READ_ONLY`; nothing for any other caller.
 */
export function refuseReadOnlyToken(actor: Actor): void {
  if (actor.token?.readOnly) {
    throw new Forbidden('This access token is read-only: it may read, fetch and download, and change nothing', { code: 'GITLOOM_ERR_TOKEN_READ_ONLY' });
  }
}
