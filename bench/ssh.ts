/**
 * `git clone` over SSH and over HTTP beside `git clone --no-local` of the same bare repository
 * (git's own upload-pack over a pipe: the same pack, no transport), on the bench repository
 * (3,000 commits) and on one of 64 MiB of incompressible files (the transport's throughput, and
 * the server's resident memory while it streams the pack). Rounds alternate the three; p50 of
 * each. Part of `npm run bench` (bench/run.ts).
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { rssMiB, time, type BenchServer } from './lib.js';

const run = promisify(execFile);
const ROUNDS = 7;

/** One row of the bench table (bench/run.ts). */
export interface CloneRow {
  measure: string;
  gitloom: string;
  limit: string;
  ratio: string;
  target: string;
}

const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ms = (value: number) => `${value.toFixed(value < 100 ? 1 : 0)} ms`;

/** Runs git with `env`; rejects with its stderr. */
async function gitRun(cwd: string, args: string[], env: Record<string, string> = {}): Promise<void> {
  await run('git', args, { cwd, env: { ...process.env, GIT_TERMINAL_PROMPT: '0', ...env }, maxBuffer: 64 * 1024 * 1024 });
}

/** A project of `files` (name → bytes) in one commit, written straight into its repository. */
async function largeProject(server: BenchServer, headers: Record<string, string>, files: Record<string, Buffer>): Promise<number> {
  const res = await fetch(`${server.url}/~api/projects`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: '{"name":"large"}',
  });
  const id = (await res.json()) as number;
  const repo = path.join(server.dataDir, 'repos', `${id}.git`);
  const parts: Buffer[] = [Buffer.from('commit refs/heads/main\ncommitter Bench <bench@example.com> 1700000000 +0000\ndata 5\nlarge\n')];
  for (const [name, content] of Object.entries(files)) parts.push(Buffer.from(`M 100644 inline ${name}\ndata ${content.length}\n`), content, Buffer.from('\n'));
  await new Promise<void>((resolve, reject) => {
    const child = spawn('git', [`--git-dir=${repo}`, 'fast-import', '--quiet'], { stdio: ['pipe', 'ignore', 'inherit'] });
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`fast-import exited ${code}`))));
    child.stdin.end(Buffer.concat(parts));
  });
  return id;
}

/** An SSH identity of the administrator, added through the API, and the known_hosts of the server's host keys. */
async function sshIdentity(server: BenchServer, headers: Record<string, string>, work: string): Promise<string> {
  const key = path.join(work, 'bench_ed25519');
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
  const added = await fetch(`${server.url}/~api/users/1/ssh-keys`, { method: 'POST', headers, body: await fs.readFile(`${key}.pub`, 'utf8') });
  if (!added.ok) throw new Error(`adding the SSH key: ${added.status} ${await added.text()}`);
  const knownHosts = path.join(work, 'known_hosts');
  const hostKeys = await Promise.all(['ssh_host_ed25519_key.pub', 'ssh_host_rsa_key.pub'].map((f) => fs.readFile(path.join(server.dataDir, 'ssh', f), 'utf8')));
  await fs.writeFile(knownHosts, hostKeys.map((line) => `bench-ssh ${line}`).join(''));
  return ['ssh', '-F', '/dev/null', '-i', key, '-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes', '-o', `UserKnownHostsFile=${knownHosts}`]
    .concat(['-o', 'StrictHostKeyChecking=yes', '-o', 'HostKeyAlias=bench-ssh'])
    .join(' ');
}

/** Samples the resident memory of `pid` every 50 ms while `fn` runs; resolves with the peak, MiB. */
async function peakRss(pid: number, fn: () => Promise<unknown>): Promise<number> {
  let peak = await rssMiB(pid);
  let running = true;
  const sampling = (async () => {
    while (running) {
      peak = Math.max(peak, await rssMiB(pid));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  try {
    await fn();
  } finally {
    running = false;
    await sampling;
  }
  return peak;
}

/**
 * Clones of `project` through the three ways, alternating, `ROUNDS` times; returns the p50 of
 * each in ms and the server's peak resident memory during the SSH clones.
 */
async function cloneTimes(server: BenchServer, work: string, project: string, projectId: number, sshCommand: string, sshPort: number) {
  const httpUrl = `http://admin:${server.token}@127.0.0.1:${new URL(server.url).port}/${project}`;
  const sshUrl = `ssh://git@127.0.0.1:${sshPort}/${project}`;
  const local = path.join(server.dataDir, 'repos', `${projectId}.git`);
  const times = { ssh: [] as number[], http: [] as number[], local: [] as number[] };
  let peak = 0;
  const once = async (way: keyof typeof times, args: string[], env: Record<string, string> = {}) => {
    const dir = path.join(work, `clone-${way}`);
    times[way].push(await time(() => gitRun(work, ['clone', '-q', ...args, dir], env)));
    await fs.rm(dir, { recursive: true, force: true });
  };
  await once('ssh', [sshUrl], { GIT_SSH_COMMAND: sshCommand });
  times.ssh.length = 0;
  for (let i = 0; i < ROUNDS; i++) {
    peak = Math.max(peak, await peakRss(server.process.pid!, () => once('ssh', [sshUrl], { GIT_SSH_COMMAND: sshCommand })));
    await once('http', [httpUrl]);
    await once('local', ['--no-local', local]);
  }
  return { ssh: p50(times.ssh), http: p50(times.http), local: p50(times.local), peak };
}

/**
 * The clone rows: over SSH and over HTTP, each against `git clone --no-local`, on the bench
 * repository (`projectId`, path `bench`) and on a 64 MiB one made here. `sshPort` is the
 * server's `GITLOOM_SSH_PORT`.
 */
export async function cloneRows(server: BenchServer, headers: Record<string, string>, work: string, projectId: number, sshPort: number): Promise<CloneRow[]> {
  const sshCommand = await sshIdentity(server, headers, work);
  const files = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`blob-${i}.bin`, randomBytes(8 * 1024 * 1024)]));
  const largeId = await largeProject(server, headers, files);
  const rows: CloneRow[] = [];
  for (const [label, project, id] of [
    ['3,000 commits', 'bench', projectId],
    ['64 MiB of incompressible files', 'large', largeId],
  ] as const) {
    const t = await cloneTimes(server, work, project, id, sshCommand, sshPort);
    const limit = `${ms(t.local)} (git clone --no-local)`;
    rows.push(
      {
        measure: `\`git clone\` over SSH, ${label}, p50`,
        gitloom: `${ms(t.ssh)} (server RSS peak ${t.peak.toFixed(0)} MiB)`,
        limit,
        ratio: `${(t.ssh / t.local).toFixed(2)}×`,
        target: '≤ 1.1×',
      },
      { measure: `\`git clone\` over HTTP, ${label}, p50`, gitloom: ms(t.http), limit, ratio: `${(t.http / t.local).toFixed(2)}×`, target: '≤ 1.1×' },
    );
  }
  return rows;
}
