import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  artifactInfo,
  deleteArtifact,
  normalizeArtifactPath,
  openArtifact,
  parseByteRange,
  resolveArtifactPath,
  writeArtifact,
} from '../../src/ci/artifacts.js';
import { mediaTypeOf } from '../../src/ci/media-types.js';
import { publishArtifacts } from '../../src/ci/publish-artifacts.js';
import { BadRequest, Conflict, NotFound, PayloadTooLarge, RangeNotSatisfiable } from '../../src/errors.js';

let tmp: string;
let root: string;
let n = 0;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'gitloom-artifacts-'));
  await writeFile(path.join(tmp, 'outside.txt'), 'outside');
});

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

beforeEach(async () => {
  root = path.join(tmp, `build-${++n}`, 'artifacts');
});

const put = (p: string, body: string): Promise<{ length: number }> => writeArtifact(root, p, Readable.from([Buffer.from(body)]));

async function rejects(p: Promise<unknown>, cls: new (...a: never[]) => Error, message?: RegExp): Promise<void> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(cls);
  if (message) expect((err as Error).message).toMatch(message);
}

describe('artifact path safety', () => {
  it('normalizes paths', () => {
    expect(normalizeArtifactPath('')).toBe('');
    expect(normalizeArtifactPath('/')).toBe('');
    expect(normalizeArtifactPath('//dist//./a..b.txt')).toBe('dist/a..b.txt');
    expect(normalizeArtifactPath('...')).toBe('...');
  });

  it('refuses .. segments and NUL bytes with 400', () => {
    for (const bad of ['..', '../x', 'a/../../x', 'a/..', '/..', 'a\0b']) {
      expect(() => normalizeArtifactPath(bad)).toThrow(BadRequest);
      expect(() => normalizeArtifactPath(bad)).toThrow('Invalid artifact path');
    }
  });

  it('keeps absolute-looking paths inside the root (leading / is stripped)', async () => {
    await mkdir(root, { recursive: true });
    const resolved = await resolveArtifactPath(root, '/etc/passwd');
    expect(resolved.startsWith(path.join(tmp, `build-${n}`, 'artifacts') + path.sep)).toBe(true);
    expect(await artifactInfo(root, '/etc/passwd')).toBeNull();
    await rejects(openArtifact(root, '/etc/passwd'), NotFound);
  });

  it('allows a..b.txt as a name', async () => {
    await put('dir/a..b.txt', 'dots');
    expect(await text((await openArtifact(root, 'dir/a..b.txt')).stream)).toBe('dots');
  });

  it('refuses symlinks leading outside the root, follows those inside', async () => {
    await put('real/file.txt', 'inside');
    await symlink(path.join(tmp, 'outside.txt'), path.join(root, 'evil-file'));
    await symlink(tmp, path.join(root, 'evil-dir'));
    await symlink(path.join(tmp, 'no-such-target'), path.join(root, 'dangling'));
    await symlink('real', path.join(root, 'good'));
    await rejects(openArtifact(root, 'evil-file'), BadRequest, /symbolic link points outside/);
    await rejects(openArtifact(root, 'evil-dir/outside.txt'), BadRequest);
    await rejects(artifactInfo(root, 'evil-dir'), BadRequest);
    await rejects(put('evil-dir/new.txt', 'x'), BadRequest);
    await rejects(put('dangling', 'x'), BadRequest);
    expect(existsSync(path.join(tmp, 'new.txt'))).toBe(false);
    expect(await text((await openArtifact(root, 'good/file.txt')).stream)).toBe('inside');
    // Listing omits links that lead outside.
    const info = await artifactInfo(root, '');
    expect(info?.['@type'] === 'DirectoryInfo' && info.children?.map((c) => c.path)).toEqual(['good', 'real']);
  });
});

