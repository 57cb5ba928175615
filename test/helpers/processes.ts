import { readdirSync, readFileSync } from 'node:fs';

/**
 * Host pids of live (not zombie) processes whose command line contains `marker`. Job steps run
 * in their own PID namespace, so the pids they print are not host pids: tests find their
 * processes by a unique argument instead.
 */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (cmdline.includes(marker) && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z') found.push(Number(name));
    } catch {
      // the process ended meanwhile
    }
  }
  return found;
}

/** Waits up to `ms` milliseconds for every process with `marker` to end; whether none is left. */
export async function waitGone(marker: string, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (processesWith(marker).length === 0) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return processesWith(marker).length === 0;
}
