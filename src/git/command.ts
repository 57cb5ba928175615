/**
 * The git runner: the only place in Gitloom that spawns git (docs/architecture.md#dependency-rules).
 *
 * - `spawn('git', args)` with an argument array, never a shell.
 * - Subcommands and flags are literal strings written in `src/git/`; every value that comes from
 *   outside (a branch name, a revision, a refspec) is wrapped with {@link value}, which refuses a
 *   leading `-` so it can never be read as an option. Callers also put `--end-of-options` or `--`
 *   before values where the subcommand supports it.
 * - A fixed environment: `LC_ALL=C`, `GIT_CONFIG_NOSYSTEM=1`, `GIT_CONFIG_GLOBAL` (`/dev/null` or a
 *   configured file), `GIT_TERMINAL_PROMPT=0`, a private `HOME`; nothing else leaks in from the
 *   server's own environment except `PATH` (and `TMPDIR`).
 * - A default timeout and an optional `AbortSignal`; on either the whole process group is killed.
 * - Failures are {@link GitError}s (a server fault, not a user error) carrying the arguments, exit
 *   code and stderr. Callers classify outcomes by exit code and porcelain output only.
 */
import type { Socket } from 'node:net';
import os from 'node:os';
import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough, pipeline, type Readable, type Writable } from 'node:stream';
import { BadRequest } from '../errors.js';

/** Longest value accepted as a git argument, in bytes (PATH_MAX, and git's longest ref name). */
const MAX_VALUE_BYTES = 4096;

/**
 * A value argument (not a literal written in src/git): checked on construction not to start with
 * `-` (so git cannot read it as an option), to hold no NUL/newline and to be at most 4096 bytes.
 * Create with {@link value}.
 */
export class GitValue {
  /** The checked text. */
  readonly text: string;

  /**
   * @param text the raw value.
   * @throws BadRequest when `text` is empty, longer than 4096 bytes (git's path and ref name
   * bound; far longer ones would not even fit an argument list), starts with `-`, or contains a
   * NUL or newline.
   */
  constructor(text: string) {
    if (text.length === 0) throw new BadRequest('Empty value is not allowed');
    if (Buffer.byteLength(text) > MAX_VALUE_BYTES) throw new BadRequest(`Value longer than ${MAX_VALUE_BYTES} bytes`);
    if (text.startsWith('-')) throw new BadRequest(`Value must not start with '-': ${text}`);
    if (/[\0\n\r]/.test(text)) throw new BadRequest('Value must not contain control characters');
    this.text = text;
  }
}

/** One argument: a literal string written in src/git, or a checked {@link GitValue}. */
export type GitArg = string | GitValue;

/**
 * Wraps a value that did not originate as a literal in src/git (user input, a revision, a path,
 * a hash read from elsewhere) for use as a git argument.
 *
 * @param text the value.
 * @returns the checked value.
 * @throws BadRequest when `text` is empty, over 4096 bytes, starts with `-`, or contains a NUL or newline.
 * @example runGit([gitDir(repo), 'rev-parse', '--verify', '-q', value(rev)])
 */
export function value(text: string): GitValue {
  return new GitValue(text);
}

/** Failure of a git process: a server fault (500), not a user error. */
export class GitError extends Error {
  /**
   * @param args the arguments git ran with (values unwrapped).
   * @param exitCode the exit code, or null when killed by a signal.
   * @param stderr what git wrote on stderr (capped at 64 KiB).
   * @param reason short description (`exited with 128`, `timed out after 60000 ms`, …).
   */
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
    reason: string,
  ) {
    super(`git ${args.join(' ')}: ${reason}${stderr.trim() ? `: ${stderr.trim().slice(0, 2000)}` : ''}`);
    this.name = 'GitError';
  }
}

