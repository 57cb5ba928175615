import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { parseNetworkAllowList } from './ci/job-network.js';
import { DEFAULT_JOB_SANDBOX, JOB_UID_RANGE, type JobSandboxConfig } from './ci/sandbox.js';
import { JOBS_DIR } from './data-dir.js';
import { objectStoreFromEnv, type ObjectStoreConfig } from './object-store/config.js';

/** Server configuration, read once from the environment (README "Configuration"). */
export interface Config {
  /** TCP port of the HTTP server (`GITLOOM_PORT`, default 6610). */
  port: number;
  /** Interface to bind (`GITLOOM_HOST`, default 0.0.0.0). */
  host: string;
  /** Absolute data directory (`GITLOOM_DATA_DIR`, default ./data). */
  dataDir: string;
  /** `postgres://…` URL, or null for the embedded SQLite database (`GITLOOM_DATABASE_URL`). */
  databaseUrl: string | null;
  /** Public base URL used for clone URLs (`GITLOOM_SERVER_URL`, default http://localhost:<port>). */
  serverUrl: string;
  /**
   * SSH root URL for clone URLs (`GITLOOM_SSH_ROOT_URL`, e.g. `ssh://git.example.com:2222`), or
   * null to derive it from the server URL's host and `sshPort` ({@link sshRootUrlOf}).
   */
  sshRootUrl: string | null;
  /**
   * TCP port of the built-in SSH server serving git (`GITLOOM_SSH_PORT`, default 6611, OneDev's),
   * or null when SSH is off (`GITLOOM_SSH_PORT=0`). `0` given as an override (tests) asks for any
   * free port; the server writes the port it took back here once it listens.
   */
  sshPort: number | null;
  /** Interface the SSH server binds (`GITLOOM_SSH_HOST`, default the HTTP server's `GITLOOM_HOST`). */
  sshHost: string;
  /**
   * Git commands one user may run over SSH at once, over all their connections
   * (`GITLOOM_SSH_MAX_SESSIONS_PER_USER`, default 10); one more is refused with a message.
   */
  sshMaxSessionsPerUser: number;
  /**
   * An SSH connection that moved no data through its channels for this many ms is closed
   * (`GITLOOM_SSH_IDLE_TIMEOUT_MS`, default 600000 — 10 minutes; 0 disables).
   */
  sshIdleTimeoutMs: number;
  /**
   * SSH connections that have not authenticated yet, at most, beyond which new ones are dropped
   * at once (`GITLOOM_SSH_MAX_UNAUTHENTICATED`, default 50; OpenSSH's `MaxStartups` in spirit).
   */
  sshMaxUnauthenticated: number;
  /** First-boot administrator (`GITLOOM_INITIAL_USER`, `…_PASSWORD`, `…_EMAIL`). */
  initialUser: { name: string; password: string | null; email: string };
  /** Concurrent CI jobs per process (`GITLOOM_JOB_CONCURRENCY`, default: number of cores). */
  jobConcurrency: number;
  /** Largest accepted JSON/text request body in bytes (`GITLOOM_BODY_LIMIT`, default 10 MiB). */
  bodyLimit: number;
  /**
   * Time a client has to send a whole request, headers and body, in ms: slower requests are cut
   * with 408 (`GITLOOM_REQUEST_TIMEOUT_MS`, default 60000; 0 disables). Large pushes over slow
   * links may need more.
   */
  requestTimeoutMs: number;
  /**
   * Largest pack one push may send, in bytes: git's `receive.maxInputSize` for receive-pack,
   * which refuses a bigger pack with its own error and moves no ref (`GITLOOM_PUSH_MAX_MB`,
   * default 2048 MiB). A push must also arrive within `requestTimeoutMs`.
   */
  pushMaxBytes: number;
  /**
   * Largest build artifact file, in bytes: an API upload over it is refused with 413
   * (`GITLOOM_ARTIFACT_MAX_MB`, default 1024 MiB).
   */
  artifactMaxBytes: number;
  /**
   * Largest Git LFS object, in bytes: a batch naming a bigger one answers it with error 422
   * and an upload over it is cut off (`GITLOOM_LFS_MAX_MB`, default 10240 MiB;
   * docs/security.md#git-lfs).
   */
  lfsMaxBytes: number;
  /**
   * Where build artifacts and Git LFS objects live: null for the data dir (the default), else
   * the S3-compatible bucket of `GITLOOM_OBJECT_STORE_URL` (README "Object storage",
   * docs/architecture.md#object-storage).
   */
  objectStore: ObjectStoreConfig | null;
  /** Log level for pino (`GITLOOM_LOG_LEVEL`, default info). */
  logLevel: string;
  /** git commands running longer than this many ms are logged as slow (`GITLOOM_GIT_SLOW_MS`, default 5000). */
  gitSlowMs: number;
  /** How job steps are confined (`GITLOOM_JOB_SANDBOX`, `GITLOOM_BWRAP_PATH`, `GITLOOM_JOB_NETWORK`, limits; docs/compatibility.md#gitloom-differs-untrusted-builds). */
  jobSandbox: JobSandboxConfig;
  /**
   * The Docker Engine API socket of container steps (`GITLOOM_CONTAINER_HOST`: a path, or
   * `unix://` and a path), or null to start a Podman service of the server's own when Podman is
   * installed (docs/compatibility.md#builds-containers).
   */
  containerHost: string | null;
  /** Registries (`host[:port]`) container steps reach over plain HTTP besides loopback ones (`GITLOOM_CONTAINER_INSECURE_REGISTRIES`, comma-separated; docs/compatibility.md#builds-images). */
  containerInsecureRegistries: string[];
  /** Bound of all job caches together, bytes (`GITLOOM_JOB_CACHE_MB`, default 4096 MiB; docs/compatibility.md#builds-caches). */
  jobCacheBytes: number;
  /** Bound of all archives kept by commit together, bytes (`GITLOOM_ARCHIVE_CACHE_MB`, default 1024 MiB; docs/architecture.md#archives-kept-by-commit). */
  archiveCacheBytes: number;
  /**
   * Where running jobs' directories (workspace, `HOME`) live: `<GITLOOM_JOB_DIR>/<instance>`,
   * `<instance>` being 12 hex digits naming the data dir, so that servers of several data dirs
   * share one machine. `GITLOOM_JOB_DIR` defaults to `/var/lib/gitloom/jobs` for root (job uids
   * must be able to search every ancestor, which a data dir under a private home does not allow)
   * and to `<data dir>/jobs` otherwise (no sandbox without root).
   */
  jobsDir: string;
  /**
   * Key encrypting job secrets at rest (`GITLOOM_SECRET_KEY`: 64 hex digits or base64 of 32 bytes),
   * or null to use (and create once) `<data dir>/secret.key`.
   */
  secretKey: Buffer | null;
  /**
   * Outgoing mail (README "Email notifications"): `GITLOOM_SMTP_URL` (`smtp://user:pass@host:587`,
   * `smtps://…`) or `GITLOOM_SMTP_HOST` with `…_PORT` (587), `…_USER`, `…_PASSWORD`, `…_SECURE`
   * (true for implicit TLS); sender `GITLOOM_SMTP_FROM` (default `Gitloom <gitloom@localhost>`).
   * null when no SMTP server is configured: then no mail is queued.
   */
  smtp: SmtpConfig | null;
  /** Webhooks may target loopback, link-local and private addresses (`GITLOOM_WEBHOOK_ALLOW_PRIVATE=true`). */
  webhookAllowPrivate: boolean;
  /** Outbox retries: first delay in ms, doubled each try (`GITLOOM_OUTBOX_BACKOFF_MS`, default 120000 — 6 tries over ~1 h). */
  outboxBackoffMs: number;
  /**
   * Repository mirrors: delay in ms before the first retry of a failed sync, doubled with each
   * further failure up to an hour (or a pull mirror's interval when longer) (`GITLOOM_MIRROR_BACKOFF_MS`, default 60000).
   */
  mirrorBackoffMs: number;
  /**
   * Upload-pack processes (clones and fetches) running at once in this process; more wait in a
   * bounded queue (`GITLOOM_GIT_CONCURRENCY`, default the number of CPUs;
   * docs/architecture.md#git-concurrency).
   */
  gitConcurrency: number;
  /**
   * Repository maintenance: delay in ms between a push and the maintenance it makes due, so that a
   * burst of pushes makes one run (`GITLOOM_MAINTENANCE_DELAY_MS`, default 60000;
   * docs/architecture.md#repository-maintenance).
   */
  maintenanceDelayMs: number;
  /** Ref-change journal: first retry delay in ms of an entry whose reactions failed, doubled each pass (`GITLOOM_JOURNAL_RETRY_MS`, default 5000). */
  journalRetryMs: number;
  /**
   * Milliseconds a process goes at most without looking for another process's changes by itself,
   * when their announcement does not arrive (`GITLOOM_FALLBACK_POLL_MS`;
   * docs/architecture.md#processes-sharing-postgresql): how long cached actors and settings are
   * used, how often a followed build log is read again and how often the background loops tick.
   * Null (unset): 1000 ms for caches and logs, each loop its own interval.
   */
  fallbackPollMs: number | null;
  /** Bearer token that may read `/~metrics` besides administrators (`GITLOOM_METRICS_TOKEN`). */
  metricsToken: string | null;
  /**
   * Which proxies' `X-Forwarded-For` names the client address (the per-address sign-in limit
   * and logs use it): `GITLOOM_TRUST_PROXY` = `true` (any) or comma-separated addresses/CIDRs
   * (`127.0.0.1,10.0.0.0/8`); default none (the socket's peer is the client).
   */
  trustProxy: boolean | string[];
  /**
   * The Universal Ctags binary that finds the code index's symbols (`GITLOOM_CTAGS`: a path, or
   * `off` for none; default null: `ctags-universal`, else a `ctags` that is Universal Ctags, on
   * PATH; docs/compatibility.md#code-search).
   */
  ctags: string | null;
}

