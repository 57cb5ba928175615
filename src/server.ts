import fs from 'node:fs/promises';
import path from 'node:path';
import { ContainerEngines } from './ci/container-engine.js';
import { prepareJobsDir } from './ci/job-directory.js';
import { planSandbox, SANDBOX_OFF_WARNING } from './ci/sandbox.js';
import type { Config } from './config.js';
import { CONTAINERS_DIR, GIT_HOME_DIR, makeDataDirPrivate } from './data-dir.js';
import { migrateToLatest, openDatabase } from './db/database.js';
import { configureGit } from './git/command.js';
import { endObjectReaders } from './git/object-reader.js';
import { configureUploadPackSlots } from './git/upload-pack-slots.js';
import { administratorExists, bootstrap } from './domain/bootstrap.js';
import { CACHED_TABLES } from './domain/auth/index.js';
import { BuildScheduler, buildLeaseMs } from './domain/builds/index.js';
import { encryptPlaintextJobSecrets, secretKey } from './domain/projects/index.js';
import { recoverAtStartup, repairLeftovers } from './domain/startup-recovery.js';
import { HEARTBEAT_MS, ProcessRegistry } from './domain/processes/index.js';
import { JournalWorker, recoverRefIntents } from './domain/journal/index.js';
import { EventBus } from './domain/events.js';
import { registerEventHandlers } from './domain/event-handlers.js';
import { OutboxWorker } from './domain/outbox/index.js';
import { AuditRetention } from './domain/audit/index.js';
import { getAuditSetting } from './domain/settings/index.js';
import { MirrorWorker } from './domain/mirrors/index.js';
import { CodeIndexWorker } from './domain/code-search/index.js';
import { MaintenanceWorker } from './domain/repositories/index.js';
import { buildApp, type App } from './app.js';
import { createMetrics } from './ops/metrics.js';
import { redactUrl, type LogDestination } from './plugins/logging.js';
import { createContext, systemActor, type Services } from './domain/context.js';
import { type GitAccess, HOOKS_PATH, prepareGitAccess } from './domain/repositories/index.js';
import type { HostKeyInfo } from './domain/ssh/index.js';
import type { SshServer } from './ssh/server.js';
import { closeObjectStore } from './object-store/index.js';

export interface RunningServer {
  app: App;
  services: Services;
  /** The URL the server listens on, e.g. `http://127.0.0.1:6610`. */
  url: string;
  /** The administrator password generated on first boot (shown once), or null. */
  generatedPassword: string | null;
  /** The administrator existed and `GITLOOM_INITIAL_PASSWORD` was set: the variable was not applied. */
  initialPasswordIgnored: boolean;
  /** Git over SSH: its port and host keys, or null when SSH is off (`GITLOOM_SSH_PORT=0`). */
  ssh: { port: number; hostKeys: HostKeyInfo[] } | null;
  /** Stops accepting requests, finishes background work and closes the database. */
  close(): Promise<void>;
}

/**
 * Starts Gitloom: makes the data dir private (umask 0o077, modes fixed), gives git its `HOME`
 * and global config in `<data dir>/git/` and logs git commands slower than `gitSlowMs` (with
 * credentials in URLs redacted), opens the database
 * (SQLite in the data dir, or PostgreSQL), applies migrations, creates the secret key and
 * encrypts job secrets still stored in plain text, creates first-boot records (a generated
 * administrator password is returned and logged once), builds the HTTP app and listens, starts
 * git over SSH on `GITLOOM_SSH_PORT` unless it is 0 (src/ssh/server.ts), then runs
 * start-up recovery (src/domain/startup-recovery.ts, then the journal intents of
 * src/domain/journal/ref-journal.ts) and starts the journal worker, the build scheduler, the
 * outbox worker, the mirror worker and the audit log's retention (docs/audit-log.md#retention). The process is in the registry of server processes
 * (src/domain/processes/) from before it listens until it closed: its heartbeat loop starts
 * with the workers and, on PostgreSQL, repairs what processes found gone left. Warns when the job sandbox is off or unavailable. A database outage while it
 * runs is logged once when it starts and once when it ends (src/db/availability.ts); the process
 * answers 503 meanwhile and recovers by itself. `options.logger` false
 * silences logs (tests); `options.logDestination` receives the JSON log lines instead of stdout.
 */
