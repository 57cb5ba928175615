/**
 * The job sandbox (CONTRACT §11 "Builds are untrusted code"): every command step runs inside
 * bubblewrap, started through `prlimit`, as a host uid of its own.
 *
 * What a step sees: new user, PID, IPC, UTS, network and mount namespaces; the host's `/usr`,
 * `/bin`, `/sbin`, `/lib*` and `/etc` read-only (secret files of `/etc` hidden); a fresh
 * `/proc`, `/dev` and private `/tmp`; its workspace and the job's scratch directory (step
 * scripts, `HOME`) read-write, at the same paths as on the host. Nothing else of the host — the
 * data dir, the database, other repositories, the server's home, the server's environment or
 * processes — is mounted or visible.
 *
 * Identity: bwrap runs as an unprivileged host uid/gid taken from a pool
 * (`GITLOOM_JOB_UID_BASE` … + 65535), one per running job, and keeps that uid inside the user
 * namespace. A dedicated non-root uid is what makes `RLIMIT_NPROC` count: the kernel exempts
 * uid 0 from it, and counts per real uid across namespaces. The workspace and the scratch
 * directory are handed to that uid (`chown`), everything else stays root's and unreadable.
 *
 * Lifetime: `--die-with-parent` ties the sandbox to the bwrap process, whose parent is the
 * server; the sandbox's PID namespace dies with its init, so every process a step started in the
 * background ends with the step, and a crash of the server takes its jobs down with it.
 *
 * Network: `none` (only a private loopback) or `outward` through `slirp4netns` with
 * `--disable-host-loopback`: bwrap reports the sandbox's pid on `--info-fd`, slirp4netns attaches
 * a tap device to its network namespace, and `--block-fd` holds the step until that is done. The
 * host's loopback services (the server's port, PostgreSQL, Redis …) are never reachable.
 *
 * Limits (`prlimit`): address space (`RLIMIT_AS`), process count (`RLIMIT_NPROC`) and CPU time
 * (`RLIMIT_CPU`, SIGXCPU at the limit, SIGKILL 5 s later); no core files.
 */
import { randomInt } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { accessSync, constants, lstatSync, readlinkSync, statSync } from 'node:fs';
import { lchown, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/** Network of a job: `none` (private loopback only) or `outward` (through slirp4netns). */
export type JobNetwork = 'none' | 'outward';

/** Resource limits of one job step. */
export interface JobLimits {
  /** Address space of each process, MiB (`GITLOOM_JOB_MEMORY_MB`). */
  readonly memoryMb: number;
  /** Processes of the job at once (`GITLOOM_JOB_PROCESSES`). */
  readonly processes: number;
  /** CPU time of each process, seconds (`GITLOOM_JOB_CPU_SECONDS`). */
  readonly cpuSeconds: number;
}

/** The administrator's sandbox settings (README "Configuration"). */
export interface JobSandboxConfig {
  /** `GITLOOM_JOB_SANDBOX=on|off`; off runs steps unconfined (with a warning in every build log). */
  readonly enabled: boolean;
  /** bubblewrap program (`GITLOOM_BWRAP_PATH`, default `bwrap` on PATH). */
  readonly bwrapPath: string;
  /** `GITLOOM_JOB_NETWORK`; null = `outward` when slirp4netns is installed, else `none`. */
  readonly network: JobNetwork | null;
  readonly limits: JobLimits;
  /** First host uid/gid of the pool of job uids (`GITLOOM_JOB_UID_BASE`). */
  readonly uidBase: number;
}

/** Defaults of {@link JobSandboxConfig}. */
export const DEFAULT_JOB_SANDBOX: JobSandboxConfig = {
  enabled: true,
  bwrapPath: 'bwrap',
  network: null,
  limits: { memoryMb: 4096, processes: 512, cpuSeconds: 3600 },
  uidBase: 1_900_000_000,
};

/** Build log line (and final reason) when bubblewrap is missing. */
export const SANDBOX_UNAVAILABLE = 'Job sandbox unavailable: install bubblewrap';

/** Warning logged at start-up and in every build log when the sandbox is switched off. */
export const SANDBOX_OFF_WARNING = 'WARNING: the job sandbox is off (GITLOOM_JOB_SANDBOX=off): job steps run unconfined, as the server user';

/** How many uids the pool holds. */
export const JOB_UID_RANGE = 65536;

/** Where programs are looked up, inside the sandbox and for the tools themselves. */
export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Files and directories of `/etc` that a job must not read (hidden under /dev/null or an empty tmpfs). */
const SECRET_ETC = ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/etc/ssh', '/etc/ssl/private', '/etc/sudoers', '/etc/sudoers.d', '/etc/gitloom'];

/** Host system directories made visible read-only (symbolic links are recreated as links). */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];