/** SMTP transport settings (nodemailer): a URL, or host and port with optional credentials. */
export interface SmtpConfig {
  url: string | null;
  host: string | null;
  port: number;
  secure: boolean;
  user: string | null;
  password: string | null;
  from: string;
}

function smtpFromEnv(env: NodeJS.ProcessEnv): SmtpConfig | null {
  const url = env.GITLOOM_SMTP_URL || null;
  const host = env.GITLOOM_SMTP_HOST || null;
  if (!url && !host) return null;
  return {
    url,
    host,
    port: intFromEnv(env, 'GITLOOM_SMTP_PORT', 587),
    secure: env.GITLOOM_SMTP_SECURE === 'true',
    user: env.GITLOOM_SMTP_USER || null,
    password: env.GITLOOM_SMTP_PASSWORD || null,
    from: env.GITLOOM_SMTP_FROM || 'Gitloom <gitloom@localhost>',
  };
}

function trustProxyFromEnv(raw: string | undefined): boolean | string[] {
  if (raw === undefined || raw.trim() === '' || raw.trim() === 'false') return false;
  if (raw.trim() === 'true') return true;
  return raw
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}

function intFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got '${raw}'`);
  return value;
}

function positiveIntFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got '${raw}'`);
  return value;
}

/** A size given in MiB (a positive integer) as bytes; refuses one whose bytes are not a safe integer. */
function megabytesFromEnv(env: NodeJS.ProcessEnv, name: string, fallbackMb: number): number {
  const mb = positiveIntFromEnv(env, name, fallbackMb);
  const bytes = mb * 1024 * 1024;
  if (!Number.isSafeInteger(bytes)) throw new Error(`${name} must be at most ${Math.floor(Number.MAX_SAFE_INTEGER / 1024 / 1024)}, got '${env[name]}'`);
  return bytes;
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, values: readonly T[]): T | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  if (!(values as readonly string[]).includes(raw)) throw new Error(`${name} must be one of ${values.join(', ')}, got '${raw}'`);
  return raw as T;
}

