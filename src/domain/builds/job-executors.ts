/**
 * The job executors setting (docs/compatibility.md#builds-job-executors; OneDev 8.6
 * `SettingResource` `/settings/job-executors`, `JobExecutor`, `ServerDockerExecutor`,
 * `ServerShellExecutor`, `RegistryLogin`): an ordered list of executors, each
 * `{"@type": "ServerDockerExecutor" | "ServerShellExecutor", enabled, name, jobRequirement, …}`.
 *
 * One check ({@link checkJobExecutors}) serves the API and the administration page: the shape,
 * the names, the requirement, the values Gitloom acts on, and a refusal of every setting Gitloom
 * does not act on when it is not at its default (a setting accepted but never acted on would
 * mislead). At rest a registry login's password is encrypted as job secrets are
 * (src/domain/projects/secret-encryption.ts), under `encryptedPassword`; the API reads and writes
 * it in clear, as OneDev does.
 */
import type { RegistryLogin } from '../../ci/image-registries.js';
import type { ErrorCode } from '../../error-codes.js';
import { BadRequest } from '../../errors.js';
import { requireAdmin } from '../actor.js';
import type { Context } from '../context.js';
import { QuerySyntaxError } from '../../query/index.js';
import { parseExecutorAgentQuery } from '../agents/index.js';
import { checkJobMatch, decryptSecret, encryptSecret, secretKey } from '../projects/index.js';
import { getStoredJobExecutors, setStoredJobExecutors } from '../settings/index.js';

/** The executor types Gitloom runs: on the server, or on agents (docs/compatibility.md#build-agents). */
export const JOB_EXECUTOR_TYPES = ['ServerDockerExecutor', 'ServerShellExecutor', 'RemoteDockerExecutor', 'RemoteShellExecutor'] as const;
export type JobExecutorType = (typeof JOB_EXECUTOR_TYPES)[number];

/** OneDev 8.6's other executor types, refused with a clear word until Gitloom has them. */
const NOT_YET = ['KubernetesExecutor'];

/** What every executor has (OneDev `JobExecutor`). */
interface JobExecutorBase {
  readonly enabled: boolean;
  readonly name: string;
  /** A job match (`"Project" is "a/**" and on branch "main"`), or null for any job. */
  readonly jobRequirement: string | null;
  readonly shellAccessEnabled: boolean;
  readonly sitePublishEnabled: boolean;
  /** Days a job cache unused is kept. */
  readonly cacheTTL: number;
}

/** A server docker executor (OneDev `ServerDockerExecutor`), fields in OneDev's order. */
export interface ServerDockerExecutor extends JobExecutorBase {
  readonly '@type': 'ServerDockerExecutor';
  readonly registryLogins: RegistryLogin[];
  readonly runOptions: string | null;
  readonly dockerExecutable: string | null;
  readonly mountDockerSock: boolean;
  /** The engine's socket for this executor's jobs, or null for the server's engine. */
  readonly dockerSockPath: string | null;
  readonly networkOptions: string | null;
  /** CPUs a container may use (docker `--cpus`), or null for no limit. */
  readonly cpuLimit: string | null;
  /** Memory of a container (docker `--memory`: `512m`, `2g`), or null for the job sandbox's. */
  readonly memoryLimit: string | null;
  /** Jobs and services at once in a server process, or null for its CPU count. */
  readonly concurrency: string | null;
  readonly imageMappings: unknown[];
}

/** A server shell executor (OneDev `ServerShellExecutor`). */
export interface ServerShellExecutor extends JobExecutorBase {
  readonly '@type': 'ServerShellExecutor';
  /** Jobs at once in a server process, or null for its CPU count. */
  readonly concurrency: string | null;
}

/**
 * A remote docker executor (OneDev `RemoteDockerExecutor`): a server docker executor's settings,
 * run on the agents `agentQuery` selects; `concurrency` counts per agent (blank: its CPUs), and
 * `dockerSockPath` names the engine's socket on the agent.
 */
