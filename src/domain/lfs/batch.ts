/**
 * The Git LFS batch API (docs/compatibility.md#git-lfs; the Git LFS API specification, "Batch
 * API"): which objects to download or upload, answered with actions of the basic transfer
 * adapter whose hrefs point back at this server.
 */
import { BadRequest, Conflict, PayloadTooLarge } from '../../errors.js';
import { ANONYMOUS_ID } from '../context.js';
import type { LfsRepository } from './access.js';
import { readableObjects } from './objects.js';
import { OID_PATTERN } from './store.js';
import { LFS_TOKEN_SCHEME, LFS_TOKEN_TTL_S, lfsTokenKey, signLfsToken, type LfsOperation } from './tokens.js';

/** Most objects one batch request may name. */
export const MAX_BATCH_OBJECTS = 1000;

/** A batch request body (already parsed JSON, not yet checked). */
export interface BatchRequest {
  operation?: unknown;
  transfers?: unknown;
  objects?: unknown;
  hash_algo?: unknown;
}

/** One action of a batch answer. */
export interface BatchAction {
  href: string;
  header?: Record<string, string>;
  expires_in: number;
}

/** One object of a batch answer: actions to take, none (nothing to do), or an error. */
export interface BatchObject {
  oid: string;
  size: number;
  authenticated?: boolean;
  actions?: { download?: BatchAction; upload?: BatchAction };
  error?: { code: number; message: string };
}

/** The batch answer. */
export interface BatchResponse {
  transfer: 'basic';
  objects: BatchObject[];
  hash_algo: 'sha256';
}

/** Checks the request's shape. @throws BadRequest (malformed), Conflict (a hash algorithm other than sha256, as the spec says), PayloadTooLarge (too many objects). */
function checkRequest(body: BatchRequest): { operation: LfsOperation; objects: { oid: unknown; size: unknown }[] } {
  if (typeof body !== 'object' || body === null) throw new BadRequest('The batch request must be a JSON object');
  const { operation, objects } = body;
  if (operation !== 'download' && operation !== 'upload') throw new BadRequest("operation must be 'download' or 'upload'");
  if (!Array.isArray(objects)) throw new BadRequest('objects must be an array');
  if (objects.length > MAX_BATCH_OBJECTS) throw new PayloadTooLarge(`A batch may name at most ${MAX_BATCH_OBJECTS} objects`);
  if (body.hash_algo !== undefined && body.hash_algo !== 'sha256') throw new Conflict(`Unsupported hash algorithm: ${String(body.hash_algo).slice(0, 40)}`);
  if (body.transfers !== undefined && !Array.isArray(body.transfers)) throw new BadRequest('transfers must be an array');
  for (const object of objects) if (typeof object !== 'object' || object === null) throw new BadRequest('Each object must be a JSON object');
  return { operation, objects };
}

/**
 * Answers a batch request for `repo` (authorized beforehand for read — download — or write —
 * upload). Download: each object the project may read (its own, or its fork ancestors') gets
 * a `download` action, the others error 404. Upload: objects the project can already read need
 * nothing, the others get an `upload` action to `<base>/objects/<oid>/<size>`; an object over
 * `config.lfsMaxBytes` errors 422, as does a malformed id or size. Signed-in callers get an LFS
 * token (download or upload, for this project, 10 minutes) in the actions' `Authorization`
 * header, so the transfers need no password check.
 *
 * @param base the project's LFS URL as the client reached it (`<server>/<path>.git/info/lfs`).
 * @throws BadRequest, Conflict, PayloadTooLarge (see {@link checkRequest}).
 */
export async function batch(repo: LfsRepository, body: BatchRequest, base: string): Promise<BatchResponse> {
  const { ctx } = repo;
  const { operation, objects } = checkRequest(body);
  const valid = (o: { oid: unknown; size: unknown }): o is { oid: string; size: number } =>
    typeof o.oid === 'string' && OID_PATTERN.test(o.oid) && Number.isSafeInteger(o.size) && (o.size as number) >= 0;
  const known = await readableObjects(
    ctx,
    repo.projectId,
    objects.filter(valid).map((o) => o.oid),
  );
  const header = transferHeader(repo, operation);
  const action = (href: string): BatchAction => ({ href, ...(header && { header }), expires_in: LFS_TOKEN_TTL_S });
  // `authenticated`: the actions carry the credentials they need (the spec's meaning)
  const authenticated = header ? { authenticated: true } : {};
  return {
    transfer: 'basic',
    hash_algo: 'sha256',
    objects: objects.map((o): BatchObject => {
      if (!valid(o)) return { oid: String(o.oid).slice(0, 100), size: Number(o.size) || 0, error: { code: 422, message: 'Invalid object id or size' } };
      const stored = known.get(o.oid);
      if (operation === 'download') {
        if (stored === undefined) return { oid: o.oid, size: o.size, error: { code: 404, message: 'Object does not exist' } };
        return { oid: o.oid, size: stored, ...authenticated, actions: { download: action(`${base}/objects/${o.oid}`) } };
      }
      if (o.size > ctx.config.lfsMaxBytes)
        return { oid: o.oid, size: o.size, error: { code: 422, message: `Object is larger than the limit of ${ctx.config.lfsMaxBytes} bytes` } };
      if (stored === o.size) return { oid: o.oid, size: o.size };
      return { oid: o.oid, size: o.size, ...authenticated, actions: { upload: action(`${base}/objects/${o.oid}/${o.size}`) } };
    }),
  };
}

/** The `Authorization` header of the actions: an LFS token for a signed-in caller, none for anonymous. */
function transferHeader(repo: LfsRepository, operation: LfsOperation): Record<string, string> | null {
  const { ctx } = repo;
  if (ctx.actor.userId === ANONYMOUS_ID) return null;
  const token = signLfsToken(lfsTokenKey(ctx.config), {
    userId: ctx.actor.userId,
    projectId: repo.projectId,
    operation,
    expires: ctx.now() + LFS_TOKEN_TTL_S * 1000,
  });
  return { Authorization: `${LFS_TOKEN_SCHEME} ${token}` };
}
