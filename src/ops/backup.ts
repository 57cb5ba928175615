/**
 * Backup and restore (docs/backup.md; `gitloom backup <target>`, `gitloom restore <source>`): the
 * database, every repository, the build logs and artifacts, the uploaded avatars and the keys of the data directory
 * (the secret key, the SSH host keys),
 * as a directory or that directory in one gzipped tar archive.
 *
 * Consistency while the server runs (docs/backup.md "Consistency"): the database is copied first
 * (SQLite's online backup API, or `pg_dump`, each a consistent snapshot), then each repository is
 * mirrored by git itself, then the ref-change journal entries written meanwhile are recorded in
 * `journal.json`. Objects are never removed by Gitloom, so every commit the database names is in
 * the copies; a ref moved after the database snapshot is in git but not in the database, and
 * restore reconciles it (src/domain/consistency.ts): the change is journaled, and the server
 * reacts to it on its first start as it would to the push.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as tar from 'tar';
import type { Config } from '../config.js';
import { migrateToLatest, openDatabase } from '../db/database.js';
import { findInconsistencies, reconcile, type Finding, type JournalEntry } from '../domain/consistency.js';
import { createContext, systemActor } from '../domain/context.js';
import { registerTransactionHandlers } from '../domain/event-handlers.js';
import { EventBus } from '../domain/events.js';
import { appliedJournalEntriesSince, recoverRefIntents } from '../domain/journal/index.js';
import { mirrorIncrementally, mirrorRepository, restoreRepository } from '../git/mirror.js';

const run = promisify(execFile);

/** Backup layout version (`manifest.json`): 2 added `journal.json`; 1 is still restored. */
const FORMAT = 2;
/** Files of the data directory copied as they are (keys): the secret key, the SSH host keys. */
const KEY_FILES = ['secret.key', 'ssh/ssh_host_ed25519_key', 'ssh/ssh_host_rsa_key'];

/** Copies the key files found in `from` to `to`, making their directories. */
async function copyKeys(from: string, to: string): Promise<void> {
  for (const key of KEY_FILES) {
    if (!(await exists(path.join(from, key)))) continue;
    await fs.mkdir(path.dirname(path.join(to, key)), { recursive: true });
    await fs.copyFile(path.join(from, key), path.join(to, key));
  }
}
/**
 * `journal.json` holds the entries written from this long before the database copy began: an
 * entry is dated when it is inserted, a moment before it commits.
 */
const JOURNAL_MARGIN_MS = 10 * 60 * 1000;

/** What `manifest.json` records. */
export interface Manifest {
  format: number;
  engine: 'sqlite' | 'postgres';
  createDate: string;
  repositories: number;
  /** The directory backup whose repository objects this one hard-links (format 2). */
  incrementalFrom?: string | null;
}

/** What {@link restore} did. */
export interface RestoreReport {
  manifest: Manifest;
  /** One line per repair of the restored copy (start-up recovery of intents, then reconciliation). */
  reconciled: string[];
  /** What still disagrees after reconciliation (docs/backup.md "Restore"); empty normally. */
  remaining: Finding[];
}