function secretKeyFromEnv(env: NodeJS.ProcessEnv): Buffer | null {
  const raw = env.GITLOOM_SECRET_KEY;
  if (raw === undefined || raw === '') return null;
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) throw new Error('GITLOOM_SECRET_KEY must be 32 bytes: 64 hex digits or base64');
  return key;
}

/**
 * The job sandbox of the `GITLOOM_JOB_SANDBOX`, `GITLOOM_BWRAP_PATH`, `GITLOOM_JOB_NETWORK*`,
 * `GITLOOM_JOB_SECCOMP_PROFILE`, `GITLOOM_JOB_{MEMORY_MB,PROCESSES,CPU_SECONDS,UID_BASE}`
 * variables (README "Job sandbox"), each defaulting to {@link DEFAULT_JOB_SANDBOX}'s; read by the
 * server and by build agents alike.
 *
 * @throws Error for an invalid value.
 */
export function jobSandboxFromEnv(env: NodeJS.ProcessEnv): JobSandboxConfig {
  const d = DEFAULT_JOB_SANDBOX;
  const positive = (name: string, fallback: number): number => positiveIntFromEnv(env, name, fallback);
  const sandbox: JobSandboxConfig = {
    enabled: (oneOf(env, 'GITLOOM_JOB_SANDBOX', ['on', 'off'] as const) ?? 'on') === 'on',
    bwrapPath: env.GITLOOM_BWRAP_PATH || d.bwrapPath,
    network: oneOf(env, 'GITLOOM_JOB_NETWORK', ['none', 'outward'] as const),
    networkAllow: parseNetworkAllowList(env.GITLOOM_JOB_NETWORK_ALLOW),
    seccompProfile: env.GITLOOM_JOB_SECCOMP_PROFILE ? path.resolve(env.GITLOOM_JOB_SECCOMP_PROFILE) : d.seccompProfile,
    limits: {
      memoryMb: positive('GITLOOM_JOB_MEMORY_MB', d.limits.memoryMb),
      processes: positive('GITLOOM_JOB_PROCESSES', d.limits.processes),
      cpuSeconds: positive('GITLOOM_JOB_CPU_SECONDS', d.limits.cpuSeconds),
    },
    uidBase: positive('GITLOOM_JOB_UID_BASE', d.uidBase),
  };
  if (sandbox.uidBase + JOB_UID_RANGE > 2 ** 31 - 1) throw new Error(`GITLOOM_JOB_UID_BASE must be at most ${2 ** 31 - 1 - JOB_UID_RANGE}`);
  return sandbox;
}

