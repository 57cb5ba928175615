/**
 * What a build agent says of its machine when it connects (docs/compatibility.md#build-agents,
 * POST `/~agent/connect`), in the words of OneDev's agents (Java's `os.name`, `os.version`,
 * `os.arch`): `Linux` / `Mac OS X` / `Windows`, the kernel release, `amd64` / `aarch64` / `x86`.
 */
import os from 'node:os';
import type { ContainerEngines } from '../ci/container-engine.js';

/** The machine's OS, version, architecture, CPUs and memory (bytes). */
export function describeHost(): { osName: string; osVersion: string; osArch: string; cpus: number; memory: number } {
  return { osName: osNameOf(os.type()), osVersion: os.release(), osArch: archOf(os.arch()), cpus: os.availableParallelism(), memory: os.totalmem() };
}

/** Node's `os.type()` as Java's `os.name`. */
export function osNameOf(type: string): string {
  if (type === 'Darwin') return 'Mac OS X';
  if (type === 'Windows_NT') return 'Windows';
  return type;
}

/** Node's `os.arch()` as Java's `os.arch`. */
export function archOf(arch: string): string {
  return ({ x64: 'amd64', arm64: 'aarch64', ia32: 'x86' } as Record<string, string>)[arch] ?? arch;
}

/**
 * The agent's container engine as the connect call describes it (`Podman Engine 4.3.1`): found as
 * the server finds its own (`ContainerEngines.discoverable`: a socket named, or Podman installed),
 * then connected and asked its version; null when there is none or it does not answer (`report`
 * is told why).
 */
export async function describeEngine(engines: ContainerEngines, report: (message: string) => void): Promise<string | null> {
  if (!engines.discoverable()) return null;
  try {
    const engine = await engines.get();
    if ('unavailable' in engine) {
      report(`No container engine: ${engine.unavailable}`);
      return null;
    }
    return await engine.describe();
  } catch (error) {
    report(`Container engine unavailable: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  }
}
