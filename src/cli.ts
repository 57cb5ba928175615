#!/usr/bin/env node
import path from 'node:path';
import { Command } from 'commander';
import { loadConfig, sshRootUrlOf, type Config } from './config.js';
import { migrateToLatest, openDatabase } from './db/database.js';
import { CACHED_TABLES } from './domain/auth/index.js';
import { resetPassword } from './domain/users/index.js';
import { EventBus } from './domain/events.js';
import { registerTransactionHandlers } from './domain/event-handlers.js';
import { startServer, type RunningServer } from './server.js';
import { DEFAULT_WORK_DIR } from './agent/work-dir.js';

const program = new Command();
program.name('gitloom').description('A self-hosted software forge');

/** Configuration from the environment with the command's `--data-dir`/`--port` overrides. */
function configFrom(options: { port?: string; dataDir?: string }): Config {
  return loadConfig(process.env, {
    ...(options.port !== undefined && { port: Number(options.port) }),
    ...(options.dataDir !== undefined && { dataDir: options.dataDir }),
  });
}

/** The banner's lines about git over SSH: port, clone URL root, host key fingerprints as `ssh-keygen -l` prints them. */
function sshLines(config: Config, server: RunningServer): string[] {
  if (!server.ssh) return ['  Git over SSH: off (GITLOOM_SSH_PORT=0)'];
  return [
    `  Git over SSH on port ${server.ssh.port}, clone URLs ${sshRootUrlOf(config)}/<project path>`,
    '  SSH host key fingerprints:',
    ...server.ssh.hostKeys.map((key) => `    ${key.bits} ${key.fingerprint} (${key.label})`),
  ];
}

/** The start-up banner: where to go, how to sign in the first time. */
function banner(config: Config, server: RunningServer): string {
  const port = new URL(server.url).port;
  const publicUrl = process.env.GITLOOM_SERVER_URL ? config.serverUrl : `http://localhost:${port}`;
  const lines = [
    '',
    `  Gitloom is ready at ${publicUrl}`,
    `  Listening on ${server.url}`,
    `  Data directory: ${config.dataDir}`,
    `  Database: ${config.databaseUrl ? 'PostgreSQL' : 'SQLite (gitloom.db in the data directory)'}`,
    `  API documentation: ${publicUrl}/~help/api`,
    ...sshLines(config, server),
  ];
  if (server.generatedPassword) {
    lines.push(
      `  First boot: sign in as '${config.initialUser.name}' with password ${server.generatedPassword}`,
      '  (shown only this once; change it or run: gitloom admin reset-password <login>)',
    );
  }
  if (server.initialPasswordIgnored) {
    lines.push(
      `  Note: GITLOOM_INITIAL_PASSWORD is ignored, the administrator already exists. To set a password: gitloom admin reset-password ${config.initialUser.name}`,
    );
  }
  return `${lines.join('\n')}\n\n`;
}

program
  .command('serve')
  .description('start the server (configuration from GITLOOM_* environment variables)')
  .option('-p, --port <port>', 'port to listen on (overrides GITLOOM_PORT)')
  .option('-d, --data-dir <dir>', 'data directory (overrides GITLOOM_DATA_DIR)')
  .action(async (options: { port?: string; dataDir?: string }) => {
    const config = configFrom(options);
    const server = await startServer(config);
    process.stdout.write(banner(config, server));
    // start-up's garbage (migrations, route and schema registration) is collected at once rather
    // than idling in the heap until V8's memory reducer runs; `npm start` passes --expose-gc
    (globalThis as { gc?: () => void }).gc?.();
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      server.app.log.info(`${signal} received, shutting down`);
      server.close().then(
        () => process.exit(0),
        (error: unknown) => {
          server.app.log.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });

const admin = program.command('admin').description('administration commands run against the data directory or database');

admin
  .command('reset-password <login>')
  .description("set a user's password (a generated one, printed, unless --password is given)")
  .option('-d, --data-dir <dir>', 'data directory (overrides GITLOOM_DATA_DIR)')
  .option('--password <password>', 'the new password')
  .action(async (login: string, options: { dataDir?: string; password?: string }) => {
    const config = configFrom(options);
    // the running servers are told of the change (docs/architecture.md#processes-sharing-postgresql)
    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, watchTables: CACHED_TABLES });
    try {
      await migrateToLatest(database.db);
      // the password change's reactions (ending the user's web sessions) run as in the server
      const events = new EventBus(() => undefined);
      registerTransactionHandlers({ events, config });
      const password = await resetPassword({ db: database.db, events }, login, options.password ?? null);
      process.stdout.write(options.password ? `Password of '${login}' changed.\n` : `New password of '${login}': ${password}\n`);
    } finally {
      await database.close();
    }
  });

program
  .command('backup <target>')
  .description(
    'write a backup of the database, repositories, build logs, artifacts and keys while the server may run: an archive when <target> ends in .tar.gz or .tgz, else a directory (docs/backup.md)',
  )
  .option('-d, --data-dir <dir>', 'data directory (overrides GITLOOM_DATA_DIR)')
  .option('--incremental-from <dir>', 'an earlier directory backup whose repository objects are hard-linked: only new objects are copied')
  .action(async (target: string, options: { dataDir?: string; incrementalFrom?: string }) => {
    // backups (tar) are loaded only by their commands, not by `serve`
    const { backup } = await import('./ops/backup.js');
    const manifest = await backup(configFrom(options), target, { incrementalFrom: options.incrementalFrom });
    process.stdout.write(`Backup written to ${target} (${manifest.engine} database, ${manifest.repositories} repositories)\n`);
  });

