/**
 * The basic transfer adapter of Git LFS (docs/compatibility.md#git-lfs; the specification's
 * "Basic Transfer API"): `GET <base>/objects/<oid>` downloads, `PUT <base>/objects/<oid>[/<size>]`
 * uploads, both streamed.
 */
import type { Readable } from 'node:stream';
import { BadRequest, NotFound, UnprocessableEntity } from '../../errors.js';
import type { LfsRepository } from './access.js';
import { readableObjects, referenceObject } from './objects.js';
import { OID_PATTERN, openObject, storeObject, type OpenedObject } from './store.js';

/**
 * Opens object `oid` for a download from `repo` (authorized for read beforehand): whole, or the
 * byte range of `rangeHeader` (a resumed download).
 *
 * @throws UnprocessableEntity (malformed id), NotFound (the project may not read it, or the store
 *   lacks it), RangeNotSatisfiable (a range past the end).
 */
export async function downloadObject(repo: LfsRepository, oid: string, rangeHeader?: string): Promise<OpenedObject> {
  if (!OID_PATTERN.test(oid)) throw new UnprocessableEntity(`Invalid object id: ${oid.slice(0, 80)}`);
  const known = await readableObjects(repo.ctx, repo.projectId, [oid]);
  const opened = known.has(oid) ? await openObject(repo.ctx.config, oid, rangeHeader) : null;
  if (!opened) throw new NotFound('Object does not exist');
  return opened;
}

/**
 * Stores an upload of object `oid` into `repo` (authorized for write beforehand): the body is
 * streamed to the store, which keeps it only when its size is `size` — from the href, else the
 * request's `Content-Length` — and its SHA-256 is `oid`; then the project references it.
 *
 * @param size the size from the href (`…/objects/<oid>/<size>`), or null.
 * @param contentLength the request's `Content-Length`, if sent.
 * @throws UnprocessableEntity (bad id or size, content not matching), BadRequest (no size
 *   known), PayloadTooLarge (over `GITLOOM_LFS_MAX_MB`).
 */
export async function uploadObject(repo: LfsRepository, oid: string, size: string | null, contentLength: string | undefined, body: unknown): Promise<void> {
  const { ctx } = repo;
  if (!OID_PATTERN.test(oid)) throw new UnprocessableEntity(`Invalid object id: ${oid.slice(0, 80)}`);
  const declared = size ?? contentLength;
  if (declared === undefined) throw new BadRequest('The object size is unknown: send Content-Length');
  if (!/^\d{1,16}$/.test(declared)) throw new UnprocessableEntity(`Invalid object size: ${declared.slice(0, 40)}`);
  const bytes = Number(declared);
  if (contentLength !== undefined && contentLength !== declared) {
    throw new UnprocessableEntity(`Content-Length ${contentLength.slice(0, 40)} is not the object size ${bytes}`);
  }
  if (!isReadable(body)) throw new BadRequest('Missing object content');
  await storeObject(ctx.config, oid, bytes, body, ctx.config.lfsMaxBytes);
  await referenceObject(ctx.db, repo.projectId, oid, bytes, ctx.now());
}

const isReadable = (body: unknown): body is Readable => typeof body === 'object' && body !== null && typeof (body as Readable).pipe === 'function';