/** Process-wide git environment settings; see {@link configureGit}. */
export interface GitSettings {
  /** `HOME` (and `XDG_CONFIG_HOME`) for git processes; default `/nonexistent`. */
  homeDir: string;
  /** `GIT_CONFIG_GLOBAL`; default `/dev/null`. */
  globalConfigFile: string;
  /** Default timeout of {@link runGit} in milliseconds; default 120 000. */
  timeoutMs: number;
  /** Default timeout of {@link spawnGit} (long transfers) in milliseconds; default 3 600 000. */
  streamTimeoutMs: number;
  /** Called with each command that ran longer than `slowMs`; default: none. */
  onSlowCommand: ((args: readonly string[], ms: number) => void) | null;
  /** Threshold for `onSlowCommand` in milliseconds; default 5 000. */
  slowMs: number;
  /** Called after every git process ended: its arguments, duration in ms and exit code (null when killed); default: none. */
  onCommand: ((args: readonly string[], ms: number, exitCode: number | null) => void) | null;
}

const settings: GitSettings = {
  homeDir: '/nonexistent',
  globalConfigFile: '/dev/null',
  timeoutMs: 120_000,
  streamTimeoutMs: 3_600_000,
  onSlowCommand: null,
  slowMs: 5_000,
  onCommand: null,
};

/**
 * Changes the process-wide git settings (call once at startup, e.g. with `homeDir` and
 * `globalConfigFile` inside the data directory).
 *
 * @param changes the settings to change; others keep their value.
 */
export function configureGit(changes: Partial<GitSettings>): void {
  Object.assign(settings, changes);
}

const STDERR_CAP = 64 * 1024;

function unwrap(args: readonly GitArg[]): string[] {
  return args.map((a) => (a instanceof GitValue ? a.text : a));
}

function buildEnv(extra: Record<string, string> | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    LC_ALL: 'C',
    LANG: 'C',
    HOME: settings.homeDir,
    XDG_CONFIG_HOME: settings.homeDir,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: settings.globalConfigFile,
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '',
    SSH_ASKPASS: '',
    GIT_NO_REPLACE_OBJECTS: '1',
  };
  if (process.env.TMPDIR) env.TMPDIR = process.env.TMPDIR;
  return { ...env, ...extra };
}

/** Options shared by {@link runGit} and {@link spawnGit}. */
export interface GitProcessOptions {
  /** Working directory; default `/` (repositories are addressed with `--git-dir=`). */
  cwd?: string;
  /** Extra environment variables (e.g. `GIT_AUTHOR_NAME`, `GIT_PROTOCOL`). */
  env?: Record<string, string>;
  /** Exit codes that count as success; default `[0]`. */
  okExitCodes?: readonly number[];
  /** Kill the process after this many milliseconds (0: never); default from {@link configureGit}. */
  timeoutMs?: number;
  /** Kill the process when this signal aborts. */
  signal?: AbortSignal;
  /** Receives what git writes on stderr as it comes (also kept, capped, for its GitError). */
  onStderr?: (chunk: string) => void;
  /**
   * A lower CPU priority (a nice value, 1–19) given to git at once, which the processes it starts
   * (pack-objects) inherit: bulk work yields the cores to the requests waiting on them.
   */
  niceness?: number;
}

/** Options of {@link runGit}. */
export interface RunGitOptions extends GitProcessOptions {
  /** Written to stdin, which is then closed. Without it stdin is empty. */
  input?: string | Buffer;
}

/** Outcome of {@link runGit}. */
export interface GitResult {
  /** Exit code (one of `okExitCodes`). */
  exitCode: number;
  /** Everything git wrote on stdout. */
  stdout: Buffer;
  /** What git wrote on stderr (capped at 64 KiB). */
  stderr: string;
}

interface Started {
  child: ChildProcess;
  argv: string[];
  stderr: () => string;
  exit: Promise<{ code: number | null; reason: string | null }>;
}

