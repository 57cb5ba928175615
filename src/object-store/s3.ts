/**
 * The object store in an S3-compatible bucket (docs/architecture.md#object-storage), through
 * `@aws-sdk/client-s3` and `@aws-sdk/lib-storage`. Object `key` is `<prefix>/<key>` in the
 * bucket. Uploads stream as multipart uploads of {@link PART_BYTES} parts, at most
 * {@link QUEUE_SIZE} in flight, so memory stays flat whatever the size; the checks of an upload
 * run while it streams, and a refusal (or a crash) happens before S3 completes the upload, so
 * no object appears — S3 keeps an interrupted multipart upload invisible until it is aborted
 * (by the SDK on a refusal; after a crash, by start-up recovery and the periodic repair through
 * {@link S3ObjectStore.abortIncompleteUploads}, or by a lifecycle rule of the bucket, README
 * "Object storage").
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import type { ObjectStoreConfig } from './config.js';
import { checkKey } from './keys.js';
import type { ByteRange, ListedObject, ObjectInfo, ObjectStore, OpenedObject, PutChecks } from './types.js';

/** Bytes of one part of a multipart upload (S3's minimum is 5 MiB). */
export const PART_BYTES = 8 * 1024 * 1024;
/** Parts of one upload sent at once. */
export const QUEUE_SIZE = 2;
/** Keys per DeleteObjects request (S3's maximum). */
const DELETE_BATCH = 1000;

/** The S3 client library and its multipart uploader. */
type Sdk = typeof import('@aws-sdk/client-s3') & Pick<typeof import('@aws-sdk/lib-storage'), 'Upload'>;
let sdkLoading: Promise<Sdk> | null = null;

/** The SDK, loaded on first use: it holds megabytes that a server storing in its data dir never needs. */
function loadSdk(): Promise<Sdk> {
  sdkLoading ??= Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage')]).then(([s3, storage]) => ({ ...s3, Upload: storage.Upload }));
  return sdkLoading;
}

const isNotFound = (sdk: Sdk, error: unknown): boolean =>
  error instanceof sdk.S3ServiceException && (error.$metadata.httpStatusCode === 404 || error.name === 'NotFound' || error.name === 'NoSuchKey');

