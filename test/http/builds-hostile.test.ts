import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, givenRepo, removeWorkTrees, type Repo, runJobOnCommit } from '../helpers/fixtures.js';
import { hostAddress, startLanHost, type LanHost } from '../helpers/network.js';
import { attackPrelude, inSpec, networkAttacks, systemAttacks, verdicts } from '../helpers/attacks.js';
import { git, startTestServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);

const step = (name: string, commands: string, extra = '') =>
  `  - !CommandStep\n    name: ${name}\n    runInContainer: false\n    interpreter: !DefaultInterpreter\n      commands: |\n${commands
    .split('\n')
    .map((l) => `        ${l}`)
    .join('\n')}\n${extra}`;

/** `attempt <name> <command…>` prints `ESCAPE <name>` when the command succeeds and `BLOCKED <name>` when it fails (test/helpers/attacks.ts). */
const ATTEMPT = attackPrelude('host');

const CHECKOUT = '  - !CheckoutStep\n    name: checkout\n    cloneCredential: !DefaultCredential {}\n';

/** {@link ATTEMPT} inside a build spec, where `@` starts a variable. */
const ATTEMPT_IN_SPEC = inSpec(ATTEMPT);

/** vmsplice(2) on a pipe: allowed for any user on the host, refused by the container engines' seccomp profile. */
const VMSPLICE = `/usr/bin/python3 -c 'import ctypes, os, sys; r, w = os.pipe(); sys.exit(0 if ctypes.CDLL(None).syscall(278, w, None, 0, 0) == 0 else 1)'`;