export async function startServer(config: Config, options: { logger?: boolean; logDestination?: LogDestination } = {}): Promise<RunningServer> {
  await makeDataDirPrivate(config.dataDir);
  await fs.mkdir(path.join(config.dataDir, 'repos'), { recursive: true });
  // git's HOME and global config are the server's own, never the host user's.
  const gitHome = path.join(config.dataDir, GIT_HOME_DIR);
  await fs.mkdir(gitHome, { recursive: true });
  configureGit({ homeDir: gitHome, globalConfigFile: path.join(gitHome, '.gitconfig'), slowMs: config.gitSlowMs, onSlowCommand: null });
  configureUploadPackSlots(config.gitConcurrency);
  // a server listens for the other processes' announcements (docs/architecture.md#processes-sharing-postgresql)
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    listen: true,
    watchTables: CACHED_TABLES,
    ...(config.fallbackPollMs !== null && { cacheTtlMs: config.fallbackPollMs }),
  });
  let app: App | undefined;
  let ssh: SshServer | null = null;
  let registry: ProcessRegistry | null = null;
  try {
    await migrateToLatest(database.db);
    const events = new EventBus((error, kind) => app?.log.error({ err: error, event: kind }, 'event handler failed'));
    const services: Services = { db: database.db, config, events };
    // registered before it serves anything: what it writes names it (docs/architecture.md#start-up-recovery)
    registry = new ProcessRegistry(services, {
      heartbeatMs: config.fallbackPollMs ?? HEARTBEAT_MS,
      onError: (error) => app?.log.error({ err: error }, 'process registry failed'),
      log: (message) => app?.log.warn(message),
    });
    await registry.register();
    const processes = registry;
    registerEventHandlers(services);
    const metrics = createMetrics(database.db, database.poolStats);
    const gitAccess = await prepareGitAccess(config);
    app = await buildApp(services, { logger: options.logger !== false, logDestination: options.logDestination, metrics, gitAccess });
    const { generated, initialPasswordIgnored } = await bootstrapAdministrator(database.db, config, app.log);
    const encrypted = await encryptPlaintextJobSecrets(database.db, secretKey(config));
    if (encrypted > 0) app.log.info(`Encrypted the job secrets of ${encrypted} project(s) stored in plain text`);
    await announceJobSandbox(config, app.log);
    const logger = app.log;
    configureGit({ onSlowCommand: (args, ms) => logger.warn({ git: args.map(redactUrl), ms }, 'slow git command') });
    const address = await app.listen({ port: config.port, host: config.host });
    const url = address.replace('[::]', '127.0.0.1').replace('0.0.0.0', '127.0.0.1');
    const running = app;
    ssh = await startSsh(services, gitAccess, url, running.log);
    const sshServer = ssh;
    database.availability.log = {
      down: (cause) => running.log.error(`Database unavailable (${cause}): requests answer 503 and background work pauses until it is back`),
      up: (downMs) => running.log.warn(`Database is back after ${Math.round(downMs / 1000)} s`),
    };
    const containers = new ContainerEngines({
      host: config.containerHost,
      insecureRegistries: config.containerInsecureRegistries,
      stateDir: path.join(config.dataDir, CONTAINERS_DIR),
      log: (message) => running.log.warn(message),
    });
    await recoverAtStartup(services, (message) => running.log.warn(message), containers);
    await recoverRefIntents(createContext(services, systemActor), (message) => running.log.warn(message), { atStartUp: true });
    const { journal, scheduler, outbox, mirrors, codeIndex, maintenance } = await startWorkers(services, running.log, metrics, containers, processes.id);
    const auditRetention = new AuditRetention(services, {
      retentionDays: async () => (await getAuditSetting(services)).retentionDays,
      onError: (error) => running.log.error({ err: error }, 'audit log retention failed'),
    });
    auditRetention.start();
    processes.start(async () => {
      await repairLeftovers(services, (message) => running.log.warn(message), containers);
    });
    return {
      app: running,
      services,
      url,
      generatedPassword: generated,
      initialPasswordIgnored,
      ssh: sshServer && { port: sshServer.port, hostKeys: sshServer.hostKeys },
      async close() {
        // SSH first: a push over SSH still running reports to the HTTP port's hook endpoints
        await sshServer?.close();
        await running.close();
        await mirrors.stop();
        await codeIndex.stop();
        await maintenance.stop();
        await journal.stop();
        await scheduler.stop();
        await containers.close();
        await outbox.stop();
        await auditRetention.stop();
        await events.idle();
        // last: nothing of this process is in flight any more
        await processes.stop();
        await database.close();
        closeObjectStore(config);
        endObjectReaders();
      },
    };
  } catch (error) {
    await ssh?.close();
    await app?.close();
    // the start's own error is what the caller learns; a row left is judged gone by the registry's rule
    await registry?.stop().catch((stopError: unknown) => app?.log.error({ err: stopError }, 'process registry row not removed'));
    await database.close();
    throw error;
  }
}

/**
 * Starts git over SSH unless it is off (docs/compatibility.md#git-over-ssh), once HTTP answers:
 * host keys made on first start (an RSA key takes a second of CPU, which the HTTP start-up does
 * not wait for), the port it took written back to `config.sshPort` (tests ask for any free port)
 * so that clone URLs name it, fingerprints logged.
 *
 * @throws Error when the SSH port cannot be bound.
 */
