import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from './config.js';
import { migrateToLatest, openDatabase } from './db/database.js';
import { bootstrap } from './domain/bootstrap.js';
import { BuildScheduler } from './domain/builds/scheduler.js';
import { EventBus } from './domain/events.js';
import { registerEventHandlers } from './domain/event-handlers.js';
import { buildApp, type App } from './http/app.js';
import type { Services } from './services.js';

export interface RunningServer {
  app: App;
  services: Services;
  /** The URL the server listens on, e.g. `http://127.0.0.1:6610`. */
  url: string;
  /** Stops accepting requests, finishes background work and closes the database. */
  close(): Promise<void>;
}

/**
 * Starts Gitloom: opens the database (SQLite in the data dir, or PostgreSQL), applies
 * migrations, creates first-boot records (printing a generated administrator password once),
 * builds the HTTP app and listens. `options.logger` false silences logs (tests).
 */
export async function startServer(config: Config, options: { logger?: boolean } = {}): Promise<RunningServer> {
  await fs.mkdir(path.join(config.dataDir, 'repos'), { recursive: true });
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const logger = options.logger === false ? false : { level: config.logLevel };
  let app: App | undefined;
  try {
    await migrateToLatest(database.db);
    const events = new EventBus((error, kind) => app?.log.error({ err: error, event: kind }, 'event handler failed'));
    const services: Services = { db: database.db, engine: database.engine, config, events };
    app = await buildApp(services, { logger });
    const generated = await bootstrap(database.db, database.engine, config, Date.now());
    if (generated) {
      app.log.warn(`Created administrator '${config.initialUser.name}' with generated password: ${generated}`);
      if (options.logger === false) process.stderr.write(`Administrator '${config.initialUser.name}' password: ${generated}\n`);
    }
    registerEventHandlers(services);
    const address = await app.listen({ port: config.port, host: config.host });
    const url = address.replace('[::]', '127.0.0.1').replace('0.0.0.0', '127.0.0.1');
    const running = app;
    const scheduler = new BuildScheduler(services, { onError: (error) => running.log.error({ err: error }, 'build scheduler failed') });
    await scheduler.start();
    return {
      app: running,
      services,
      url,
      async close() {
        await running.close();
        await scheduler.stop();
        await events.idle();
        await database.close();
      },
    };
  } catch (error) {
    await app?.close();
    await database.close();
    throw error;
  }
}