describe('hostile builds: no path from a build spec to root or to the host', () => {
  let server: TestServer;
  let lan: LanHost;
  let listener: net.Server;
  let listenerPort: number;
  let hostDir: string;
  let repo: Repo;
  let networkProbe: string;
  let systemProbe: string;

  const finished = async (s: TestServer, id: number) =>
    eventually(async () => {
      const b = (await s.call('GET', `/builds/${id}`)).json;
      return ['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(b?.status) ? b : null;
    }, 60_000);
  const build = async (s: TestServer, r: Repo, jobName: string): Promise<{ status: string; log: string }> => {
    const res = await runJobOnCommit(s, { projectId: r.id, commitHash: await r.head('main'), jobName });
    expect(res.status).toBe(200);
    const done = await finished(s, res.json as number);
    return { status: done.status, log: (await s.call('GET', `/builds/${done.id}/log`)).text };
  };

  beforeAll(async () => {
    server = await startTestServer();
    lan = await startLanHost();
    // a client may hang up as soon as it connected (an attack only tells whether it could)
    listener = net.createServer((socket) => socket.on('error', () => undefined).end('host\n'));
    await new Promise<void>((resolve) => listener.listen(0, '0.0.0.0', resolve));
    listenerPort = (listener.address() as net.AddressInfo).port;
    hostDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-hostile-'));
    await fs.chmod(hostDir, 0o777);
    await fs.writeFile(path.join(hostDir, 'secret'), 'root only\n', { mode: 0o600 });
    await fs.writeFile(path.join(hostDir, 'victim'), 'original\n', { mode: 0o644 });

    networkProbe = [ATTEMPT, ...networkAttacks({ hostAddress: hostAddress(), listenerPort, lan }), 'echo PROBE-DONE'].join('\n');
    systemProbe = [
      ATTEMPT,
      ...systemAttacks(),
      `attempt syscall-vmsplice ${VMSPLICE}`,
      // controls inside the sandbox: what builds need still works
      'attempt control-name-service-config cat /etc/nsswitch.conf',
      'attempt control-ca-certificates ls /etc/ssl/certs/ca-certificates.crt',
      'attempt control-git git --version',
      'echo "user=$(id -un)"',
      'echo PROBE-DONE',
    ].join('\n');
    const spec = `version: 25
jobs:
- name: PlantScript
  steps:
${step('plant', `${ATTEMPT_IN_SPEC}\nattempt plant-in-job-directory ln -s ${hostDir}/victim "$(dirname "$HOME")/step-3.sh"\nattempt plant-in-server-directory ln -s ${hostDir}/victim "$(dirname "$HOME")/server/step-3.sh"\nattempt list-server-directory ls "$(dirname "$HOME")/server"\nattempt control-link-in-home ln -s ${hostDir}/victim "$HOME/step-3.sh"`)}${step('between', 'true')}${step('payload', 'echo pwned-by-a-build')}- name: CheckoutLinks
  steps:
${CHECKOUT}${step('look', `${ATTEMPT_IN_SPEC}\nattempt control-write-checked-out-file sh -c 'echo more >> tracked.txt'\nattempt read-through-repository-link cat hostlink/secret\nattempt write-through-repository-link sh -c 'echo x > hostlink/victim'`)}- name: CheckoutThroughLink
  steps:
${step('plant', `ln -s ${hostDir} sub`)}  - !CheckoutStep
    name: checkout
    checkoutPath: sub/x
    cloneCredential: !DefaultCredential {}
- name: Network
  steps:
${CHECKOUT}${step('probe', 'sh network-probe.sh')}- name: System
  steps:
${CHECKOUT}${step('probe', 'sh system-probe.sh')}`;
    repo = await givenRepo(server, 'hostile', {
      files: { '.onedev-buildspec.yml': spec, 'network-probe.sh': networkProbe, 'system-probe.sh': systemProbe, 'tracked.txt': 'tracked\n' },
    });
    // a link in the repository's content, pointing at a host directory
    await fs.symlink(hostDir, path.join(repo.work, 'hostlink'));
    await git(repo.work, ['add', 'hostlink']);
    await git(repo.work, ['commit', '-qm', 'link to the host']);
    await git(repo.work, ['push', '-q', repo.remote, 'main']);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await lan?.remove();
    listener?.close();
    await removeWorkTrees();
    if (hostDir) await fs.rm(hostDir, { recursive: true, force: true });
  });

  it('runs builds although the data dir lies below a private (0700) directory', async () => {
    expect((await fs.stat(path.dirname(server.dataDir))).mode & 0o777).toBe(0o700);
    expect((await fs.stat(server.dataDir)).mode & 0o777).toBe(0o700);
    const { status, log } = await build(server, repo, 'System');
    expect(log).toContain('PROBE-DONE');
    expect(status).toBe('SUCCESSFUL');
  });

  it("a step cannot plant a link where the server writes a later step's script", async () => {
    const { status, log } = await build(server, repo, 'PlantScript');
    expect(status).toBe('SUCCESSFUL');
    expect(verdicts(log), log).toEqual({
      'plant-in-job-directory': 'BLOCKED',
      'plant-in-server-directory': 'BLOCKED',
      'list-server-directory': 'BLOCKED',
      'control-link-in-home': 'ESCAPE',
    });
    expect(log).toContain('pwned-by-a-build');
    expect(await fs.readFile(path.join(hostDir, 'victim'), 'utf8')).toBe('original\n');
  });

  it('a checkout follows no link: neither one of the repository nor one an earlier step planted', async () => {
    const checkout = await build(server, repo, 'CheckoutLinks');
    expect(checkout.status).toBe('SUCCESSFUL');
    expect(verdicts(checkout.log), checkout.log).toEqual({
      'control-write-checked-out-file': 'ESCAPE',
      'read-through-repository-link': 'BLOCKED',
      'write-through-repository-link': 'BLOCKED',
    });
    const secret = await fs.stat(path.join(hostDir, 'secret'));
    expect([secret.uid, secret.mode & 0o777]).toEqual([0, 0o600]);
    expect((await fs.stat(path.join(hostDir, 'victim'))).uid).toBe(0);
    expect(await fs.readFile(path.join(hostDir, 'victim'), 'utf8')).toBe('original\n');

    const planted = await build(server, repo, 'CheckoutThroughLink');
    expect(planted.status).toBe('FAILED');
    expect(planted.log).toContain("Step \"checkout\" failed: Unable to check out into 'sub/x': Path is a symbolic link in the workspace: 'sub'");
    expect(existsSync(path.join(hostDir, 'x'))).toBe(false);
  });

  it("jobs reach neither the host's addresses nor the LAN nor the metadata service; the allow-list opens what the administrator lists", async () => {
    // control: from the host, every one of them answers
    const probe = path.join(hostDir, 'network-probe.sh');
    await fs.writeFile(probe, networkProbe);
    expect(verdicts((await run('sh', [probe])).stdout)).toEqual({
      'connect-host-address': 'ESCAPE',
      'connect-lan-host': 'ESCAPE',
      'connect-metadata-service': 'ESCAPE',
    });

    const { log } = await build(server, repo, 'Network');
    expect(log).toContain('PROBE-DONE');
    expect(verdicts(log), log).toEqual({ 'connect-host-address': 'BLOCKED', 'connect-lan-host': 'BLOCKED', 'connect-metadata-service': 'BLOCKED' });

    const allowing = await startTestServer({ GITLOOM_JOB_NETWORK_ALLOW: `${hostAddress()}, ${lan.address}` });
    try {
      const mirror = await givenRepo(allowing, 'hostile', {
        files: {
          '.onedev-buildspec.yml': `version: 25\njobs:\n- name: Network\n  steps:\n${CHECKOUT}${step('probe', 'sh network-probe.sh')}`,
          'network-probe.sh': networkProbe,
        },
      });
      const allowed = await build(allowing, mirror, 'Network');
      expect(allowed.log).toContain(`except ${hostAddress()}/32, ${lan.address}/32`);
      expect(verdicts(allowed.log), allowed.log).toEqual({
        'connect-host-address': 'ESCAPE',
        'connect-lan-host': 'ESCAPE',
        'connect-metadata-service': 'BLOCKED',
      });
    } finally {
      await allowing.close();
    }
  });

  it('a job sees /etc from an allow-list, cannot make user namespaces and runs under the seccomp filter', async () => {
    // control: on the host every attempt works, so the sandbox's verdicts are not vacuous
    const probe = path.join(hostDir, 'system-probe.sh');
    await fs.writeFile(probe, systemProbe);
    const host = verdicts((await run('sh', [probe])).stdout);
    for (const name of ['read-etc-environment', 'list-etc-postgresql', 'read-etc-shadow', 'nested-user-namespace', 'syscall-vmsplice']) {
      expect(`${name} ${host[name]}`).toBe(`${name} ESCAPE`);
    }

    const { status, log } = await build(server, repo, 'System');
    expect(status).toBe('SUCCESSFUL');
    expect(verdicts(log), log).toEqual({
      'read-etc-environment': 'BLOCKED',
      'list-etc-postgresql': 'BLOCKED',
      'read-etc-shadow': 'BLOCKED',
      'nested-user-namespace': 'BLOCKED',
      'syscall-vmsplice': 'BLOCKED',
      'control-name-service-config': 'ESCAPE',
      'control-ca-certificates': 'ESCAPE',
      'control-git': 'ESCAPE',
    });
    expect(log).toContain('user=gitloom-job');
  });
});