/**
 * Finds a program: a path containing `/` is checked as is; a bare name is looked up on
 * `searchPath` (default: {@link SANDBOX_PATH} then the server's PATH). Returns the absolute path
 * of an executable regular file, or null.
 */
export function findExecutable(name: string, searchPath = `${SANDBOX_PATH}:${process.env.PATH ?? ''}`): string | null {
  const candidates = name.includes('/')
    ? [path.resolve(name)]
    : [...new Set(searchPath.split(':'))].filter((d) => path.isAbsolute(d)).map((d) => path.join(d, name));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not there or not executable: try the next directory
    }
  }
  return null;
}

/** What {@link planSandbox} decided for a job. */
export type SandboxPlan =
  | { readonly kind: 'off' }
  | { readonly kind: 'unavailable'; readonly message: string }
  | {
      readonly kind: 'sandbox';
      readonly bwrap: string;
      readonly prlimit: string;
      /** slirp4netns when the network is `outward`, else null. */
      readonly slirp4netns: string | null;
      readonly network: JobNetwork;
      /** One line for the build log describing the sandbox (network and limits). */
      readonly description: string;
      readonly limits: JobLimits;
      readonly uidBase: number;
    };

/**
 * Decides how a job runs from the administrator's settings and the installed tools: `off` when
 * `GITLOOM_JOB_SANDBOX=off`; `unavailable` (message {@link SANDBOX_UNAVAILABLE}) when bwrap
 * cannot be found, also when prlimit is missing or the server does not run as root (it could not
 * switch to the job uids); otherwise the sandbox with the network requested, or `outward` when
 * slirp4netns is installed and `none` otherwise (the description says why).
 */
export function planSandbox(config: JobSandboxConfig): SandboxPlan {
  if (!config.enabled) return { kind: 'off' };
  const bwrap = findExecutable(config.bwrapPath);
  if (!bwrap) return { kind: 'unavailable', message: SANDBOX_UNAVAILABLE };
  if (process.getuid?.() !== 0) return { kind: 'unavailable', message: 'Job sandbox unavailable: the server must run as root to run each job as a uid of its own' };
  const prlimit = findExecutable('prlimit');
  if (!prlimit) return { kind: 'unavailable', message: 'Job sandbox unavailable: install prlimit (util-linux)' };
  const slirp = findExecutable('slirp4netns');
  let network: JobNetwork;
  let why: string;
  if (config.network === 'none') {
    network = 'none';
    why = 'GITLOOM_JOB_NETWORK=none';
  } else if (slirp) {
    network = 'outward';
    why = 'slirp4netns, host loopback disabled';
  } else {
    network = 'none';
    why = 'slirp4netns is not installed';
  }
  const l = config.limits;
  return {
    kind: 'sandbox',
    bwrap,
    prlimit,
    slirp4netns: network === 'outward' ? slirp : null,
    network,
    description: `Job sandbox: bubblewrap; network: ${network === 'outward' ? 'outward' : 'none'} (${why}); limits: ${describeLimits(l)}`,
    limits: l,
    uidBase: config.uidBase,
  };
}

/** `memory 4096 MiB, 512 processes, CPU 3600 s` (with the variables that set them). */
export function describeLimits(limits: JobLimits): string {
  return `memory ${limits.memoryMb} MiB (GITLOOM_JOB_MEMORY_MB), ${limits.processes} processes (GITLOOM_JOB_PROCESSES), CPU ${limits.cpuSeconds} s (GITLOOM_JOB_CPU_SECONDS)`;
}

const uidsInUse = new Set<number>();
const uidOffset = randomInt(0, JOB_UID_RANGE);

/**
 * Takes a free uid of the pool `[base, base + 65536)` for one job (this process never hands out
 * one twice at a time; the start point is random per process so that processes sharing a host
 * rarely meet). Release it with {@link releaseJobUid}.
 *
 * @throws Error when all 65,536 uids are in use by this process.
 */