export interface RemoteDockerExecutor extends Omit<ServerDockerExecutor, '@type'> {
  readonly '@type': 'RemoteDockerExecutor';
  /** An agent query (fields and `has attribute` only), or null for any agent. */
  readonly agentQuery: string | null;
}

/** A remote shell executor (OneDev `RemoteShellExecutor`): a server shell executor's settings, run on agents. */
export interface RemoteShellExecutor extends Omit<ServerShellExecutor, '@type'> {
  readonly '@type': 'RemoteShellExecutor';
  readonly agentQuery: string | null;
}

export type JobExecutor = ServerDockerExecutor | ServerShellExecutor | RemoteDockerExecutor | RemoteShellExecutor;

/** The executors whose jobs run in containers: server and remote docker. */
export type DockerExecutor = ServerDockerExecutor | RemoteDockerExecutor;

/** Whether an executor runs its jobs' container steps (server or remote docker). */
export function isDockerExecutor(executor: JobExecutor): executor is DockerExecutor {
  return executor['@type'] === 'ServerDockerExecutor' || executor['@type'] === 'RemoteDockerExecutor';
}

/** Whether an executor runs its jobs on agents. */
export function isRemoteExecutor(executor: JobExecutor): executor is RemoteDockerExecutor | RemoteShellExecutor {
  return executor['@type'] === 'RemoteDockerExecutor' || executor['@type'] === 'RemoteShellExecutor';
}

const BASE_DEFAULTS = { enabled: true, jobRequirement: null, shellAccessEnabled: false, sitePublishEnabled: false, cacheTTL: 7 };

/** A new executor of `type` with OneDev's defaults (the fields' initial values) and `name`. */
export function newJobExecutor(type: JobExecutorType, name: string): JobExecutor {
  if (type === 'ServerShellExecutor') return { '@type': type, ...BASE_DEFAULTS, name, concurrency: null };
  if (type === 'RemoteShellExecutor') return { '@type': type, ...BASE_DEFAULTS, name, agentQuery: null, concurrency: null };
  const docker = {
    registryLogins: [],
    runOptions: null,
    dockerExecutable: null,
    mountDockerSock: false,
    dockerSockPath: null,
    networkOptions: null,
    cpuLimit: null,
    memoryLimit: null,
    concurrency: null,
    imageMappings: [],
  };
  if (type === 'RemoteDockerExecutor') return { '@type': type, ...BASE_DEFAULTS, name, agentQuery: null, ...docker };
  return { '@type': type, ...BASE_DEFAULTS, name, ...docker };
}

/** The wire fields of each type, in OneDev's order (after `@type`). */
function fieldsOf(type: JobExecutorType): string[] {
  return Object.keys(newJobExecutor(type, '')).filter((k) => k !== '@type');
}

/** A refusal of the setting, naming where: `jobExecutors[1].memoryLimit: …`. */
function refuse(where: string, message: string, code: ErrorCode): BadRequest {
  return new BadRequest(`${where}: ${message}`, { code });
}

/** The `@type` of an executor given, or the refusal of an unknown one. */
function typeOf(item: Record<string, unknown>, where: string): JobExecutorType {
  const type = item['@type'];
  const available = JOB_EXECUTOR_TYPES.join(', ');
  if (typeof type !== 'string') throw refuse(where, `"@type" is missing: one of ${available}`, 'GITLOOM_ERR_JOB_EXECUTOR_TYPE');
  if ((JOB_EXECUTOR_TYPES as readonly string[]).includes(type)) return type as JobExecutorType;
  if (NOT_YET.includes(type))
    throw refuse(where, `Job executor type '${type}' is not available in Gitloom yet; available: ${available}`, 'GITLOOM_ERR_JOB_EXECUTOR_TYPE');
  throw refuse(where, `Unknown job executor type '${type}'; available: ${available}`, 'GITLOOM_ERR_JOB_EXECUTOR_TYPE');
}

