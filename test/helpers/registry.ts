/**
 * A real OCI registry for tests: Debian's `docker-registry` (the CNCF distribution registry) on a
 * free loopback port with its storage in a temporary directory, and, when a user is given, Basic
 * authentication against an htpasswd file (bcrypt, from libxcrypt through Python's `crypt`).
 */
import { spawn, execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** A running registry: its address (`127.0.0.1:<port>`, what image references name) and its end. */
export interface TestRegistry {
  readonly address: string;
  /** The tags of `repository` the registry holds (read with the registry's login). */
  tags(repository: string): Promise<string[]>;
  close(): Promise<void>;
}

/** Starts a registry; with `login`, every request needs that user and password. */
export async function startRegistry(login: { user: string; password: string } | null = null): Promise<TestRegistry> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gitloom-registry-'));
  const port = await freePort();
  let auth = '';
  if (login) {
    const hash = execFileSync(
      'python3',
      ['-W', 'ignore', '-c', 'import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH)))', login.password],
      {
        encoding: 'utf8',
      },
    ).trim();
    await writeFile(path.join(dir, 'htpasswd'), `${login.user}:${hash}\n`);
    auth = `auth: { htpasswd: { realm: test, path: ${path.join(dir, 'htpasswd')} } }\n`;
  }
  const config = path.join(dir, 'config.yml');
  await writeFile(
    config,
    `version: 0.1\nlog: { level: error }\nstorage: { filesystem: { rootdirectory: ${path.join(dir, 'data')} } }\nhttp: { addr: 127.0.0.1:${port} }\n${auth}`,
  );
  const child = spawn('docker-registry', ['serve', config], { stdio: 'ignore' });
  const address = `127.0.0.1:${port}`;
  const headers: Record<string, string> = login ? { authorization: `Basic ${Buffer.from(`${login.user}:${login.password}`).toString('base64')}` } : {};
  for (let i = 0; ; i++) {
    const ok = await fetch(`http://${address}/v2/`, { headers }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (i > 100) throw new Error('docker-registry did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    address,
    async tags(repository) {
      const res = await fetch(`http://${address}/v2/${repository}/tags/list`, { headers });
      return res.ok ? (((await res.json()) as { tags: string[] | null }).tags ?? []) : [];
    },
    async close() {
      child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}
