/**
 * `!BuildImageStep` (docs/compatibility.md#builds-images): an image built from a Dockerfile of
 * the job's workspace by `buildah bud` running without privilege — as root of a user namespace
 * mapped onto the job's uid range, with an image storage of the job's own — then loaded into the
 * engine under its tags. Base images are had through the engine (ContainerEngine.ensureImage:
 * logins, TLS policy and progress in one place), so that buildah itself never reaches a registry
 * and never sees a login.
 *
 * Neither Podman's build endpoint nor a privileged buildah is used: with a user-namespace mapping
 * both commit the layers of `RUN` with the host's ids (Podman 4.3, buildah 1.28), which breaks
 * the image; without one, `RUN` would be the host's root.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, readSync } from 'node:fs';
import { chown, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'shell-quote';
import { BUILT_BY_LABEL } from './container-engine.js';
import type { JobContainers } from './container-step.js';
import type { RegistryLogin } from './image-registries.js';
import { openInside, resolveInside } from './job-directory.js';
import { runInProcessGroup } from './process-group.js';
import { findExecutable, JOB_UID_RANGE, SANDBOX_PATH } from './sandbox.js';

/** Build log line when `buildah` is missing. */
export const BUILDAH_UNAVAILABLE = 'Building images needs buildah: install it (Debian: apt-get install buildah)';

/** Largest Dockerfile read, bytes. */
const MAX_DOCKERFILE_BYTES = 1024 * 1024;

/** The `docker build` options of `moreOptions` a build accepts. */
export interface BuildOptions {
  readonly buildArgs: Readonly<Record<string, string>>;
  readonly labels: Readonly<Record<string, string>>;
  readonly target: string | null;
  readonly noCache: boolean;
  readonly platform: string | null;
}

/**
 * Reads a step's `moreOptions`: `--build-arg K=V`, `--label K=V`, `--target T`, `--platform P`
 * and `--no-cache`, each also as `--opt=value`; quoted as in a shell.
 *
 * @throws Error naming an option that is not one of these, or one without its value.
 */
export function parseBuildOptions(text: string | null): BuildOptions {
  const words = (text ?? '').trim() === '' ? [] : parse(text ?? '');
  const options = {
    buildArgs: {} as Record<string, string>,
    labels: {} as Record<string, string>,
    target: null as string | null,
    noCache: false,
    platform: null as string | null,
  };
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    if (typeof word !== 'string') throw new Error(`Build options must be plain words, not shell operators: ${text}`);
    const [name, inline] = word.includes('=') && word.startsWith('--') ? [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)] : [word, null];
    if (name === '--no-cache') {
      options.noCache = true;
      continue;
    }
    const value = inline ?? words[++i];
    if (typeof value !== 'string') throw new Error(`Build option ${name} needs a value`);
    if (name === '--build-arg' || name === '--label') {
      const eq = value.indexOf('=');
      if (eq <= 0) throw new Error(`Build option ${name} needs NAME=VALUE: '${value}'`);
      (name === '--build-arg' ? options.buildArgs : options.labels)[value.slice(0, eq)] = value.slice(eq + 1);
    } else if (name === '--target') options.target = value;
    else if (name === '--platform') options.platform = value;
    else throw new Error(`Build option not supported: ${name} (supported: --build-arg, --label, --target, --platform, --no-cache)`);
  }
  return options;
}

/**
 * The images a Dockerfile builds from: each `FROM` image (after `--platform=…`), and each
 * `COPY --from=` / `RUN --mount=…,from=` that names no earlier stage, with `ARG`s declared
 * before the first `FROM` (their defaults, overridden by `buildArgs`) substituted; `scratch` and
 * stage names are left out.
 */
