/**
 * The job sandbox (docs/compatibility.md#gitloom-differs-untrusted-builds "Builds are untrusted code", README "Job sandbox"): every command
 * step runs inside bubblewrap, started through `prlimit`, as a host uid of its own.
 *
 * What a step sees: new user, PID, IPC, UTS, network and mount namespaces, with no further user
 * namespaces (`--disable-userns`) and the container engines' default seccomp filter
 * (src/ci/seccomp.ts); the host's `/usr`, `/bin`, `/sbin` and `/lib*` read-only; of `/etc` only
 * an allow-list of what name resolution, TLS, locales, the dynamic linker and language runtimes
 * read ({@link ETC_ALLOWED}), plus `passwd`, `group` and `hosts` written for the job; a fresh
 * `/proc`, `/dev` and private `/tmp`; its workspace and `HOME` read-write, at the same paths as
 * on the host; its step script read-only. Nothing else of the host — the data dir, the database,
 * other repositories, other jobs, the server's home, environment or processes — is mounted or
 * visible.
 *
 * Identity: bwrap runs as an unprivileged host uid/gid taken from a pool
 * (`GITLOOM_JOB_UID_BASE` … + 65535), one per running job, and keeps that uid inside the user
 * namespace. A dedicated non-root uid is what makes `RLIMIT_NPROC` count: the kernel exempts
 * uid 0 from it, and counts per real uid across namespaces. Only the job's workspace and `HOME`
 * belong to that uid (src/ci/job-directory.ts); the files the server gives a step (its script,
 * `passwd`, the seccomp program) stay root's and reach bwrap as open file descriptors, copied
 * into the sandbox (`--ro-bind-data`, `--seccomp`).
 *
 * Lifetime: `--die-with-parent` ties the sandbox to the bwrap process, whose parent is the
 * server; the sandbox's PID namespace dies with its init, so every process a step started in the
 * background ends with the step, and a crash of the server takes its jobs down with it.
 *
 * Network: `none` (only a private loopback) or `outward` (src/ci/job-network.ts: slirp4netns
 * and an nftables ruleset that lets only the internet through).
 *
 * Limits (`prlimit`): address space (`RLIMIT_AS`), process count (`RLIMIT_NPROC`) and CPU time
 * (`RLIMIT_CPU`, SIGXCPU at the limit, SIGKILL 5 s later); no core files.
 */
import { randomInt } from 'node:crypto';
import { accessSync, constants, existsSync, lstatSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import path from 'node:path';
import { processesOf } from './job-directory.js';
import { BLOCK_FD, INFO_FD, type LoopbackTools, type NetworkTools } from './job-network.js';
import { DEFAULT_SECCOMP_PROFILE, SECCOMP_PACKAGES, SECCOMP_PYTHON } from './seccomp.js';

/** Network of a job: `none` (private loopback only) or `outward` (the internet, through slirp4netns). */
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
  /** `GITLOOM_JOB_NETWORK`; null = `outward` when slirp4netns and nftables are installed, else `none`. */
  readonly network: JobNetwork | null;
  /** Private or host addresses (CIDR) jobs may reach anyway (`GITLOOM_JOB_NETWORK_ALLOW`). */
  readonly networkAllow: readonly string[];
  /** Seccomp profile in the container engines' JSON format (`GITLOOM_JOB_SECCOMP_PROFILE`). */
  readonly seccompProfile: string;
  readonly limits: JobLimits;
  /** First host uid/gid of the pool of job uids (`GITLOOM_JOB_UID_BASE`). */
  readonly uidBase: number;
}

