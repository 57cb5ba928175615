/**
 * Job caches as tar archives (docs/compatibility.md#builds-caches "In object storage"): packing
 * never follows a link the job wrote and leaves out what a cache may not hold; extraction refuses
 * an archive a Gitloom packer would not make, before writing anything outside its directory.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import * as tar from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CacheArchiveRefused, CacheTooLarge, extractTree, packTree } from '../../src/ci/cache-archives.js';

let tmp: string;
let caseNo = 0;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'gitloom-cache-archives-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const collect = async (stream: AsyncIterable<Uint8Array>): Promise<Buffer> => {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
};

/** A tar archive of `entries`, made with tar-stream as any tool could make it. */
async function archiveOf(entries: Array<Partial<tar.Header> & { name: string; content?: string }>): Promise<Buffer> {
  const pack = tar.pack();
  const done = collect(pack as AsyncIterable<Uint8Array>);
  for (const { content, ...header } of entries) {
    await new Promise<void>((resolve, reject) => pack.entry(header, content ?? '', (error) => (error ? reject(error) : resolve())));
  }
  pack.finalize();
  return done;
}

/** A fresh case directory holding `into` (not made) and `outside/` (made, empty). */
async function givenCase(): Promise<{ into: string; outside: string }> {
  const dir = path.join(tmp, `case-${++caseNo}`);
  await mkdir(path.join(dir, 'outside'), { recursive: true });
  return { into: path.join(dir, 'stage', 'into'), outside: path.join(dir, 'outside') };
}

describe('cache archives', () => {
  it('pack directories, files and inside links, leave out escaping links and FIFOs, and extract the same tree', async () => {
    const { into } = await givenCase();
    const from = path.join(tmp, `tree-${caseNo}`);
    await mkdir(path.join(from, 'a', 'b'), { recursive: true });
    await writeFile(path.join(from, 'a', 'b', 'f.txt'), 'hello');
    await writeFile(path.join(from, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
    await writeFile(path.join(from, 'big.bin'), Buffer.alloc(3 * 1024 * 1024, 7));
    await symlink('b/f.txt', path.join(from, 'a', 'inside'));
    await symlink('/etc/passwd', path.join(from, 'absolute'));
    await symlink('../../outside', path.join(from, 'a', 'escaping'));
    execFileSync('mkfifo', [path.join(from, 'fifo')]);
    await mkdir(path.dirname(into), { recursive: true });
    await extractTree(Readable.from(packTree(from, 100 * 1024 * 1024)), into);
    expect((await readdir(into)).sort()).toEqual(['a', 'big.bin', 'run.sh']);
    expect((await readdir(path.join(into, 'a'))).sort()).toEqual(['b', 'inside']);
    expect(await readlink(path.join(into, 'a', 'inside'))).toBe('b/f.txt');
    expect(await readFile(path.join(into, 'a', 'inside'), 'utf8')).toBe('hello');
    expect((await readFile(path.join(into, 'big.bin'))).length).toBe(3 * 1024 * 1024);
    expect(
      execFileSync('stat', ['-c', '%a', path.join(into, 'run.sh')])
        .toString()
        .trim(),
    ).toBe('755');
  });

  it('stops packing once the archive passes its bound', async () => {
    const from = path.join(tmp, `bounded-${++caseNo}`);
    await mkdir(from);
    await writeFile(path.join(from, 'f'), Buffer.alloc(64 * 1024));
    await expect(collect(packTree(from, 10_000))).rejects.toBeInstanceOf(CacheTooLarge);
  });

  const refusals: Array<[string, Array<Partial<tar.Header> & { name: string; content?: string }>]> = [
    [
      'a `..` segment',
      [
        { name: 'ok.txt', content: 'fine' },
        { name: '../x', content: 'escaped' },
      ],
    ],
    ['an absolute name', [{ name: 'OUTSIDE/abs.txt', content: 'escaped' }]],
    ['a link leaving the cache', [{ name: 'up', type: 'symlink', linkname: '../outside' }]],
    ['an absolute link', [{ name: 'abs', type: 'symlink', linkname: 'OUTSIDE' }]],
    [
      'a write through a link',
      [
        { name: 'd/', type: 'directory' },
        { name: 'd/l', type: 'symlink', linkname: '..' },
        { name: 'd/l/x', content: 'through' },
      ],
    ],
    ['a hard link', [{ name: 'h', type: 'link', linkname: 'OUTSIDE/target' }]],
    ['a device', [{ name: 'null', type: 'character-device', devmajor: 1, devminor: 3 }]],
    [
      'a duplicate',
      [
        { name: 'twice', content: 'one' },
        { name: 'twice', content: 'two' },
      ],
    ],
  ];
  it.each(refusals)('refuse an archive with %s, writing nothing outside and keeping nothing', async (_what, entries) => {
    const { into, outside } = await givenCase();
    await writeFile(path.join(outside, 'target'), 'host file');
    const archive = await archiveOf(
      entries.map((e) => ({ ...e, name: e.name.replace('OUTSIDE', outside), ...(e.linkname && { linkname: e.linkname.replace('OUTSIDE', outside) }) })),
    );
    await mkdir(path.dirname(into), { recursive: true });
    const refused = await extractTree(Readable.from([archive]), into).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(Error);
    if (!(refused as NodeJS.ErrnoException).code) expect(refused).toBeInstanceOf(CacheArchiveRefused);
    expect(existsSync(into)).toBe(false);
    expect(await readdir(outside)).toEqual(['target']);
    expect(await readFile(path.join(outside, 'target'), 'utf8')).toBe('host file');
    expect(await readdir(path.dirname(into))).toEqual([]);
    expect(existsSync(path.join(path.dirname(into), '..', 'x'))).toBe(false);
  });
});
