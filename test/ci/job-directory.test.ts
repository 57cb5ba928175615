import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, readFileSync } from 'node:fs';
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chownTree, createJobDirectory, moveInto, openInside, prepareJobsDir, resolveInside, UnsafePathError } from '../../src/ci/job-directory.js';

const JOB_UID = 1_900_065_000;
let tmp: string;
let outside: string;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'gitloom-jobdir-'));
  await chmod(tmp, 0o711);
  outside = path.join(tmp, 'outside');
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret'), 'root only\n', { mode: 0o600 });
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('job directory', () => {
  it('creates the jobs dir searchable by job uids, and refuses a path they cannot reach or others could change', async () => {
    const jobs = path.join(tmp, 'a', 'jobs');
    expect(await prepareJobsDir(jobs, true)).toBe(jobs);
    expect((await stat(path.join(tmp, 'a'))).mode & 0o777).toBe(0o711);
    expect((await stat(jobs)).mode & 0o777).toBe(0o711);
    const dir = await createJobDirectory(path.join(jobs, '7-x'), true);
    expect((await stat(dir.root)).mode & 0o777).toBe(0o711);
    for (const d of [dir.workspace, dir.home, dir.server]) expect((await stat(d)).mode & 0o777).toBe(0o700);
    await expect(createJobDirectory(path.join(jobs, '7-x'), true)).rejects.toThrow('EEXIST');

    const hidden = path.join(tmp, 'private');
    await mkdir(hidden, { mode: 0o700 });
    await chmod(hidden, 0o700);
    await expect(prepareJobsDir(path.join(hidden, 'jobs'), true)).rejects.toThrow(`is not reachable by job uids: ${hidden} has mode 0700`);
    // without job uids (the sandbox off) a private path is fine
    await expect(prepareJobsDir(path.join(hidden, 'jobs'), false)).resolves.toBe(path.join(hidden, 'jobs'));

    const open = path.join(tmp, 'world-writable');
    await mkdir(open);
    await chmod(open, 0o777);
    await expect(prepareJobsDir(path.join(open, 'jobs'), true)).rejects.toThrow(`${open} (owner 0, mode 0777) could be changed by another user`);
    const sticky = path.join(tmp, 'sticky');
    await mkdir(sticky);
    await chmod(sticky, 0o1777);
    await expect(prepareJobsDir(path.join(sticky, 'jobs'), true)).resolves.toBe(path.join(sticky, 'jobs'));
  });

  it('creates a missing jobs dir for jobs starting together, each finding it searchable, leaving nothing else', async () => {
    // the server's and the agent's umask: mkdir creates 0700, the search bits come with a chmod;
    // unserialized, a preparation checking between another's two calls fails in most runs of
    // these 100 rounds
    const umask = process.umask(0o077);
    try {
      for (let round = 0; round < 100; round++) {
        const parent = path.join(tmp, `together-${round}`);
        const jobs = path.join(parent, 'jobs');
        const prepared = await Promise.all(Array.from({ length: 12 }, () => prepareJobsDir(jobs, true)));
        expect(prepared).toEqual(Array(12).fill(jobs));
        expect((await stat(jobs)).mode & 0o777).toBe(0o711);
        expect((await stat(parent)).mode & 0o777).toBe(0o711);
        expect(await readdir(parent)).toEqual(['jobs']);
        expect(await readdir(jobs)).toEqual([]);
      }
    } finally {
      process.umask(umask);
    }
  });

  it('hands a tree to a job uid without following its links', async () => {
    const tree = path.join(tmp, 'tree');
    await mkdir(path.join(tree, 'sub'), { recursive: true });
    await writeFile(path.join(tree, 'sub', 'file'), 'x');
    await symlink(outside, path.join(tree, 'link-to-dir'));
    await symlink(path.join(outside, 'secret'), path.join(tree, 'sub', 'link-to-file'));
    await chownTree(tree, JOB_UID);
    for (const p of ['', 'sub', 'sub/file', 'link-to-dir', 'sub/link-to-file']) expect((await lstat(path.join(tree, p))).uid).toBe(JOB_UID);
    for (const p of [outside, path.join(outside, 'secret')]) expect((await lstat(p)).uid).toBe(0);
  });

  it('resolves a relative path component by component, refusing links and escapes', async () => {
    const root = path.join(tmp, 'resolve');
    await mkdir(path.join(root, 'a', 'b'), { recursive: true });
    await symlink(outside, path.join(root, 'a', 'link'));
    expect(await resolveInside(root, 'a/b/c/d', 'Source path')).toEqual({ path: path.join(root, 'a/b/c/d'), exists: false });
    expect(await resolveInside(root, './a/b', 'Source path')).toEqual({ path: path.join(root, 'a/b'), exists: true });
    await expect(resolveInside(root, 'a/link/x', 'Source path')).rejects.toThrow("Source path must not go through a symbolic link: 'a/link/x'");
    await expect(resolveInside(root, '../outside', 'Source path')).rejects.toThrow(UnsafePathError);
    await expect(resolveInside(root, '/etc', 'Source path')).rejects.toThrow('must be a relative path inside the workspace');
  });

  it('opens only regular files whose real path stays inside the root, a FIFO included', async () => {
    const root = path.join(tmp, 'open');
    await mkdir(root);
    await writeFile(path.join(root, 'file'), 'inside\n');
    await symlink('file', path.join(root, 'alias'));
    await symlink(path.join(outside, 'secret'), path.join(root, 'escape'));
    execFileSync('mkfifo', [path.join(root, 'fifo')]);
    const fd = openInside(root, 'alias', 'File');
    expect(readFileSync(fd, 'utf8')).toBe('inside\n');
    closeSync(fd);
    expect(() => openInside(root, 'escape', 'File')).toThrow("File points outside the workspace: 'escape'");
    expect(() => openInside(root, 'fifo', 'File')).toThrow("File is not a regular file: 'fifo'");
    expect(() => openInside(root, 'missing', 'File')).toThrow('ENOENT');
  });

  it('moves a server-made tree into the workspace, merging real directories and refusing every clash before moving anything', async () => {
    const workspace = path.join(tmp, 'ws');
    await mkdir(path.join(workspace, 'src'), { recursive: true });
    await writeFile(path.join(workspace, 'src', 'mine.txt'), 'mine');
    const staging = path.join(tmp, 'staging');
    await mkdir(path.join(staging, 'src'), { recursive: true });
    await writeFile(path.join(staging, 'src', 'theirs.txt'), 'theirs');
    await writeFile(path.join(staging, 'top.txt'), 'top');
    await moveInto(staging, workspace);
    expect(await readFile(path.join(workspace, 'src', 'mine.txt'), 'utf8')).toBe('mine');
    expect(await readFile(path.join(workspace, 'src', 'theirs.txt'), 'utf8')).toBe('theirs');
    expect(await readFile(path.join(workspace, 'top.txt'), 'utf8')).toBe('top');
    expect(existsSync(staging)).toBe(false);

    await symlink(outside, path.join(workspace, 'planted'));
    const again = path.join(tmp, 'staging-2');
    await mkdir(path.join(again, 'planted'), { recursive: true });
    await writeFile(path.join(again, 'planted', 'x'), 'x');
    await writeFile(path.join(again, 'fresh.txt'), 'fresh');
    await expect(moveInto(again, workspace)).rejects.toThrow("Path is a symbolic link in the workspace: 'planted'");
    expect(existsSync(path.join(outside, 'x'))).toBe(false);
    expect(existsSync(path.join(workspace, 'fresh.txt'))).toBe(false);
  });
});
