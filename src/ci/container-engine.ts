/**
 * The container engine of container steps (docs/compatibility.md#builds-containers): a Docker
 * Engine API endpoint reached with `dockerode`, either the socket the administrator names
 * (`GITLOOM_CONTAINER_HOST`) or, when Podman is installed and no socket is named, a
 * `podman system service` this process starts and supervises on a socket in the data dir.
 *
 * Podman facts the supervised service relies on: it runs containers with `runc` (crun fails on
 * `setrlimit RLIMIT_NOFILE` and on hybrid cgroups), with explicit `default_ulimits` (the runtime
 * may not raise a limit above what the server has), with `catatonit` as the init process, and
 * with its events in a file (no journald). A container is created through the Podman API
 * (`/libpod/containers/create`), the only create that takes a per-container user-namespace
 * mapping; everything else — images, pulls, logs, waits, removal — is the Docker Engine API.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type Docker from 'dockerode';
import { ifMissing } from './job-directory.js';
import { findExecutable } from './sandbox.js';

/** Label every container of a job carries: the job directory (its basename names the build's run). */
export const JOB_DIR_LABEL = 'io.gitloom.job-dir';
/** Label every container of a job carries: the server's jobs dir, so start-up recovery finds its leftovers. */
export const JOBS_DIR_LABEL = 'io.gitloom.jobs-dir';

/** Build log line when a container step meets a server without a container engine. */
export const ENGINE_UNAVAILABLE =
  'No container engine: install podman (Debian: apt-get install podman runc catatonit) or set GITLOOM_CONTAINER_HOST to a Docker Engine API socket; steps with runInContainer: false run without one';

/**
 * A registry login of a server docker executor (OneDev 8.6 `RegistryLogin`,
 * docs/compatibility.md#builds-job-executors): `registryUrl` null for the official registry.
 */
export interface RegistryLogin {
  readonly registryUrl: string | null;
  readonly userName: string;
  readonly password: string;
}

/** A user-namespace mapping: container ids `[0, size)` are host ids `[hostId, hostId + size)`. */
export interface IdMapping {
  readonly hostId: number;
  readonly size: number;
}

/** What {@link ContainerEngine.createContainer} creates. */
export interface ContainerSpec {
  readonly image: string;
  /** The command, or empty for the image's own. */
  readonly command: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** The working directory, or null for the image's own. */
  readonly workingDir: string | null;
  /** Bind mounts: host path → container path. */
  readonly mounts: ReadonlyArray<{ readonly source: string; readonly destination: string; readonly readOnly: boolean }>;
  readonly labels: Readonly<Record<string, string>>;
  /** Container root and every other id of the container, on the host; null shares the host's ids (sandbox off). */
  readonly idMapping: IdMapping | null;
  /** Network namespace to join (a path such as `/proc/<pid>/ns/net`), or null for none (loopback only). */
  readonly networkNamespace: string | null;
  /** DNS servers of the container's `/etc/resolv.conf`; empty keeps the engine's. */
  readonly dns: readonly string[];
  /** `/etc/hosts` entries added to the image's. */
  readonly hosts: ReadonlyArray<{ readonly name: string; readonly address: string }>;
  /**
   * Memory (MiB), processes and CPU time (seconds) as the job sandbox's limits; `cpus`, when
   * set, the CPUs the container may use at once (a job executor's `cpuLimit`, docker's `--cpus`).
   */
  readonly limits: { readonly memoryMb: number; readonly processes: number; readonly cpuSeconds: number; readonly cpus?: number | null };
}

/** The period of a container's CPU quota, microseconds (docker's `--cpus` is quota / period). */
const CPU_PERIOD_US = 100_000;

/** A connected engine: the Docker Engine API client and, when this process started it, the Podman service. */
export class ContainerEngine {
  private constructor(
    readonly docker: Docker,
    /** Where the engine listens (a Unix socket path), for log lines. */
    readonly socketPath: string,
    private readonly service: PodmanService | null,
  ) {}

