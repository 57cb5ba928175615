/**
 * A job's outward network (docs/compatibility.md#gitloom-differs-untrusted-builds "Network is outward only", README "Job sandbox"):
 * `slirp4netns` gives the sandbox's network namespace a user-mode NAT to the internet, and an
 * nftables ruleset inside that namespace — installed by the server, which as root of the initial
 * user namespace holds `CAP_NET_ADMIN` over it, while the job holds no capability there — refuses
 * every destination that is not the internet: the host's own addresses (loopback or not), the
 * private, shared (CGNAT), link-local (169.254.169.254, the cloud metadata service), multicast and
 * reserved IPv4 ranges, and IPv6 loopback, unique-local, link-local, multicast and IPv4-mapped
 * addresses. Only slirp4netns's DNS forwarder (10.0.2.3, port 53) and the administrator's
 * allow-list (`GITLOOM_JOB_NETWORK_ALLOW`: internal registries, mirrors) pass.
 *
 * Order of a step's start: bwrap reports the sandbox's pid on its info fd and waits on its block
 * fd; the server installs the ruleset (`nsenter --net … nft -f -`), then attaches slirp4netns,
 * then releases the step. The job's first instruction runs with the rules in place.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { readFile, readlink } from 'node:fs/promises';
import os from 'node:os';
import ipaddr from 'ipaddr.js';

/** Where the holder of a job's network namespace finds `sh` and `cat`. */
const SANDBOX_TOOLS_PATH = '/usr/local/bin:/usr/bin:/bin';

/** slirp4netns's DNS forwarder, the name server of an outward sandbox or container. */
export const SLIRP_DNS = '10.0.2.3';

/** Contents of the `/etc/resolv.conf` of an outward sandbox. */
export const SLIRP_RESOLV_CONF = `nameserver ${SLIRP_DNS}\n`;

/** Child fds bwrap uses to report the sandbox pid and to wait for the network. */
export const INFO_FD = 3;
export const BLOCK_FD = 4;

/**
 * IPv4 ranges a job never reaches: the special-purpose ranges of RFC 6890 that are not globally
 * reachable (this network, private, shared/CGNAT, loopback, link-local, IETF protocol
 * assignments, documentation, benchmarking), multicast and reserved.
 */
const BLOCKED_V4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
];
/** IPv6 ranges a job never reaches: unspecified, loopback, IPv4-mapped, local-use NAT64, documentation, unique-local, link-local, multicast. */
const BLOCKED_V6 = ['::/127', '::ffff:0:0/96', '64:ff9b:1::/48', '2001:db8::/32', 'fc00::/7', 'fe80::/10', 'ff00::/8'];

/**
 * Parses `GITLOOM_JOB_NETWORK_ALLOW`: comma-separated IPv4/IPv6 addresses or CIDR ranges the
 * administrator lets jobs reach although they are private or the host's. Returns the ranges in
 * CIDR form (`10.1.2.3/32`).
 *
 * @throws Error naming the variable and the entry when one is malformed.
 */
export function parseNetworkAllowList(raw: string | undefined): string[] {
  if (!raw?.trim()) return [];
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      try {
        const [address, bits] = entry.includes('/') ? ipaddr.parseCIDR(entry) : [ipaddr.parse(entry), null];
        const plain = address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address;
        return `${plain.toString()}/${bits ?? (plain.kind() === 'ipv4' ? 32 : 128)}`;
      } catch {
        throw new Error(`GITLOOM_JOB_NETWORK_ALLOW must list IP addresses or CIDR ranges, got '${entry}'`);
      }
    });
}

/** Every address of the host's interfaces (what a job reaching "the host" would connect to). */
function hostAddresses(): string[] {
  const found = new Set<string>();
  for (const list of Object.values(os.networkInterfaces())) {
    for (const info of list ?? []) found.add(info.address.replace(/%.*$/, ''));
  }
  return [...found];
}

/**
 * The nftables ruleset (nft's script syntax) of a job's network namespace: an `inet` table whose
 * output hook accepts loopback, DNS to slirp4netns's forwarder and the allow-list, and rejects the
 * blocked ranges and the host's addresses (one rule each, so overlapping entries never clash).
 * Everything else — the internet — is accepted.
 */
export function jobFirewall(allow: readonly string[], host: readonly string[] = hostAddresses()): string {
  const family = (cidr: string): 'ip' | 'ip6' => (cidr.includes(':') ? 'ip6' : 'ip');
  const reject = (cidr: string): string => `    ${family(cidr)} daddr ${cidr} reject`;
  return [
    'table inet gitloom_job {',
    '  chain output {',
    '    type filter hook output priority 0; policy accept;',
    '    oifname "lo" accept',
    '    ip daddr 10.0.2.3 udp dport 53 accept',
    '    ip daddr 10.0.2.3 tcp dport 53 accept',
    ...allow.map((cidr) => `    ${family(cidr)} daddr ${cidr} accept`),
    ...BLOCKED_V4.map(reject),
    ...BLOCKED_V6.map(reject),
    ...host.map(reject),
    '  }',
    '}',
    '',
  ].join('\n');
}

