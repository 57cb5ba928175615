/**
 * Which process made a file of the shared data dir (docs/architecture.md#start-up-recovery): a
 * process is known by its kernel (the boot id and the pid namespace: where a pid means one
 * process), its pid and its start time as the kernel reports it (`/proc/<pid>/stat` field 22, in
 * clock ticks since boot), so that a pid reused by a later process is not taken for the one that
 * made the file. Temp files, cache snapshots and push markers carry this process's
 * {@link ownerTag} in their names; recovery reads it back ({@link ownerOf}) and asks whether that
 * process still runs — the kernel answers for the processes it runs ({@link runsHere}), the
 * process registry of the database (src/domain/processes/) for those of other machines.
 * Linux only, as the job sandbox.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import os from 'node:os';

/** One process as its kernel knows it. */
export interface ProcessIdentity {
  /** The machine's host name (for people; not part of the identity). */
  readonly host: string;
  /** The kernel and pid namespace: `<boot id>/<pid namespace inode>`. */
  readonly kernel: string;
  readonly pid: number;
  /** Start time in clock ticks since boot (`/proc/<pid>/stat` field 22). */
  readonly startTicks: number;
}

/** The owner named by a tag: pid, start time and the first 8 hex digits of the kernel's SHA-256. */
export interface OwnerTag {
  readonly pid: number;
  readonly startTicks: number;
  readonly kernelHash: string;
}

/**
 * The start time of process `pid` in clock ticks since boot, or null when no such process runs
 * (here). The command name in parentheses may hold spaces and parentheses: fields are counted
 * after its last `)`.
 *
 * @throws Error when `/proc/<pid>/stat` is unreadable for another reason than the process being gone.
 */
export function processStartTicks(pid: number): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (e) {
    if (['ENOENT', 'ESRCH'].includes((e as NodeJS.ErrnoException).code ?? '')) return null;
    throw e;
  }
  // after "pid (comm) " come field 3 (state) onwards: field 22 is the 20th of them
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[19]);
}

/** The SHA-256 of a kernel key, first 8 hex digits: what a tag carries of it. */
export function kernelHash(kernel: string): string {
  return createHash('sha256').update(kernel).digest('hex').slice(0, 8);
}

let identity: ProcessIdentity | null = null;

/**
 * This process: host name, kernel key, pid and start time, read once.
 *
 * @throws Error when `/proc` cannot be read (not Linux).
 */
export function thisProcess(): ProcessIdentity {
  if (identity === null) {
    const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const pidNamespace = /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? '0';
    const startTicks = processStartTicks(process.pid);
    if (startTicks === null) throw new Error('/proc/self/stat is unreadable');
    identity = { host: os.hostname(), kernel: `${bootId}/${pidNamespace}`, pid: process.pid, startTicks };
  }
  return identity;
}

/** The tag naming this process in file names: `p<pid>.<start ticks>.<kernel hash>`. */
export function ownerTag(): string {
  const me = thisProcess();
  return `p${me.pid}.${me.startTicks}.${kernelHash(me.kernel)}`;
}

const TAG = /^p(\d+)\.(\d+)\.([0-9a-f]{8})-/;

/**
 * A fresh name owned by this process: `<prefix><owner tag>-<uuid>` (for temp files and snapshots
 * beside their targets).
 */
export function ownedName(prefix: string): string {
  return `${prefix}${ownerTag()}-${randomUUID()}`;
}

/**
 * The owner of a name {@link ownedName} made with `prefix`, or null when the name carries none
 * (made by a version before owners were named, or not made with that prefix).
 */
export function ownerOf(name: string, prefix: string): OwnerTag | null {
  if (!name.startsWith(prefix)) return null;
  const match = TAG.exec(name.slice(prefix.length));
  return match ? { pid: Number(match[1]), startTicks: Number(match[2]), kernelHash: match[3] } : null;
}

/** Whether a process of this kernel runs with pid `pid` and start time `startTicks`. */
export function runsHere(pid: number, startTicks: number): boolean {
  return processStartTicks(pid) === startTicks;
}

/** Whether `owner` is a process of this kernel (whose liveness {@link runsHere} tells). */
export function isOfThisKernel(owner: OwnerTag): boolean {
  return owner.kernelHash === kernelHash(thisProcess().kernel);
}
