/**
 * Backup and restore (`gitloom backup <file>`, `gitloom restore <file>`): one
 * gzipped tar archive holding the database, every repository, the build logs and artifacts and
 * the keys of the data directory.
 *
 * Consistency while the server runs: the database is copied first (SQLite's online backup API,
 * or `pg_dump`, each a consistent snapshot), then each repository is mirrored by git itself.
 * Objects are never removed by Gitloom, so every commit and ref the database names is in the
 * copies; a ref moved after the database snapshot is kept at its newer position.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as tar from 'tar';
import type { Config } from '../config.js';
import { migrateToLatest, openDatabase } from '../db/database.js';
import { mirrorRepository, restoreRepository } from '../git/mirror.js';

const run = promisify(execFile);

/** Archive layout version (`manifest.json`). */
const FORMAT = 1;
/** Files of the data directory's top level copied as they are (keys). */
const KEY_FILES = ['secret.key'];

/** What `manifest.json` records. */
export interface Manifest {
  format: number;
  engine: 'sqlite' | 'postgres';
  createDate: string;
  repositories: number;
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(() => true, () => false);
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
 * Writes a backup archive (tar + gzip) of the data directory and database of `config` to
 * `file`, while a server may be running. Returns the manifest. Throws when the database cannot
 * be read, `pg_dump` fails, or git cannot mirror a repository.
 */
export async function backup(config: Config, file: string): Promise<Manifest> {
  return withStaging(async (dir) => {
    const engine = await backupDatabase(config, dir);
    const reposDir = path.join(config.dataDir, 'repos');
    const names = (await exists(reposDir)) ? (await fs.readdir(reposDir)).filter((n) => /^\d+\.git$/.test(n)) : [];
    await fs.mkdir(path.join(dir, 'repos'));
    for (const name of names) await mirrorRepository(path.join(reposDir, name), path.join(dir, 'repos', name));
    const entries = ['manifest.json', 'repos', engine === 'sqlite' ? 'gitloom.db' : 'database.pgdump'];
    const builds = path.join(config.dataDir, 'builds');
    if (await exists(builds)) {
      await fs.cp(builds, path.join(dir, 'builds'), { recursive: true });
      entries.push('builds');
    }
    for (const key of KEY_FILES) {
      if (!(await exists(path.join(config.dataDir, key)))) continue;
      await fs.copyFile(path.join(config.dataDir, key), path.join(dir, key));
      entries.push(key);
    }
    const manifest: Manifest = { format: FORMAT, engine, createDate: new Date().toISOString(), repositories: names.length };
    await fs.writeFile(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    await tar.c({ gzip: true, file: path.resolve(file), cwd: dir, portable: true }, entries);
    return manifest;
  });
}

/**
 * Restores an archive made by {@link backup} into the (empty or absent) data directory of
 * `config` and its database: SQLite archives into `<data dir>/gitloom.db`, PostgreSQL archives
 * into the empty database at `GITLOOM_DATABASE_URL` (with `pg_restore`). Repositories are
 * recreated from their mirrors; pending migrations are applied. Throws, changing nothing, when
 * the data directory is not empty, the target database already has tables, or the archive's
 * engine differs from the configured one.
 */
export async function restore(config: Config, file: string): Promise<Manifest> {
  const present = (await exists(config.dataDir)) ? await fs.readdir(config.dataDir) : [];
  if (present.length > 0) throw new Error(`The data directory ${config.dataDir} is not empty`);
  return withStaging(async (dir) => {
    await tar.x({ file: path.resolve(file), cwd: dir });
    const manifest = JSON.parse(await fs.readFile(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
    if (manifest.format !== FORMAT) throw new Error(`Unsupported backup format ${manifest.format}`);
    const target = config.databaseUrl ? 'postgres' : 'sqlite';
    if (manifest.engine !== target) {
      throw new Error(`The backup holds a ${manifest.engine} database but the server is configured for ${target}`
        + (target === 'postgres' ? ' (unset GITLOOM_DATABASE_URL)' : ' (set GITLOOM_DATABASE_URL)'));
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
    for (const key of KEY_FILES) {
      if (await exists(path.join(dir, key))) await fs.copyFile(path.join(dir, key), path.join(config.dataDir, key));
    }
    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    try {
      await migrateToLatest(database.db);
    } finally {
      await database.close();
    }
    return manifest;
  });
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