describe('artifact infos', () => {
  it('returns null (204) for a missing path or a missing artifacts dir', async () => {
    expect(await artifactInfo(root, '')).toBeNull();
    await put('a.txt', 'x');
    expect(await artifactInfo(root, 'nope/x.txt')).toBeNull();
  });

  it('gives DirectoryInfo with one level of sorted children and FileInfo with a media type', async () => {
    await put('b.txt', 'bb');
    await put('A.zip', 'a');
    await put('dir/sub/deep.bin', 'deep');
    await put('dir/x.json', '{}');
    await put('cdir/y.txt', 'y');
    await writeFile(path.join(root, '.onedev-directory-version'), '1');
    const when = new Date('2024-05-01T12:00:00.000Z');
    await utimes(path.join(root, 'b.txt'), when, when);

    const rootInfo = await artifactInfo(root, '/');
    expect(rootInfo).toMatchObject({ '@type': 'DirectoryInfo', path: null });
    expect(Object.keys(rootInfo!)).toEqual(['@type', 'path', 'lastModified', 'children']);
    const children = rootInfo!['@type'] === 'DirectoryInfo' ? rootInfo!.children! : [];
    expect(children.map((c) => [c['@type'], c.path])).toEqual([
      ['DirectoryInfo', 'cdir'],
      ['DirectoryInfo', 'dir'],
      ['FileInfo', 'A.zip'],
      ['FileInfo', 'b.txt'],
    ]);
    expect(children[0]).toMatchObject({ children: null });
    expect(children[3]).toEqual({ '@type': 'FileInfo', path: 'b.txt', lastModified: when.getTime(), length: 2, mediaType: null });

    const dir = await artifactInfo(root, 'dir');
    expect(dir?.['@type'] === 'DirectoryInfo' && dir.children?.map((c) => c.path)).toEqual(['dir/sub', 'dir/x.json']);
    expect(dir?.path).toBe('dir');

    const file = await artifactInfo(root, 'dir/x.json');
    expect(file).toMatchObject({ '@type': 'FileInfo', path: 'dir/x.json', length: 2, mediaType: 'application/json' });
    expect(Object.keys(file!)).toEqual(['@type', 'path', 'lastModified', 'length', 'mediaType']);
    expect(await artifactInfo(root, 'dir/sub/deep.bin')).toMatchObject({ mediaType: 'application/octet-stream' });
  });

  it('maps media types by extension', () => {
    expect(mediaTypeOf('x/app.TAR.GZ')).toBe('application/gzip');
    expect(mediaTypeOf('report.html')).toBe('text/html');
    expect(mediaTypeOf('.hidden')).toBe('application/octet-stream');
    expect(mediaTypeOf('noext')).toBe('application/octet-stream');
  });
});

