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
import { closeSync, createReadStream, createWriteStream, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { mkdir, open, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type Docker from 'dockerode';
import { ContainerReaper, SERVER_LABEL } from './container-reaper.js';
import { ifMissing } from './job-directory.js';
import { loginFor, registryAuthHeader, registryOf, verifiesTls, type RegistryLogin } from './image-registries.js';
import { findExecutable } from './sandbox.js';

/** Label every container of a job carries: the job directory (its basename names the build's run). */
export const JOB_DIR_LABEL = 'io.gitloom.job-dir';
/** Label every container of a job carries: the server's jobs dir, so start-up recovery finds its leftovers. */
export const JOBS_DIR_LABEL = 'io.gitloom.jobs-dir';

/** Label of every image a `!BuildImageStep` builds: the project whose job built it. */
export const BUILT_BY_LABEL = 'io.gitloom.built-by-project';

/** Who asks for an image: the job's project (null outside one) and its registry logins, tried in order. */
export interface ImageRequest {
  readonly project: string | null;
  readonly logins: readonly RegistryLogin[];
}

/** Build log line when a container step meets a server without a container engine. */
export const ENGINE_UNAVAILABLE =
  'No container engine: install podman (Debian: apt-get install podman runc catatonit) or set GITLOOM_CONTAINER_HOST to a Docker Engine API socket; steps with runInContainer: false run without one';

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
  /** Path of the seccomp profile (containers-common's JSON format) the engine reads, or null for the engine's default. */
  readonly seccompProfile: string | null;
}

/** The period of a container's CPU quota, microseconds (docker's `--cpus` is quota / period). */
const CPU_PERIOD_US = 100_000;

/** Where the engine is and how it reaches registries (see {@link ContainerEngine.connect}). */
export interface EngineOptions {
  /** `GITLOOM_CONTAINER_HOST`, or null for a supervised Podman service. */
  readonly host: string | null;
  /** The service's directory (`<data dir>/containers`): socket, pid file, `containers.conf`. */
  readonly stateDir: string;
  readonly log: (message: string) => void;
  /** `GITLOOM_CONTAINER_INSECURE_REGISTRIES`: registries (`host[:port]`) reached without TLS. */
  readonly insecureRegistries?: readonly string[];
}

/**
 * A connected engine: the Docker Engine API client, the reaper of this process's containers
 * (src/ci/container-reaper.ts) and, when this process started it, the Podman service.
 */
export class ContainerEngine {
  private constructor(
    readonly docker: Docker,
    /** Where the engine listens (a Unix socket path), for log lines. */
    readonly socketPath: string,
    private readonly service: PodmanService | null,
    /** Registries reached without TLS besides loopback ones (`GITLOOM_CONTAINER_INSECURE_REGISTRIES`). */
    private readonly insecureRegistries: readonly string[],
    private readonly reaper: ContainerReaper,
  ) {}

  /**
   * Connects to the engine: `host` (`GITLOOM_CONTAINER_HOST`: a socket path, or `unix://` and
   * the path) when set, otherwise a Podman service started on `<stateDir>/podman.sock`.
   * Resolves null when no engine can be had (neither set nor Podman installed), with the reason
   * for the server's log. The reaper of this process's containers starts first: from then on the
   * end of this process, however it ends, removes them and the service.
   *
   * @throws Error when the named socket or the started service does not answer the API's `_ping`.
   */
  static async connect(options: EngineOptions): Promise<ContainerEngine | { unavailable: string }> {
    // loaded on first use: most servers never run a container step
    const { default: Docker } = await import('dockerode');
    const podman = options.host ? null : findExecutable('podman');
    if (!options.host && !podman) return { unavailable: ENGINE_UNAVAILABLE };
    const socketPath = options.host ? options.host.replace(/^unix:\/\//, '') : PodmanService.socketPath(options.stateDir);
    const docker = new Docker({ socketPath });
    const reaper = new ContainerReaper(socketPath, options.log);
    reaper.start();
    try {
      if (!podman) {
        await ping(docker, socketPath, 10_000);
        const notPodman = await otherThanPodman(docker, socketPath);
        if (notPodman) {
          await reaper.close();
          return { unavailable: notPodman };
        }
        return new ContainerEngine(docker, socketPath, null, options.insecureRegistries ?? [], reaper);
      }
      const service = await PodmanService.start(podman, options.stateDir, options.log, docker, (pid) => reaper.service(pid));
      return new ContainerEngine(docker, socketPath, service, options.insecureRegistries ?? [], reaper);
    } catch (e) {
      await reaper.close();
      throw e;
    }
  }

  /** The engine's name and version for log lines, e.g. `Podman Engine 4.3.1`. */
  async describe(): Promise<string> {
    const version = await this.docker.version();
    const component = version.Components?.find((c) => /engine/i.test(c.Name));
    return `${component?.Name ?? 'Docker Engine'} ${version.Version}`;
  }

  /**
   * Makes `image` present for a job of `request.project`: nothing when the engine has it and no
   * other project's build made it (label {@link BUILT_BY_LABEL}), otherwise pulls it — with the
   * first of `request.logins` for its registry, over TLS unless the registry is loopback or listed
   * as insecure (src/ci/image-registries.ts) — reporting each distinct progress line through
   * `log`. So a build cannot plant an image under a name another project's jobs use.
   *
   * @throws Error `Unable to pull image '<image>': <engine's reason>`.
   */
  async ensureImage(image: string, request: ImageRequest, log: (line: string) => void, signal: AbortSignal): Promise<void> {
    const present = await this.inspectImage(image);
    const builtBy = present?.Config?.Labels?.[BUILT_BY_LABEL];
    if (present && (builtBy === undefined || builtBy === request.project)) return;
    log(present ? `Image ${image} was built by another project's job: pulling it from its registry...` : `Pulling image ${image}...`);
    try {
      await this.stream('POST', '/v4.0.0/libpod/images/pull?', { reference: image, ...this.registryAccess(image, request.logins) }, log, signal);
    } catch (e) {
      throw new Error(`Unable to pull image '${image}': ${engineReason(e)}`);
    }
  }

  /**
   * Pushes `image` (a full reference) to its registry with the first of `logins` for it (TLS as
   * for {@link ensureImage}), reporting progress through `log`.
   *
   * @throws Error `Unable to push image '<image>': <engine's reason>`.
   */
  async pushImage(image: string, logins: readonly RegistryLogin[], log: (line: string) => void, signal: AbortSignal): Promise<void> {
    log(`Pushing image ${image}...`);
    try {
      await this.stream(
        'POST',
        `/v4.0.0/libpod/images/${encodeURIComponent(image)}/push?`,
        { destination: image, ...this.registryAccess(image, logins) },
        log,
        signal,
      );
    } catch (e) {
      throw new Error(`Unable to push image '${image}': ${engineReason(e)}`);
    }
  }

  /** Writes image `image` as a `docker save` archive to the new file `file` (mode 0644). */
  async exportImage(image: string, file: string): Promise<void> {
    const archive = (await this.docker.getImage(image).get()) as NodeJS.ReadableStream;
    await pipeline(archive, createWriteStream(file, { flags: 'wx', mode: 0o644 }));
  }

  /**
   * Loads a `docker save` archive (read from `fd`, which is closed) whose image is named
   * `tags[0]`, and gives it the other `tags` too.
   *
   * @throws Error with the engine's reason.
   */
  async loadImage(fd: number, tags: readonly string[]): Promise<void> {
    try {
      const output = (await this.docker.loadImage(createReadStream('', { fd }))) as NodeJS.ReadableStream;
      await new Promise((resolve, reject) => this.docker.modem.followProgress(output, (e: Error | null) => (e ? reject(e) : resolve(null))));
      for (const tag of tags.slice(1)) {
        const colon = tag.lastIndexOf(':');
        const named = colon > tag.lastIndexOf('/') ? { repo: tag.slice(0, colon), tag: tag.slice(colon + 1) } : { repo: tag, tag: 'latest' };
        await this.docker.getImage(tags[0]).tag(named);
      }
    } catch (e) {
      throw new Error(`Unable to load the built image: ${engineReason(e)}`);
    }
  }

  /** The id of the image `reference` names, or null when the engine has none. */
  async imageId(reference: string): Promise<string | null> {
    return (await this.inspectImage(reference))?.Id ?? null;
  }

  private async inspectImage(reference: string): Promise<Docker.ImageInspectInfo | null> {
    try {
      return await this.docker.getImage(reference).inspect();
    } catch (e) {
      if ((e as { statusCode?: number }).statusCode === 404) return null;
      throw e;
    }
  }

  /**
   * Removes image `id` unless a tag or a container still uses it (the engine refuses, and the
   * image stays); resolves whether it was removed.
   */
  async removeUnusedImage(id: string): Promise<boolean> {
    try {
      const image = await this.docker.getImage(id).inspect();
      if ((image.RepoTags ?? []).some((t) => t !== '<none>:<none>')) return false;
      await this.docker.getImage(id).remove();
      return true;
    } catch (e) {
      unlessEngineSays(404, 409)(e); // gone already, or in use
      return false;
    }
  }

  /** The query and header values of a pull or push of `image`: `tlsVerify`, and `X-Registry-Auth` when a login applies. */
  private registryAccess(image: string, logins: readonly RegistryLogin[]): { tlsVerify: boolean; auth?: RegistryLogin & { registry: string } } {
    const registry = registryOf(image);
    const login = loginFor(image, logins);
    return { tlsVerify: verifiesTls(registry, this.insecureRegistries), ...(login && { auth: { ...login, registry } }) };
  }

  /**
   * Calls a streaming endpoint of the Podman API (JSON lines: `stream` text, `error`) and
   * resolves when it ends; each distinct non-empty line of text goes to `log`.
   *
   * @throws Error with the engine's reason (an HTTP error or an `error` line).
   */
  private stream(
    method: string,
    apiPath: string,
    query: { tlsVerify: boolean; auth?: RegistryLogin & { registry: string }; [key: string]: unknown },
    log: (line: string) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const { auth, ...options } = query;
    const headers = auth ? { 'X-Registry-Auth': registryAuthHeader(auth, auth.registry) } : {};
    return new Promise((resolve, reject) => {
      this.docker.modem.dial(
        {
          path: apiPath,
          method,
          options,
          headers,
          isStream: true,
          abortSignal: signal,
          statusCodes: { 200: true, 400: 'bad parameter', 401: 'unauthorized', 404: 'no such image', 500: 'server error' },
        },
        (error: Error | null, stream: unknown) => {
          if (error) return reject(error);
          let last = '';
          this.docker.modem.followProgress(
            stream as NodeJS.ReadableStream,
            (e: Error | null) => (e ? reject(e) : resolve()),
            (event: { stream?: string; status?: string; error?: string; id?: string }) => {
              if (event.error) return reject(new Error(event.error.trim()));
              for (const line of (event.stream ?? [event.id, event.status].filter(Boolean).join(': ')).split('\n')) {
                if (line.trim() && line !== last) log((last = line));
              }
            },
          );
        },
      );
    });
  }

  /**
   * Creates a container from `spec` (not started): all capabilities dropped, no new privileges,
   * `spec.seccompProfile`, its ids mapped by `spec.idMapping`, cgroup memory, pids and (with
   * `cpus`) CPU quota limits and the rlimits of the job limits, its network namespace or none,
   * labelled as this process's ({@link SERVER_LABEL}) for the reaper. Resolves the container's id.
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
      labels: { ...spec.labels, [SERVER_LABEL]: this.reaper.owner },
      mounts: spec.mounts.map((m) => ({ destination: m.destination, source: m.source, type: 'bind', options: ['rbind', m.readOnly ? 'ro' : 'rw'] })),
      ...(ids && { idmappings: { UIDMap: ids, GIDMap: ids }, userns: { nsmode: 'private' } }),
      cap_drop: ['ALL'],
      no_new_privileges: true,
      ...(spec.seccompProfile && { seccomp_profile_path: spec.seccompProfile }),
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
   * Waits until container `id` has exited and resolves its exit code. Podman's own wait, which
   * looks every 10 ms (the Docker API's looks every 250 ms: a quarter of a second on every step).
   *
   * @throws Error with the engine's reason.
   */
  async waitForExit(id: string): Promise<number> {
    const code = await this.dial<number | string>('POST', `/v4.0.0/libpod/containers/${encodeURIComponent(id)}/wait?`, {
      condition: ['exited', 'stopped'],
      interval: '10ms',
    });
    return Number(code);
  }

  /**
   * Removes a container, killing what runs in it. The first removal after a container ended can
   * fail with `device or resource busy` (its shm is still mounted); it is tried again every 25 ms
   * for up to five seconds. A container already gone counts as removed.
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
        if (attempt >= 200) throw new Error(engineReason(e));
        await new Promise((r) => setTimeout(r, 25));
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

  /**
   * Ends the reaper, which removes what is left of this process's containers (their jobs removed
   * them first) and ends the Podman service this process started; then stops that service
   * should it still run.
   */
  async close(): Promise<void> {
    this.service?.stopping();
    await this.reaper.close();
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

  constructor(private readonly options: EngineOptions) {}

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

/**
 * Why the engine at `socketPath` cannot run jobs when it is not Podman (dockerd): a container of
 * a job needs a user namespace mapped onto the job's own uid range, which only Podman's API gives
 * per container (dockerd's `userns-remap` maps every container onto one range); null for Podman.
 */
async function otherThanPodman(docker: Docker, socketPath: string): Promise<string | null> {
  const version = await docker.version();
  if ((version.Components ?? []).some((c) => /podman/i.test(c.Name))) return null;
  return `The container engine at ${socketPath} is not Podman (${version.Version ?? 'unknown version'}): container steps need Podman's API, which maps each container's user namespace onto the job's own uids; install podman or point GITLOOM_CONTAINER_HOST at a Podman service`;
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
 * own (`<stateDir>/containers.conf`) in a session of its own and restarted when it exits. Each
 * start's pid goes to `onStart` (the reaper, which ends the service when this process ends) and
 * to `<stateDir>/podman.pid`, so that a service the reaper could not end is ended by the next start.
 */
class PodmanService {
  private child: ChildProcess | null = null;
  private ending = false;

  private constructor(
    private readonly podman: string,
    private readonly stateDir: string,
    private readonly log: (message: string) => void,
    private readonly docker: Docker,
    private readonly onStart: (pid: number) => void,
  ) {}

  /** The service's socket in `stateDir`. */
  static socketPath(stateDir: string): string {
    return path.join(stateDir, 'podman.sock');
  }

  get socketPath(): string {
    return PodmanService.socketPath(this.stateDir);
  }

  /** Starts the service and waits until it answers through `docker` (a client of its socket); `onStart` receives each start's pid. */
  static async start(podman: string, stateDir: string, log: (message: string) => void, docker: Docker, onStart: (pid: number) => void): Promise<PodmanService> {
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    const service = new PodmanService(podman, stateDir, log, docker, onStart);
    if (Buffer.byteLength(service.socketPath) > 100) throw new Error(`Container engine socket path is too long for a Unix socket: ${service.socketPath}`);
    await service.endStale();
    await writeFile(path.join(stateDir, 'containers.conf'), containersConf(), { mode: 0o600 });
    try {
      await service.spawn();
    } catch (e) {
      // a service that does not answer is not restarted by a supervisor nobody holds
      await service.stop();
      throw e;
    }
    return service;
  }

  /** From now on an exit of the service is not answered by a restart. */
  stopping(): void {
    this.ending = true;
  }

  /** Stops the service (SIGTERM, SIGKILL after five seconds) unless it ended already, and removes its pid file. */
  async stop(): Promise<void> {
    this.ending = true;
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
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

  /**
   * Spawns the service with its standard error in `<stateDir>/podman.log` — not a pipe: Go ends
   * a program whose write to a standard stream meets a closed pipe, and the service must outlive
   * a killed server until the reaper removed the containers through it.
   */
  private async spawn(): Promise<void> {
    let exit: string | null = null;
    const logFile = path.join(this.stateDir, 'podman.log');
    const stderr = await open(logFile, 'w', 0o600);
    let child: ChildProcess;
    try {
      child = spawn(this.podman, ['system', 'service', '--time=0', `unix://${this.socketPath}`], {
        env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', CONTAINERS_CONF: path.join(this.stateDir, 'containers.conf'), HOME: this.stateDir },
        stdio: ['ignore', 'ignore', stderr.fd],
        // a signal to the server's process group (Ctrl-C) leaves it to the server or the reaper,
        // which remove the containers through it first
        detached: true,
      });
    } finally {
      await stderr.close();
    }
    this.child = child;
    child.once('error', (e) => (exit = e.message));
    child.once('exit', (code, signal) => {
      exit = `code ${code ?? signal}: ${lastLines(logFile, 3)}`;
      if (this.ending) return;
      this.log(`Container engine (podman system service) exited (${exit}); restarting it`);
      setTimeout(() => {
        if (!this.ending) this.spawn().catch((e: Error) => this.log(e.message));
      }, 1000).unref();
    });
    if (child.pid !== undefined) this.onStart(child.pid);
    await writeFile(path.join(this.stateDir, 'podman.pid'), String(child.pid ?? ''), { mode: 0o600 });
    await ping(this.docker, this.socketPath, 30_000, () => exit);
  }
}

/** The last `count` lines of the end (2,000 bytes at most) of `file`, joined by spaces; empty when it cannot be read. */
function lastLines(file: string, count: number): string {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (e) {
    return ifMissing('')(e as NodeJS.ErrnoException);
  }
  try {
    const size = fstatSync(fd).size;
    const tail = Buffer.alloc(Math.min(size, 2000));
    readSync(fd, tail, 0, tail.length, size - tail.length);
    return tail.toString('utf8').trim().split('\n').slice(-count).join(' ');
  } finally {
    closeSync(fd);
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
