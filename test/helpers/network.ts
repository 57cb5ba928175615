import { execFile, spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A host on a private network beside this machine: its own network namespace behind a veth pair. */
export interface LanHost {
  /** The host's private address (10.213.x.2), answering TCP on `port`. */
  readonly address: string;
  /** The link-local cloud-metadata address (169.254.169.254), routed to the same host and port. */
  readonly metadataAddress: string;
  readonly port: number;
  remove(): Promise<void>;
}

/**
 * Starts a TCP listener (answers `lan-host` and closes) in a new network namespace reached from
 * this machine over a veth pair on a private /30, with 169.254.169.254 routed to it as well: what
 * a job must never reach from its sandbox (a LAN host, a cloud metadata service). Needs root
 * and iproute2. Names and addresses derive from this process's pid, so test files running at
 * once do not meet — except for the metadata route, which only one test may hold at a time.
 */
export async function startLanHost(): Promise<LanHost> {
  // seen once while other test files ran beside this one: the namespace turned unusable between
  // two `ip` commands (`setting the network namespace … failed: Invalid argument`); the set-up is
  // made afresh, at most three times
  for (let attempt = 1; ; attempt++) {
    try {
      return await setUpLanHost();
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}

async function setUpLanHost(): Promise<LanHost> {
  const id = process.pid % 60000;
  const netns = `gl-lan-${id}`;
  const outer = `gl${id}a`;
  const inner = `gl${id}b`;
  const net = `10.213.${Math.floor(id / 64) % 256}.${(id % 64) * 4}`;
  const base = net.split('.').map(Number);
  const hostSide = `${base[0]}.${base[1]}.${base[2]}.${base[3] + 1}`;
  const address = `${base[0]}.${base[1]}.${base[2]}.${base[3] + 2}`;
  const metadataAddress = '169.254.169.254';
  const port = 18000 + (id % 1000);
  const ip = (...args: string[]) => run('ip', args);
  await ip('netns', 'add', netns);
  let listener: ChildProcess | null = null;
  const remove = async (): Promise<void> => {
    listener?.kill('SIGKILL');
    await ip('route', 'del', `${metadataAddress}/32`, 'via', address).catch(() => undefined);
    await ip('link', 'del', outer).catch(() => undefined);
    await ip('netns', 'del', netns).catch(() => undefined);
  };
  try {
    await ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner);
    await ip('link', 'set', inner, 'netns', netns);
    await ip('addr', 'add', `${hostSide}/30`, 'dev', outer);
    await ip('link', 'set', outer, 'up');
    await ip('-n', netns, 'addr', 'add', `${address}/30`, 'dev', inner);
    await ip('-n', netns, 'addr', 'add', `${metadataAddress}/32`, 'dev', inner);
    await ip('-n', netns, 'link', 'set', inner, 'up');
    await ip('-n', netns, 'link', 'set', 'lo', 'up');
    await ip('route', 'replace', `${metadataAddress}/32`, 'via', address);
    listener = spawn(
      'ip',
      [
        'netns',
        'exec',
        netns,
        process.execPath,
        '-e',
        // a client may hang up as soon as it connected (an attack only tells whether it could)
        `require('net').createServer((s) => s.on('error', () => {}).end('lan-host\\n')).listen(${port}, '0.0.0.0', () => console.log('ready'))`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      listener!.stdout!.once('data', () => resolve());
      listener!.once('exit', (code) => reject(new Error(`LAN host listener exited with ${code}`)));
    });
    return { address, metadataAddress, port, remove };
  } catch (e) {
    await remove();
    throw e;
  }
}

/** A non-loopback IPv4 address of this machine (what a job would use to reach the server "from outside"). */
export function hostAddress(): string {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const info of list ?? []) if (info.family === 'IPv4' && !info.internal) return info.address;
  }
  throw new Error('this machine has no non-loopback IPv4 address');
}