/** The S3 object store of `config`. */
export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3' as const;
  readonly location: string;
  private readonly config: ObjectStoreConfig;
  /** The client, made with the first request. */
  private client: S3Client | null = null;
  /** Set by {@link destroy}: a request after it fails instead of making a new client. */
  private closed = false;
  private readonly bucket: string;
  /** The bucket prefix, `''` or ending with `/`. */
  private readonly prefix: string;

  constructor(config: ObjectStoreConfig) {
    this.bucket = config.bucket;
    this.prefix = config.prefix === '' ? '' : `${config.prefix}/`;
    this.location = `s3://${config.bucket}/${config.prefix}`;
    this.config = config;
  }

  /**
   * The SDK and this store's client (made once).
   * @throws Error when the store was destroyed.
   */
  private async connected(): Promise<{ sdk: Sdk; client: S3Client }> {
    const sdk = await loadSdk();
    if (this.closed) throw new Error(`The object store ${this.location} is closed`);
    const config = this.config;
    this.client ??= new sdk.S3Client({
      region: config.region,
      ...(config.endpoint !== null && { endpoint: config.endpoint }),
      forcePathStyle: config.forcePathStyle,
      ...(config.credentials !== null && { credentials: config.credentials }),
      // checksums only where S3 requires them: many S3-compatible servers refuse the
      // aws-chunked uploads with trailing checksums that the SDK sends by default
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    return { sdk, client: this.client };
  }

  private objectKey(key: string): string {
    return `${this.prefix}${checkKey(key)}`;
  }

  async put(key: string, body: AsyncIterable<Uint8Array>, checks: PutChecks = {}): Promise<{ size: number }> {
    let size = 0;
    let refusal: unknown = null;
    async function* checked(): AsyncGenerator<Uint8Array> {
      try {
        for await (const chunk of body) {
          size += chunk.length;
          checks.inspect?.(chunk, size);
          yield chunk;
        }
        checks.verify?.(size);
      } catch (error) {
        refusal = error;
        throw error;
      }
    }
    const { sdk, client } = await this.connected();
    const upload = new sdk.Upload({
      client,
      params: { Bucket: this.bucket, Key: this.objectKey(key), Body: Readable.from(checked(), { objectMode: false }) },
      partSize: PART_BYTES,
      queueSize: QUEUE_SIZE,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      throw refusal ?? error;
    }
    return { size };
  }

  async get(key: string, range?: ByteRange | null): Promise<OpenedObject | null> {
    const { sdk, client } = await this.connected();
    try {
      const out = await client.send(
        new sdk.GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), ...(range && { Range: `bytes=${range.start}-${range.end}` }) }),
      );
      const length = Number(out.ContentLength ?? 0);
      const total = range ? Number(/\/(\d+)$/.exec(out.ContentRange ?? '')?.[1] ?? length) : length;
      return {
        stream: out.Body as Readable,
        size: total,
        lastModified: out.LastModified?.getTime() ?? 0,
        length,
        range: range ?? null,
      };
    } catch (error) {
      if (isNotFound(sdk, error)) return null;
      throw error;
    }
  }

  async stat(key: string): Promise<ObjectInfo | null> {
    const { sdk, client } = await this.connected();
    try {
      const out = await client.send(new sdk.HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return { size: Number(out.ContentLength ?? 0), lastModified: out.LastModified?.getTime() ?? 0 };
    } catch (error) {
      if (isNotFound(sdk, error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    const { sdk, client } = await this.connected();
    await client.send(new sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
  }

  async deletePrefix(prefix: string): Promise<void> {
    const { sdk, client } = await this.connected();
    let batch: string[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const out = await client.send(new sdk.DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }));
      batch = [];
      if (out.Errors && out.Errors.length > 0) throw new Error(`Unable to delete ${out.Errors[0].Key}: ${out.Errors[0].Message}`);
    };
    for await (const object of this.list(prefix)) {
      batch.push(this.objectKey(object.key));
      if (batch.length === DELETE_BATCH) await flush();
    }
    await flush();
  }

  async *list(prefix: string): AsyncIterable<ListedObject> {
    if (prefix !== '') checkKey(prefix.replace(/\/$/, ''));
    const { sdk, client } = await this.connected();
    let token: string | undefined;
    do {
      const out = await client.send(
        new sdk.ListObjectsV2Command({ Bucket: this.bucket, Prefix: `${this.prefix}${prefix}`, ...(token !== undefined && { ContinuationToken: token }) }),
      );
      for (const object of out.Contents ?? []) {
        if (object.Key === undefined) continue;
        yield { key: object.Key.slice(this.prefix.length), size: Number(object.Size ?? 0), lastModified: object.LastModified?.getTime() ?? 0 };
      }
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  /**
   * Aborts the incomplete multipart uploads below the store's prefix that were initiated before
   * `initiatedBefore` (epoch ms): what an upload cut off by a crash left — its parts, which the
   * bucket keeps (and bills) until the upload is aborted (S3 API `ListMultipartUploads`,
   * `AbortMultipartUpload`). An upload finished or aborted meanwhile is skipped.
   *
   * @returns the keys (below the prefix) of the uploads aborted, or null when the server does
   *   not list multipart uploads (it answers `NotImplemented`, as s3rver does).
   * @throws what the S3 client throws otherwise.
   */
  async abortIncompleteUploads(initiatedBefore: number): Promise<string[] | null> {
    const { sdk, client } = await this.connected();
    const aborted: string[] = [];
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    do {
      let out;
      try {
        out = await client.send(
          new sdk.ListMultipartUploadsCommand({
            Bucket: this.bucket,
            ...(this.prefix !== '' && { Prefix: this.prefix }),
            ...(keyMarker !== undefined && { KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }),
          }),
        );
      } catch (error) {
        if (error instanceof sdk.S3ServiceException && (error.name === 'NotImplemented' || error.$metadata.httpStatusCode === 501)) return null;
        throw error;
      }
      for (const upload of out.Uploads ?? []) {
        if (upload.Key === undefined || upload.UploadId === undefined || upload.Initiated === undefined) continue;
        if (upload.Initiated.getTime() >= initiatedBefore) continue;
        try {
          await client.send(new sdk.AbortMultipartUploadCommand({ Bucket: this.bucket, Key: upload.Key, UploadId: upload.UploadId }));
        } catch (error) {
          if (error instanceof sdk.S3ServiceException && error.name === 'NoSuchUpload') continue;
          throw error;
        }
        aborted.push(upload.Key.slice(this.prefix.length));
      }
      keyMarker = out.IsTruncated ? out.NextKeyMarker : undefined;
      uploadIdMarker = out.IsTruncated ? out.NextUploadIdMarker : undefined;
    } while (keyMarker !== undefined);
    return aborted;
  }

  /** Closes the client's connections (when it was made); later requests fail. */
  destroy(): void {
    this.closed = true;
    this.client?.destroy();
  }
}