export function acquireJobUid(base: number): number {
  for (let i = 0; i < JOB_UID_RANGE; i++) {
    const uid = base + ((uidOffset + i) % JOB_UID_RANGE);
    if (!uidsInUse.has(uid)) {
      uidsInUse.add(uid);
      return uid;
    }
  }
  throw new Error('No free job uid');
}

/** Returns a uid taken with {@link acquireJobUid} to the pool. */
export function releaseJobUid(uid: number): void {
  uidsInUse.delete(uid);
}

/**
 * Hands a directory tree to a job uid (`lchown` of the directory and everything below it;
 * symbolic links themselves, never their targets).
 */
export async function chownTree(dir: string, uid: number): Promise<void> {
  await lchown(dir, uid, uid);
  const entries = await readdir(dir, { recursive: true });
  for (const entry of entries) await lchown(path.join(dir, entry), uid, uid);
}

/** One step to run in the sandbox. */
export interface SandboxedCommand {
  /** Absolute workspace directory (bound read-write at the same path, the working directory). */
  readonly workspace: string;
  /** Absolute scratch directory of the job (bound read-write at the same path: scripts, HOME). */
  readonly scratch: string;
  /** File bound at `/etc/resolv.conf` (outward network), or null. */
  readonly resolvConf: string | null;
  /** Program to run (looked up on the sandbox's PATH) and its arguments. */
  readonly command: string;
  readonly args: readonly string[];
}

/** Child fds bwrap uses to report the sandbox pid and to wait for the network (outward only). */
export const INFO_FD = 3;
export const BLOCK_FD = 4;

function systemMounts(): string[] {
  const args: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    let stat;
    try {
      stat = lstatSync(dir);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(dir), dir);
    else if (stat.isDirectory()) args.push('--ro-bind', dir, dir);
  }
  for (const secret of SECRET_ETC) {
    let stat;
    try {
      stat = lstatSync(secret);
    } catch {
      continue;
    }
    if (stat.isDirectory()) args.push('--tmpfs', secret, '--remount-ro', secret);
    else args.push('--ro-bind', '/dev/null', secret);
  }
  return args;
}

/**
 * The program and argument array (no shell involved) that runs `command` in the sandbox:
 * `prlimit --as=… --nproc=… --cpu=… --core=0 -- bwrap … -- command args…`. The caller spawns it
 * as the job's uid/gid with only the job's variables as environment (bwrap passes its own
 * environment on; nothing of the server's is in it), and with fds {@link INFO_FD} and
 * {@link BLOCK_FD} open when the network is `outward` (see {@link attachNetwork}).
 */
export function sandboxArgv(plan: Extract<SandboxPlan, { kind: 'sandbox' }>, step: SandboxedCommand): { file: string; args: string[] } {
  const l = plan.limits;
  const limits = [
    `--as=${l.memoryMb * 1024 * 1024}`,
    `--nproc=${l.processes}`,
    `--cpu=${l.cpuSeconds}:${l.cpuSeconds + 5}`,
    '--core=0',
  ];
  const bwrap = [
    '--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-net', '--unshare-cgroup-try',
    '--die-with-parent', '--new-session', '--hostname', 'gitloom-job',
    ...systemMounts(),
    ...(step.resolvConf ? ['--ro-bind', step.resolvConf, '/etc/resolv.conf'] : []),
    '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp',
    '--bind', step.scratch, step.scratch,
    '--bind', step.workspace, step.workspace,
    // the sandbox's own root (a tmpfs holding the mount points) is read-only too
    '--remount-ro', '/',
    '--chdir', step.workspace,
    ...(plan.network === 'outward' ? ['--info-fd', String(INFO_FD), '--block-fd', String(BLOCK_FD)] : []),
    '--', step.command, ...step.args,
  ];
  return { file: plan.prlimit, args: [...limits, '--', plan.bwrap, ...bwrap] };
}

/** Contents of the `/etc/resolv.conf` of an outward sandbox: slirp4netns's DNS forwarder. */
export const SLIRP_RESOLV_CONF = 'nameserver 10.0.2.3\n';

/** A slirp4netns attached to a sandbox; {@link NetworkAttachment.stop} ends it. */
export interface NetworkAttachment {
  /** Why the network could not be attached (the sandbox is then killed), or null. */
  readonly failure: () => string | null;
  stop(): void;
}