/** Whether a backup target names an archive (`.tar.gz`, `.tgz`) rather than a directory. */
export function isArchive(target: string): boolean {
  return /\.(tar\.gz|tgz)$/.test(target);
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

async function withStaging<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-backup-'));
  try {
    return await fn(dir);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** Copies the database into `dir`: `gitloom.db` (SQLite online backup) or `database.pgdump` (pg_dump, custom format). */
async function backupDatabase(config: Config, dir: string): Promise<'sqlite' | 'postgres'> {
  if (config.databaseUrl) {
    await run('pg_dump', ['--format=custom', '--no-owner', '--no-privileges', `--file=${path.join(dir, 'database.pgdump')}`, `--dbname=${config.databaseUrl}`]);
    return 'postgres';
  }
  const source = path.join(config.dataDir, 'gitloom.db');
  if (!(await exists(source))) throw new Error(`No database at ${source}`);
  const { default: SQLite } = await import('better-sqlite3');
  const db = new SQLite(source, { readonly: true, fileMustExist: true });
  try {
    await db.backup(path.join(dir, 'gitloom.db'));
  } finally {
    db.close();
  }
  return 'sqlite';
}

/**
 * Writes a backup of the data directory and database of `config`, while a server may be running:
 * to `target` as an archive (tar + gzip) when it ends in `.tar.gz` or `.tgz`, else as a directory
 * (absent or empty; written beside it and renamed into place when complete). With
 * `incrementalFrom` (directory backups only) the repositories are copied incrementally over that
 * earlier directory backup's (docs/backup.md "Incremental backups"). Returns the manifest.
 *
 * @throws Error when the target directory is not empty, `incrementalFrom` is given for an archive
 *   or is no backup, the database cannot be read, `pg_dump` fails, or git cannot copy a repository.
 */
export async function backup(config: Config, target: string, options: { incrementalFrom?: string } = {}): Promise<Manifest> {
  const previous = options.incrementalFrom === undefined ? null : path.resolve(options.incrementalFrom);
  if (isArchive(target)) {
    if (previous !== null) throw new Error('An incremental backup is a directory: give a target not ending in .tar.gz');
    return withStaging(async (dir) => {
      const manifest = await writeBackup(config, dir, null);
      await tar.c({ gzip: true, file: path.resolve(target), cwd: dir, portable: true }, await fs.readdir(dir));
      return manifest;
    });
  }
  if (previous !== null && !(await exists(path.join(previous, 'manifest.json')))) throw new Error(`${previous} is no directory backup`);
  const dest = path.resolve(target);
  if ((await exists(dest)) && (await fs.readdir(dest)).length > 0) throw new Error(`The backup directory ${dest} is not empty`);
  const partial = `${dest}.partial-${randomBytes(4).toString('hex')}`;
  await fs.mkdir(partial, { mode: 0o700 });
  try {
    const manifest = await writeBackup(config, partial, previous);
    await fs.rm(dest, { recursive: true, force: true });
    await fs.rename(partial, dest);
    return manifest;
  } catch (error) {
    await fs.rm(partial, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Copies the Git LFS store `from` (`<aa>/<bb>/<oid>`, uploads in flight under `tmp/` left out)
 * to `to`. Objects never change, so an object the earlier backup `previous` holds is hard-linked
 * from it (copied when the link fails, e.g. across file systems). The database is copied first:
 * every object it references was stored before its row committed, so it is here.
 */
async function copyLfsObjects(from: string, to: string, previous: string | null): Promise<void> {
  if (!(await exists(from))) return;
  for (const entry of await fs.readdir(from, { recursive: true, withFileTypes: true })) {
    const rel = path.relative(from, path.join(entry.parentPath, entry.name));
    if (!entry.isFile() || !/^[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}$/.test(rel)) continue;
    await fs.mkdir(path.dirname(path.join(to, rel)), { recursive: true, mode: 0o700 });
    const earlier = previous === null ? null : path.join(previous, rel);
    if (earlier !== null && (await exists(earlier))) {
      try {
        await fs.link(earlier, path.join(to, rel));
        continue;
      } catch (error) {
        if (!['EXDEV', 'EPERM', 'EMLINK'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
      }
    }
    await fs.copyFile(path.join(from, rel), path.join(to, rel));
  }
}

/** Writes the backup's files into the empty directory `dir` (docs/backup.md "Format"). */
async function writeBackup(config: Config, dir: string, previous: string | null): Promise<Manifest> {
  const since = Date.now() - JOURNAL_MARGIN_MS;
  const engine = await backupDatabase(config, dir);
  const reposDir = path.join(config.dataDir, 'repos');
  // by project id: the oldest first
  const names = (await exists(reposDir))
    ? (await fs.readdir(reposDir)).filter((n) => /^\d+\.git$/.test(n)).sort((a, b) => parseInt(a, 10) - parseInt(b, 10))
    : [];
  await fs.mkdir(path.join(dir, 'repos'));
  for (const name of names) {
    const earlier = previous === null ? null : path.join(previous, 'repos', name);
    if (earlier !== null && (await exists(earlier))) await mirrorIncrementally(path.join(reposDir, name), earlier, path.join(dir, 'repos', name));
    else await mirrorRepository(path.join(reposDir, name), path.join(dir, 'repos', name));
  }
  await fs.writeFile(path.join(dir, 'journal.json'), `${JSON.stringify(await journalSince(config, since))}\n`);
  const builds = path.join(config.dataDir, 'builds');
  if (await exists(builds)) await fs.cp(builds, path.join(dir, 'builds'), { recursive: true });
  const avatars = path.join(config.dataDir, 'avatars');
  if (await exists(avatars)) await fs.cp(avatars, path.join(dir, 'avatars'), { recursive: true });
  await copyLfsObjects(path.join(config.dataDir, 'lfs'), path.join(dir, 'lfs'), previous === null ? null : path.join(previous, 'lfs'));
  await copyKeys(config.dataDir, dir);
  const manifest: Manifest = { format: FORMAT, engine, createDate: new Date().toISOString(), repositories: names.length, incrementalFrom: previous };
  await fs.writeFile(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/** The applied journal entries dated `since` or later, read from the live database. */
async function journalSince(config: Config, since: number): Promise<JournalEntry[]> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
  try {
    return await appliedJournalEntriesSince(database.db, since);
  } finally {
    await database.close();
  }
}

/**
 * Restores a backup made by {@link backup} — an archive, or a backup directory — into the (empty
 * or absent) data directory of `config` and its database: SQLite backups into
 * `<data dir>/gitloom.db`, PostgreSQL backups into the empty database at `GITLOOM_DATABASE_URL`
 * (with `pg_restore`). Repositories are recreated from their mirrors; pending migrations are
 * applied; then the copy is reconciled with git (docs/backup.md "Restore": interrupted ref
 * changes recovered, ref changes the database missed journaled, pull request refs reset).
 *
 * @throws Error, changing nothing, when the data directory is not empty, the target database
 *   already has tables, or the backup's engine differs from the configured one.
 */
export async function restore(config: Config, source: string): Promise<RestoreReport> {
  const present = (await exists(config.dataDir)) ? await fs.readdir(config.dataDir) : [];
  if (present.length > 0) throw new Error(`The data directory ${config.dataDir} is not empty`);
  if ((await fs.stat(source)).isDirectory()) return restoreFrom(config, path.resolve(source));
  return withStaging(async (dir) => {
    await tar.x({ file: path.resolve(source), cwd: dir });
    return restoreFrom(config, dir);
  });
}

async function restoreFrom(config: Config, dir: string): Promise<RestoreReport> {
  const manifest = JSON.parse(await fs.readFile(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
  if (manifest.format !== 1 && manifest.format !== FORMAT) throw new Error(`Unsupported backup format ${manifest.format}`);
  const target = config.databaseUrl ? 'postgres' : 'sqlite';
  if (manifest.engine !== target) {
    throw new Error(
      `The backup holds a ${manifest.engine} database but the server is configured for ${target}` +
        (target === 'postgres' ? ' (unset GITLOOM_DATABASE_URL)' : ' (set GITLOOM_DATABASE_URL)'),
    );
  }
  if (config.databaseUrl) await assertEmptyPostgres(config.databaseUrl);
  await fs.mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  if (config.databaseUrl) {
    await run('pg_restore', ['--no-owner', '--no-privileges', '--exit-on-error', `--dbname=${config.databaseUrl}`, path.join(dir, 'database.pgdump')]);
  } else {
    await fs.copyFile(path.join(dir, 'gitloom.db'), path.join(config.dataDir, 'gitloom.db'));
    await fs.chmod(path.join(config.dataDir, 'gitloom.db'), 0o600);
  }
  const reposDir = path.join(config.dataDir, 'repos');
  await fs.mkdir(reposDir, { recursive: true, mode: 0o700 });
  for (const name of await fs.readdir(path.join(dir, 'repos'))) {
    await restoreRepository(path.join(dir, 'repos', name), path.join(reposDir, name));
  }
  if (await exists(path.join(dir, 'builds'))) await fs.cp(path.join(dir, 'builds'), path.join(config.dataDir, 'builds'), { recursive: true });
  if (await exists(path.join(dir, 'avatars'))) await fs.cp(path.join(dir, 'avatars'), path.join(config.dataDir, 'avatars'), { recursive: true });
  if (await exists(path.join(dir, 'lfs'))) await fs.cp(path.join(dir, 'lfs'), path.join(config.dataDir, 'lfs'), { recursive: true });
  await copyKeys(dir, config.dataDir);
  const journal = (await exists(path.join(dir, 'journal.json')))
    ? (JSON.parse(await fs.readFile(path.join(dir, 'journal.json'), 'utf8')) as JournalEntry[])
    : [];
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await migrateToLatest(database.db);
    // no listeners: the restored copy's server reacts to what is journaled here when it starts
    const events = new EventBus(() => undefined);
    registerTransactionHandlers({ events, config });
    const ctx = createContext({ db: database.db, config, events }, systemActor);
    const reconciled: string[] = [];
    await recoverRefIntents(ctx, (line) => reconciled.push(line), { alone: true });
    reconciled.push(...(await reconcile(ctx, await findInconsistencies(database.db, ctx.repoPath, reposDir, journal))));
    const remaining = await findInconsistencies(database.db, ctx.repoPath, reposDir);
    return { manifest, reconciled, remaining };
  } finally {
    await database.close();
  }
}
async function assertEmptyPostgres(url: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(`select count(*)::int as n from information_schema.tables where table_schema = 'public'`);
    if (rows[0].n > 0) throw new Error('The target PostgreSQL database is not empty');
  } finally {
    await client.end();
  }
}
