import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectOf } from '../../src/db/dialect.js';
import { encryptPlaintextJobSecrets } from '../../src/domain/projects/job-secrets.js';
import { recoverAtStartup, STALE_AFTER_MS } from '../../src/domain/startup-recovery.js';
import { markPush } from '../../src/git/push-markers.js';
import { secretKey } from '../../src/domain/projects/secret-encryption.js';
import { eventually, givenRepo, removeWorkTrees, type Repo, runJobOnCommit } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { processesWith, waitGone } from '../helpers/processes.js';
import { attackLeftovers, attackPrelude, privilegeAttacks, serverAttacks, verdicts, type ServerTargets } from '../helpers/attacks.js';

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

const step = (name: string, commands: string) =>
  `  - !CommandStep\n    name: ${name}\n    runInContainer: false\n    interpreter: !DefaultInterpreter\n      commands: |\n${commands
    .split('\n')
    .map((l) => `        ${l}`)
    .join('\n')}\n`;

const SPEC = `version: 25
jobs:
- name: Attack
  steps:
  - !CheckoutStep
    name: checkout
    cloneCredential: !DefaultCredential {}
${step('attack', 'sh attack.sh')}- name: MemoryBomb
  steps:
${step('bomb', 'node -e "const a = []; for (;;) a.push(Buffer.alloc(64 * 1024 * 1024, 1))"')}- name: ForkBomb
  steps:
${step('bomb', 'for i in $(seq 1000); do sleep 60 & done\nwait')}- name: CpuBomb
  steps:
${step('bomb', 'while :; do :; done')}- name: Secrets
  steps:
${step('leak', 'printf %s "@secret:token@" | base64\nprintf "Basic %s\\n" "$(printf "ci:%s" "@secret:token@" | base64)"\nnode -e "console.log(\'https://x/?t=\' + encodeURIComponent(process.argv[1]))" "@secret:token@"\necho "plain @secret:token@"')}`;

/**
 * The shared attacks (test/helpers/attacks.ts) on the server and on becoming root, then processes
 * left behind. The same script runs as a build step (everything must be BLOCKED) and directly on
 * the host (the control: everything but an absent PostgreSQL must be ESCAPE, so the sandbox
 * assertions are not vacuous).
 */
function attackScript(t: ServerTargets): string {
  return [
    attackPrelude('host'),
    ...serverAttacks(t),
    ...privilegeAttacks({ serverPid: t.serverPid, marker: t.marker, sockets: [] }),
    `sleep 300.${t.marker}1 > /dev/null 2>&1 &`,
    `nohup sleep 300.${t.marker}2 > /dev/null 2>&1 &`,
    `setsid sleep 300.${t.marker}3 > /dev/null 2>&1 &`,
    'echo ATTACK-DONE',
    '',
  ].join('\n');
}

