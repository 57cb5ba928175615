/**
 * Repair of the bucket (docs/architecture.md#start-up-recovery): start-up recovery aborts the
 * incomplete multipart uploads that interrupted uploads left, through S3's
 * `ListMultipartUploads`. s3rver, the S3-compatible server of the tests, does not implement that
 * call (it answers `NotImplemented`): what is pinned here is that recovery recognizes such a
 * server, says so once, and completes. The job cache archives no cache names (a process died
 * between uploading one and recording it) go too, once older than a save takes.
 */
import { CreateMultipartUploadCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { removeUnrecordedCacheArchives } from '../../src/domain/builds/index.js';
import { createContext, systemActor } from '../../src/domain/context.js';
import { recoverAtStartup } from '../../src/domain/startup-recovery.js';
import { Readable } from 'node:stream';
import { S3ObjectStore } from '../../src/object-store/index.js';
import { startTestS3, type TestS3 } from '../helpers/s3.js';
import { givenProject } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('repair of incomplete multipart uploads', () => {
  let s3: TestS3;
  let server: TestServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    s3 = await startTestS3();
    env = await s3.env('repaired', 'forge');
    server = await startTestServer(env);
  });
  afterAll(async () => {
    await server?.close();
    await s3?.close();
  });

  it('says at start-up that the bucket’s server does not list multipart uploads, and recovers the rest', async () => {
    // an upload cut off after its first part, as a crash leaves it
    const client = new S3Client({
      region: 'us-east-1',
      endpoint: s3.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    const begun = await client.send(new CreateMultipartUploadCommand({ Bucket: 'repaired', Key: 'forge/builds/1/1/artifacts/big.bin' }));
    await client.send(
      new UploadPartCommand({
        Bucket: 'repaired',
        Key: 'forge/builds/1/1/artifacts/big.bin',
        UploadId: begun.UploadId,
        PartNumber: 1,
        Body: Buffer.alloc(1024),
      }),
    );
    client.destroy();

    const store = new S3ObjectStore(loadConfig(env).objectStore!);
    expect(await store.abortIncompleteUploads(Date.now())).toBeNull();
    store.destroy();

    const lines: string[] = [];
    const report = await recoverAtStartup(server.server.services, (line) => lines.push(line));
    expect(report.incompleteUploads).toEqual([]);
    expect(lines).toContain(
      'Start-up recovery: the server of s3://repaired/forge does not list multipart uploads: give the bucket an AbortIncompleteMultipartUpload lifecycle rule to remove what interrupted uploads leave',
    );
  });

  it('deletes the job cache archives no cache names, once older than a save takes', async () => {
    const services = server.server.services;
    const ctx = createContext(services, systemActor);
    const projectId = await givenProject(server, { name: 'cached' });
    const store = new S3ObjectStore(loadConfig(env).objectStore!);
    const recorded = `caches/${projectId}/deps/recorded.tar`;
    const unrecorded = `caches/${projectId}/deps/unrecorded.tar`;
    for (const key of [recorded, unrecorded]) await store.put(key, Readable.from([Buffer.from('archive')]));
    await services.db.insertInto('jobCaches').values({ projectId, cacheKey: 'deps', objectKey: recorded, size: 7, usedDate: Date.now() }).execute();
    // written just now: a save may be about to record it
    expect(await removeUnrecordedCacheArchives(ctx, Date.now() - 60_000)).toEqual([]);
    expect(await removeUnrecordedCacheArchives(ctx, Date.now() + 60_000)).toEqual([unrecorded]);
    expect(await store.stat(unrecorded)).toBeNull();
    expect(await store.stat(recorded)).not.toBeNull();
    store.destroy();
  });
});