/**
 * An executor given as JSON read into its type, absent fields at their defaults: unknown fields
 * and values of the wrong JSON type are refused (`GITLOOM_ERR_VALIDATION`).
 */
function readExecutor(item: unknown, where: string): JobExecutor {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) throw refuse(where, 'must be an object', 'GITLOOM_ERR_VALIDATION');
  const given = item as Record<string, unknown>;
  const type = typeOf(given, where);
  const defaults = newJobExecutor(type, '') as unknown as Record<string, unknown>;
  const fields = fieldsOf(type);
  const result: Record<string, unknown> = { '@type': type };
  for (const key of Object.keys(given)) {
    if (key !== '@type' && !fields.includes(key)) throw refuse(where, `Unknown field '${key}' of ${type}`, 'GITLOOM_ERR_VALIDATION');
  }
  for (const field of fields) {
    const value = field in given ? given[field] : defaults[field];
    result[field] = field === 'registryLogins' ? readLogins(value, `${where}.${field}`) : readValue(value, defaults[field], `${where}.${field}`);
  }
  return result as unknown as JobExecutor;
}

/** A value of the JSON type of its default: a boolean, an integer, a list, or a string (or null). */
function readValue(value: unknown, fallback: unknown, where: string): unknown {
  const fail = (what: string): BadRequest => refuse(where, `must be ${what}`, 'GITLOOM_ERR_VALIDATION');
  if (typeof fallback === 'boolean') {
    if (typeof value !== 'boolean') throw fail('true or false');
  } else if (typeof fallback === 'number') {
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw fail('a whole number');
  } else if (Array.isArray(fallback)) {
    if (!Array.isArray(value)) throw fail('a list');
  } else if (typeof value === 'number' && Number.isFinite(value)) {
    return String(value); // OneDev's text fields take a number too (`"concurrency": 2`)
  } else if (value !== null && typeof value !== 'string') throw fail('a string or null');
  // a blank text is no value, as OneDev's forms take it
  return typeof value === 'string' && value.trim() === '' ? null : value;
}

/** A docker executor's `registryLogins`: each `{registryUrl, userName, password}`, one per registry. */
function readLogins(value: unknown, where: string): RegistryLogin[] {
  if (!Array.isArray(value)) throw refuse(where, 'must be a list', 'GITLOOM_ERR_VALIDATION');
  const seen = new Set<string | null>();
  return value.map((login, i) => {
    const at = `${where}[${i}]`;
    if (typeof login !== 'object' || login === null || Array.isArray(login)) throw refuse(at, 'must be an object', 'GITLOOM_ERR_VALIDATION');
    const { registryUrl = null, userName, password, ...rest } = login as Record<string, unknown>;
    const unknown = Object.keys(rest)[0];
    if (unknown !== undefined) throw refuse(at, `Unknown field '${unknown}' of RegistryLogin`, 'GITLOOM_ERR_VALIDATION');
    const url = readValue(registryUrl, null, `${at}.registryUrl`) as string | null;
    for (const [field, text] of [
      ['userName', userName],
      ['password', password],
    ] as const) {
      if (typeof text !== 'string' || text === '') throw refuse(`${at}.${field}`, 'must not be empty', 'GITLOOM_ERR_JOB_EXECUTOR_VALUE');
    }
    if (seen.has(url)) {
      const message = url === null ? 'Duplicate login entry for official registry' : `Duplicate login entry for registry '${url}'`;
      throw refuse(where, message, 'GITLOOM_ERR_JOB_EXECUTOR_VALUE');
    }
    seen.add(url);
    return { registryUrl: url, userName: userName as string, password: password as string };
  });
}

/** OneDev's `@DnsName`: the name may become a network or directory name. */
const DNS_NAME = /^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$/;
const MAX_NAME_LENGTH = 255;