describe('writing and deleting artifacts', () => {
  it('streams to a temp file and renames over an existing file', async () => {
    expect(await put('out/app.bin', 'first')).toEqual({ length: 5 });
    async function* slowly(): AsyncGenerator<Buffer> {
      yield Buffer.from('sec');
      await new Promise((r) => setTimeout(r, 20));
      // Mid-upload the old content is still intact and no temp file is listed.
      expect(await readFile(path.join(root, 'out/app.bin'), 'utf8')).toBe('first');
      const info = await artifactInfo(root, 'out');
      expect(info?.['@type'] === 'DirectoryInfo' && info.children?.map((c) => c.path)).toEqual(['out/app.bin']);
      yield Buffer.from('ond');
    }
    expect(await writeArtifact(root, 'out/app.bin', slowly())).toEqual({ length: 6 });
    expect(await readFile(path.join(root, 'out/app.bin'), 'utf8')).toBe('second');
    expect(await readdir(path.join(root, 'out'))).toEqual(['app.bin']);
  });

  it('enforces a size limit and leaves nothing behind', async () => {
    const err = await writeArtifact(root, 'big.bin', Readable.from([Buffer.alloc(10), Buffer.alloc(10)]), { maxBytes: 15 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PayloadTooLarge);
    expect(err).toMatchObject({ status: 413, code: 'GITLOOM_ERR_ARTIFACT_TOO_LARGE', message: 'Artifact file is larger than the limit of 15 bytes' });
    expect(await readdir(root)).toEqual([]);
  });

  it('publishes workspace files up to the per-file limit, skipping larger ones with a reason', async () => {
    const workspace = path.join(tmp, `workspace-${n}`);
    await mkdir(path.join(workspace, 'dist'), { recursive: true });
    await writeFile(path.join(workspace, 'dist', 'small.txt'), 'x'.repeat(1000));
    await writeFile(path.join(workspace, 'dist', 'big.bin'), 'y'.repeat(1001));
    await symlink(path.join(tmp, 'outside.txt'), path.join(workspace, 'dist', 'out.txt'));
    const skipped: string[] = [];
    const published = await publishArtifacts(workspace, 'dist', '**', root, (rel, reason) => skipped.push(`${rel}: ${reason}`), { maxFileBytes: 1000 });
    expect(published).toEqual(['small.txt']);
    expect(skipped.sort()).toEqual([
      'big.bin: larger than the artifact limit of 1000 bytes',
      'out.txt: symbolic link to a directory or to a file outside the workspace',
    ]);
    expect(await readdir(root)).toEqual(['small.txt']);
    expect(await readFile(path.join(root, 'small.txt'), 'utf8')).toBe('x'.repeat(1000));
    // control: without a limit every regular file is copied
    expect(await publishArtifacts(workspace, 'dist', '**', root)).toEqual(['big.bin', 'small.txt']);
    expect((await readdir(root)).sort()).toEqual(['big.bin', 'small.txt']);
  });

  it('refuses an empty path, a directory target and a file parent', async () => {
    await rejects(put('', 'x'), BadRequest, /required/);
    await put('d/f.txt', 'x');
    await rejects(put('d', 'x'), Conflict, /is a directory/);
    await rejects(put('d/f.txt/g.txt', 'x'), Conflict, /is a file/);
  });

  it('deletes a file, a directory only, or everything', async () => {
    await put('keep/a.txt', 'a');
    await put('gone/b.txt', 'b');
    await put('gone/sub/c.txt', 'c');
    await put('file.txt', 'f');
    await deleteArtifact(root, 'gone');
    expect((await readdir(root)).sort()).toEqual(['file.txt', 'keep']);
    await deleteArtifact(root, 'file.txt');
    expect(await readdir(root)).toEqual(['keep']);
    await rejects(deleteArtifact(root, 'missing.txt'), NotFound, /Unable to find specified artifact \(artifact path: missing.txt\)/);
    await rejects(deleteArtifact(root, '../x'), BadRequest);
    await deleteArtifact(root, '/');
    expect(await readdir(root)).toEqual([]);
    expect(existsSync(root)).toBe(true);
    await deleteArtifact(path.join(tmp, 'never-created'), '');
  });

  it('deletes a symlink, never its target', async () => {
    await put('real/keep.txt', 'k');
    await symlink('real', path.join(root, 'link'));
    await deleteArtifact(root, 'link');
    expect(await readFile(path.join(root, 'real/keep.txt'), 'utf8')).toBe('k');
    expect(existsSync(path.join(root, 'link'))).toBe(false);
  });
});

describe('downloads with byte ranges', () => {
  it('opens a whole file with size and media type', async () => {
    await put('logs/out.txt', '0123456789');
    const a = await openArtifact(root, 'logs/out.txt');
    expect(a).toMatchObject({ size: 10, length: 10, range: null, mediaType: 'text/plain' });
    expect(await text(a.stream)).toBe('0123456789');
  });

  it('serves ranges', async () => {
    await put('r.bin', '0123456789');
    const read = async (header: string): Promise<string> => {
      const a = await openArtifact(root, 'r.bin', parseByteRange(header, 10));
      return `${a.range?.start}-${a.range?.end}/${a.length}:${await text(a.stream)}`;
    };
    expect(await read('bytes=2-5')).toBe('2-5/4:2345');
    expect(await read('bytes=7-')).toBe('7-9/3:789');
    expect(await read('bytes=-3')).toBe('7-9/3:789');
    expect(await read('bytes=8-100')).toBe('8-9/2:89');
    expect(await read('bytes=-100')).toBe('0-9/10:0123456789');
  });

  it('parses Range headers', () => {
    expect(parseByteRange(undefined, 10)).toBeNull();
    expect(parseByteRange('bytes=0-1,4-5', 10)).toBeNull();
    expect(parseByteRange('items=0-1', 10)).toBeNull();
    expect(parseByteRange('bytes=5-2', 10)).toBeNull();
    expect(() => parseByteRange('bytes=10-', 10)).toThrow(RangeNotSatisfiable);
    expect(() => parseByteRange('bytes=-0', 10)).toThrow(RangeNotSatisfiable);
    expect(() => parseByteRange('bytes=0-', 0)).toThrow(RangeNotSatisfiable);
    const e = (() => {
      try {
        parseByteRange('bytes=20-30', 10);
      } catch (err) {
        return err as RangeNotSatisfiable;
      }
    })();
    expect(e?.status).toBe(416);
    expect(e?.size).toBe(10);
  });

  it('refuses directories, missing files, empty paths and ranges past the end', async () => {
    await put('d/x.txt', 'x');
    await rejects(openArtifact(root, 'd'), BadRequest, /not a file/);
    await rejects(openArtifact(root, ''), BadRequest);
    await rejects(openArtifact(root, 'd/missing'), NotFound);
    await rejects(openArtifact(root, 'd/x.txt/deeper'), NotFound);
    await rejects(openArtifact(root, 'd/x.txt', { start: 5, end: 9 }), RangeNotSatisfiable);
  });
});
