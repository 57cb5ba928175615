/**
 * Health checks: liveness is the process answering; readiness is the database reachable, the
 * data directory writable, every migration applied, and the journal and the outbox keeping up.
 * During a database outage readiness names it (`database`: unavailable since when, and why) and
 * liveness stays up: the process recovers by itself (src/db/availability.ts).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Migrator, sql, type Kysely } from 'kysely';
import { DatabaseUnavailable } from '../db/availability.js';
import { availabilityOf } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { migrations } from '../db/migrations/index.js';
import { journalLag } from '../domain/journal/index.js';
import { outboxLag } from '../domain/outbox/index.js';

/** Outbox lag above which the server reports not ready (10 minutes). */
export const MAX_OUTBOX_LAG_MS = 10 * 60_000;

/** Journal lag (pushes and merges whose reactions have not run) above which the server reports not ready (5 minutes). */
export const MAX_JOURNAL_LAG_MS = 5 * 60_000;

/** One readiness check: whether it passed and what was found. */
export interface Check {
  ok: boolean;
  detail: string;
}

/** The readiness report: `ready` when every check passed. */
export interface Readiness {
  ready: boolean;
  checks: { database: Check; dataDir: Check; migrations: Check; journal: Check; outbox: Check };
}

async function check(run: () => Promise<string>): Promise<Check> {
  try {
    return { ok: true, detail: await run() };
  } catch (error) {
    return { ok: false, detail: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Runs the readiness checks against a server's database (a handle from openDatabase) and data
 * directory. The checks that read the database report `database unreachable` while it is.
 */
export async function readiness(db: Kysely<Database>, dataDir: string): Promise<Readiness> {
  const availability = availabilityOf(db);
  const database = await check(async () => {
    try {
      await sql`select 1`.execute(db);
    } catch (error) {
      if (!(error instanceof DatabaseUnavailable) || availability.downSince === null) throw error;
      throw new Error(`unavailable since ${new Date(availability.downSince).toISOString()} (${availability.cause})`);
    }
    return 'reachable';
  });
  const ifReachable = (run: () => Promise<string>): Promise<Check> =>
    database.ok ? check(run) : Promise.resolve({ ok: false, detail: 'database unreachable' });
  const dataDirCheck = await check(async () => {
    const probe = path.join(dataDir, `.ready-${randomUUID()}`);
    await fs.writeFile(probe, '', { mode: 0o600 });
    await fs.rm(probe);
    return 'writable';
  });
  const migrationsCheck = await ifReachable(async () => {
    const list = await new Migrator({ db, provider: { getMigrations: async () => migrations }, allowUnorderedMigrations: true }).getMigrations();
    const pending = list.filter((m) => m.executedAt === undefined).map((m) => m.name);
    if (pending.length > 0) throw new Error(`pending: ${pending.join(', ')}`);
    return `${list.length} applied`;
  });
  const lagCheck = (measure: (db: Kysely<Database>, now: number) => Promise<number>, maxMs: number): Promise<Check> =>
    ifReachable(async () => {
      const lag = await measure(db, Date.now());
      if (lag > maxMs) throw new Error(`lag ${Math.round(lag / 1000)} s exceeds ${maxMs / 1000} s`);
      return `lag ${Math.round(lag / 1000)} s`;
    });
  const journal = await lagCheck(journalLag, MAX_JOURNAL_LAG_MS);
  const outbox = await lagCheck(outboxLag, MAX_OUTBOX_LAG_MS);
  const checks = { database, dataDir: dataDirCheck, migrations: migrationsCheck, journal, outbox };
  return { ready: Object.values(checks).every((c) => c.ok), checks };
}
