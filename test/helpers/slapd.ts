/**
 * A real OpenLDAP server for the directory sign-in tests: Debian's `slapd` started from a
 * generated `slapd.conf` (mdb database, suffix `dc=example,dc=org`) in a temp dir, on a free port
 * of loopback, its entries loaded beforehand with `slapadd`.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const LDAP_SUFFIX = 'dc=example,dc=org';
export const LDAP_MANAGER = { dn: `cn=admin,${LDAP_SUFFIX}`, password: 'manager-secret' };

/** A running slapd. */
export interface TestSlapd {
  /** `ldap://127.0.0.1:<port>`. */
  url: string;
  /** Stops the server (its data stays): the directory is then down. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Resolves once `port` accepts a connection (slapd listens), rejects when `child` exits first. */
async function listening(port: number, child: ChildProcess, log: () => Promise<string>): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`slapd exited with ${child.exitCode}: ${await log()}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Starts slapd with the entries of `ldif` (LDIF text, below {@link LDAP_SUFFIX}; the suffix entry
 * itself is made here). The manager {@link LDAP_MANAGER} may read everything; users bind with
 * their `userPassword` and read entries; anonymous binds may only authenticate.
 */
export async function startTestSlapd(ldif: string): Promise<TestSlapd> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-slapd-'));
  await fs.mkdir(path.join(dir, 'db'));
  const conf = path.join(dir, 'slapd.conf');
  await fs.writeFile(
    conf,
    [
      ...['core', 'cosine', 'inetorgperson', 'nis'].map((s) => `include /etc/ldap/schema/${s}.schema`),
      `pidfile ${dir}/slapd.pid`,
      'modulepath /usr/lib/ldap',
      'moduleload back_mdb',
      'database mdb',
      `suffix "${LDAP_SUFFIX}"`,
      `rootdn "${LDAP_MANAGER.dn}"`,
      `rootpw ${LDAP_MANAGER.password}`,
      `directory ${dir}/db`,
      'access to attrs=userPassword by self =xw by anonymous auth by * none',
      'access to * by users read by * none',
      '',
    ].join('\n'),
  );
  const root = `dn: ${LDAP_SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\no: Example\ndc: example\n\n`;
  await fs.writeFile(path.join(dir, 'data.ldif'), root + ldif);
  await run('/usr/sbin/slapadd', ['-f', conf, '-l', path.join(dir, 'data.ldif')]);
  const port = await freePort();
  const url = `ldap://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  const logFile = path.join(dir, 'slapd.log');

  async function start(): Promise<void> {
    const out = await fs.open(logFile, 'a');
    // -d 0: in the foreground (a child of this process), no debug output
    child = spawn('/usr/sbin/slapd', ['-f', conf, '-h', `${url}/`, '-d', '0'], { stdio: ['ignore', out.fd, out.fd] });
    await out.close();
    await listening(port, child, () => fs.readFile(logFile, 'utf8'));
  }
  async function stop(): Promise<void> {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    await exited;
  }
  await start();
  return {
    url,
    start,
    stop,
    async close() {
      await stop();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