describe('job sandbox: builds are untrusted code', () => {
  let server: TestServer;
  let attacker: Repo;
  let victim: Repo;
  let hostDir: string;
  const marker = `${process.pid}${Date.now() % 100000}`;

  const finished = (id: number) =>
    eventually(async () => {
      const b = (await server.call('GET', `/builds/${id}`)).json;
      return ['SUCCESSFUL', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(b?.status) ? b : null;
    }, 140_000);
  const runJob = async (s: TestServer, projectId: number, commitHash: string, jobName: string): Promise<number> => {
    const res = await runJobOnCommit(s, { projectId, commitHash, jobName });
    expect(res.status).toBe(200);
    return res.json as number;
  };
  const logOf = async (id: number) => (await server.call('GET', `/builds/${id}/log`)).text;

  beforeAll(async () => {
    server = await startTestServer({ GITLOOM_JOB_MEMORY_MB: '1024', GITLOOM_JOB_PROCESSES: '64', GITLOOM_JOB_CPU_SECONDS: '2' });
    hostDir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-sandbox-host-'));
    await fs.chmod(hostDir, 0o777);
    victim = await givenRepo(server, 'victim', { files: { 'private.txt': 'victim data\n' } });
    const script = attackScript({
      dataDir: server.dataDir,
      victimRepo: path.join(server.dataDir, 'repos', `${victim.id}.git`),
      serverPid: process.pid,
      port: Number(new URL(server.url).port),
      home: os.homedir(),
      hostDir,
      marker,
      sqlite: dialectOf(server.server.services.db).engine === 'sqlite',
    });
    attacker = await givenRepo(server, 'attacker', { files: { '.onedev-buildspec.yml': SPEC, 'attack.sh': script } });
  }, 60_000);

  afterAll(async () => {
    for (const pid of processesWith(`300.${marker}`)) process.kill(pid, 'SIGKILL');
    await server?.close();
    await removeWorkTrees();
    if (hostDir) await fs.rm(hostDir, { recursive: true, force: true });
  });

  it('control: the attack works on the host, outside the sandbox', async () => {
    const { stdout } = await run('sh', [path.join(attacker.work, 'attack.sh')], { cwd: attacker.work });
    const postgres = await reachable(5432);
    for (const line of stdout.split('\n').filter((l) => /^(ESCAPE|BLOCKED) /.test(l))) {
      const [verdict, name] = line.split(' ');
      if (name === 'connect-postgres' && !postgres) continue;
      if (name === 'hook-secret-in-env') continue; // the server never has it in its environment either
      if (name === 'connect-server-through-gateway') continue; // only exists inside an outward sandbox
      expect(`${verdict} ${name}`).toBe(`ESCAPE ${name}`);
    }
    expect(stdout).toContain('ESCAPE read-other-repository');
    for (const n of [1, 2, 3]) expect(processesWith(`300.${marker}${n}`).length).toBeGreaterThan(0);
    for (const pid of processesWith(`300.${marker}`)) process.kill(pid, 'SIGKILL');
    for (const file of attackLeftovers({ dataDir: server.dataDir, hostDir, marker })) await fs.rm(file, { recursive: true, force: true });
    expect(await waitGone(`300.${marker}`)).toBe(true);
  });

  it('in a build every escape fails and no process of the build remains', async () => {
    const id = await runJob(server, attacker.id, await attacker.head('main'), 'Attack');
    const build = await finished(id);
    const log = await logOf(id);
    expect(log).toContain('ATTACK-DONE');
    expect(build.status).toBe('SUCCESSFUL');
    const found = Object.entries(verdicts(log));
    expect(found.length).toBeGreaterThanOrEqual(25);
    for (const [name, verdict] of found) {
      // The test data dir lives under /tmp, which in the sandbox is a private tmpfs: there the
      // write lands in that tmpfs (checked below: nothing reaches the host's data dir).
      if (/^write-data-dir/.test(name) && server.dataDir.startsWith(os.tmpdir() + path.sep)) continue;
      expect(`${verdict} ${name}`).toBe(`BLOCKED ${name}`);
    }
    expect(log).toMatch(/Job sandbox: bubblewrap; network: (outward|none)/);
    for (const file of attackLeftovers({ dataDir: server.dataDir, hostDir, marker })) expect(existsSync(file), file).toBe(false);
    expect(await waitGone(`300.${marker}`)).toBe(true);
    expect(processesWith(server.server.services.config.jobsDir)).toEqual([]);
  });

  // Each bomb ends in seconds on an idle machine; the room is for a loaded one (CPU time only
  // accrues while the step gets a core).
  it('a memory bomb ends FAILED with the job limits in the log', async () => {
    const memory = await finished(await runJob(server, attacker.id, await attacker.head('main'), 'MemoryBomb'));
    expect(memory.status).toBe('FAILED');
    expect(await logOf(memory.id)).toContain('The step ran with the job limits: memory 1024 MiB (GITLOOM_JOB_MEMORY_MB), 64 processes');
  }, 150_000);

  it('a fork bomb ends FAILED with the job limits in the log', async () => {
    const fork = await finished(await runJob(server, attacker.id, await attacker.head('main'), 'ForkBomb'));
    expect(fork.status).toBe('FAILED');
    const forkLog = await logOf(fork.id);
    expect(forkLog).toMatch(/Cannot fork|Resource temporarily unavailable/);
    expect(forkLog).toContain('The step ran with the job limits');
  }, 150_000);

  it('a CPU bomb ends FAILED with the reason in the log; no job process remains and the server stays up', async () => {
    const cpu = await finished(await runJob(server, attacker.id, await attacker.head('main'), 'CpuBomb'));
    expect(cpu.status).toBe('FAILED');
    expect(await logOf(cpu.id)).toContain('Command exited with code 152: CPU time limit of 2 s exceeded (GITLOOM_JOB_CPU_SECONDS)');
    expect(processesWith(server.server.services.config.jobsDir)).toEqual([]);
    expect((await server.call('GET', `/projects/${attacker.id}`)).status).toBe(200);
  }, 150_000);

  it('job secrets are encrypted at rest, read back unchanged through the API and masked in every encoding', async () => {
    const value = 'Tok3n/with+special chars?&=';
    const setting = (await server.call('GET', `/projects/${attacker.id}/setting`)).json;
    const jobSecrets = [{ name: 'token', value, authorization: null, archived: false }];
    const saved = await server.call('POST', `/projects/${attacker.id}/setting`, {
      body: { ...setting, buildSetting: { ...setting.buildSetting, jobSecrets } },
    });
    expect(saved.status).toBe(200);
    expect((await server.call('GET', `/projects/${attacker.id}/setting`)).json.buildSetting.jobSecrets).toEqual(jobSecrets);
    const row = await server.server.services.db.selectFrom('projects').select('setting').where('id', '=', attacker.id).executeTakeFirstOrThrow();
    expect(row.setting).not.toContain(value);
    expect(row.setting).not.toContain('Tok3n');
    expect(JSON.parse(row.setting!).buildSetting.jobSecrets[0].encryptedValue).toMatch(/^v1:/);
    const keyFile = path.join(server.dataDir, 'secret.key');
    expect((await fs.stat(keyFile)).mode & 0o777).toBe(0o600);
    expect((await fs.readFile(keyFile)).length).toBe(32);

    const build = await finished(await runJob(server, attacker.id, await attacker.head('main'), 'Secrets'));
    expect(build.status).toBe('SUCCESSFUL');
    const log = await logOf(build.id);
    expect(log).toContain('plain ******');
    expect(log).toContain('https://x/?t=******');
    expect(log).toMatch(/Basic \S*\*\*\*\*\*\*/);
    for (const form of [value, Buffer.from(value).toString('base64'), encodeURIComponent(value), Buffer.from(`ci:${value}`).toString('base64').slice(4, 20)]) {
      expect(log).not.toContain(form);
    }
  });

  it('job secrets stored in plain text are encrypted at start-up and still read back', async () => {
    const project = await givenRepo(server, 'legacy');
    const legacy = { buildSetting: { jobSecrets: [{ name: 'old', value: 'plain-old-secret', authorization: null }] } };
    await server.server.services.db
      .updateTable('projects')
      .set({ setting: JSON.stringify(legacy) })
      .where('id', '=', project.id)
      .execute();
    expect(await encryptPlaintextJobSecrets(server.server.services.db, secretKey(server.server.services.config))).toBeGreaterThanOrEqual(1);
    const row = await server.server.services.db.selectFrom('projects').select('setting').where('id', '=', project.id).executeTakeFirstOrThrow();
    expect(row.setting).not.toContain('plain-old-secret');
    const read = (await server.call('GET', `/projects/${project.id}/setting`)).json;
    expect(read.buildSetting.jobSecrets).toEqual([{ name: 'old', value: 'plain-old-secret', authorization: null }]);
  });

  it('the data dir is private: 0700 directories and 0600 files; jobs live in the jobs dir', async () => {
    const modeOf = async (p: string) => (await fs.stat(p)).mode & 0o777;
    expect(await modeOf(server.dataDir)).toBe(0o700);
    expect(existsSync(path.join(server.dataDir, 'workspaces'))).toBe(false);
    expect(await modeOf(server.server.services.config.jobsDir)).toBe(0o711);
    expect(await modeOf(path.join(server.dataDir, 'repos'))).toBe(0o700);
    expect(await modeOf(path.join(server.dataDir, 'repos', `${victim.id}.git`))).toBe(0o700);
    expect(await modeOf(path.join(server.dataDir, 'repos', `${victim.id}.git`, 'HEAD'))).toBe(0o600);
    expect(await modeOf(path.join(server.dataDir, 'builds'))).toBe(0o700);
    if (dialectOf(server.server.services.db).engine === 'sqlite') expect(await modeOf(path.join(server.dataDir, 'gitloom.db'))).toBe(0o600);
    const logs = await fs.readdir(path.join(server.dataDir, 'builds', String(attacker.id)));
    expect(await modeOf(path.join(server.dataDir, 'builds', String(attacker.id), logs[0], 'build.log'))).toBe(0o600);
  });

  it('without bubblewrap builds end FAILED: Job sandbox unavailable; start-up recovery cleans what a crashed run left', async () => {
    const other = await startTestServer({ GITLOOM_BWRAP_PATH: '/nonexistent/bwrap' });
    let leftover: ReturnType<typeof spawn> | null = null;
    let unrelated: ReturnType<typeof spawn> | null = null;
    try {
      const repo = await givenRepo(other, 'nobwrap', { files: { '.onedev-buildspec.yml': SPEC, 'attack.sh': 'echo hi\n' } });
      const res = await runJobOnCommit(other, { projectId: repo.id, commitHash: await repo.head('main'), jobName: 'CpuBomb' });
      const id = res.json as number;
      const build = await eventually(async () => {
        const b = (await other.call('GET', `/builds/${id}`)).json;
        return b?.status === 'FAILED' ? b : null;
      }, 60_000);
      expect(build.status).toBe('FAILED');
      const log = (await other.call('GET', `/builds/${id}/log`)).text;
      expect(log).toContain('Job sandbox unavailable: install bubblewrap');
      expect(log).not.toContain('Running step');

      // What a run killed at the wrong moment leaves behind; start-up runs this recovery (src/server.ts).
      const data = other.dataDir;
      const jobDir = path.join(other.server.services.config.jobsDir, '999-left-behind');
      const workspace = path.join(jobDir, 'workspace');
      await fs.mkdir(workspace, { recursive: true });
      await fs.writeFile(path.join(workspace, 'file'), 'x');
      // what versions before the jobs dir left in the data dir
      const legacy = path.join(data, 'workspaces', '998-left-behind');
      await fs.mkdir(legacy, { recursive: true });
      const upload = path.join(data, 'builds', String(repo.id), '1', 'artifacts', '.gitloom-upload-1234');
      await fs.mkdir(path.dirname(upload), { recursive: true });
      await fs.writeFile(upload, 'partial');
      const quarantines = [
        path.join(data, 'repos', `${repo.id}.git`, 'objects', 'incoming-abc123'),
        path.join(data, 'repos', `${repo.id}.git`, 'objects', 'tmp_objdir-incoming-xyz'),
      ];
      for (const q of quarantines) await fs.mkdir(path.join(q, 'pack'), { recursive: true });
      leftover = spawn('sleep', [`300.${marker}7`], { env: { PATH: process.env.PATH, GITLOOM_WORKSPACE: workspace }, detached: true, stdio: 'ignore' });
      unrelated = spawn('sleep', [`300.${marker}8`], {
        env: { PATH: process.env.PATH, GITLOOM_WORKSPACE: path.join(os.tmpdir(), 'elsewhere', '999-left-behind', 'workspace') },
        detached: true,
        stdio: 'ignore',
      });
      await eventually(async () => (processesWith(`300.${marker}7`).length && processesWith(`300.${marker}8`).length ? true : null));

      // left by an earlier run: before this process started and, as other processes may share a
      // PostgreSQL installation's data dir, old enough not to be another process's work
      const old = new Date(Date.now() - 2 * STALE_AFTER_MS);
      for (const p of [upload, ...quarantines]) await fs.utimes(p, old, old);
      // a push of this process in flight (its marker, then git's quarantine): kept
      const pushMarker = await markPush(path.join(data, 'repos', `${repo.id}.git`));
      const inFlight = path.join(data, 'repos', `${repo.id}.git`, 'objects', 'tmp_objdir-incoming-now');
      await fs.mkdir(inFlight);
      const removed: string[] = [];
      const report = await recoverAtStartup(other.server.services, (message) => removed.push(message));
      expect(report.killedProcesses).toHaveLength(1);
      expect(removed).toContain(`Start-up recovery: removed job directory ${jobDir}`);
      expect(removed).toContain(`Start-up recovery: removed job directory ${legacy}`);
      expect(removed).toContain(`Start-up recovery: removed artifact upload temp file ${upload}`);
      for (const q of quarantines) expect(removed).toContain(`Start-up recovery: removed push quarantine directory ${q}`);
      expect(await waitGone(`300.${marker}7`)).toBe(true);
      expect(processesWith(`300.${marker}8`).length).toBe(1);
      expect(existsSync(jobDir)).toBe(false);
      if (dialectOf(other.server.services.db).ownedByOneProcess) expect(existsSync(path.dirname(legacy))).toBe(false);
      expect(existsSync(upload)).toBe(false);
      expect(existsSync(path.dirname(upload))).toBe(true);
      for (const q of quarantines) expect(existsSync(q)).toBe(false);
      expect(existsSync(inFlight)).toBe(true);
      expect(existsSync(pushMarker.path)).toBe(true);
      expect(existsSync(path.join(data, 'repos', `${repo.id}.git`, 'objects', 'pack'))).toBe(true);
    } finally {
      leftover?.kill('SIGKILL');
      unrelated?.kill('SIGKILL');
      await other.close();
    }
  });
});
