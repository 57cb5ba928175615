/**
 * The real content of Git LFS files for the file views, raw downloads and diffs
 * (docs/compatibility.md#git-lfs): a blob that is a pointer stands for the object it names,
 * read from the store when the project may read it.
 */
import type { Readable } from 'node:stream';
import { parseLfsPointer } from '../../git/lfs-pointers.js';
import type { Context } from '../context.js';
import { readableObjects } from './objects.js';
import { openObject, readObjectHead } from './store.js';

/** The object an LFS pointer names, as a project sees it. */
export interface LfsContent {
  /** SHA-256 of the content. */
  oid: string;
  /** Size of the content in bytes (the pointer's). */
  size: number;
  /** Whether the server holds the object and the project may read it. */
  stored: boolean;
  /** The first `max` bytes of the content (empty when not stored). */
  head(max: number): Promise<Buffer>;
  /** Streams the whole content. @throws Error when not stored. */
  open(): Promise<Readable>;
}

/**
 * What a blob stands for when it is an LFS pointer (null otherwise): the object's id and size,
 * whether project `projectId` can read it (its own or its fork ancestors'), and readers of it.
 *
 * @param blob the blob's bytes (a pointer is shorter than 1024 bytes; longer blobs are no pointer).
 */
export async function lfsContentOf(ctx: Pick<Context, 'db' | 'config'>, projectId: number, blob: Buffer): Promise<LfsContent | null> {
  const pointer = parseLfsPointer(blob);
  if (!pointer) return null;
  const stored = (await readableObjects(ctx, projectId, [pointer.oid])).get(pointer.oid) === pointer.size;
  return {
    ...pointer,
    stored,
    async head(max) {
      if (!stored) return Buffer.alloc(0);
      return (await readObjectHead(ctx.config, pointer.oid, max)) ?? Buffer.alloc(0);
    },
    async open() {
      const opened = stored ? await openObject(ctx.config, pointer.oid) : null;
      if (!opened) throw new Error(`LFS object ${pointer.oid} is not stored`);
      return opened.stream;
    },
  };
}
