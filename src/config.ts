import os from 'node:os';
import path from 'node:path';

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
  /** SSH root URL for clone URLs (`GITLOOM_SSH_ROOT_URL`), derived from the server URL when unset. */
  sshRootUrl: string | null;
  /** First-boot administrator (`GITLOOM_INITIAL_USER`, `…_PASSWORD`, `…_EMAIL`). */
  initialUser: { name: string; password: string | null; email: string };
  /** Concurrent CI jobs per process (`GITLOOM_JOB_CONCURRENCY`, default: number of cores). */
  jobConcurrency: number;
  /** Largest accepted JSON/text request body in bytes (`GITLOOM_BODY_LIMIT`, default 10 MiB). */
  bodyLimit: number;
  /** Log level for pino (`GITLOOM_LOG_LEVEL`, default info). */
  logLevel: string;
}

function intFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got '${raw}'`);
  return value;
}

/**
 * Reads the configuration from environment variables; `overrides` win (tests use them).
 * Throws a plain Error naming the variable when a value is malformed.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const port = overrides.port ?? intFromEnv(env, 'GITLOOM_PORT', 6610);
  const dataDir = path.resolve(overrides.dataDir ?? env.GITLOOM_DATA_DIR ?? 'data');
  return {
    port,
    host: env.GITLOOM_HOST ?? '0.0.0.0',
    dataDir,
    databaseUrl: env.GITLOOM_DATABASE_URL || null,
    serverUrl: (env.GITLOOM_SERVER_URL ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    sshRootUrl: env.GITLOOM_SSH_ROOT_URL || null,
    initialUser: {
      name: env.GITLOOM_INITIAL_USER ?? 'admin',
      password: env.GITLOOM_INITIAL_PASSWORD || null,
      email: env.GITLOOM_INITIAL_EMAIL ?? 'admin@localhost',
    },
    jobConcurrency: intFromEnv(env, 'GITLOOM_JOB_CONCURRENCY', os.availableParallelism()),
    bodyLimit: intFromEnv(env, 'GITLOOM_BODY_LIMIT', 10 * 1024 * 1024),
    logLevel: env.GITLOOM_LOG_LEVEL ?? 'info',
    ...overrides,
  };
}
