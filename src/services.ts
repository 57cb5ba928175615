import path from 'node:path';
import type { Kysely } from 'kysely';
import type { Config } from './config.js';
import type { Engine } from './db/database.js';
import type { Database } from './db/schema.js';
import type { Actor, Context } from './domain/context.js';
import type { EventBus } from './domain/events.js';

/** Process-wide dependencies, created once by the server and shared by every request. */
export interface Services {
  db: Kysely<Database>;
  engine: Engine;
  config: Config;
  events: EventBus;
}

/** Absolute path of a project's bare repository: `<data dir>/repos/<projectId>.git`. */
export function repositoryPath(config: Config, projectId: number): string {
  return path.join(config.dataDir, 'repos', `${projectId}.git`);
}

/** A domain Context for one actor (a request, or background work as the system user). */
export function createContext(services: Services, actor: Actor): Context {
  return {
    db: services.db,
    engine: services.engine,
    config: services.config,
    events: services.events,
    actor,
    now: () => Date.now(),
    repoPath: (projectId) => repositoryPath(services.config, projectId),
  };
}