export function baseImages(dockerfile: string, buildArgs: Readonly<Record<string, string>>): string[] {
  const lines = dockerfile
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const args: Record<string, string> = {};
  const stages = new Set<string>();
  const images: string[] = [];
  let seenFrom = false;
  const substitute = (text: string): string => text.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_, name: string) => buildArgs[name] ?? args[name] ?? '');
  const add = (image: string): void => {
    const resolved = substitute(image);
    if (resolved !== '' && resolved.toLowerCase() !== 'scratch' && !stages.has(resolved.toLowerCase()) && !images.includes(resolved)) images.push(resolved);
  };
  for (const line of lines) {
    const [instruction, ...rest] = line.split(/\s+/);
    const keyword = instruction.toUpperCase();
    if (keyword === 'ARG' && !seenFrom) {
      const [name, value] = rest.join(' ').split('=', 2);
      args[name.trim()] = (value ?? '').trim().replace(/^"(.*)"$/, '$1');
    } else if (keyword === 'FROM') {
      seenFrom = true;
      const words = rest.filter((w) => !w.startsWith('--'));
      if (words[0]) add(words[0]);
      if (words[1]?.toUpperCase() === 'AS' && words[2]) stages.add(words[2].toLowerCase());
    } else if (keyword === 'COPY' || keyword === 'RUN') {
      for (const m of line.matchAll(/--(?:from=|mount=\S*?\bfrom=)([^\s,]+)/g)) if (!/^\d+$/.test(m[1])) add(m[1]);
    }
  }
  return images;
}

/** What {@link buildImage} builds. */
export interface ImageBuildOptions {
  readonly workspace: string;
  /** The job directory: the build's directories are made in it. */
  readonly jobDir: string;
  /** Relative to the workspace; null = the workspace. */
  readonly buildPath: string | null;
  /** Relative to the workspace; null = `Dockerfile` of the build path. */
  readonly dockerfile: string | null;
  readonly tags: readonly string[];
  readonly options: BuildOptions;
  readonly logins: readonly RegistryLogin[];
  /** First host id of the job's range (root of the build's user namespace), or null with the sandbox off (host ids). */
  readonly uid: number | null;
  readonly killGraceMs: number;
  readonly onStdout: (chunk: Buffer) => void;
  readonly onStderr: (chunk: Buffer) => void;
}

/** Result of a build step's part: done, or failed with the reason (null when cancelled). */
type BuildOutcome = { ok: true } | { ok: false; message: string | null };

const launcher = fileURLToPath(new URL('./userns-exec.py', import.meta.url));

/**
 * Builds the image and hands it to the engine under each of `o.tags`. Base images are had
 * through the engine (logins, TLS policy) and exported into the build's directory; `buildah`
 * then runs as root of a user namespace mapped onto the job's uid range (src/ci/userns-exec.py)
 * with an image storage of the job's own, in the job's network namespace, with the job limits and
 * `RUN` isolated by chroot — so neither the build nor what it runs has any privilege on the host —
 * and the image comes back as an archive the engine loads.
 *
 * @throws UnsafePathError for a build path or Dockerfile that is not a real path inside the
 *   workspace; Error when a base image cannot be had.
 */
export async function buildImage(job: JobContainers, o: ImageBuildOptions): Promise<BuildOutcome> {
  const buildah = findExecutable('buildah');
  if (!buildah) return { ok: false, message: BUILDAH_UNAVAILABLE };
  const context = await resolveInside(o.workspace, o.buildPath ?? '', 'Build path');
  if (!context.exists) return { ok: false, message: `Build path does not exist: '${o.buildPath ?? ''}'` };
  const text = readBounded(o.workspace, o.dockerfile ?? path.join(o.buildPath ?? '', 'Dockerfile'));
  const dirs = await buildDirectories(o.jobDir, o.uid);
  // buildah reads the server's copy: nothing the job changes later can swap it
  const dockerfile = path.join(dirs.imports, 'Dockerfile');
  await writeFile(dockerfile, text, { mode: 0o644, flag: 'wx' });
  const buildah$ = (args: string[]): Promise<BuildOutcome> =>
    runBuildah(job, o, buildah, [`--root=${dirs.storage}/root`, `--runroot=${dirs.storage}/run`, '--storage-driver=overlay', ...args], dirs.storage);
  for (const [i, image] of baseImages(text, o.options.buildArgs).entries()) {
    await job.engine.ensureImage(image, { project: job.project, logins: o.logins }, job.log, job.signal);
    const archive = path.join(dirs.imports, `base-${i + 1}.tar`);
    await job.engine.exportImage(image, archive);
    const pulled = await buildah$(['pull', '--quiet', `docker-archive:${archive}`]);
    if (!pulled.ok) return pulled;
  }
  const built = await buildah$(['bud', ...budArguments(job, o, dockerfile, context.path)]);
  if (!built.ok) return built;
  const archive = path.join(dirs.storage, 'image.tar');
  const saved = await buildah$(['push', '--quiet', o.tags[0], `docker-archive:${archive}:${o.tags[0]}`]);
  if (!saved.ok) return saved;
  await job.engine.loadImage(openInside(dirs.storage, 'image.tar', 'Built image'), o.tags);
  return { ok: true };
}

