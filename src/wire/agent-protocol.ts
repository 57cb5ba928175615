/**
 * The agent protocol's messages (docs/compatibility.md#build-agents "The agent protocol"): what a
 * build agent (src/agent/) and the server (src/http/routes/agent-protocol.ts) exchange, as JSON
 * over HTTP(S) under {@link AGENT_PATH}. Types only, plus the paths and timings both sides agree
 * on; each side validates what it receives.
 */
import type { ExecutorKind, JobStatus } from '../ci/executor.js';
import type { RegistryLogin } from '../ci/image-registries.js';
import type { JobCache, JobService, Step } from '../ci/spec-types.js';
import type { VariableContext } from '../ci/variables.js';

/** Where the protocol is mounted on the server. */
export const AGENT_PATH = '/~agent';

/** The paths of the protocol, below the server URL. */
export const AGENT_PATHS = {
  connect: `${AGENT_PATH}/connect`,
  heartbeat: `${AGENT_PATH}/heartbeat`,
  lease: `${AGENT_PATH}/lease`,
  disconnect: `${AGENT_PATH}/disconnect`,
  /** Git smart HTTP (fetch only) of the job's project: `<git>/info/refs`, `<git>/git-upload-pack`. */
  git: `${AGENT_PATH}/job/git`,
  /** `<lfs>/<oid>`: an LFS object of the job's project. */
  lfs: `${AGENT_PATH}/job/lfs`,
  /** `<dependencies>/<build id>/<path>`: an artifact of a dependency build. */
  dependencies: `${AGENT_PATH}/job/dependencies`,
  log: `${AGENT_PATH}/job/log`,
  /** `<artifacts>/<path>`: publishes an artifact of the job's build. */
  artifacts: `${AGENT_PATH}/job/artifacts`,
  finish: `${AGENT_PATH}/job/finish`,
  /** `<caches>/<key>`: GET restores, POST saves a job cache's tar archive kept by the server (in its bucket). */
  caches: `${AGENT_PATH}/job/caches`,
} as const;

/** Milliseconds a lease request waits for a job before the server answers 204. */
export const LEASE_WAIT_MS = 20_000;

/** What an agent says of itself when it connects (POST connect). */
export interface ConnectRequest {
  readonly name: string;
  readonly osName: string;
  readonly osVersion: string;
  readonly osArch: string;
  readonly cpus: number;
  /** Bytes. */
  readonly memory: number;
  /** The agent's container engine (`podman 4.3.1`), or null when it has none. */
  readonly engine: string | null;
  /** Replace the agent's stored attributes. */
  readonly attributes: Readonly<Record<string, string>>;
  /**
   * The session of this agent's previous connection, kept in its work dir (`session`): when it is
   * still the token's online one (the agent was killed and started again), the server ends it —
   * its builds end as a lost agent's — and accepts this connection at once.
   */
  readonly previousSession?: string;
}

/** The server's answer to a connect. */
export interface ConnectResponse {
  readonly agentId: number;
  /** The id of this connection, sent with every heartbeat and lease. */
  readonly session: string;
  /** Milliseconds between heartbeats. */
  readonly heartbeatMs: number;
  /** Milliseconds a build's lease lasts without a heartbeat. */
  readonly leaseMs: number;
  readonly attributes: Readonly<Record<string, string>>;
}

/** POST heartbeat: the builds the agent is running. */
export interface HeartbeatRequest {
  readonly session: string;
  readonly running: readonly number[];
}

/** The server's answer to a heartbeat. */
export interface HeartbeatResponse {
  readonly paused: boolean;
  /** The attributes as stored now (an administrator may have changed them). */
  readonly attributes: Readonly<Record<string, string>>;
  /** Builds the agent must stop: cancelled, deleted, or no longer leased to it. */
  readonly stop: readonly number[];
}

/** POST disconnect: the agent stops, its jobs ended; another connection of its token may come at once. */
export interface DisconnectRequest {
  readonly session: string;
}

/** POST lease. */
export interface LeaseRequest {
  readonly session: string;
  /** Milliseconds to wait for a job, at most (and by default) {@link LEASE_WAIT_MS}. */
  readonly waitMs?: number;
}

/** A dependency build whose artifacts the job retrieves before its steps. */
export interface JobDependency {
  readonly buildId: number;
  readonly jobName: string;
  /** The artifacts pattern (`**` style, as the spec's `artifacts`). */
  readonly artifacts: string;
  /** Where in the workspace they go (relative). */
  readonly destinationPath: string;
  /** The dependency's artifact files (paths relative to its artifacts root) matching `artifacts`. */
  readonly files: readonly string[];
}

/** A job leased to an agent: everything it needs to run it. */
export interface AgentJob {
  readonly buildId: number;
  /** The only credential the job carries (Bearer), valid while the build runs on this agent. */
  readonly jobToken: string;
  readonly executorName: string;
  /** How the job runs on the agent: in containers (remote docker) or not (remote shell). */
  readonly executorKind: ExecutorKind;
  /** Job slots it takes (1, plus one per service on docker). */
  readonly slots: number;
  readonly projectId: number;
  readonly commitHash: string;
  readonly refName: string;
  readonly steps: readonly Step[];
  readonly services: readonly JobService[];
  readonly caches: readonly JobCache[];
  /** The executor's `cacheTTL` (days). */
  readonly cacheTTL: number;
  /**
   * Null: the job's caches stay on the agent. Else the server keeps them (in its bucket): the
   * job restores and saves them through {@link AGENT_PATHS.caches}, archives of at most
   * `maxBytes` bytes, and the server evicted the unused ones when it leased the job.
   */
  readonly sharedCaches: { readonly maxBytes: number } | null;
  /** Seconds the job may still run. */
  readonly timeoutSeconds: number;
  /** Values for `@...@` variables. */
  readonly variables: Omit<VariableContext, 'workspaceDir'>;
  /** Secret values to mask in the log. */
  readonly secrets: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly registryLogins: readonly RegistryLogin[];
  readonly containerLimits: { readonly memoryMb: number | null; readonly cpus: number | null };
  /** Largest artifact file published, bytes. */
  readonly artifactMaxBytes: number;
  readonly dependencies: readonly JobDependency[];
}

/** POST finish: how the job ended. */
export interface FinishRequest {
  readonly status: JobStatus;
  readonly version?: string;
  readonly description?: string;
}