/** The tools an outward network needs, found on the host. */
export interface NetworkTools {
  readonly slirp4netns: string;
  readonly nsenter: string;
  readonly nft: string;
  /** Holds the network namespace of a job's containers ({@link openNetworkNamespace}). */
  readonly unshare: string;
}

/** A slirp4netns attached to a sandbox; {@link NetworkAttachment.stop} ends it. */
export interface NetworkAttachment {
  /** Why the network could not be attached (the sandbox is then killed), or null. */
  readonly failure: () => string | null;
  stop(): void;
}

/** Runs `nft -f -` with `rules` inside the network namespace of `pid`; resolves with an error message or null. */
function installFirewall(tools: NetworkTools, pid: string, rules: string): Promise<string | null> {
  return runIn('nft', tools.nsenter, ['--target', pid, '--net', '--', tools.nft, '-f', '-'], rules);
}

/** Runs `command args` (which runs `name`) with `input` on its stdin; resolves null when it exits 0, else what went wrong. */
function runIn(name: string, command: string, args: string[], input = ''): Promise<string | null> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      if (stderr.length < 2000) stderr += c.toString('utf8');
    });
    child.once('error', (e) => resolve(`Unable to start ${name}: ${e.message}`));
    child.once('close', (code) => resolve(code === 0 ? null : `${name} exited with code ${code}: ${stderr.trim()}`));
    child.stdin.on('error', () => undefined); // a failed command reports through its exit code
    child.stdin.end(input);
  });
}

/**
 * Gives a starting sandbox (spawned with `--info-fd 3 --block-fd 4`) outward network: reads the
 * sandbox pid bwrap writes on fd 3, installs {@link jobFirewall} in its network namespace, starts
 * `slirp4netns --configure --disable-host-loopback` on it, and releases the step through fd 4
 * once slirp4netns reports it is ready. slirp4netns exits when {@link NetworkAttachment.stop} is
 * called or when this process dies (its exit fd closes). When any of it fails, the sandbox is
 * killed before the step ran and `failure()` says why.
 */
export function attachNetwork(child: ChildProcess, tools: NetworkTools, allow: readonly string[]): NetworkAttachment {
  let failure: string | null = null;
  let slirp: Slirp | null = null;
  let started = false;
  let stopped = false;
  const info = child.stdio[INFO_FD] as NodeJS.ReadableStream | null;
  const block = child.stdio[BLOCK_FD] as NodeJS.WritableStream | null;
  const fail = (message: string): void => {
    failure ??= message;
    child.kill('SIGKILL');
  };
  let buffer = '';
  info?.on('data', (chunk: Buffer) => {
    if (started || stopped) return;
    buffer += chunk.toString('utf8');
    const match = /"child-pid"\s*:\s*(\d+)\s*[,}]/.exec(buffer);
    if (!match) return;
    started = true;
    // bwrap reports the pid before the sandbox has set its namespaces up (loopback, uid map);
    // the rules and slirp4netns may only join once the sandbox waits on the block fd.
    void (async () => {
      if (!(await waitForBlockedRead(Number(match[1]), BLOCK_FD, 10_000))) return fail('the sandbox did not reach its network set-up');
      if (stopped) return;
      const refused = await installFirewall(tools, match[1], jobFirewall(allow));
      if (refused) return fail(`Unable to install the job firewall: ${refused}`);
      if (!stopped)
        slirp = startSlirp(
          tools,
          `/proc/${match[1]}/ns/net`,
          () => block?.write('1'),
          (message) => !stopped && fail(message),
        );
    })();
  });
  info?.on('error', (e: Error) => fail(`Sandbox info pipe failed: ${e.message}`));
  block?.on('error', (e: Error) => fail(`Sandbox block pipe failed: ${e.message}`));
  return {
    failure: () => failure,
    stop() {
      stopped = true;
      (slirp as Slirp | null)?.stop();
    },
  };
}

/** A running slirp4netns. */
interface Slirp {
  stop(): void;
}

/**
 * Starts `slirp4netns --configure --disable-host-loopback` on the network namespace at
 * `namespace`: `onReady` once it reports ready, `onExit` with the reason when it exits or cannot
 * start (also after {@link Slirp.stop}; the caller ignores that one). It exits when stopped or
 * when this process dies (its exit fd closes).
 */