/** Defaults of {@link JobSandboxConfig}. */
export const DEFAULT_JOB_SANDBOX: JobSandboxConfig = {
  enabled: true,
  bwrapPath: 'bwrap',
  network: null,
  networkAllow: [],
  seccompProfile: DEFAULT_SECCOMP_PROFILE,
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

/** Host system directories made visible read-only (symbolic links are recreated as links). */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * What of the host's `/etc` a job sees, read-only: name resolution (`nsswitch.conf`, `host.conf`,
 * `gai.conf`, `services`, `protocols`, `networks`), TLS trust (`ssl/certs`, `ssl/openssl.cnf`,
 * `ca-certificates*`), the dynamic linker (`ld.so.*`), time zone and locales, `alternatives`
 * (the links behind many of `/usr/bin`'s programs), shells' start-up files, MIME and `file`
 * databases, and the configuration directories of language runtimes and tools that do not start
 * without them (Java, Python, Perl, Maven, fontconfig, terminfo, XML catalogs). A trailing `*`
 * matches names that start with the rest. Everything else — accounts and their hashes, SSH and
 * TLS keys, sudoers, service units and environment files that may hold the server's secrets,
 * package managers' credentials (`npmrc`, `pip.conf`), git's system config — stays hidden.
 */
export const ETC_ALLOWED = [
  'alternatives',
  'bash.bashrc',
  'ca-certificates',
  'ca-certificates.conf',
  'debian_version',
  'fonts',
  'gai.conf',
  'host.conf',
  'inputrc',
  'java-*',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'locale.alias',
  'locale.gen',
  'localtime',
  'magic',
  'magic.mime',
  'maven',
  'mime.types',
  'networks',
  'nsswitch.conf',
  'os-release',
  'perl',
  'profile',
  'protocols',
  'python3*',
  'services',
  'shells',
  'sgml',
  'ssl/certs',
  'ssl/openssl.cnf',
  'terminfo',
  'timezone',
  'wgetrc',
  'xml',
];

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
      /** The tools of an outward network, or null when the network is `none`. */
      readonly network: NetworkTools | null;
      /** The tools of a loopback-only namespace shared by a job's containers (its services), or null when missing. */
      readonly loopback: LoopbackTools | null;
      readonly networkAllow: readonly string[];
      readonly seccompProfile: string;
      /** One line for the build log describing the sandbox (network and limits). */
      readonly description: string;
      readonly limits: JobLimits;
      readonly uidBase: number;
    };

/**
 * Decides how a job runs from the administrator's settings and the installed tools: `off` when
 * `GITLOOM_JOB_SANDBOX=off`; `unavailable` (message {@link SANDBOX_UNAVAILABLE}) when bwrap
 * cannot be found, also when prlimit, the seccomp profile or the Python that compiles it is
 * missing, or the server does not run as root (it could not switch to the job uids); otherwise
 * the sandbox with the network requested, or `outward` when slirp4netns, nsenter and nft are
 * installed and `none` otherwise (the description says why).
 */
