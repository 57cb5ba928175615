/**
 * The processes of a jobs dir's jobs, found by their environment: every step of a job, bubblewrap
 * and everything in its sandbox carry `GITLOOM_WORKSPACE=<jobs dir>/<job dir>/…`. Start-up
 * recovery (src/domain/startup-recovery.ts) and a build agent starting
 * (src/agent/work-dir.ts) kill those a previous run left.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Host pids (other than this process) whose environment holds `GITLOOM_WORKSPACE=<root>/<name>` with `name` not in `keep`. */
export function buildProcesses(workspacesRoot: string, keep: ReadonlySet<string>): number[] {
  const prefix = `GITLOOM_WORKSPACE=${workspacesRoot}${path.sep}`;
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${name}/environ`, 'utf8');
    } catch {
      continue; // ended meanwhile, or a kernel thread
    }
    for (const variable of environ.split('\0')) {
      if (!variable.startsWith(prefix)) continue;
      const workspace = variable.slice(prefix.length).split(path.sep)[0];
      if (!keep.has(workspace)) found.push(Number(name));
      break;
    }
  }
  return found;
}
