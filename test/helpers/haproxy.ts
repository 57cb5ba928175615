import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './server.js';

/** A running HAProxy (Debian `haproxy`) in front of server processes. */
export interface Proxy {
  /** The URL clients use. */
  url: string;
  close(): Promise<void>;
}

/** The configuration of docs/deploy.md. */
const DEPLOYED = path.resolve(import.meta.dirname, '../../deploy/haproxy.cfg');

/**
 * Starts HAProxy with the configuration of docs/deploy.md (`deploy/haproxy.cfg`) — its HTTP
 * part, bound to a free port of 127.0.0.1, with `backends` (`host:port`) as the servers in place
 * of the example's — and resolves once it answers.
 */
export async function startHaproxy(backends: string[]): Promise<Proxy> {
  const port = await freePort();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-haproxy-'));
  const deployed = await fs.readFile(DEPLOYED, 'utf8');
  const http = deployed.slice(0, deployed.indexOf('\n# git over SSH'));
  const lines = http.split('\n').filter((line) => !/^\s+server /.test(line));
  const config = lines
    .map((line) => (/^\s+bind /.test(line) ? `  bind 127.0.0.1:${port}` : line))
    .concat(
      backends.map((backend, i) => `  server s${i} ${backend} check`),
      '',
    )
    .join('\n');
  const file = path.join(dir, 'haproxy.cfg');
  await fs.writeFile(file, config);
  const child: ChildProcess = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`haproxy exited: ${output}`);
    try {
      if ((await fetch(`${url}/~health/live`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`haproxy did not answer: ${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