/** Gives a process a nice value; a process that already exited (ESRCH) needs none. */
function lowerPriority(pid: number, niceness: number): void {
  try {
    os.setPriority(pid, niceness);
  } catch (error) {
    if ((error as { info?: { code?: string } }).info?.code !== 'ESRCH') throw error;
  }
}

function start(args: readonly GitArg[], opts: GitProcessOptions, defaultTimeout: number): Started {
  const argv = unwrap(args);
  const child = spawn('git', argv, {
    cwd: opts.cwd ?? '/',
    env: buildEnv(opts.env),
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true, // own process group, so a kill reaches git's children (pack-objects, …)
    windowsHide: true,
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    if (stderr.length < STDERR_CAP) stderr += chunk.slice(0, STDERR_CAP - stderr.length);
    opts.onStderr?.(chunk);
  });
  // A git process that exits early must not crash the server with EPIPE on its stdin.
  child.stdin!.on('error', () => {});
  if (opts.niceness !== undefined && child.pid !== undefined) lowerPriority(child.pid, opts.niceness);

  let killedFor: string | null = null;
  const kill = (why: string): void => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    killedFor ??= why;
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  };
  const timeoutMs = opts.timeoutMs ?? defaultTimeout;
  const timer = timeoutMs > 0 ? setTimeout(() => kill(`timed out after ${timeoutMs} ms`), timeoutMs).unref() : undefined;
  const onAbort = (): void => kill('aborted');
  if (opts.signal?.aborted) onAbort();
  else opts.signal?.addEventListener('abort', onAbort, { once: true });

  const began = Date.now();
  const exit = new Promise<{ code: number | null; reason: string | null }>((resolve) => {
    child.once('error', (err) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      resolve({ code: null, reason: `failed to start: ${err.message}` });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      const ms = Date.now() - began;
      if (settings.onSlowCommand && ms >= settings.slowMs) settings.onSlowCommand(argv, ms);
      settings.onCommand?.(argv, ms, code);
      if (killedFor) resolve({ code, reason: killedFor });
      else if (code === null) resolve({ code: null, reason: `killed by ${signal}` });
      else resolve({ code, reason: null });
    });
  });
  return { child, argv, stderr: () => stderr, exit };
}

/**
 * Runs git to completion, collecting stdout in memory (for small outputs; use {@link spawnGit}
 * for packs and other large data).
 *
 * @param args literal subcommands/flags and {@link value}-wrapped values.
 * @param opts stdin input, environment, accepted exit codes, timeout, abort signal.
 * @returns exit code, stdout bytes and stderr text.
 * @throws GitError when git exits with a code not in `okExitCodes`, is killed (timeout/abort) or
 *   cannot start.
 * @example const { stdout } = await runGit(['--git-dir=' + repo, 'for-each-ref', '--format=%(refname)']);
 */
export async function runGit(args: readonly GitArg[], opts: RunGitOptions = {}): Promise<GitResult> {
  const s = start(args, opts, settings.timeoutMs);
  const chunks: Buffer[] = [];
  s.child.stdout!.on('data', (c: Buffer) => chunks.push(c));
  s.child.stdin!.end(opts.input ?? '');
  const { code, reason } = await s.exit;
  const ok = opts.okExitCodes ?? [0];
  if (reason !== null || code === null || !ok.includes(code)) {
    throw new GitError(s.argv, code, s.stderr(), reason ?? `exited with ${code}`);
  }
  return { exitCode: code, stdout: Buffer.concat(chunks), stderr: s.stderr() };
}

/**
 * Runs git to completion and returns stdout as UTF-8 text (see {@link runGit}).
 *
 * @throws GitError as {@link runGit}.
 */
export async function gitText(args: readonly GitArg[], opts: RunGitOptions = {}): Promise<string> {
  return (await runGit(args, opts)).stdout.toString('utf8');
}

