import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOBS_DIR_LABEL } from '../../src/ci/container-engine.js';
import { dialectOf } from '../../src/db/dialect.js';
import {
  attackLeftovers,
  attackPrelude,
  networkAttacks,
  privilegeAttacks,
  serverAttacks,
  systemAttacks,
  verdicts,
  type ServerTargets,
} from '../helpers/attacks.js';
import { eventually, givenRepo, removeWorkTrees, type Repo, runJobOnCommit } from '../helpers/fixtures.js';
import { linkApplets, testEngine } from '../helpers/images.js';
import { hostAddress, startLanHost, type LanHost } from '../helpers/network.js';
import { processesWith, waitGone } from '../helpers/processes.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);

function reachable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const IMAGE = 'localhost/gitloom-test/attacker:1';
/** The job limits of the server: the bombs ask for twice as much. */
const MEMORY_MB = 256;
const PROCESSES = 64;

/**
 * The attacks of the job sandbox's escape tests (test/helpers/attacks.ts) run as one container
 * step of a busybox image, and the same script with busybox's tools on the host as the control.
 * One job: checkout, the attack step, then a `!RunContainerStep` that mounts the link to the data
 * dir the attack planted in the workspace.
 */
describe('container steps: the escapes of the job sandbox fail in containers too', () => {
  let images: Awaited<ReturnType<typeof testEngine>>;
  let server: TestServer;
  let lan: LanHost;
  let listener: net.Server;
  let hostDir: string;
  let attacker: Repo;
  let targets: ServerTargets;
  let sockets: string[];
  const marker = `${process.pid}${Date.now() % 100000}`;

  /**
   * The attack script: the shared attacks and processes left running; then, in a step of its own
   * (`bombs`), memory and process bombs of twice the job limits — a step of their own because
   * what a fork bomb left counts against the job's process limit until the kernel released it,
   * which under load outlasts the script. In a container the bomb's processes are killed at once
   * (`kill -9 -1` spares the script and the container's init); on the host the test kills them.
   */
  const script = (where: 'container' | 'host'): string =>
    [
      attackPrelude('busybox'),
      ...serverAttacks(targets),
      ...networkAttacks({ hostAddress: hostAddress(), listenerPort: (listener.address() as net.AddressInfo).port, lan }),
      ...systemAttacks(),
      ...privilegeAttacks({ serverPid: process.pid, marker, sockets }),
      'read -r map < /proc/self/uid_map; echo "uid map: $map"',
      `sleep 300.${marker}1 > /dev/null 2>&1 &`,
      `setsid sleep 300.${marker}2 > /dev/null 2>&1 &`,
      'echo ATTACK-DONE',
      '',
    ].join('\n');
  const bombs = (where: 'container' | 'host'): string =>
    [
      attackPrelude('busybox'),
      `attempt memory-beyond-limit dd if=/dev/zero of=/dev/null bs=${2 * MEMORY_MB}M count=1`,
      `attempt processes-beyond-limit sh -c 'n=0; while [ $n -lt ${2 * PROCESSES} ]; do sleep 60.${marker}9 & n=$((n+1)); done'`,
      // a builtin (no process can start): kill what the bomb left
      ...(where === 'container' ? ['kill -9 -1 2> /dev/null'] : []),
      'echo BOMBS-DONE',
      '',
    ].join('\n');
  const attacks = (text: string): string[] => [...text.matchAll(/^attempt (\S+)/gm)].map((m) => m[1]);

  beforeAll(async () => {
    images = await testEngine({ [IMAGE]: { osName: 'Attacker' } });
    server = await startTestServer({ GITLOOM_JOB_MEMORY_MB: String(MEMORY_MB), GITLOOM_JOB_PROCESSES: String(PROCESSES) });
    lan = await startLanHost();
    // a client may hang up as soon as it connected (an attack only tells whether it could)
    listener = net.createServer((socket) => socket.on('error', () => undefined).end('host\n'));
    await new Promise<void>((resolve) => listener.listen(0, '0.0.0.0', resolve));
    hostDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-container-host-'));
    await fs.chmod(hostDir, 0o777);
    const victim = await givenRepo(server, 'victim', { files: { 'private.txt': 'victim data\n' } });
    targets = {
      dataDir: server.dataDir,
      victimRepo: path.join(server.dataDir, 'repos', `${victim.id}.git`),
      serverPid: process.pid,
      port: Number(new URL(server.url).port),
      home: os.homedir(),
      hostDir,
      marker,
      sqlite: dialectOf(server.server.services.db).engine === 'sqlite',
    };
    // the server's engine socket (once it runs a container), the test engine's and the usual ones
    sockets = [path.join(server.dataDir, 'containers', 'podman.sock'), images.engine.socketPath, '/run/podman/podman.sock', '/var/run/docker.sock'];
    const spec = `version: 25
jobs:
- name: Attack
  steps:
  - !CheckoutStep
    name: checkout
    cloneCredential: !DefaultCredential {}
  - !CommandStep
    name: attack
    runInContainer: true
    image: ${IMAGE}
    interpreter: !DefaultInterpreter
      commands: |
        sh attack.sh
    useTTY: false
  - !CommandStep
    name: bombs
    condition: ALWAYS
    runInContainer: true
    image: ${IMAGE}
    interpreter: !DefaultInterpreter
      commands: |
        sh bombs.sh
    useTTY: false
  - !RunContainerStep
    name: mount the planted link
    image: ${IMAGE}
    args: cat /mnt/data/secret.key
    volumeMounts:
    - sourcePath: data-link
      targetPath: /mnt/data
    useTTY: false
`;
    attacker = await givenRepo(server, 'attacker', {
      files: { '.onedev-buildspec.yml': spec, 'attack.sh': script('container'), 'bombs.sh': bombs('container') },
    });
  }, 180_000);

  afterAll(async () => {
    for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL');
    await server?.close();
    await images?.close();
    await lan?.remove();
    listener?.close();
    await removeWorkTrees();
    if (hostDir) await fs.rm(hostDir, { recursive: true, force: true });
  });

  it("control: with busybox's tools on the host every attack works", async () => {
    const bin = path.join(hostDir, 'bin');
    const workspace = path.join(hostDir, 'workspace');
    await fs.mkdir(bin);
    await fs.mkdir(workspace);
    await linkApplets(bin, '/bin/busybox');
    const control = path.join(hostDir, 'control.sh');
    await fs.writeFile(control, script('host') + bombs('host'));
    const { stdout } = await run('/bin/busybox', ['sh', control], { cwd: workspace, env: { PATH: `${bin}:/usr/bin:/bin` } });
    try {
      const postgres = await reachable(5432);
      const found = verdicts(stdout);
      expect(Object.keys(found).sort()).toEqual(attacks(script('host') + bombs('host')).sort());
      for (const [name, verdict] of Object.entries(found)) {
        if (name === 'connect-postgres' && !postgres) continue;
        if (name === 'hook-secret-in-env') continue; // the server never has it in its environment either
        if (name === 'connect-server-through-gateway') continue; // only exists inside an outward network
        expect(`${verdict} ${name}`).toBe(`ESCAPE ${name}`);
      }
      expect(stdout).toContain('ATTACK-DONE');
      expect(processesWith(`300.${marker}`).length).toBeGreaterThan(0);
    } finally {
      for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL');
      for (const file of attackLeftovers(targets)) await fs.rm(file, { recursive: true, force: true });
    }
    expect(await waitGone(marker)).toBe(true);
  }, 60_000);

  it('in a container step every attack fails, a link planted in the workspace is not mounted, the host is untouched and nothing of the job remains', async () => {
    const res = await runJobOnCommit(server, { projectId: attacker.id, commitHash: await attacker.head('main'), jobName: 'Attack' });
    expect(res.status, res.text).toBe(200);
    const build = await eventually(async () => {
      const b = (await server.call('GET', `/builds/${res.json}`)).json;
      return ['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(b?.status) ? b : null;
    }, 240_000);
    const log = (await server.call('GET', `/builds/${res.json}/log`)).text;
    expect(log).toContain('ATTACK-DONE');

    const found = verdicts(log);
    expect(log).toContain('BOMBS-DONE');
    expect(Object.keys(found).sort(), log).toEqual(attacks(script('container') + bombs('container')).sort());
    for (const [name, verdict] of Object.entries(found)) {
      // the container's own root file system, a layer of its image (the host's / is checked below)
      if (name === 'write-root') continue;
      expect(`${verdict} ${name}`).toBe(`BLOCKED ${name}`);
    }
    // container root is the first uid of the job's own range, above the job uid pool
    const uidMap = /uid map:\s+0\s+(\d+)\s+(\d+)/.exec(log);
    expect(uidMap, log).not.toBeNull();
    expect(Number(uidMap![1])).toBeGreaterThanOrEqual(server.server.services.config.jobSandbox.uidBase + 65536);
    expect(Number(uidMap![2])).toBe(65536);

    // the link the attack planted to the data dir is refused as a volume mount source
    expect(build.status).toBe('FAILED');
    expect(log).toContain("Volume mount source must not go through a symbolic link: 'data-link'");

    for (const file of attackLeftovers(targets)) expect(existsSync(file), file).toBe(false);
    expect(await waitGone(marker)).toBe(true);
    const jobsDir = server.server.services.config.jobsDir;
    expect(await images.engine.docker.listContainers({ all: true, filters: { label: [`${JOBS_DIR_LABEL}=${jobsDir}`] } })).toEqual([]);
    expect(processesWith(jobsDir)).toEqual([]);
  }, 300_000);
});