async function startSsh(services: Services, gitAccess: GitAccess, httpUrl: string, log: App['log']): Promise<SshServer | null> {
  const { config } = services;
  if (config.sshPort === null) return null;
  // loaded only when SSH is on: ssh2 costs memory a server without SSH never needs
  const { startSshServer } = await import('./ssh/server.js');
  const ssh = await startSshServer({ services, gitAccess, httpUrl, hooksPath: HOOKS_PATH, log }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EADDRINUSE' || error.code === 'EACCES') {
      throw new Error(
        `SSH port ${config.sshHost}:${config.sshPort} cannot be bound (${error.code}): set GITLOOM_SSH_PORT to another port, or 0 to turn SSH off`,
        { cause: error },
      );
    }
    throw error;
  });
  config.sshPort = ssh.port;
  log.info({ port: ssh.port, hostKeys: ssh.hostKeys.map((key) => `${key.bits} ${key.fingerprint} (${key.label})`) }, 'Git over SSH listening');
  return ssh;
}

/**
 * Creates the administrator on the first boot (logging a generated password) and says when
 * `GITLOOM_INITIAL_PASSWORD` was ignored because the administrator already exists.
 */
async function bootstrapAdministrator(
  db: Services['db'],
  config: Config,
  log: App['log'],
): Promise<{ generated: string | null; initialPasswordIgnored: boolean }> {
  const existed = await administratorExists(db);
  const generated = await bootstrap(db, config, Date.now());
  if (generated) log.warn(`Created administrator '${config.initialUser.name}' with generated password: ${generated}`);
  const initialPasswordIgnored = existed && config.initialUser.password !== null;
  if (initialPasswordIgnored) {
    log.warn(
      'GITLOOM_INITIAL_PASSWORD is set but the administrator already exists: it was not applied ' +
        '(to change the password run: gitloom admin reset-password <login>)',
    );
  }
  return { generated, initialPasswordIgnored };
}

/** Logs how jobs will be confined (or why they cannot run) and prepares the jobs dir. */
async function announceJobSandbox(config: Config, log: App['log']): Promise<void> {
  const sandbox = planSandbox(config.jobSandbox);
  if (sandbox.kind === 'off') log.warn(SANDBOX_OFF_WARNING);
  else if (sandbox.kind === 'unavailable') log.warn(`${sandbox.message}: builds fail until it is installed (or GITLOOM_JOB_SANDBOX=off)`);
  else log.info(sandbox.description);
  if (sandbox.kind === 'unavailable') return;
  const jobsDir = await prepareJobsDir(config.jobsDir, sandbox.kind === 'sandbox').catch((e: Error) => e);
  if (jobsDir instanceof Error) log.warn(`${jobsDir.message}: builds fail until it is fixed`);
}

/** Starts the background workers: the ref journal's, the build scheduler, the outbox, the repository mirrors' and the code index's. */
async function startWorkers(
  services: Services,
  log: App['log'],
  metrics: ReturnType<typeof createMetrics>,
  containers: ContainerEngines,
  owner: string,
): Promise<{
  journal: JournalWorker;
  scheduler: BuildScheduler;
  outbox: OutboxWorker;
  mirrors: MirrorWorker;
  codeIndex: CodeIndexWorker;
  maintenance: MaintenanceWorker;
}> {
  // GITLOOM_FALLBACK_POLL_MS replaces each loop's interval; a build's lease outlives a few of them
  const tickMs = services.config.fallbackPollMs ?? undefined;
  const leaseMs = buildLeaseMs(services.config);
  const journal = new JournalWorker(services, {
    tickMs,
    onError: (error) => log.error({ err: error }, 'journal worker failed'),
    onRepair: (message) => log.warn(message),
  });
  await journal.start();
  // the registry's id: the leases of this process's builds name a process the registry can judge
  const scheduler = new BuildScheduler(services, {
    owner,
    tickMs,
    leaseMs,
    onError: (error) => log.error({ err: error }, 'build scheduler failed'),
    containers,
  });
  await scheduler.start();
  const outbox = new OutboxWorker(services, {
    tickMs,
    onError: (error) => log.error({ err: error }, 'outbox worker failed'),
    onAttempt: (kind, succeeded, ms) => metrics.observeOutboxAttempt(kind, succeeded, ms),
  });
  await outbox.start();
  const mirrors = new MirrorWorker(services, {
    tickMs,
    onError: (error) => log.error({ err: error }, 'mirror worker failed'),
    onFailure: (mirror, text) =>
      log.warn({ mirrorId: mirror.id, projectId: mirror.projectId, direction: mirror.direction, reason: text }, 'mirror sync failed'),
  });
  await mirrors.start();
  const codeIndex = new CodeIndexWorker(services, { tickMs, onError: (error) => log.error({ err: error }, 'code index worker failed') });
  await codeIndex.start();
  const maintenance = new MaintenanceWorker(services, { tickMs, onError: (error) => log.error({ err: error }, 'repository maintenance failed') });
  await maintenance.start();
  return { journal, scheduler, outbox, mirrors, codeIndex, maintenance };
}