/**
 * The build's directories in the job directory: `imports` (the server's, readable by the build:
 * the Dockerfile and base images) and `image-build` (the build's own: its storage and output).
 */
async function buildDirectories(jobDir: string, uid: number | null): Promise<{ imports: string; storage: string }> {
  const imports = path.join(jobDir, `imports-${randomUUID()}`);
  const storage = path.join(jobDir, `image-build-${randomUUID()}`);
  // Safe: new directories in the job directory, which only the server writes (rule 3)
  await mkdir(imports, { mode: 0o755 });
  await mkdir(storage, { mode: 0o700 });
  if (uid !== null) await chown(storage, uid, uid);
  return { imports, storage };
}

/** Runs `buildah args` in the build's namespaces ({@link launcher}), its output to the step's. */
async function runBuildah(job: JobContainers, o: ImageBuildOptions, buildah: string, args: string[], home: string): Promise<BuildOutcome> {
  const { memoryMb, processes, cpuSeconds } = job.limits;
  const namespaces = [String(o.uid ?? 0), String(JOB_UID_RANGE), job.networkNamespace ?? '-', String(memoryMb), String(processes), String(cpuSeconds)];
  const result = await runInProcessGroup({
    command: 'python3',
    args: [launcher, ...namespaces, buildah, ...args],
    cwd: home,
    env: { PATH: SANDBOX_PATH, HOME: home, XDG_RUNTIME_DIR: path.join(home, 'run'), BUILDAH_ISOLATION: 'chroot' },
    onStdout: o.onStdout,
    onStderr: o.onStderr,
    signal: job.signal,
    killGraceMs: o.killGraceMs,
  });
  if (result.kind === 'spawn-error') return { ok: false, message: `Unable to run buildah: ${result.message}` };
  if (result.aborted) return { ok: false, message: null };
  return result.exitCode === 0
    ? { ok: true }
    : { ok: false, message: `Image build failed (buildah ${args.find((a) => !a.startsWith('--'))} exited with code ${result.exitCode ?? result.signal})` };
}

/** The options of `buildah bud` for a build of `context` with the server's copy of its Dockerfile. */
function budArguments(job: JobContainers, o: ImageBuildOptions, dockerfile: string, context: string): string[] {
  const { buildArgs, labels, target, noCache, platform } = o.options;
  return [
    '--pull=never',
    '--layers=false',
    '--isolation=chroot',
    // buildah's default ulimits are above the job's, which it could not raise to
    `--ulimit=nproc=${job.limits.processes}:${job.limits.processes}`,
    '--ulimit=nofile=1024:4096',
    ...job.dns.map((d) => `--dns=${d}`),
    ...job.hosts.map((h) => `--add-host=${h.name}:${h.address}`),
    ...Object.entries(buildArgs).map(([k, v]) => `--build-arg=${k}=${v}`),
    ...Object.entries(labels).map(([k, v]) => `--label=${k}=${v}`),
    // last: a LABEL of the Dockerfile or --label of the step cannot claim another project
    `--label=${BUILT_BY_LABEL}=${job.project ?? ''}`,
    ...(target ? [`--target=${target}`] : []),
    ...(platform ? [`--platform=${platform}`] : []),
    ...(noCache ? ['--no-cache'] : []),
    ...o.tags.map((t) => `--tag=${t}`),
    `--file=${dockerfile}`,
    context,
  ];
}

/** Reads a Dockerfile of the workspace (rule 2: inside the workspace, a regular file), at most {@link MAX_DOCKERFILE_BYTES}. */
function readBounded(workspace: string, rel: string): string {
  const fd = openInside(workspace, rel, 'Dockerfile');
  try {
    const buffer = Buffer.alloc(MAX_DOCKERFILE_BYTES + 1);
    let size = 0;
    for (let n; size < buffer.length && (n = readSync(fd, buffer, size, buffer.length - size, null)) > 0;) size += n;
    if (size > MAX_DOCKERFILE_BYTES) throw new Error(`Dockerfile is larger than ${MAX_DOCKERFILE_BYTES} bytes: '${rel}'`);
    return buffer.subarray(0, size).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
