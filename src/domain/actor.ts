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
