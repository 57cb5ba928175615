/**
 * The reaper of a server process's containers (docs/security.md#container-steps): a process
 * beside the server whose standard input is a pipe from it. It waits in `sh`'s `read` for the pipe
 * to end — the server stopped, crashed or was killed with SIGKILL: the kernel closes the pipe in
 * every case — and then, through the engine's Docker Engine API, removes every container labelled
 * as this server process's ({@link SERVER_LABEL}) and ends the Podman service the server started
 * (its pid is the last line the server wrote), so that a killed server leaves no container, no
 * `conmon` and no engine service behind, without waiting for the next start.
 *
 * Only this process's containers go: other server processes of the same data dir (PostgreSQL)
 * label theirs with their own id. The reaper runs in a session of its own, so a signal to the
 * server's process group (a terminal's Ctrl-C) does not end it before the server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';

/** Label of every container a server process creates: that process's id ({@link ContainerReaper.owner}). */
export const SERVER_LABEL = 'io.gitloom.server';

/**
 * What the reaper runs once its input ended, as `node -e` (run only then: the waiting is `sh`'s):
 * arguments `<socket> <owner> <service pid or empty>`. Lists the containers labelled with the
 * owner, stops (SIGKILL at once) and removes each — a removal right after the stop may fail while
 * the container's mounts are busy, so it is tried for five seconds — then sends SIGTERM to the
 * service (SIGKILL after five seconds) when that pid still runs a command naming the socket, and
 * removes the service's pid file when it names that pid.
 */
const REAP = String.raw`
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const [socketPath, owner, service] = process.argv.slice(1);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const call = (method, url) => new Promise((resolve) => {
  const req = http.request({ socketPath, method, path: url, timeout: 20000 }, (res) => {
    const chunks = [];
    res.on('data', (c) => chunks.push(c));
    res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }));
  });
  req.on('timeout', () => req.destroy(new Error('timeout')));
  // an engine that is gone or does not answer: nothing more can be removed through it
  req.on('error', () => resolve({ status: 0, body: '' }));
  req.end();
});
// a process that ended answers ENOENT (ESRCH while it is being reaped); anything else ends the reaper
const gone = (e) => {
  if (e.code !== 'ENOENT' && e.code !== 'ESRCH') throw e;
};
const alive = (pid) => {
  try { return !/^\S+ \(.*\) Z/s.test(fs.readFileSync('/proc/' + pid + '/stat', 'utf8')); } catch (e) { gone(e); return false; }
};
async function remove(id) {
  await call('POST', '/containers/' + id + '/stop?t=0');
  for (let i = 0; i < 25; i++) {
    const { status } = await call('DELETE', '/containers/' + id + '?force=true&v=true');
    if (status === 200 || status === 204 || status === 404) return;
    await sleep(200);
  }
}
async function endService(pid) {
  let command = '';
  try { command = fs.readFileSync('/proc/' + pid + '/cmdline', 'utf8'); } catch (e) { gone(e); return; }
  if (!command.includes(socketPath)) return;
  try { process.kill(pid, 'SIGTERM'); } catch (e) { gone(e); }
  for (let i = 0; i < 100 && alive(pid); i++) await sleep(50);
  if (alive(pid)) try { process.kill(pid, 'SIGKILL'); } catch (e) { gone(e); }
  const pidFile = path.join(path.dirname(socketPath), 'podman.pid');
  try { if (fs.readFileSync(pidFile, 'utf8').trim() === String(pid)) fs.unlinkSync(pidFile); } catch (e) { gone(e); }
}
(async () => {
  const filters = encodeURIComponent(JSON.stringify({ label: ['${SERVER_LABEL}=' + owner] }));
  const listed = await call('GET', '/containers/json?all=true&filters=' + filters);
  const ids = listed.status === 200 ? JSON.parse(listed.body).map((c) => c.Id) : [];
  await Promise.all(ids.map(remove));
  if (Number(service) > 0) await endService(Number(service));
})();
`;

/** `sh` waits for the end of its input, keeping the last line (the service's pid), then runs {@link REAP}. */
const WAIT = 'service=; while IFS= read -r line; do service=$line; done; exec "$1" -e "$GITLOOM_REAP" "$2" "$3" "$service"';

/**
 * The reaper of the containers one {@link ContainerEngine} (one server process) creates on the
 * engine at `socketPath`: started by {@link ContainerReaper.start}, told of each Podman service
 * started ({@link ContainerReaper.service}), and run by {@link ContainerReaper.close} or the end
 * of this process. A reaper that exits while this process runs is started again.
 */
export class ContainerReaper {
  /** This server process's id, the value of {@link SERVER_LABEL} on its containers. */
  readonly owner = randomUUID();
  private child: ChildProcess | null = null;
  private servicePid: number | null = null;
  private closing = false;

  constructor(
    private readonly socketPath: string,
    private readonly log: (message: string) => void,
  ) {}

  /** Starts the reaper process (`sh`, named `gitloom-container-reaper` in the process list). */
  start(): void {
    const child = spawn('/bin/sh', ['-c', WAIT, 'gitloom-container-reaper', process.execPath, this.socketPath, this.owner], {
      stdio: ['pipe', 'ignore', 'ignore'],
      env: { PATH: '/usr/bin:/bin', GITLOOM_REAP: REAP },
      detached: true,
    });
    this.child = child;
    // the reaper keeps no process alive: it is ended by close() or by this process's end
    child.unref();
    (child.stdin as (NodeJS.WritableStream & { unref?: () => void }) | null)?.unref?.();
    child.stdin?.on('error', () => undefined); // a reaper that died is reported by its exit
    child.once('error', (e) => this.log(`Unable to start the container reaper: ${e.message}`));
    child.once('exit', (code, signal) => {
      if (this.closing || this.child !== child) return;
      this.log(`Container reaper exited (${code ?? signal}); starting it again`);
      this.start();
    });
    if (this.servicePid !== null) child.stdin?.write(`${this.servicePid}\n`);
  }

  /** Records the pid of the Podman service now serving the socket: the reaper ends it. */
  service(pid: number): void {
    this.servicePid = pid;
    this.child?.stdin?.write(`${pid}\n`);
  }

  /**
   * Ends the reaper's input and waits (up to a minute) for it to finish: this process's
   * containers that are left are removed and the service is ended.
   */
  async close(): Promise<void> {
    this.closing = true;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.stdin?.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    await exited;
    clearTimeout(timer);
  }
}
