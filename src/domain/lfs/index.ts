/**
 * The door of the Git LFS area (docs/architecture.md#domain-areas, docs/compatibility.md#git-lfs):
 * the batch API, the basic transfer adapter, file locks, short-lived tokens for SSH, the
 * pre-receive check of pushed pointers, LFS content for the file views and build checkouts, and
 * the project references of the object store (table owner: `lfs_objects`, `lfs_locks`).
 */
export { authorizeLfs, type LfsRepository } from './access.js';
export { batch, type BatchRequest, type BatchResponse } from './batch.js';
export { createLock, listLocks, LockExists, unlock, verifyLocks, type LfsLock } from './locks.js';
export { lfsUsage, onProjectsDeleting as onLfsProjectsDeleting, type LfsUsage } from './objects.js';
export { checkLfsPush } from './push-check.js';
export { issueLfsToken, LFS_TOKEN_SCHEME, LFS_TOKEN_TTL_S, type LfsAuthentication, type LfsOperation } from './tokens.js';
export { downloadObject, uploadObject } from './transfer.js';
export { lfsContentOf, type LfsContent } from './content.js';
export { checkoutLfsObjects, openCheckoutObject } from './checkout.js';
export { lfsTempDir, type OpenedObject } from './store.js';
