/**
 * Container images for tests, built offline: a root file system of Debian's `busybox-static`
 * (its applets as links), an `/etc/os-release` naming the image, imported into the engine
 * through the Docker Engine API (`POST /images/create?fromSrc=-`). Nothing is pulled.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { ContainerEngine } from '../../src/ci/container-engine.js';

const run = promisify(execFile);

/**
 * Links every applet of the host's busybox (`busybox --list`) into `dir` as `<dir>/<applet>` →
 * `target` (the busybox binary: `busybox` beside them in an image, `/bin/busybox` on the host).
 */
export async function linkApplets(dir: string, target: string): Promise<void> {
  const { stdout } = await run('/bin/busybox', ['--list']);
  for (const applet of stdout.split('\n')) {
    if (applet && applet !== 'busybox') await symlink(target, path.join(dir, applet));
  }
}

/**
 * Builds image `name` (e.g. `localhost/gitloom-test/busybox:1`) from busybox-static (every
 * applet in `/bin`) with `/etc/os-release` saying `PRETTY_NAME="<osName>"`, and `files` (path → content) added.
 * Resolves the image name.
 */
export async function buildBusyboxImage(docker: Docker, name: string, osName: string, files: Record<string, string> = {}): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'gitloom-image-'));
  try {
    await mkdir(path.join(root, 'bin'));
    await mkdir(path.join(root, 'etc'));
    await mkdir(path.join(root, 'tmp'), { mode: 0o1777 });
    for (const dir of ['proc', 'sys', 'dev']) await mkdir(path.join(root, dir));
    await mkdir(path.join(root, 'root'), { mode: 0o700 });
    await copyFile('/bin/busybox', path.join(root, 'bin/busybox'));
    await linkApplets(path.join(root, 'bin'), 'busybox');
    await writeFile(path.join(root, 'etc/os-release'), `NAME="${osName}"\nPRETTY_NAME="${osName}"\n`);
    await writeFile(path.join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n');
    await writeFile(path.join(root, 'etc/group'), 'root:x:0:\nnogroup:x:65534:\n');
    for (const [file, content] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(root, file)), { recursive: true });
      // a file named like an applet replaces its link (writing through it would replace busybox)
      await rm(path.join(root, file), { force: true });
      await writeFile(path.join(root, file), content, { mode: 0o755 });
    }
    const { stdout } = await run('tar', ['--numeric-owner', '--owner=0', '--group=0', '-C', root, '-cf', '-', '.'], {
      encoding: 'buffer',
      maxBuffer: 64 * 1024 * 1024,
    });
    // the whole reference as `repo`: Podman's compatible API ignores `tag`
    const stream = await docker.importImage(new PassThrough().end(stdout), { repo: name });
    await new Promise((resolve, reject) => docker.modem.followProgress(stream, (e: Error | null) => (e ? reject(e) : resolve(null))));
    return name;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/**
 * A container engine of the test's own (a Podman service with its state in a new temporary
 * directory) and `images` built in it with {@link buildBusyboxImage} (name → PRETTY_NAME and
 * files). `close` removes the images and stops the service.
 */
export async function testEngine(
  images: Record<string, { osName: string; files?: Record<string, string> }>,
): Promise<{ engine: ContainerEngine; close(): Promise<void> }> {
  const stateDir = await mkdtemp(path.join(os.tmpdir(), 'gitloom-engine-'));
  const connected = await ContainerEngine.connect({ host: null, stateDir, log: () => undefined });
  if ('unavailable' in connected) throw new Error(connected.unavailable);
  for (const [name, image] of Object.entries(images)) await buildBusyboxImage(connected.docker, name, image.osName, image.files);
  return {
    engine: connected,
    async close() {
      for (const name of Object.keys(images)) await connected.docker.getImage(name).remove({ force: true });
      await connected.close();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}
