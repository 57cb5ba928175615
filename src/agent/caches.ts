/**
 * The caches of an agent's job when the server keeps them in its bucket
 * (docs/compatibility.md#builds-caches "In object storage"): restored and saved through the
 * server with the job's token (`/~agent/job/caches/<key>`), as tar archives made and read by
 * src/ci/cache-archives.ts, streamed both ways. The server evicted the unused ones when it
 * leased the job, so this store evicts nothing.
 */
import { Readable } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';
import { CacheTooLarge, extractTree, packTree } from '../ci/cache-archives.js';
import type { JobCacheStore } from '../ci/job-caches.js';
import { AGENT_PATHS } from '../wire/agent-protocol.js';
import { callServer, ServerRefusal } from './server-client.js';

/** Milliseconds a cache transfer may take (large caches on slow links). */
const TRANSFER_TIMEOUT_MS = 3_600_000;

/**
 * The store of a job's caches kept by `server`, reached with `jobToken`; archives of at most
 * `maxBytes` bytes (the server's bound). The project is the job's: the `projectId` the executor
 * passes is the same one, and the server takes it from the token.
 */
export function serverJobCaches(server: string, jobToken: string, maxBytes: number, signal: AbortSignal): JobCacheStore {
  const cachePath = (key: string) => `${AGENT_PATHS.caches}/${encodeURIComponent(key)}`;
  return {
    maxBytes,
    async restore(_projectId, key, into) {
      let response: Response;
      try {
        response = await callServer(server, cachePath(key), { token: jobToken, signal, timeoutMs: TRANSFER_TIMEOUT_MS });
      } catch (error) {
        if (error instanceof ServerRefusal && error.status === 404) return false;
        throw error;
      }
      if (!response.body) throw new Error(`Cache '${key}': the server sent no content`);
      await extractTree(Readable.fromWeb(response.body as ReadableStream<Uint8Array>), into);
      return true;
    },
    async save(_projectId, key, from) {
      let tooLarge = false;
      const archive = async function* (): AsyncGenerator<Uint8Array> {
        try {
          yield* packTree(from, maxBytes);
        } catch (error) {
          tooLarge = error instanceof CacheTooLarge;
          throw error;
        }
      };
      try {
        const response = await callServer(server, cachePath(key), { token: jobToken, stream: archive(), signal, timeoutMs: TRANSFER_TIMEOUT_MS });
        return ((await response.json()) as { size: number }).size;
      } catch (error) {
        if (tooLarge || (error instanceof ServerRefusal && error.status === 413)) return null;
        throw error;
      }
    },
  };
}
