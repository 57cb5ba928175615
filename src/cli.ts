#!/usr/bin/env node
import { Command } from 'commander';
import { loadConfig } from './config.js';
import { startServer } from './server.js';

const program = new Command();
program.name('gitloom').description('A self-hosted software forge');

program
  .command('serve')
  .description('start the server (configuration from GITLOOM_* environment variables)')
  .option('-p, --port <port>', 'port to listen on (overrides GITLOOM_PORT)')
  .option('-d, --data-dir <dir>', 'data directory (overrides GITLOOM_DATA_DIR)')
  .action(async (options: { port?: string; dataDir?: string }) => {
    const config = loadConfig(process.env, {
      ...(options.port !== undefined && { port: Number(options.port) }),
      ...(options.dataDir !== undefined && { dataDir: options.dataDir }),
    });
    const server = await startServer(config);
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      server.app.log.info(`${signal} received, shutting down`);
      server.close().then(() => process.exit(0), (error: unknown) => {
        server.app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });

await program.parseAsync(process.argv);