  /**
   * Connects to the engine: `host` (`GITLOOM_CONTAINER_HOST`: a socket path, or `unix://` and
   * the path) when set, otherwise a Podman service started on `<stateDir>/podman.sock`.
   * Resolves null when no engine can be had (neither set nor Podman installed), with the reason
   * for the server's log.
   *
   * @throws Error when the named socket or the started service does not answer the API's `_ping`.
   */
  static async connect(options: { host: string | null; stateDir: string; log: (message: string) => void }): Promise<ContainerEngine | { unavailable: string }> {
    // loaded on first use: most servers never run a container step
    const { default: Docker } = await import('dockerode');
    if (options.host) {
      const socketPath = options.host.replace(/^unix:\/\//, '');
      const docker = new Docker({ socketPath });
      await ping(docker, socketPath, 10_000);
      return new ContainerEngine(docker, socketPath, null);
    }
    const podman = findExecutable('podman');
    if (!podman) return { unavailable: ENGINE_UNAVAILABLE };
    const docker = new Docker({ socketPath: PodmanService.socketPath(options.stateDir) });
    const service = await PodmanService.start(podman, options.stateDir, options.log, docker);
    return new ContainerEngine(docker, service.socketPath, service);
  }

  /** The engine's name and version for log lines, e.g. `Podman Engine 4.3.1`. */
  async describe(): Promise<string> {
    const version = await this.docker.version();
    const component = version.Components?.find((c) => /engine/i.test(c.Name));
    return `${component?.Name ?? 'Docker Engine'} ${version.Version}`;
  }

  /**
   * Makes `image` present: nothing when the engine has it, otherwise pulls it and reports each
   * distinct progress status through `log`.
   *
   * @throws Error `Unable to pull image '<image>': <engine's reason>`.
   */
  async ensureImage(image: string, log: (line: string) => void, signal: AbortSignal): Promise<void> {
    try {
      await this.docker.getImage(image).inspect();
      return;
    } catch (e) {
      if ((e as { statusCode?: number }).statusCode !== 404) throw e;
    }
    log(`Pulling image ${image}...`);
    try {
      const stream = (await this.docker.pull(image, { abortSignal: signal })) as NodeJS.ReadableStream;
      await new Promise<void>((resolve, reject) => {
        let last = '';
        this.docker.modem.followProgress(
          stream,
          (error: Error | null) => (error ? reject(error) : resolve()),
          (event: { status?: string; error?: string; id?: string }) => {
            if (event.error) return reject(new Error(event.error));
            const line = [event.id, event.status].filter(Boolean).join(': ');
            if (line && line !== last) log((last = line));
          },
        );
      });
    } catch (e) {
      throw new Error(`Unable to pull image '${image}': ${engineReason(e)}`);
    }
  }

  /**
   * Creates a container from `spec` (not started): all capabilities dropped, no new privileges,
   * its ids mapped by `spec.idMapping`, cgroup memory, pids and (with `cpus`) CPU quota limits
   * and the rlimits of the job limits, its network namespace or none. Resolves the container's id.
   *
   * @throws Error with the engine's reason.
   */
  async createContainer(spec: ContainerSpec): Promise<string> {
    const ids = spec.idMapping && [{ container_id: 0, host_id: spec.idMapping.hostId, size: spec.idMapping.size }];
    const { memoryMb, processes, cpuSeconds, cpus } = spec.limits;
    const cpu = cpus ? { cpu: { quota: Math.max(1000, Math.round(cpus * CPU_PERIOD_US)), period: CPU_PERIOD_US } } : {};
    const body = {
      image: spec.image,
      ...(spec.command.length > 0 && { command: spec.command }),
      env: spec.env,
      ...(spec.workingDir && { work_dir: spec.workingDir }),
      labels: spec.labels,
      mounts: spec.mounts.map((m) => ({ destination: m.destination, source: m.source, type: 'bind', options: ['rbind', m.readOnly ? 'ro' : 'rw'] })),
      ...(ids && { idmappings: { UIDMap: ids, GIDMap: ids }, userns: { nsmode: 'private' } }),
      cap_drop: ['ALL'],
      no_new_privileges: true,
      netns: spec.networkNamespace ? { nsmode: 'path', value: spec.networkNamespace } : { nsmode: 'none' },
      ...(spec.dns.length > 0 && { dns_server: spec.dns }),
      hostadd: spec.hosts.map((h) => `${h.name}:${h.address}`),
      resource_limits: { memory: { limit: memoryMb * 1024 * 1024, swap: memoryMb * 1024 * 1024 }, pids: { limit: processes }, ...cpu },
      r_limits: [
        { type: 'nproc', soft: processes, hard: processes },
        { type: 'cpu', soft: cpuSeconds, hard: cpuSeconds + 5 },
        { type: 'core', soft: 0, hard: 0 },
        { type: 'nofile', soft: 1024, hard: 4096 },
      ],
    };
    try {
      const created = await this.dial<{ Id: string }>('POST', '/v4.0.0/libpod/containers/create', body);
      return created.Id;
    } catch (e) {
      throw new Error(engineReason(e));
    }
  }

  /**
   * Removes a container, killing what runs in it. The first removal after a container ended can
   * fail with `device or resource busy` (its shm is still mounted); it is tried again for up to
   * five seconds. A container already gone counts as removed.
   *
   * @throws Error with the engine's reason when it still cannot be removed.
   */
  async removeContainer(id: string): Promise<void> {
    const container = this.docker.getContainer(id);
    // stopped at once (SIGKILL, no grace): a removal would give it the engine's grace period
    await container.stop({ t: 0 }).catch(unlessEngineSays(304, 404)); // not running, or gone
    for (let attempt = 0; ; attempt++) {
      try {
        await container.remove({ force: true, v: true });
        return;
      } catch (e) {
        if ((e as { statusCode?: number }).statusCode === 404) return;
        if (attempt >= 25) throw new Error(engineReason(e));
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  /**
   * Removes every container of the jobs dir `jobsDir` (label {@link JOBS_DIR_LABEL}) whose job
   * directory (label {@link JOB_DIR_LABEL}) `keep` does not name; resolves the ids removed.
   */
  async removeJobContainers(jobsDir: string, keep: (jobDir: string) => boolean): Promise<string[]> {
    const found = await this.docker.listContainers({ all: true, filters: { label: [`${JOBS_DIR_LABEL}=${jobsDir}`] } });
    const removed: string[] = [];
    for (const c of found) {
      if (keep(c.Labels[JOB_DIR_LABEL] ?? '')) continue;
      await this.removeContainer(c.Id);
      removed.push(c.Id);
    }
    return removed;
  }

  /** Stops the Podman service this process started (containers it runs are removed by their jobs first). */
  async close(): Promise<void> {
    await this.service?.stop();
  }

  private dial<T>(method: string, apiPath: string, body: Record<string, unknown>): Promise<T> {
    return new Promise((resolve, reject) =>
      this.docker.modem.dial(
        {
          path: apiPath,
          method,
          options: body,
          statusCodes: { 200: true, 201: true, 400: 'bad parameter', 404: 'no such image', 409: 'conflict', 500: 'server error' },
        },
        (error: Error | null, value: unknown) => (error ? reject(error) : resolve(value as T)),
      ),
    );
  }
}

/**
 * The server's container engine, connected on first use (most servers run shell jobs only, and
 * a Podman service costs a process): {@link ContainerEngines.get} connects once and shares the
 * connection; a failed connection is tried again by the next call.
 */
export class ContainerEngines {
  private connecting: Promise<ContainerEngine | { unavailable: string }> | null = null;
  /** The engine once connected. */
  private connected: ContainerEngine | null = null;
  private closed = false;

  /**
   * @param options.host `GITLOOM_CONTAINER_HOST`, or null for a supervised Podman service.
   * @param options.stateDir the service's directory (`<data dir>/containers`): socket, pid file, `containers.conf`.
   */
  constructor(private readonly options: { host: string | null; stateDir: string; log: (message: string) => void }) {}

  /**
   * The connected engine, or `{ unavailable }` saying what to install.
   *
   * @throws Error when the engine does not answer (see {@link ContainerEngine.connect}).
   */
  get(): Promise<ContainerEngine | { unavailable: string }> {
    if (this.closed) return Promise.resolve({ unavailable: 'The server is stopping' });
    this.connecting ??= ContainerEngine.connect(this.options).then(
      (engine) => {
        if (!('unavailable' in engine)) this.connected = engine;
        return engine;
      },
      (e: Error) => {
        this.connecting = null;
        throw e;
      },
    );
    return this.connecting;
  }

  /**
   * Whether an engine can be had without connecting to it: a socket is named, or Podman is
   * installed (the auto-discovery of a server docker executor, docs/compatibility.md#builds-job-executors).
   */
  discoverable(): boolean {
    return !this.closed && (this.options.host !== null || findExecutable('podman') !== null);
  }

  /** Whether a previous run of this data dir left its Podman service (its pid file is there). */
  leftBehind(): boolean {
    return !this.options.host && existsSync(path.join(this.options.stateDir, 'podman.pid'));
  }

  /** Stops the engine's service when this process started one. */
  async close(): Promise<void> {
    this.closed = true;
    // a connection under way finishes first; one that failed was reported to its caller
    await Promise.allSettled([this.connecting]);
    await this.connected?.close();
  }
}

/**
 * A rejection handler that ignores the engine's answers with one of `statuses` (a container
 * already gone: 404; already stopped: 304) and rethrows every other error.
 */
export function unlessEngineSays(...statuses: number[]): (error: unknown) => void {
  return (error) => {
    if (!statuses.includes((error as { statusCode?: number }).statusCode ?? 0)) throw error;
  };
}

/** The engine's own words for a failed call (its JSON `message`), or the error's message. */
export function engineReason(e: unknown): string {
  const json = (e as { json?: { message?: string; cause?: string } | null }).json;
  return (json?.message ?? (e as Error).message ?? String(e)).trim();
}

/** Waits until the engine answers `_ping`, up to `timeoutMs`. @throws Error naming the socket. */
async function ping(docker: Docker, socketPath: string, timeoutMs: number, exited?: () => string | null): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await docker.ping();
      return;
    } catch (e) {
      const gone = exited?.();
      if (gone !== null && gone !== undefined) throw new Error(`Container engine at ${socketPath} exited: ${gone}`);
      if (Date.now() > deadline) throw new Error(`Container engine at ${socketPath} does not answer: ${(e as Error).message}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/**
 * A `podman system service` on `<stateDir>/podman.sock`, started with a `containers.conf` of its
 * own (`<stateDir>/containers.conf`) and restarted when it exits. Its pid is kept in
 * `<stateDir>/podman.pid` so that the service of a killed server is ended by the next start.
 */
class PodmanService {
  private child: ChildProcess | null = null;
  private stopping = false;

  private constructor(
    private readonly podman: string,
    private readonly stateDir: string,
    private readonly log: (message: string) => void,
    private readonly docker: Docker,
  ) {}

  /** The service's socket in `stateDir`. */
  static socketPath(stateDir: string): string {
    return path.join(stateDir, 'podman.sock');
  }

  get socketPath(): string {
    return PodmanService.socketPath(this.stateDir);
  }

  /** Starts the service and waits until it answers through `docker` (a client of its socket). */
  static async start(podman: string, stateDir: string, log: (message: string) => void, docker: Docker): Promise<PodmanService> {
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    const service = new PodmanService(podman, stateDir, log, docker);
    if (Buffer.byteLength(service.socketPath) > 100) throw new Error(`Container engine socket path is too long for a Unix socket: ${service.socketPath}`);
    await service.endStale();
    await writeFile(path.join(stateDir, 'containers.conf'), containersConf(), { mode: 0o600 });
    await service.spawn();
    return service;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
    await rm(path.join(this.stateDir, 'podman.pid'), { force: true });
  }

  /** Ends the service a previous run of this data dir left (its pid file names a live podman). */
  private async endStale(): Promise<void> {
    const pidFile = path.join(this.stateDir, 'podman.pid');
    const pid = Number(await readFile(pidFile, 'utf8').catch(ifMissing('')));
    if (Number.isInteger(pid) && pid > 0) {
      const command = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(ifMissing(''));
      if (command.includes('podman') && command.includes(this.socketPath)) {
        process.kill(pid, 'SIGKILL');
        for (let i = 0; i < 100 && existsSync(`/proc/${pid}`); i++) await new Promise((r) => setTimeout(r, 20));
      }
    }
    await rm(pidFile, { force: true });
    await rm(this.socketPath, { force: true });
  }

  private async spawn(): Promise<void> {
    let exit: string | null = null;
    let stderr = '';
    const child = spawn(this.podman, ['system', 'service', '--time=0', `unix://${this.socketPath}`], {
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', CONTAINERS_CONF: path.join(this.stateDir, 'containers.conf'), HOME: this.stateDir },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.child = child;
    child.stderr?.on('data', (c: Buffer) => {
      stderr = (stderr + c.toString('utf8')).slice(-2000);
    });
    child.once('error', (e) => (exit = e.message));
    child.once('exit', (code, signal) => {
      exit = `code ${code ?? signal}: ${stderr.trim().split('\n').slice(-3).join(' ')}`;
      if (this.stopping) return;
      this.log(`Container engine (podman system service) exited (${exit}); restarting it`);
      setTimeout(() => {
        if (!this.stopping) this.spawn().catch((e: Error) => this.log(e.message));
      }, 1000).unref();
    });
    await writeFile(path.join(this.stateDir, 'podman.pid'), String(child.pid ?? ''), { mode: 0o600 });
    await ping(this.docker, this.socketPath, 30_000, () => exit);
  }
}

/**
 * The `containers.conf` of the supervised service: `runc`, cgroupfs unless systemd manages the
 * host, events in a file, `catatonit` as init, and default ulimits no higher than this process's
 * own (the runtime may not raise them).
 */
function containersConf(): string {
  const nofile = 1024;
  const cgroupManager = existsSync('/run/systemd/system') ? 'systemd' : 'cgroupfs';
  return [
    '[containers]',
    `default_ulimits = ["nofile=${nofile}:${nofile * 4}", "nproc=4096:4096"]`,
    'init_path = "/usr/bin/catatonit"',
    '',
    '[engine]',
    'runtime = "runc"',
    `cgroup_manager = "${cgroupManager}"`,
    'events_logger = "file"',
    '',
  ].join('\n');
}