function sshRootUrlFromEnv(raw: string | undefined): string | null {
  if (raw === undefined || raw.trim() === '') return null;
  const url = raw.trim().replace(/\/+$/, '');
  // OneDev's rule (SystemSetting): the SSH root is an ssh:// URL
  if (!url.startsWith('ssh://')) throw new Error(`GITLOOM_SSH_ROOT_URL must start with ssh://, got '${raw}'`);
  return url;
}

/**
 * The SSH root of clone URLs (docs/compatibility.md#git-over-ssh): `GITLOOM_SSH_ROOT_URL` when
 * set, else `ssh://<host of the server URL>:<SSH port>` (no port when it is 22); null when SSH
 * is off and no root is configured.
 *
 * @example sshRootUrlOf({ sshRootUrl: null, sshPort: 6611, serverUrl: 'https://git.example.com' }) // 'ssh://git.example.com:6611'
 */
export function sshRootUrlOf(config: Pick<Config, 'sshRootUrl' | 'sshPort' | 'serverUrl'>): string | null {
  if (config.sshRootUrl !== null) return config.sshRootUrl.replace(/\/+$/, '');
  if (config.sshPort === null) return null;
  const host = new URL(config.serverUrl).hostname;
  return config.sshPort === 22 ? `ssh://${host}` : `ssh://${host}:${config.sshPort}`;
}

