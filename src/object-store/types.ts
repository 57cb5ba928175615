/**
 * The object store (docs/architecture.md#object-storage): where build artifacts and Git LFS
 * objects live — the data dir (the default) or an S3-compatible bucket. Keys are relative,
 * `/`-separated paths such as `lfs/ab/cd/<oid>` or `builds/3/12/artifacts/dist/app.zip`; the
 * data-dir store keeps each at `<data dir>/<key>`, the bucket at `<prefix>/<key>`.
 */
import type { Readable } from 'node:stream';
import type { ByteRange } from '../ci/artifacts.js';

export type { ByteRange } from '../ci/artifacts.js';

/** What the store knows of an object. */
export interface ObjectInfo {
  /** Size in bytes. */
  readonly size: number;
  /** Epoch milliseconds. */
  readonly lastModified: number;
}

/** An object found by {@link ObjectStore.list}. */
export interface ListedObject extends ObjectInfo {
  /** The whole key (`<prefix>…`). */
  readonly key: string;
}

/** An object opened for reading. */
export interface OpenedObject extends ObjectInfo {
  /** The bytes (of `range`, when one was asked). The caller consumes or destroys it. */
  readonly stream: Readable;
  /** Bytes in `stream`. */
  readonly length: number;
  /** The served range, or null for the whole object. */
  readonly range: ByteRange | null;
}

/** Checks run on an upload while it streams in; what they throw refuses it and keeps nothing. */
export interface PutChecks {
  /** Sees each chunk and the byte count including it, before the chunk is stored. */
  inspect?(chunk: Uint8Array, total: number): void;
  /** Runs once the body ended, with its byte count, before the object becomes visible. */
  verify?(total: number): void;
}

/**
 * An object store. Writes are all or nothing: an object appears (or is replaced) only once its
 * whole body arrived and passed its checks; a failed or interrupted upload leaves no visible
 * object under its key.
 */
export interface ObjectStore {
  /** `local` (the data dir) or `s3`. */
  readonly kind: 'local' | 's3';
  /** Where the store is, for messages: a directory or `s3://bucket/prefix`. */
  readonly location: string;
  /**
   * Streams `body` in as `key`, never holding it whole in memory.
   *
   * @returns the size in bytes.
   * @throws what `checks` throw (nothing kept); Conflict (data-dir store) when the key is a directory
   *   or one of its parents a file.
   */
  put(key: string, body: AsyncIterable<Uint8Array>, checks?: PutChecks): Promise<{ size: number }>;
  /**
   * Opens `key` for streaming, whole or the byte `range` (which the caller checked against
   * {@link stat}'s size).
   *
   * @returns null when the store does not hold it.
   */
  get(key: string, range?: ByteRange | null): Promise<OpenedObject | null>;
  /** The object's size and date, or null when absent. */
  stat(key: string): Promise<ObjectInfo | null>;
  /** Removes `key` (absent: nothing to do). */
  delete(key: string): Promise<void>;
  /** Removes every object whose key starts with `prefix` (which ends with `/`). */
  deletePrefix(prefix: string): Promise<void>;
  /** Every object whose key starts with `prefix` (ends with `/`, or `''` for all), in no particular order. */
  list(prefix: string): AsyncIterable<ListedObject>;
}
