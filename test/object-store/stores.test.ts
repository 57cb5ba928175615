import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { LocalObjectStore, objectStoreOf, type ObjectStore } from '../../src/object-store/index.js';
import { PART_BYTES } from '../../src/object-store/s3.js';
import { startTestS3, type TestS3 } from '../helpers/s3.js';

const text = async (stream: Readable): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
};
const all = async (store: ObjectStore, prefix: string) => {
  const keys: string[] = [];
  for await (const object of store.list(prefix)) keys.push(object.key);
  return keys.sort();
};

let s3: TestS3;
let dataDir: string;
const stores: Record<string, ObjectStore> = {};

beforeAll(async () => {
  s3 = await startTestS3();
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-store-'));
  stores.local = new LocalObjectStore(dataDir);
  stores.s3 = objectStoreOf(loadConfig(await s3.env('stores', 'forge/objects'), { dataDir }));
});
afterAll(async () => {
  await s3?.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

describe.each(['local', 's3'])('the %s object store', (kind) => {
  const store = () => stores[kind];

  it('puts, stats, reads whole and by range, lists, deletes by key and by prefix', async () => {
    expect(store().kind).toBe(kind);
    expect(await store().put('a/b/one.txt', Readable.from([Buffer.from('hello '), Buffer.from('world')]))).toEqual({ size: 11 });
    await store().put('a/b/c/two.txt', Readable.from([Buffer.from('2')]));
    await store().put('a/three.txt', Readable.from([Buffer.from('3')]));
    await store().put('empty', Readable.from([]));
    expect(await store().stat('a/b/one.txt')).toMatchObject({ size: 11 });
    expect(await store().stat('empty')).toMatchObject({ size: 0 });
    expect(await store().stat('a/b/missing')).toBeNull();
    expect(await store().get('a/b/missing')).toBeNull();
    expect(await text((await store().get('a/b/one.txt'))!.stream)).toBe('hello world');
    const part = (await store().get('a/b/one.txt', { start: 6, end: 10 }))!;
    expect([part.size, part.length, await text(part.stream)]).toEqual([11, 5, 'world']);
    expect(await all(store(), 'a/b/')).toEqual(['a/b/c/two.txt', 'a/b/one.txt']);
    await store().delete('a/b/one.txt');
    await store().delete('a/b/one.txt');
    expect(await store().stat('a/b/one.txt')).toBeNull();
    await store().deletePrefix('a/');
    expect(await all(store(), 'a/')).toEqual([]);
    expect(await all(store(), '')).toEqual(['empty']);
  });

  it('keeps nothing of an upload its checks refuse, at the end or midway, and keeps the object it replaces', async () => {
    await store().put('kept', Readable.from([Buffer.from('old')]));
    const body = () => Readable.from([randomBytes(PART_BYTES), randomBytes(PART_BYTES), randomBytes(100)]);
    await expect(
      store().put('kept', body(), {
        verify() {
          throw new Error('refused at the end');
        },
      }),
    ).rejects.toThrow('refused at the end');
    await expect(
      store().put('fresh', body(), {
        inspect(_chunk, total) {
          if (total > PART_BYTES) throw new Error('refused midway');
        },
      }),
    ).rejects.toThrow('refused midway');
    expect(await text((await store().get('kept'))!.stream)).toBe('old');
    expect(await store().stat('fresh')).toBeNull();
    expect(await all(store(), '')).toEqual(['empty', 'kept']);
  });

  it('streams a multipart-sized upload and reads back the same bytes', async () => {
    const parts = [randomBytes(PART_BYTES), randomBytes(PART_BYTES), randomBytes(12345)];
    const digest = createHash('sha256');
    for (const part of parts) digest.update(part);
    expect(await store().put('big/blob', Readable.from(parts))).toEqual({ size: 2 * PART_BYTES + 12345 });
    const back = createHash('sha256');
    for await (const chunk of (await store().get('big/blob'))!.stream) back.update(chunk as Buffer);
    expect(back.digest('hex')).toBe(digest.digest('hex'));
    const tail = (await store().get('big/blob', { start: 2 * PART_BYTES, end: 2 * PART_BYTES + 12344 }))!;
    const tailBytes: Buffer[] = [];
    for await (const chunk of tail.stream) tailBytes.push(chunk as Buffer);
    expect([tail.length, Buffer.concat(tailBytes).equals(parts[2])]).toEqual([12345, true]);
  });

  it('refuses malformed keys', async () => {
    for (const key of ['../x', 'a//b', '/a', 'a/./b', 'a\0b']) await expect(store().stat(key), key).rejects.toThrow('Malformed object key');
  });
});

describe('GITLOOM_OBJECT_STORE_URL', () => {
  it('reads the bucket, prefix, endpoint, region, path style and credentials, and refuses what it cannot read', () => {
    const config = loadConfig({
      GITLOOM_OBJECT_STORE_URL: 's3://forge/a/b/?endpoint=http://127.0.0.1:9000&region=eu-west-1&forcePathStyle=true',
      GITLOOM_OBJECT_STORE_ACCESS_KEY_ID: 'id',
      GITLOOM_OBJECT_STORE_SECRET_ACCESS_KEY: 'secret',
    });
    expect(config.objectStore).toEqual({
      bucket: 'forge',
      prefix: 'a/b',
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-west-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'id', secretAccessKey: 'secret' },
    });
    expect(loadConfig({}).objectStore).toBeNull();
    expect(loadConfig({ GITLOOM_OBJECT_STORE_URL: 's3://forge' }).objectStore).toMatchObject({
      prefix: '',
      region: 'us-east-1',
      credentials: null,
      endpoint: null,
    });
    for (const bad of [
      'http://forge',
      's3://',
      's3://forge?bucket=x',
      's3://forge?endpoint=ftp://x',
      's3://forge?forcePathStyle=yes',
      's3://k:s@forge',
      'nonsense',
    ]) {
      expect(() => loadConfig({ GITLOOM_OBJECT_STORE_URL: bad }), bad).toThrow(/GITLOOM_OBJECT_STORE_URL/);
    }
    expect(() => loadConfig({ GITLOOM_OBJECT_STORE_URL: 's3://forge', GITLOOM_OBJECT_STORE_ACCESS_KEY_ID: 'id' })).toThrow(/set together/);
  });
});