/** Refuses a missing, malformed or repeated name (`names` holds those before it). */
function checkName(executor: JobExecutor, where: string, names: Set<string>): void {
  const { name } = executor;
  if (name === null) throw refuse(`${where}.name`, 'Name is required', 'GITLOOM_ERR_JOB_EXECUTOR_NAME');
  if (name.length > MAX_NAME_LENGTH) throw refuse(`${where}.name`, `Name is longer than ${MAX_NAME_LENGTH} characters`, 'GITLOOM_ERR_JOB_EXECUTOR_NAME');
  if (!DNS_NAME.test(name))
    throw refuse(
      `${where}.name`,
      "Should only contain alphanumberic characters or '-', and can only start and end with alphanumeric characters",
      'GITLOOM_ERR_JOB_EXECUTOR_NAME',
    );
  if (names.has(name)) throw refuse(`${where}.name`, `Name '${name}' is already used by another job executor`, 'GITLOOM_ERR_JOB_EXECUTOR_NAME');
  names.add(name);
}

/**
 * The settings of OneDev's executors that Gitloom does not act on, with why: each must keep its
 * default (false, empty) — a setting accepted but never acted on would mislead.
 */
const UNSUPPORTED: ReadonlyArray<{ field: string; why: string }> = [
  { field: 'shellAccessEnabled', why: 'Gitloom has no web terminal to running jobs' },
  { field: 'sitePublishEnabled', why: 'Gitloom has no site publishing step' },
  { field: 'mountDockerSock', why: "the container engine's socket is never mounted into a job (docs/security.md)" },
  { field: 'runOptions', why: 'a job container runs with the confinement of the job sandbox only, no other options' },
  { field: 'networkOptions', why: "a job's containers share the network namespace of the job, not an engine network" },
  { field: 'dockerExecutable', why: 'Gitloom reaches the engine through its API socket (dockerSockPath), not an executable' },
  { field: 'imageMappings', why: 'image mappings are not supported yet' },
];

/** Refuses a setting of {@link UNSUPPORTED} away from its default. */
function checkUnsupported(executor: JobExecutor, where: string): void {
  const values = executor as unknown as Record<string, unknown>;
  for (const { field, why } of UNSUPPORTED) {
    if (!(field in values)) continue;
    const value = values[field];
    const set = value === true || (typeof value === 'string' && value !== '') || (Array.isArray(value) && value.length > 0);
    if (set)
      throw refuse(`${where}.${field}`, `not supported: ${why}; leave it ${Array.isArray(value) ? 'empty' : 'unset'}`, 'GITLOOM_ERR_JOB_EXECUTOR_UNSUPPORTED');
  }
}

/** Units of docker's `--memory`: bytes, kilo-, mega-, giga-, tera-bytes (binary). */
const MEMORY_UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };
const MEMORY = /^(\d+(?:\.\d+)?) ?([bkmgt]?)(?:i?b)?$/i;
/** Docker refuses a container memory limit under 6 MiB. */
const MIN_MEMORY_MB = 6;

/**
 * A memory limit in docker's `--memory` form (`512m`, `1.5g`, `1073741824`) in MiB, or null
 * when it does not read as one of at least 6 MiB.
 */
export function parseMemoryLimit(text: string): number | null {
  const m = MEMORY.exec(text.trim());
  if (!m) return null;
  const mb = Math.floor((Number(m[1]) * MEMORY_UNITS[m[2].toLowerCase()]) / 1024 ** 2);
  return Number.isFinite(mb) && mb >= MIN_MEMORY_MB ? mb : null;
}

/** A CPU limit (`1.5`) as a number of CPUs, or null when it is not a number of at least 0.01. */
export function parseCpuLimit(text: string): number | null {
  if (!/^\d+(\.\d+)?$/.test(text.trim())) return null;
  const cpus = Number(text);
  return cpus >= 0.01 && cpus <= 1024 ? cpus : null;
}