export function planSandbox(config: JobSandboxConfig): SandboxPlan {
  if (!config.enabled) return { kind: 'off' };
  const bwrap = findExecutable(config.bwrapPath);
  if (!bwrap) return { kind: 'unavailable', message: SANDBOX_UNAVAILABLE };
  if (process.getuid?.() !== 0)
    return { kind: 'unavailable', message: 'Job sandbox unavailable: the server must run as root to run each job as a uid of its own' };
  const prlimit = findExecutable('prlimit');
  if (!prlimit) return { kind: 'unavailable', message: 'Job sandbox unavailable: install prlimit (util-linux)' };
  if (!existsSync(config.seccompProfile) || !existsSync(SECCOMP_PYTHON)) {
    return { kind: 'unavailable', message: `Job sandbox unavailable: no seccomp filter (${config.seccompProfile}): install ${SECCOMP_PACKAGES}` };
  }
  const slirp4netns = findExecutable('slirp4netns');
  const nsenter = findExecutable('nsenter');
  const nft = findExecutable('nft');
  const unshare = findExecutable('unshare');
  let network: NetworkTools | null = null;
  let why: string;
  if (config.network === 'none') why = 'GITLOOM_JOB_NETWORK=none';
  else if (!slirp4netns) why = 'slirp4netns is not installed';
  else if (!nft) why = 'nftables is not installed';
  else if (!nsenter || !unshare) why = 'util-linux is not installed';
  else {
    network = { slirp4netns, nsenter, nft, unshare };
    why = `slirp4netns; the host, private and link-local addresses refused${config.networkAllow.length > 0 ? ` except ${config.networkAllow.join(', ')}` : ''}`;
  }
  const ip = findExecutable('ip');
  const l = config.limits;
  return {
    kind: 'sandbox',
    bwrap,
    prlimit,
    network,
    loopback: unshare && nsenter && ip ? { unshare, nsenter, ip } : null,
    networkAllow: config.networkAllow,
    seccompProfile: config.seccompProfile,
    description: `Job sandbox: bubblewrap; network: ${network ? 'outward' : 'none'} (${why}); limits: ${describeLimits(l)}`,
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
 * Takes a free uid of the pool `[base, base + 65536)` for one job: one this process does not
 * use and under which no process runs (so that a job never shares its uid with a job of another
 * server process on the host, or with what is left of a crashed run). The start point is random
 * per process so that processes sharing a host rarely try the same one. Release it with
 * {@link releaseJobUid}.
 *
 * With `range`, the job runs containers: it takes instead the first uid of a free range of 65,536
 * uids above the pool (`base + 65536 × k`, k ≥ 1, below 2³¹), the host ids of its containers'
 * user namespace — container root is the job's uid, and the containers' other users are the
 * range's other uids, which no other job shares.
 *
 * @throws Error when all uids (or ranges) are in use.
 */
export async function acquireJobUid(base: number, range = false): Promise<number> {
  const slots = range ? Math.floor((2 ** 31 - base) / JOB_UID_RANGE) - 1 : JOB_UID_RANGE;
  const offset = uidOffset % Math.max(slots, 1);
  for (let i = 0; i < slots; i++) {
    const slot = (offset + i) % slots;
    const uid = range ? base + JOB_UID_RANGE * (slot + 1) : base + slot;
    if (uidsInUse.has(uid)) continue;
    uidsInUse.add(uid);
    if ((await processesOf(uid, range ? JOB_UID_RANGE : 1)).length === 0) return uid;
    uidsInUse.delete(uid);
  }
  throw new Error(range ? 'No free uid range for a container job' : 'No free job uid');
}

/** Returns a uid taken with {@link acquireJobUid} to the pool. */
export function releaseJobUid(uid: number): void {
  uidsInUse.delete(uid);
}

/** The account files of a sandbox: its `passwd`, `group` and `hosts`, naming the job's uid. */
export function sandboxAccounts(uid: number, home: string): { passwd: string; group: string; hosts: string } {
  return {
    passwd: `root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\ngitloom-job:x:${uid}:${uid}:Gitloom job:${home}:/bin/sh\n`,
    group: `root:x:0:\nnogroup:x:65534:\ngitloom-job:x:${uid}:\n`,
    hosts: '127.0.0.1\tlocalhost\n127.0.1.1\tgitloom-job\n::1\tlocalhost ip6-localhost ip6-loopback\n',
  };
}

/** A file the server gives a step read-only: an open descriptor of this process and where the step sees it. */
export interface SandboxFile {
  readonly fd: number;
  readonly path: string;
}

/** One step to run in the sandbox. */
export interface SandboxedCommand {
  /** Absolute workspace directory (bound read-write at the same path, the working directory). */
  readonly workspace: string;
  /** Absolute `HOME` of the job (bound read-write at the same path). */
  readonly home: string;
  /** Files copied into the sandbox read-only (`passwd`, `group`, `hosts`, `resolv.conf`, the step script). */
  readonly files: readonly SandboxFile[];
  /** Open descriptor of the seccomp BPF program. */
  readonly seccomp: number;
  /** Program to run (looked up on the sandbox's PATH) and its arguments. */
  readonly command: string;
  readonly args: readonly string[];
}

/** Name patterns of {@link ETC_ALLOWED} grouped by the directory below `/etc` they list. */
function allowedEtcPaths(): string[] {
  const found: string[] = [];
  for (const pattern of ETC_ALLOWED) {
    const dir = path.posix.join('/etc', path.posix.dirname(pattern));
    const name = path.posix.basename(pattern);
    if (!name.endsWith('*')) {
      found.push(path.posix.join(dir, name));
      continue;
    }
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const n of names) if (n.startsWith(name.slice(0, -1))) found.push(path.posix.join(dir, n));
  }
  return found;
}

/** `--ro-bind` (or `--symlink` for a link) of each host path that exists. */
function hostMounts(paths: readonly string[]): string[] {
  const args: string[] = [];
  for (const p of paths) {
    let stat;
    try {
      stat = lstatSync(p);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(p), p);
    else if (stat.isDirectory() || stat.isFile()) args.push('--ro-bind', p, p);
  }
  return args;
}

/**
 * The program, argument array (no shell involved) and extra child descriptors that run
 * `command` in the sandbox: `prlimit --as=… --nproc=… --cpu=… --core=0 -- bwrap … -- command
 * args…`. `stdio` lists what the caller opens as the child's fds 3, 4, …: with an outward network
 * the pipes {@link INFO_FD} and {@link BLOCK_FD} (see `attachNetwork`), then the seccomp program
 * and each of `step.files`. The caller spawns it as the job's uid/gid with only the job's
 * variables as environment (bwrap passes its own environment on; nothing of the server's is in it).
 */
export function sandboxArgv(
  plan: Extract<SandboxPlan, { kind: 'sandbox' }>,
  step: SandboxedCommand,
): { file: string; args: string[]; stdio: Array<'pipe' | 'ignore' | number> } {
  const l = plan.limits;
  const limits = [`--as=${l.memoryMb * 1024 * 1024}`, `--nproc=${l.processes}`, `--cpu=${l.cpuSeconds}:${l.cpuSeconds + 5}`, '--core=0'];
  const stdio: Array<'pipe' | 'ignore' | number> = plan.network ? ['pipe', 'pipe'] : ['ignore', 'ignore'];
  const childFd = (fd: number): string => String(3 + stdio.push(fd) - 1);
  const seccomp = childFd(step.seccomp);
  const files = step.files.flatMap((f) => ['--perms', '0444', '--ro-bind-data', childFd(f.fd), f.path]);
  const bwrap = [
    '--unshare-user',
    '--disable-userns',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-net',
    '--unshare-cgroup-try',
    '--die-with-parent',
    '--new-session',
    '--hostname',
    'gitloom-job',
    ...hostMounts(SYSTEM_DIRS),
    '--dir',
    '/etc',
    ...hostMounts(allowedEtcPaths()),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    ...files,
    '--bind',
    step.home,
    step.home,
    '--bind',
    step.workspace,
    step.workspace,
    // the sandbox's own root (a tmpfs holding the mount points) is read-only too
    '--remount-ro',
    '/',
    '--chdir',
    step.workspace,
    ...(plan.network ? ['--info-fd', String(INFO_FD), '--block-fd', String(BLOCK_FD)] : []),
    '--seccomp',
    seccomp,
    '--',
    step.command,
    ...step.args,
  ];
  return { file: plan.prlimit, args: [...limits, '--', plan.bwrap, ...bwrap], stdio };
}

/**
 * Explains a sandboxed command's exit when a limit caused it: exit code 152 (128 + SIGXCPU) is
 * the CPU limit. Returns null for other exits.
 */
export function limitExceeded(exitCode: number | null, limits: JobLimits): string | null {
  if (exitCode === 128 + 24) return `CPU time limit of ${limits.cpuSeconds} s exceeded (GITLOOM_JOB_CPU_SECONDS)`;
  return null;
}
