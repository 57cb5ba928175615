/**
 * Archives kept by commit (src/domain/repositories/archive-cache.ts) on a temp data dir: what is
 * kept, what is not (larger than the bound, a failed or cut stream), and eviction by last use.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { ifMissing } from '../../src/ci/job-directory.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { evictArchives, openArchive } from '../../src/domain/repositories/archive-cache.js';

const COMMIT = 'a'.repeat(40);

/** Waits (up to 2 s) for `dir` to hold nothing: a temp file goes once the stream failed or closed. */
async function emptied(dir: string): Promise<string[]> {
  for (let i = 0; i < 200 && (await fs.readdir(dir)).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  return fs.readdir(dir);
}

/** Waits (up to 2 s) for `file` to exist: an archive is renamed to its name once flushed, after its download ended. */
async function kept(file: string): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    if (await fs.stat(file).catch(ifMissing(null))) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return false;
}

async function read(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe('archives kept by commit', () => {
  let dataDir: string;
  beforeAll(async () => {
    const home = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-archive-cache-'));
    await fs.chmod(home, 0o700);
    dataDir = path.join(home, 'data');
  });
  afterAll(async () => {
    await fs.rm(path.dirname(dataDir), { recursive: true, force: true });
  });
  const dir = (projectId: number) => path.join(dataDir, 'archives', String(projectId));
  /** Why archives were not kept: nothing, unless a test's disk refuses. */
  const keepErrors: Error[] = [];
  const onKeepError = (error: Error) => keepErrors.push(error);
  afterEach(() => {
    expect(keepErrors.splice(0)).toEqual([]);
  });
  const bytes = (n: number, fill: number) => Buffer.alloc(n, fill);

  it('keeps what streamed whole, and reads it afterwards without making it again', async () => {
    const config = { dataDir, archiveCacheBytes: 1024 };
    const made = await read(await openArchive(config, 1, COMMIT, 'zip', () => Readable.from([bytes(300, 1), bytes(300, 2)]), onKeepError));
    expect(made.length).toBe(600);
    expect(await kept(path.join(dir(1), `${COMMIT}.zip`))).toBe(true);
    let madeAgain = false;
    const again = await read(
      await openArchive(
        config,
        1,
        COMMIT,
        'zip',
        () => {
          madeAgain = true;
          return Readable.from([]);
        },
        onKeepError,
      ),
    );
    expect(again.equals(made)).toBe(true);
    expect(madeAgain).toBe(false);
    expect(await fs.readdir(dir(1))).toEqual([`${COMMIT}.zip`]);
  });

  it('streams an archive larger than the bound whole and keeps nothing of it', async () => {
    const config = { dataDir, archiveCacheBytes: 1024 };
    const made = await read(await openArchive(config, 2, COMMIT, 'zip', () => Readable.from([bytes(700, 1), bytes(700, 2)]), onKeepError));
    expect(made.length).toBe(1400);
    expect(await fs.readdir(dir(2))).toEqual([]);
  });

  it('keeps nothing of a stream that fails, or that its reader destroys', async () => {
    const config = { dataDir, archiveCacheBytes: 1024 };
    async function* failing() {
      yield bytes(100, 1);
      throw new Error('git archive failed');
    }
    await expect(read(await openArchive(config, 3, COMMIT, 'zip', () => Readable.from(failing()), onKeepError))).rejects.toThrow('git archive failed');
    expect(await emptied(dir(3))).toEqual([]);

    let sourceDestroyed = false;
    const source = new Readable({ read() {} });
    source.on('close', () => (sourceDestroyed = true));
    source.push(bytes(100, 1));
    const stream = await openArchive(config, 3, COMMIT, 'tar.gz', () => source, onKeepError);
    await new Promise((resolve) => stream.once('data', resolve));
    stream.destroy();
    await new Promise((resolve) => stream.once('close', resolve));
    expect(await emptied(dir(3))).toEqual([]);
    expect(sourceDestroyed).toBe(true);
  });

  it('streams the archive whole when the disk refuses the copy, and says why', async () => {
    await fs.mkdir(path.join(dataDir, 'archives'), { recursive: true });
    await fs.writeFile(dir(6), 'not a directory');
    const made = await read(await openArchive({ dataDir, archiveCacheBytes: 1024 }, 6, COMMIT, 'zip', () => Readable.from([bytes(300, 1)]), onKeepError));
    expect(made.length).toBe(300);
    expect(keepErrors.splice(0).map((e) => (e as NodeJS.ErrnoException).code)).toEqual(['EEXIST']);
    await fs.rm(dir(6));
  });

  it('evicts the least recently used archives, over all projects, until all fit the bound', async () => {
    const root = path.join(dataDir, 'archives');
    await fs.rm(root, { recursive: true, force: true });
    const now = Date.now();
    const files: [number, string, number][] = [
      [4, `${'1'.repeat(40)}.zip`, 5],
      [4, `${'2'.repeat(40)}.zip`, 3],
      [5, `${'3'.repeat(40)}.tar.gz`, 4],
      [5, `${'4'.repeat(40)}.zip`, 1],
    ];
    for (const [projectId, name, hoursAgo] of files) {
      await fs.mkdir(dir(projectId), { recursive: true });
      await fs.writeFile(path.join(dir(projectId), name), bytes(400, 0));
      const used = new Date(now - hoursAgo * 60 * 60 * 1000);
      await fs.utimes(path.join(dir(projectId), name), used, used);
    }
    await evictArchives({ dataDir, archiveCacheBytes: 1000 });
    expect(await fs.readdir(dir(4))).toEqual([`${'2'.repeat(40)}.zip`]);
    expect(await fs.readdir(dir(5))).toEqual([`${'4'.repeat(40)}.zip`]);
  });
});
