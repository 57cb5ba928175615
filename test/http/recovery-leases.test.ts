/**
 * Job directories carry their owner through their build's lease (docs/architecture.md#start-up-recovery):
 * on PostgreSQL the repair keeps the job directory (and its processes) of a RUNNING build whose
 * lease owner is a registered process that is not gone — whatever its lease says — or, for an
 * owner the registry does not know, whose lease is unexpired; it removes the others and kills
 * their processes. On SQLite, start-up recovery removes them all.
 */
import { randomUUID } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectOf } from '../../src/db/dialect.js';
import { recoverAtStartup, repairLeftovers } from '../../src/domain/startup-recovery.js';
import { eventually, givenProject } from '../helpers/fixtures.js';
import { processesWith } from '../helpers/processes.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('job directories by their build leases', () => {
  let server: TestServer;
  let projectId: number;
  const children: ChildProcess[] = [];
  const marker = `${process.pid}${Date.now() % 100000}`;

  beforeAll(async () => {
    // the scheduler ticks once, at start: it fails no build of this test by its lease meanwhile
    server = await startTestServer({ GITLOOM_FALLBACK_POLL_MS: '600000' });
    projectId = await givenProject(server, { name: 'leases' });
  });

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await server.close();
  });

  /** A RUNNING build leased by `owner` until `expires`, its job directory, and a process of its job. */
  async function runningJob(n: number, owner: string | null, expires: number | null): Promise<string> {
    const { db, config } = server.server.services;
    const jobDir = path.join(config.jobsDir, `${9000 + n}-${randomUUID()}`);
    if (owner !== 'no build') {
      await db
        .insertInto('builds')
        .values({
          numberScopeId: projectId,
          projectId,
          agentId: null,
          submitterId: 1,
          cancellerId: null,
          jobName: 'job',
          jobWorkspace: jobDir,
          refName: 'refs/heads/main',
          version: null,
          description: null,
          uuid: randomUUID(),
          number: 9000 + n,
          commitHash: '0'.repeat(40),
          status: 'RUNNING',
          paused: 0,
          submitDate: Date.now(),
          pendingDate: Date.now(),
          runningDate: Date.now(),
          finishDate: null,
          retryDate: null,
          pipeline: randomUUID(),
          submitReason: 'test',
          requestId: null,
          issueId: null,
          retryCount: 0,
          leaseOwner: owner,
          leaseExpires: expires,
        })
        .execute();
    }
    await fs.mkdir(path.join(jobDir, 'workspace'), { recursive: true });
    const child = spawn('sleep', [`300.${marker}${n}`], {
      env: { PATH: process.env.PATH, GITLOOM_WORKSPACE: path.join(jobDir, 'workspace') },
      detached: true,
      stdio: 'ignore',
    });
    children.push(child);
    await eventually(async () => (processesWith(`300.${marker}${n}`).length === 1 ? true : null));
    return jobDir;
  }

  it('keeps the jobs of live owners and of unexpired leases of unknown owners; removes and kills the others', async () => {
    const { db } = server.server.services;
    const now = Date.now();
    const row = (id: string, heartbeat: number) => ({ id, host: 'elsewhere', kernel: 'b00t/7', pid: 7, startTicks: 70, startedAt: heartbeat, heartbeat });
    await db
      .insertInto('serverProcesses')
      .values([row('live-owner', now + 60_000), row('gone-owner', now - 60_000)])
      .execute();
    const liveExpired = await runningJob(1, 'live-owner', now - 1000);
    const goneLeased = await runningJob(2, 'gone-owner', now + 60_000);
    const unknownLeased = await runningJob(3, 'another-kind-of-owner', now + 60_000);
    const unknownExpired = await runningJob(4, 'another-kind-of-owner', now - 1000);
    const orphan = await runningJob(5, 'no build', null);

    const logged: string[] = [];
    if (dialectOf(db).ownedByOneProcess) {
      // one process: whatever a build says, its job is an earlier run's
      const report = await recoverAtStartup(server.server.services, (message) => logged.push(message));
      expect([...report.workspaces].sort()).toEqual([liveExpired, goneLeased, unknownLeased, unknownExpired, orphan].sort());
      for (const n of [1, 2, 3, 4, 5]) expect(await eventually(async () => processesWith(`300.${marker}${n}`).length === 0)).toBe(true);
      return;
    }
    const report = await repairLeftovers(server.server.services, (message) => logged.push(message));
    expect([...report.workspaces].sort()).toEqual([goneLeased, unknownExpired, orphan].sort());
    expect(logged).toContain(`Repair: removed job directory ${goneLeased}`);
    for (const kept of [liveExpired, unknownLeased]) expect(existsSync(kept)).toBe(true);
    for (const removed of [goneLeased, unknownExpired, orphan]) expect(existsSync(removed)).toBe(false);
    for (const n of [2, 4, 5]) expect(await eventually(async () => processesWith(`300.${marker}${n}`).length === 0)).toBe(true);
    for (const n of [1, 3]) expect(processesWith(`300.${marker}${n}`).length).toBe(1);
  });
});
