/**
 * A real S3-compatible server for the object storage tests: s3rver, in this process, on a free
 * port of loopback, keeping its buckets in a temp dir.
 */
import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
// s3rver ships no types
// eslint-disable-next-line @typescript-eslint/ban-ts-comment
// @ts-ignore
import S3rver from 's3rver';

/** A running s3rver. */
export interface TestS3 {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  /** Where s3rver keeps the buckets. */
  directory: string;
  /** The environment of a server storing objects in `bucket` (made when missing) under `prefix`. */
  env(bucket: string, prefix?: string): Promise<Record<string, string>>;
  close(): Promise<void>;
}

/** Starts s3rver (any access key is accepted; the tests send `S3RVER` / `S3RVER`). */
export async function startTestS3(): Promise<TestS3> {
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, directory, silent: true });
  const address = (await server.run()) as AddressInfo;
  const endpoint = `http://127.0.0.1:${address.port}`;
  return {
    endpoint,
    directory,
    async env(bucket, prefix = '') {
      await fs.mkdir(path.join(directory, bucket), { recursive: true });
      return {
        GITLOOM_OBJECT_STORE_URL: `s3://${bucket}/${prefix}?endpoint=${encodeURIComponent(endpoint)}&region=us-east-1&forcePathStyle=true`,
        GITLOOM_OBJECT_STORE_ACCESS_KEY_ID: 'S3RVER',
        GITLOOM_OBJECT_STORE_SECRET_ACCESS_KEY: 'S3RVER',
      };
    },
    async close() {
      await server.close();
      await fs.rm(directory, { recursive: true, force: true });
    },
  };
}
