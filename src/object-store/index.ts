/**
 * The object store of a configuration (docs/architecture.md#object-storage): the data dir by
 * default, an S3-compatible bucket when `GITLOOM_OBJECT_STORE_URL` is set.
 */
import type { Config } from '../config.js';
import { LocalObjectStore } from './local.js';
import { S3ObjectStore } from './s3.js';
import type { ObjectStore } from './types.js';

export { objectStoreFromEnv, type ObjectStoreConfig } from './config.js';
export {
  artifactsPrefix,
  buildPrefix,
  isBuildLogKey,
  isStoredKey,
  JOB_CACHES_PREFIX,
  jobCacheObjectKey,
  lfsObjectKey,
  LFS_PREFIX,
  projectBuildsPrefix,
  projectCachesPrefix,
} from './keys.js';
export { LocalObjectStore } from './local.js';
export { S3ObjectStore } from './s3.js';
export type { ByteRange, ListedObject, ObjectInfo, ObjectStore, OpenedObject, PutChecks } from './types.js';

const stores = new WeakMap<object, ObjectStore>();

/**
 * The store `config` names, made once per configuration (one S3 client and its connections).
 */
export function objectStoreOf(config: Pick<Config, 'dataDir' | 'objectStore'>): ObjectStore {
  const key = config.objectStore ?? config;
  let store = stores.get(key);
  if (!store) {
    store = config.objectStore === null ? new LocalObjectStore(config.dataDir) : new S3ObjectStore(config.objectStore);
    stores.set(key, store);
  }
  return store;
}

/** Closes the connections of the store `config` names, if one was made (a server stopping). */
export function closeObjectStore(config: Pick<Config, 'dataDir' | 'objectStore'>): void {
  const key = config.objectStore ?? config;
  const store = stores.get(key);
  if (store instanceof S3ObjectStore) store.destroy();
  stores.delete(key);
}