/**
 * Gives a starting sandbox (spawned with `--info-fd 3 --block-fd 4`) outward network: reads the
 * sandbox pid bwrap writes on fd 3, starts `slirp4netns --configure --disable-host-loopback` on
 * its network namespace, and releases the step through fd 4 once slirp4netns reports it is ready.
 * slirp4netns exits when {@link NetworkAttachment.stop} is called or when this process dies (its
 * exit fd closes). When slirp4netns cannot start, the sandbox is killed and `failure()` says why.
 */
export function attachNetwork(child: ChildProcess, slirp4netns: string): NetworkAttachment {
  let failure: string | null = null;
  let slirp: ChildProcess | null = null;
  let stopped = false;
  const info = child.stdio[INFO_FD] as NodeJS.ReadableStream | null;
  const block = child.stdio[BLOCK_FD] as NodeJS.WritableStream | null;
  const fail = (message: string): void => {
    failure ??= message;
    child.kill('SIGKILL');
  };
  let buffer = '';
  const start = (pid: string): void => {
    slirp = spawn(slirp4netns, ['--configure', '--mtu=65520', '--disable-host-loopback', '--enable-sandbox', '--enable-seccomp', '--ready-fd=3', '--exit-fd=4', '--netns-type=path', `/proc/${pid}/ns/net`, 'tap0'], {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    slirp.stderr?.on('data', (c: Buffer) => {
      if (stderr.length < 2000) stderr += c.toString('utf8');
    });
    (slirp.stdio[3] as NodeJS.ReadableStream).once('data', () => block?.write('1'));
    slirp.once('error', (e) => fail(`Unable to start slirp4netns: ${e.message}`));
    slirp.once('exit', (code) => {
      if (!stopped) fail(`slirp4netns exited (code ${code}): ${stderr.trim()}`);
    });
  };
  info?.on('data', (chunk: Buffer) => {
    if (slirp || stopped) return;
    buffer += chunk.toString('utf8');
    const match = /"child-pid"\s*:\s*(\d+)\s*[,}]/.exec(buffer);
    if (!match) return;
    buffer = '';
    // bwrap reports the pid before the sandbox has set its namespaces up (loopback, uid map);
    // slirp4netns may only join once the sandbox waits on the block fd.
    void waitForBlockedRead(Number(match[1]), BLOCK_FD, 10_000).then((blocked) => {
      if (stopped) return;
      if (blocked) start(match[1]);
      else fail('the sandbox did not reach its network set-up');
    });
  });
  info?.on('error', (e: Error) => fail(`Sandbox info pipe failed: ${e.message}`));
  block?.on('error', (e: Error) => fail(`Sandbox block pipe failed: ${e.message}`));
  return {
    failure: () => failure,
    stop() {
      stopped = true;
      if (slirp) {
        (slirp.stdio[4] as NodeJS.WritableStream & { destroy(): void }).destroy();
        slirp.kill('SIGTERM');
      }
    },
  };
}

/** Number of the `read` system call per architecture (as `/proc/<pid>/syscall` shows it). */
const READ_SYSCALL: Partial<Record<string, number>> = { x64: 0, arm64: 63, riscv64: 63, loong64: 63, arm: 3, ia32: 3, ppc64: 3, s390x: 3 };

/**
 * Resolves true once process `pid` is blocked reading file descriptor `fd` (from
 * `/proc/<pid>/syscall`), false when it exits first or after `timeoutMs`.
 */
async function waitForBlockedRead(pid: number, fd: number, timeoutMs: number): Promise<boolean> {
  const number = READ_SYSCALL[process.arch];
  if (number === undefined) return false;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    let fields: string[];
    try {
      fields = (await readFile(`/proc/${pid}/syscall`, 'utf8')).trim().split(' ');
    } catch {
      return false;
    }
    if (fields[0] === String(number) && Number(fields[1]) === fd) return true;
    await new Promise((r) => setTimeout(r, 1));
  }
  return false;
}

/**
 * Explains a sandboxed command's exit when a limit caused it: exit code 152 (128 + SIGXCPU) is
 * the CPU limit. Returns null for other exits.
 */
export function limitExceeded(exitCode: number | null, limits: JobLimits): string | null {
  if (exitCode === 128 + 24) return `CPU time limit of ${limits.cpuSeconds} s exceeded (GITLOOM_JOB_CPU_SECONDS)`;
  return null;
}