program
  .command('restore <source>')
  .description(
    'restore a backup (archive or directory) into an empty data directory (and an empty database when GITLOOM_DATABASE_URL is set), reconciled with git',
  )
  .option('-d, --data-dir <dir>', 'data directory (overrides GITLOOM_DATA_DIR)')
  .action(async (source: string, options: { dataDir?: string }) => {
    const config = configFrom(options);
    const { restore } = await import('./ops/backup.js');
    const { manifest, reconciled, remaining } = await restore(config, source);
    process.stdout.write(`Restored ${source} (made ${manifest.createDate}) into ${config.dataDir}\n`);
    process.stdout.write(
      reconciled.length === 0 ? 'Reconciled with git: nothing to reconcile\n' : `Reconciled with git:\n${reconciled.map((l) => `  ${l}\n`).join('')}`,
    );
    if (remaining.length > 0) {
      process.stdout.write(`Still disagreeing with git:\n${remaining.map((f) => `  ${f.message}\n`).join('')}`);
      process.exitCode = 1;
    }
  });

admin
  .command('check')
  .description('compare the database with the repositories (the server may run) without changing anything; exits 1 when they disagree')
  .option('-d, --data-dir <dir>', 'data directory (overrides GITLOOM_DATA_DIR)')
  .action(async (options: { dataDir?: string }) => {
    const config = configFrom(options);
    const { checkConsistency } = await import('./domain/consistency.js');
    const { repositoryPath } = await import('./domain/context.js');
    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
    try {
      const findings = await checkConsistency(database.db, (id) => repositoryPath(config, id), path.join(config.dataDir, 'repos'));
      if (findings.length === 0) {
        process.stdout.write('Database and repositories agree: nothing to reconcile\n');
        return;
      }
      process.stdout.write(`Database and repositories disagree:\n${findings.map((f) => `  ${f.kind}: ${f.message}\n`).join('')}`);
      process.exitCode = 1;
    } finally {
      await database.close();
    }
  });

admin
  .command('rebuild-code-index [project]')
  .description('drop the code search index of a project (by path) or of all projects: the running servers rebuild it from the default branches')
  .option('-d, --data-dir <dir>', 'data directory (overrides GITLOOM_DATA_DIR)')
  .action(async (project: string | undefined, options: { dataDir?: string }) => {
    const config = configFrom(options);
    const { rebuildCodeIndex } = await import('./domain/code-search/index.js');
    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
    try {
      await migrateToLatest(database.db);
      const count = await rebuildCodeIndex(database.db, Date.now(), project);
      process.stdout.write(`Code index of ${count} project${count === 1 ? '' : 's'} dropped: the server rebuilds it in the background\n`);
    } finally {
      await database.close();
    }
  });

admin
  .command('migrate-storage')
  .description(
    'move the build artifacts and Git LFS objects to the bucket of GITLOOM_OBJECT_STORE_URL (--to s3) or back into the data directory with the archived build logs (--to local), each copy verified before its source goes; resumable (README "Object storage")',
  )
  .requiredOption('--to <store>', 's3 or local')
  .option('-d, --data-dir <dir>', 'data directory (overrides GITLOOM_DATA_DIR)')
  .action(async (options: { to: string; dataDir?: string }) => {
    if (options.to !== 's3' && options.to !== 'local') throw new Error(`--to must be s3 or local, got '${options.to}'`);
    const { migrateStorage } = await import('./ops/migrate-storage.js');
    const report = await migrateStorage(configFrom(options), options.to, (line) => process.stdout.write(`${line}\n`));
    process.stdout.write(
      `Storage migrated to ${options.to}: ${report.moved} object(s) moved (${report.bytes} bytes), ${report.resumed} found already copied\n`,
    );
  });

/** The exit status of `gitloom agent` when the server refuses its token. */
const AGENT_REFUSED_EXIT = 3;

program
  .command('agent')
  .description('run a build agent: lease and run jobs of the server\'s remote executors (README "Build agents")')
  .requiredOption('--server <url>', 'the server URL')
  .option('--token <token>', 'the agent token of Administration › Agents (or GITLOOM_AGENT_TOKEN)')
  .option('--name <name>', 'the agent name (default: the host name)')
  .option('--work-dir <dir>', 'where jobs, caches and attributes live', DEFAULT_WORK_DIR)
  .option('--attribute <name=value>', 'an attribute to report (repeatable)', (value: string, all: string[]) => [...all, value], [] as string[])
  .option('--cache-mb <mib>', 'bound of the job caches, MiB', '10240')
  .action(async (options: { server: string; token?: string; name?: string; workDir: string; attribute: string[]; cacheMb: string }) => {
    // loaded only by this command: a server never runs it
    const { runAgentCommand } = await import('./agent/main.js');
    const report = (message: string) => process.stderr.write(`${new Date().toISOString()} ${message}\n`);
    const { AgentFatal } = await import('./agent/agent.js');
    try {
      await runAgentCommand({ ...options, token: options.token ?? process.env.GITLOOM_AGENT_TOKEN ?? '', cacheMb: Number(options.cacheMb) }, report);
    } catch (error) {
      if (!(error instanceof AgentFatal)) throw error;
      // a refused token: restarting does not help (deploy/gitloom-agent.service: RestartPreventExitStatus)
      process.stderr.write(`gitloom agent: ${error.message}\n`);
      process.exit(AGENT_REFUSED_EXIT);
    }
    process.exit(0);
  });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  process.stderr.write(`gitloom: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
