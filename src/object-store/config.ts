/**
 * The configuration of S3-compatible object storage (README "Object storage",
 * docs/architecture.md#object-storage): `GITLOOM_OBJECT_STORE_URL` names the bucket, an optional
 * key prefix, and the client's options as query parameters; the credentials come from
 * `GITLOOM_OBJECT_STORE_ACCESS_KEY_ID` and `GITLOOM_OBJECT_STORE_SECRET_ACCESS_KEY`, or else
 * from the AWS SDK's default chain (`AWS_ACCESS_KEY_ID`…, `~/.aws`, instance roles).
 */

/** Where and how to reach the bucket. */
export interface ObjectStoreConfig {
  readonly bucket: string;
  /** Key prefix inside the bucket, without leading or trailing `/` (`''` for none). */
  readonly prefix: string;
  /** `endpoint=` — the S3 API's URL for S3-compatible servers, or null for AWS's own. */
  readonly endpoint: string | null;
  /** `region=`, default `us-east-1`. */
  readonly region: string;
  /** `forcePathStyle=true` — bucket in the path rather than the host name (MinIO, Ceph, most non-AWS servers). */
  readonly forcePathStyle: boolean;
  /** Static credentials, or null for the SDK's default chain. */
  readonly credentials: { accessKeyId: string; secretAccessKey: string } | null;
}

const PARAMS = new Set(['endpoint', 'region', 'forcePathStyle']);

/**
 * Reads `GITLOOM_OBJECT_STORE_URL` (`s3://<bucket>[/<prefix>][?endpoint=<url>&region=<region>&forcePathStyle=true]`)
 * and the credential variables.
 *
 * @returns null when the variable is unset or empty (the data dir holds the objects).
 * @throws Error naming the variable when the URL is malformed, names an unknown parameter, or
 *   only one of the two credential variables is set.
 * @example objectStoreFromEnv({ GITLOOM_OBJECT_STORE_URL: 's3://forge/objects?region=eu-west-1' })
 *   // { bucket: 'forge', prefix: 'objects', region: 'eu-west-1', endpoint: null, forcePathStyle: false, credentials: null }
 */
export function objectStoreFromEnv(env: NodeJS.ProcessEnv): ObjectStoreConfig | null {
  const raw = env.GITLOOM_OBJECT_STORE_URL;
  if (!raw) return null;
  const bad = (why: string) => new Error(`GITLOOM_OBJECT_STORE_URL ${why}, got '${raw}'`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw bad('must be a URL such as s3://bucket/prefix');
  }
  if (url.protocol !== 's3:') throw bad('must start with s3://');
  if (!url.hostname) throw bad('must name a bucket');
  if (url.username || url.password) throw bad('must not hold credentials (use GITLOOM_OBJECT_STORE_ACCESS_KEY_ID and …_SECRET_ACCESS_KEY)');
  for (const name of url.searchParams.keys()) if (!PARAMS.has(name)) throw bad(`has an unknown parameter '${name}'`);
  const endpoint = url.searchParams.get('endpoint') || null;
  if (endpoint !== null && !/^https?:\/\/[^/]/.test(endpoint)) throw bad('needs an http(s) endpoint');
  const forcePathStyle = url.searchParams.get('forcePathStyle') ?? 'false';
  if (forcePathStyle !== 'true' && forcePathStyle !== 'false') throw bad('needs forcePathStyle=true or false');
  const prefix = decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, '');
  if (prefix.split('/').some((s) => s === '.' || s === '..') || /\/\//.test(prefix)) throw bad('has a malformed prefix');
  const accessKeyId = env.GITLOOM_OBJECT_STORE_ACCESS_KEY_ID || null;
  const secretAccessKey = env.GITLOOM_OBJECT_STORE_SECRET_ACCESS_KEY || null;
  if ((accessKeyId === null) !== (secretAccessKey === null)) {
    throw new Error('GITLOOM_OBJECT_STORE_ACCESS_KEY_ID and GITLOOM_OBJECT_STORE_SECRET_ACCESS_KEY must be set together');
  }
  return {
    bucket: url.hostname,
    prefix,
    endpoint,
    region: url.searchParams.get('region') || 'us-east-1',
    forcePathStyle: forcePathStyle === 'true',
    credentials: accessKeyId !== null && secretAccessKey !== null ? { accessKeyId, secretAccessKey } : null,
  };
}