function startSlirp(tools: NetworkTools, namespace: string, onReady: () => void, onExit: (message: string) => void): Slirp {
  const slirp = spawn(
    tools.slirp4netns,
    [
      '--configure',
      '--mtu=65520',
      '--disable-host-loopback',
      '--enable-sandbox',
      '--enable-seccomp',
      '--ready-fd=3',
      '--exit-fd=4',
      '--netns-type=path',
      namespace,
      'tap0',
    ],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  slirp.stderr?.on('data', (c: Buffer) => {
    if (stderr.length < 2000) stderr += c.toString('utf8');
  });
  (slirp.stdio[3] as NodeJS.ReadableStream).once('data', onReady);
  slirp.once('error', (e) => onExit(`Unable to start slirp4netns: ${e.message}`));
  slirp.once('exit', (code) => onExit(`slirp4netns exited (code ${code}): ${stderr.trim()}`));
  return {
    stop() {
      (slirp.stdio[4] as NodeJS.WritableStream & { destroy(): void }).destroy();
      slirp.kill('SIGTERM');
    },
  };
}

/** The tools of a loopback-only namespace for a job's containers (GITLOOM_JOB_NETWORK=none). */
export interface LoopbackTools {
  readonly unshare: string;
  readonly nsenter: string;
  readonly ip: string;
}

/** What {@link openNetworkNamespace} sets up: the outward network, or a loopback only. */
export type NamespaceSetup =
  { readonly kind: 'outward'; readonly tools: NetworkTools; readonly allow: readonly string[] } | { readonly kind: 'loopback'; readonly tools: LoopbackTools };

/** A network namespace of its own for a job's containers (see {@link openNetworkNamespace}). */
export interface NetworkNamespace {
  /** The namespace's path for the engine to join (`/proc/<pid>/ns/net` of its holder). */
  readonly path: string;
  /** Why the network failed since it was opened, or null. */
  readonly failure: () => string | null;
  /** Ends slirp4netns and the holder process: the namespace goes with its last member. */
  close(): void;
}

/**
 * Opens the network namespace of a job's containers: a holder process (`unshare --net`, named by
 * `jobDir` in its arguments, ending when this process does) keeps a new network namespace alive.
 * Outward, the job firewall ({@link jobFirewall}) is installed in it and slirp4netns attached —
 * the same policy as a sandboxed step's network, set up before any container joins it; loopback,
 * only its loopback is brought up (the job's services and steps share it).
 *
 * @throws Error when the namespace, its loopback, the firewall or slirp4netns cannot be set up.
 */
export async function openNetworkNamespace(jobDir: string, setup: NamespaceSetup): Promise<NetworkNamespace> {
  const { unshare, nsenter } = setup.tools;
  // `cat` of a pipe from this process: the holder ends when the server does, crashed or not; the
  // job directory in its arguments names it in the process list
  const holder = spawn(unshare, ['--net', '--', 'sh', '-c', 'cat > /dev/null', 'gitloom-job-network', jobDir], {
    stdio: ['pipe', 'ignore', 'ignore'],
    env: { PATH: SANDBOX_TOOLS_PATH },
  });
  let failure: string | null = null;
  let closed = false;
  holder.once('exit', (code, signal) => {
    if (!closed) failure ??= `the network namespace holder exited (${code ?? signal})`;
  });
  const close = (): void => {
    closed = true;
    slirp?.stop();
    holder.stdin?.destroy();
    holder.kill('SIGKILL');
  };
  let slirp: Slirp | null = null;
  try {
    const pid = await new Promise<number>((resolve, reject) => {
      holder.once('error', reject);
      holder.once('spawn', () => resolve(holder.pid as number));
    });
    const namespace = `/proc/${pid}/ns/net`;
    const own = await readlink('/proc/self/ns/net');
    for (let i = 0; (await readlink(namespace).catch(() => own)) === own; i++) {
      if (i > 500 || failure) throw new Error(failure ?? 'the network namespace was not created');
      await new Promise((r) => setTimeout(r, 2));
    }
    if (setup.kind === 'loopback') {
      // what slirp4netns's --configure does for an outward namespace
      const down = await runIn('ip', nsenter, ['--target', String(pid), '--net', '--', setup.tools.ip, 'link', 'set', 'lo', 'up']);
      if (down) throw new Error(`Unable to bring up the loopback: ${down}`);
      return { path: namespace, failure: () => failure, close };
    }
    const outward = setup;
    const refused = await installFirewall(outward.tools, String(pid), jobFirewall(outward.allow));
    if (refused) throw new Error(`Unable to install the job firewall: ${refused}`);
    await new Promise<void>((resolve, reject) => {
      slirp = startSlirp(outward.tools, namespace, resolve, (message) => {
        if (!closed) failure ??= message;
        reject(new Error(message));
      });
    });
    return { path: namespace, failure: () => failure, close };
  } catch (e) {
    close();
    throw new Error(`Job network unavailable: ${(e as Error).message}`);
  }
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