/**
 * Reads the configuration from environment variables; `overrides` win (tests use them).
 * Throws a plain Error naming the variable when a value is malformed.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const port = overrides.port ?? intFromEnv(env, 'GITLOOM_PORT', 6610);
  const dataDir = path.resolve(overrides.dataDir ?? env.GITLOOM_DATA_DIR ?? 'data');
  const host = env.GITLOOM_HOST ?? '0.0.0.0';
  const sshPort = intFromEnv(env, 'GITLOOM_SSH_PORT', 6611);
  if (sshPort > 65535) throw new Error(`GITLOOM_SSH_PORT must be at most 65535, got '${env.GITLOOM_SSH_PORT}'`);
  return {
    port,
    host,
    dataDir,
    databaseUrl: env.GITLOOM_DATABASE_URL || null,
    serverUrl: (env.GITLOOM_SERVER_URL ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    sshRootUrl: sshRootUrlFromEnv(env.GITLOOM_SSH_ROOT_URL),
    sshPort: sshPort === 0 ? null : sshPort,
    sshHost: env.GITLOOM_SSH_HOST || host,
    sshMaxSessionsPerUser: positiveIntFromEnv(env, 'GITLOOM_SSH_MAX_SESSIONS_PER_USER', 10),
    sshIdleTimeoutMs: intFromEnv(env, 'GITLOOM_SSH_IDLE_TIMEOUT_MS', 600_000),
    sshMaxUnauthenticated: positiveIntFromEnv(env, 'GITLOOM_SSH_MAX_UNAUTHENTICATED', 50),
    initialUser: {
      name: env.GITLOOM_INITIAL_USER ?? 'admin',
      password: env.GITLOOM_INITIAL_PASSWORD || null,
      email: env.GITLOOM_INITIAL_EMAIL ?? 'admin@localhost',
    },
    jobConcurrency: intFromEnv(env, 'GITLOOM_JOB_CONCURRENCY', os.availableParallelism()),
    bodyLimit: intFromEnv(env, 'GITLOOM_BODY_LIMIT', 10 * 1024 * 1024),
    requestTimeoutMs: intFromEnv(env, 'GITLOOM_REQUEST_TIMEOUT_MS', 60_000),
    pushMaxBytes: megabytesFromEnv(env, 'GITLOOM_PUSH_MAX_MB', 2048),
    artifactMaxBytes: megabytesFromEnv(env, 'GITLOOM_ARTIFACT_MAX_MB', 1024),
    lfsMaxBytes: megabytesFromEnv(env, 'GITLOOM_LFS_MAX_MB', 10240),
    objectStore: objectStoreFromEnv(env),
    logLevel: env.GITLOOM_LOG_LEVEL ?? 'info',
    gitSlowMs: intFromEnv(env, 'GITLOOM_GIT_SLOW_MS', 5000),
    jobSandbox: jobSandboxFromEnv(env),
    containerHost: env.GITLOOM_CONTAINER_HOST || null,
    containerInsecureRegistries: (env.GITLOOM_CONTAINER_INSECURE_REGISTRIES ?? '').split(/[\s,]+/).filter(Boolean),
    jobCacheBytes: megabytesFromEnv(env, 'GITLOOM_JOB_CACHE_MB', 4096),
    archiveCacheBytes: megabytesFromEnv(env, 'GITLOOM_ARCHIVE_CACHE_MB', 1024),
    jobsDir: path.join(
      path.resolve(env.GITLOOM_JOB_DIR || (process.getuid?.() === 0 ? '/var/lib/gitloom/jobs' : path.join(dataDir, JOBS_DIR))),
      createHash('sha256').update(dataDir).digest('hex').slice(0, 12),
    ),
    secretKey: secretKeyFromEnv(env),
    smtp: smtpFromEnv(env),
    webhookAllowPrivate: env.GITLOOM_WEBHOOK_ALLOW_PRIVATE === 'true',
    outboxBackoffMs: intFromEnv(env, 'GITLOOM_OUTBOX_BACKOFF_MS', 120_000),
    journalRetryMs: intFromEnv(env, 'GITLOOM_JOURNAL_RETRY_MS', 5000),
    mirrorBackoffMs: positiveIntFromEnv(env, 'GITLOOM_MIRROR_BACKOFF_MS', 60_000),
    maintenanceDelayMs: intFromEnv(env, 'GITLOOM_MAINTENANCE_DELAY_MS', 60_000),
    gitConcurrency: positiveIntFromEnv(env, 'GITLOOM_GIT_CONCURRENCY', os.availableParallelism()),
    fallbackPollMs: env.GITLOOM_FALLBACK_POLL_MS ? positiveIntFromEnv(env, 'GITLOOM_FALLBACK_POLL_MS', 1000) : null,
    metricsToken: env.GITLOOM_METRICS_TOKEN || null,
    trustProxy: trustProxyFromEnv(env.GITLOOM_TRUST_PROXY),
    ctags: env.GITLOOM_CTAGS || null,
    ...overrides,
  };
}
