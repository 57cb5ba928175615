/** What an agent says of its machine (src/agent/host.ts), in the words of OneDev's agents (Java's `os.name`, `os.arch`). */
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { archOf, describeHost, osNameOf } from '../../src/agent/host.js';

describe('describeHost', () => {
  it("names the OS and architecture as Java does, and counts this machine's CPUs and memory", () => {
    expect(osNameOf('Linux')).toBe('Linux');
    expect(osNameOf('Darwin')).toBe('Mac OS X');
    expect(osNameOf('Windows_NT')).toBe('Windows');
    expect(archOf('x64')).toBe('amd64');
    expect(archOf('arm64')).toBe('aarch64');
    expect(archOf('ia32')).toBe('x86');
    expect(archOf('riscv64')).toBe('riscv64');
    expect(describeHost()).toEqual({
      osName: osNameOf(os.type()),
      osVersion: os.release(),
      osArch: archOf(os.arch()),
      cpus: os.availableParallelism(),
      memory: os.totalmem(),
    });
  });
});