/** A concurrency as a number of jobs, or null when it is not a whole number of at least 1. */
export function parseConcurrency(text: string): number | null {
  return /^\d{1,6}$/.test(text.trim()) && Number(text) >= 1 ? Number(text) : null;
}

/** Refuses the values Gitloom acts on when they do not read: concurrency, limits, TTL, socket. */
function checkValues(executor: JobExecutor, where: string): void {
  const bad = (field: string, message: string): BadRequest => refuse(`${where}.${field}`, message, 'GITLOOM_ERR_JOB_EXECUTOR_VALUE');
  if (executor.cacheTTL < 1) throw bad('cacheTTL', 'Cache TTL must be at least 1 day');
  if (executor.concurrency !== null && parseConcurrency(executor.concurrency) === null)
    throw bad('concurrency', `Invalid number '${executor.concurrency}': a whole number of jobs, at least 1 (leave it empty for the number of CPUs)`);
  if (!isDockerExecutor(executor)) return;
  if (executor.cpuLimit !== null && parseCpuLimit(executor.cpuLimit) === null)
    throw bad('cpuLimit', `Invalid CPU limit '${executor.cpuLimit}': a number of CPUs such as 1 or 1.5`);
  if (executor.memoryLimit !== null && parseMemoryLimit(executor.memoryLimit) === null)
    throw bad('memoryLimit', `Invalid memory limit '${executor.memoryLimit}': a size such as 512m or 2g, at least ${MIN_MEMORY_MB}m`);
  if (executor.dockerSockPath !== null && !/^(unix:\/\/)?\//.test(executor.dockerSockPath))
    throw bad('dockerSockPath', `Docker sock path must be an absolute path of a Unix socket, such as /run/podman/podman.sock`);
}

/**
 * Checks a job executors setting given as JSON (the API's body, the page's edited list) and
 * reads it: a list of executors of {@link JOB_EXECUTOR_TYPES}, absent fields at OneDev's
 * defaults, blank texts as null.
 *
 * @throws BadRequest `jobExecutors[i].<field>: <reason>` with a stable code:
 *   `GITLOOM_ERR_VALIDATION` (not a list, not an object, unknown field, wrong JSON type),
 *   `GITLOOM_ERR_JOB_EXECUTOR_TYPE` (missing, unknown or not yet available `@type`),
 *   `GITLOOM_ERR_JOB_EXECUTOR_NAME` (missing, not a DNS name, used twice),
 *   `GITLOOM_ERR_JOB_EXECUTOR_REQUIREMENT` (a `jobRequirement` that does not parse or names
 *   an unknown user or group), `GITLOOM_ERR_JOB_EXECUTOR_AGENT_QUERY` (a remote executor's
 *   `agentQuery` that does not parse or uses a criterion not allowed there), `GITLOOM_ERR_JOB_EXECUTOR_UNSUPPORTED` (a setting Gitloom does
 *   not act on away from its default), `GITLOOM_ERR_JOB_EXECUTOR_VALUE` (a concurrency, CPU
 *   or memory limit, cache TTL, socket path or registry login that does not read).
 */
export async function checkJobExecutors(ctx: Pick<Context, 'db'>, given: unknown): Promise<JobExecutor[]> {
  if (!Array.isArray(given)) throw new BadRequest('jobExecutors: must be a list of job executors', { code: 'GITLOOM_ERR_VALIDATION' });
  const names = new Set<string>();
  const executors: JobExecutor[] = [];
  for (const [i, item] of given.entries()) {
    const where = `jobExecutors[${i}]`;
    const executor = readExecutor(item, where);
    checkName(executor, where, names);
    checkUnsupported(executor, where);
    checkValues(executor, where);
    if (isRemoteExecutor(executor)) checkAgentQuery(executor.agentQuery, `${where}.agentQuery`);
    if (executor.jobRequirement !== null)
      await checkJobMatch(ctx.db, executor.jobRequirement, `${where}.jobRequirement`, { jobCriteria: true, code: 'GITLOOM_ERR_JOB_EXECUTOR_REQUIREMENT' });
    executors.push(executor);
  }
  return executors;
}

/** Refuses an executor's `agentQuery` that does not parse or uses a criterion not allowed there. */
function checkAgentQuery(query: string | null, where: string): void {
  try {
    parseExecutorAgentQuery(query);
  } catch (e) {
    if (e instanceof QuerySyntaxError) throw refuse(where, e.message, 'GITLOOM_ERR_JOB_EXECUTOR_AGENT_QUERY');
    throw e;
  }
}

/** What registry passwords are encrypted for (authenticated with the value). */
const REGISTRY_PASSWORD = Buffer.from('gitloom registry password');

/** The stored form of checked executors: each registry login's `password` becomes `encryptedPassword`. */
function seal(executors: readonly JobExecutor[], key: Buffer): Record<string, unknown>[] {
  return executors.map((e) => {
    if (!isDockerExecutor(e)) return { ...e };
    const registryLogins = e.registryLogins.map(({ password, ...rest }) => ({ ...rest, encryptedPassword: encryptSecret(key, password, REGISTRY_PASSWORD) }));
    return { ...e, registryLogins };
  });
}

/** The executors of the stored form (see {@link seal}), passwords decrypted. */
function reveal(stored: readonly Record<string, unknown>[], key: Buffer): JobExecutor[] {
  return stored.map((e) => {
    if (e['@type'] !== 'ServerDockerExecutor' && e['@type'] !== 'RemoteDockerExecutor') return e as unknown as JobExecutor;
    const logins = (e.registryLogins ?? []) as Array<{ registryUrl: string | null; userName: string; encryptedPassword: string }>;
    const registryLogins = logins.map(({ encryptedPassword, ...rest }) => ({ ...rest, password: decryptSecret(key, encryptedPassword, REGISTRY_PASSWORD) }));
    return { ...e, registryLogins } as unknown as JobExecutor;
  });
}

/**
 * The job executors in force, in order, passwords in clear (no permission check: for the
 * scheduler; the API and pages use {@link getJobExecutors}).
 *
 * @throws Error when a stored password does not decrypt with the secret key (a misconfiguration).
 */
export async function loadJobExecutors(ctx: Pick<Context, 'db' | 'config'>): Promise<JobExecutor[]> {
  const stored = await getStoredJobExecutors(ctx);
  return stored.length === 0 ? [] : reveal(stored, secretKey(ctx.config));
}

/**
 * The engine sockets named by server docker executors (`dockerSockPath`, without `unix://`), each
 * once: the engines besides the server's that may hold containers of interrupted builds.
 */
export async function executorEngineSockets(ctx: Pick<Context, 'db'>): Promise<string[]> {
  const paths = (await getStoredJobExecutors(ctx))
    .filter((e) => e['@type'] === 'ServerDockerExecutor')
    .map((e) => e.dockerSockPath)
    .filter((p): p is string => typeof p === 'string');
  return [...new Set(paths.map((p) => p.replace(/^unix:\/\//, '')))];
}

/** `GET /~api/settings/job-executors`: the job executors (administrators only; docs/compatibility.md#builds-job-executors). */
export async function getJobExecutors(ctx: Context): Promise<JobExecutor[]> {
  requireAdmin(ctx.actor);
  return loadJobExecutors(ctx);
}

/**
 * `POST /~api/settings/job-executors`: replaces the job executors with the list given
 * (administrators only), checked by {@link checkJobExecutors}; passwords are stored encrypted.
 */
export async function setJobExecutors(ctx: Context, given: unknown): Promise<void> {
  requireAdmin(ctx.actor);
  const executors = await checkJobExecutors(ctx, given);
  await setStoredJobExecutors(ctx, seal(executors, secretKey(ctx.config)));
}