/** A running git process with streamed stdin/stdout; see {@link spawnGit}. */
export interface GitStream {
  /** The process's stdin; write to it and end it. */
  stdin: Writable;
  /** The process's stdout, to be consumed as a stream, also after the process has exited. */
  stdout: Readable;
  /** Resolves with the exit code when git exits with an accepted code; rejects with GitError. */
  done: Promise<number>;
  /** Kills the process group (idempotent). */
  kill(): void;
  /**
   * Whether the process and its pipes keep Node's event loop alive (they do from the start): a
   * long-lived process waiting for work lets the server's process exit.
   */
  keepAlive(on: boolean): void;
}

/**
 * Starts git with streamed stdin and stdout, for large data (packs, smart HTTP). The caller must
 * consume `stdout` and end `stdin`. The default timeout is the long stream timeout.
 *
 * `stdout` may be read late: Node drains a child's stdout that has no reader yet when the child
 * exits (child_process `flushStdio`), so git's stdout is piped at once into a PassThrough that
 * holds what git wrote (with backpressure) until the caller reads it — a reply stream is piped
 * only at the end of its event-loop turn, when a small blob's `cat-file` may be long gone.
 *
 * @param args literal subcommands/flags and {@link value}-wrapped values.
 * @param opts environment, accepted exit codes, timeout, abort signal.
 * @returns stdin, stdout and a `done` promise.
 * @example const g = spawnGit(['upload-pack', '--stateless-rpc', repo]); body.pipe(g.stdin);
 */
export function spawnGit(args: readonly GitArg[], opts: GitProcessOptions = {}): GitStream {
  const s = start(args, opts, settings.streamTimeoutMs);
  const ok = opts.okExitCodes ?? [0];
  const done = s.exit.then(({ code, reason }) => {
    if (reason !== null || code === null || !ok.includes(code)) {
      throw new GitError(s.argv, code, s.stderr(), reason ?? `exited with ${code}`);
    }
    return code;
  });
  // Avoid an unhandled rejection when the caller only watches the streams.
  done.catch(() => {});
  // the pipeline passes git's read errors on, and a reader that gives up (a client gone) closes
  // git's stdout, so git ends on a broken pipe instead of waiting for its stream timeout
  const stdout = new PassThrough();
  pipeline(s.child.stdout!, stdout, () => {});
  return {
    stdin: s.child.stdin!,
    stdout,
    done,
    kill: () => {
      if (s.child.exitCode !== null || s.child.signalCode !== null) return;
      try {
        process.kill(-s.child.pid!, 'SIGKILL');
      } catch {
        s.child.kill('SIGKILL');
      }
    },
    keepAlive: (on) => {
      for (const handle of [s.child, s.child.stdin, s.child.stdout, s.child.stderr] as (ChildProcess | Socket | null)[]) {
        if (on) handle?.ref();
        else handle?.unref();
      }
    },
  };
}

let versionPromise: Promise<[number, number, number]> | null = null;

/**
 * The installed git version as `[major, minor, patch]`, read once per process from `git version`.
 *
 * @throws GitError when git cannot run.
 */
export function gitVersion(): Promise<[number, number, number]> {
  versionPromise ??= gitText(['version']).then((out) => {
    const m = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(out);
    if (!m) throw new GitError(['version'], 0, '', `unrecognised version output ${JSON.stringify(out)}`);
    return [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] as [number, number, number];
  });
  return versionPromise;
}

/**
 * Whether the installed git is at least `major.minor`.
 *
 * @throws GitError when git cannot run.
 */
export async function gitAtLeast(major: number, minor: number): Promise<boolean> {
  const [a, b] = await gitVersion();
  return a > major || (a === major && b >= minor);
}

/**
 * The `--git-dir=<repo>` argument for a bare repository.
 *
 * @param repo absolute path of the repository.
 * @throws Error (a programming error) when `repo` is not absolute.
 */
export function gitDir(repo: string): string {
  if (!repo.startsWith('/')) throw new Error(`Repository path must be absolute: ${repo}`);
  return `--git-dir=${repo}`;
}
