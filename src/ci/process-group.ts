/**
 * Running a build command as its own process group, so cancel and timeout can kill the whole
 * tree (the shell, its children and backgrounded grandchildren) with one signal to `-pgid`.
 * POSIX only. Used by the shell executor (src/ci/executor.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Options for {@link runInProcessGroup}. */
export interface ProcessGroupOptions {
  /** Program to run (e.g. `sh`), looked up on the env's PATH. */
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly onStdout: (chunk: Buffer) => void;
  readonly onStderr: (chunk: Buffer) => void;
  /** Aborting terminates the group: SIGTERM, then SIGKILL after `killGraceMs`. */
  readonly signal: AbortSignal;
  /** Milliseconds between SIGTERM and SIGKILL. */
  readonly killGraceMs: number;
  /** Called with the group id once the process is started. */
  readonly onStart?: (pgid: number) => void;
  /** Host uid and gid to run as (the job sandbox's uid); default: the server's. */
  readonly uid?: number;
  readonly gid?: number;
  /** What the child gets as fds 3, 4, …: pipes (the sandbox's info and block fds), or descriptors of this process. */
  readonly extraStdio?: ReadonlyArray<'pipe' | 'ignore' | number>;
  /** Called with the child right after it was spawned (to talk over the extra pipes). */
  readonly onSpawn?: (child: ChildProcess) => void;
}

/** Outcome of a process-group run. */
export type ProcessGroupResult =
  | { readonly kind: 'exited'; readonly exitCode: number | null; readonly signal: NodeJS.Signals | null; readonly aborted: boolean }
  | { readonly kind: 'spawn-error'; readonly message: string };

/** How long to wait for output pipes to close after the leader exits (ms). */
const DRAIN_MS = 300;

/**
 * Spawns `command args` detached (new process group), streams its output, and resolves when
 * the leader has exited and output is drained. Backgrounded processes that keep the output
 * pipes open do not hold the step: after the leader exits, the pipes are closed after a short
 * drain. If `signal` aborts, the group is terminated and the promise resolves only after the
 * termination sequence finished.
 */
export function runInProcessGroup(opts: ProcessGroupOptions): Promise<ProcessGroupResult> {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(opts.command, [...opts.args], {
        cwd: opts.cwd,
        env: opts.env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe', ...(opts.extraStdio ?? [])],
        ...(opts.uid !== undefined && { uid: opts.uid }),
        ...(opts.gid !== undefined && { gid: opts.gid }),
      });
    } catch (e) {
      resolve({ kind: 'spawn-error', message: (e as Error).message });
      return;
    }
    let termination: Promise<void> | null = null;
    let settled = false;
    const pid = child.pid;
    opts.onSpawn?.(child);
    const onAbort = (): void => {
      if (pid !== undefined && !termination) termination = terminateProcessGroup(pid, opts.killGraceMs);
    };
    const stdout = child.stdout!;
    const stderr = child.stderr!;
    stdout.on('data', opts.onStdout);
    stderr.on('data', opts.onStderr);
    child.on('error', (err) => {
      if (settled) return;
      settled = true;
      opts.signal.removeEventListener('abort', onAbort);
      resolve({ kind: 'spawn-error', message: err.message });
    });
    if (pid !== undefined) {
      opts.onStart?.(pid);
      if (opts.signal.aborted) onAbort();
      else opts.signal.addEventListener('abort', onAbort, { once: true });
    }
    child.on('exit', (exitCode, sig) => {
      if (settled) return;
      settled = true;
      const streams = [stdout, stderr];
      const drained = Promise.all(
        streams.map((s) => (s.readableEnded || s.destroyed ? Promise.resolve() : new Promise<void>((r) => s.once('close', () => r())))),
      );
      const timer = new Promise<void>((r) => setTimeout(r, DRAIN_MS).unref());
      void Promise.race([drained, timer]).then(async () => {
        for (const s of child.stdio) if (s && !s.destroyed) s.destroy();
        opts.signal.removeEventListener('abort', onAbort);
        if (termination) await termination;
        resolve({ kind: 'exited', exitCode, signal: sig, aborted: opts.signal.aborted });
      });
    });
  });
}

/**
 * Whether any live (non-zombie) process of the group still exists. Zombies are ignored: an
 * orphaned grandchild that died may stay a zombie when the init process does not reap it.
 * On Linux members are found in `/proc`; elsewhere a zombie counts as alive.
 */
export function processGroupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (process.platform !== 'linux') return true;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    return true;
  }
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    // Fields after "(comm)": state ppid pgrp …
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}

function signalGroup(pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig);
  } catch {
    // ESRCH: the group is already gone.
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Terminates a process group: SIGTERM, wait up to `graceMs` for it to vanish, then SIGKILL
 * and wait up to one more second. Never throws.
 *
 * @param pgid the group id (the leader's pid, as spawned with `detached: true`).
 * @param graceMs milliseconds between SIGTERM and SIGKILL.
 */
export async function terminateProcessGroup(pgid: number, graceMs: number): Promise<void> {
  if (!processGroupExists(pgid)) return;
  signalGroup(pgid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!processGroupExists(pgid)) return;
    await sleep(25);
  }
  signalGroup(pgid, 'SIGKILL');
  const killDeadline = Date.now() + 1000;
  while (Date.now() < killDeadline && processGroupExists(pgid)) await sleep(25);
}
