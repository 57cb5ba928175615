/**
 * Two server processes on one PostgreSQL database and one data dir tell each other what changed
 * (docs/architecture.md#processes-sharing-postgresql). Both run with GITLOOM_FALLBACK_POLL_MS at
 * a minute: their caches live that long and their loops tick that seldom, so whatever one
 * process's change does on the other within a few seconds came by its announcement.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandSpec, eventually } from '../helpers/fixtures.js';
import { processesWith, waitGone } from '../helpers/processes.js';
import {
  ADMIN,
  basic,
  callChild,
  commitFiles,
  git,
  gitFails,
  givenInstallation,
  killChild,
  makeWorkTree,
  serveChild,
  type ChildServer,
} from '../helpers/server.js';

/** What an announcement must beat: the fallback is 60 s, so a change seen within this came by notification. */
const WITHIN_MS = 2000;

/** Calls a child server's API with the given Authorization header. */
async function callAs(server: ChildServer, auth: string, method: string, route: string): Promise<number> {
  const res = await fetch(`${server.url}/~api${route}`, { method, headers: { authorization: auth } });
  await res.arrayBuffer();
  return res.status;
}

/** Polls `probe` until it holds, for {@link WITHIN_MS} at most; whether it held. */
async function soon(probe: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + WITHIN_MS;
  for (;;) {
    if (await probe()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.skipIf(!process.env.GITLOOM_TEST_DATABASE_URL)('processes sharing PostgreSQL', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  let a: ChildServer;
  let b: ChildServer;
  let projectId: number;
  let jobDirs: { a: string; b: string };

  beforeAll(async () => {
    const tag = randomBytes(4).toString('hex');
    jobDirs = { a: path.join(os.tmpdir(), `gitloom-jobs-${tag}-a`), b: path.join(os.tmpdir(), `gitloom-jobs-${tag}-b`) };
    cleanup.push(() => fs.rm(jobDirs.a, { recursive: true, force: true }));
    cleanup.push(() => fs.rm(jobDirs.b, { recursive: true, force: true }));
    const env = await givenInstallation(cleanup, { GITLOOM_FALLBACK_POLL_MS: '60000', GITLOOM_JOB_CONCURRENCY: '1' });
    // one after the other: the first creates the schema and the administrator
    a = await serveChild({ ...env, GITLOOM_JOB_DIR: jobDirs.a });
    cleanup.push(() => killChild(a));
    b = await serveChild({ ...env, GITLOOM_JOB_DIR: jobDirs.b });
    cleanup.push(() => killChild(b));
    projectId = (await callChild(a, 'POST', '/projects', { name: 'shared' })).json;
  }, 60_000);

  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  it('refuses on B a token revoked through A', async () => {
    const token = (await callChild(a, 'POST', '/users/1/access-tokens', { description: 'revoked' })).text;
    const bearer = `Bearer ${token}`;
    // B caches the token's actor
    expect(await callAs(b, bearer, 'GET', `/projects/${projectId}`)).toBe(200);
    expect(await callAs(b, bearer, 'GET', `/projects/${projectId}`)).toBe(200);
    expect((await callChild(a, 'DELETE', `/users/1/access-tokens/${token}`)).status).toBe(200);
    expect(await soon(async () => (await callAs(b, bearer, 'GET', `/projects/${projectId}`)) === 401)).toBe(true);
  });

  it('takes a member removed through A out of the group on B', async () => {
    const user = (await callChild(a, 'POST', '/users', { name: 'member', password: 'member-pass', emailAddress: 'member@example.com', fullName: 'M' })).json;
    const groupId = (await callChild(a, 'POST', '/groups', { name: 'readers' })).json;
    const membershipId = (await callChild(a, 'POST', '/memberships', { userId: user, groupId })).json;
    expect((await callChild(a, 'POST', '/group-authorizations', { projectId, groupId, roleId: 2 })).status).toBe(200);
    const auth = basic('member', 'member-pass');
    expect(await callAs(b, auth, 'GET', `/projects/${projectId}`)).toBe(200);
    expect(await callAs(b, auth, 'GET', `/projects/${projectId}`)).toBe(200);
    expect((await callChild(a, 'DELETE', `/memberships/${membershipId}`)).status).toBe(200);
    expect(await soon(async () => (await callAs(b, auth, 'GET', `/projects/${projectId}`)) === 404)).toBe(true);
  });

  it('applies on B a protection rule changed through A', async () => {
    const work = await makeWorkTree({ 'a.txt': 'one\n' });
    cleanup.push(() => fs.rm(work, { recursive: true, force: true }));
    const remoteB = new URL(`${b.url}/shared`);
    remoteB.username = ADMIN.name;
    remoteB.password = ADMIN.password;
    await git(work, ['push', '-q', remoteB.toString(), 'main']);
    const setting = (await callChild(a, 'GET', `/projects/${projectId}/setting`)).json;
    expect((await callChild(a, 'POST', `/projects/${projectId}/setting`, { ...setting, branchProtections: [{ branches: 'main' }] })).status).toBe(200);
    await git(work, ['commit', '-q', '--amend', '-m', 'rewritten']);
    expect(await gitFails(work, ['push', '-f', remoteB.toString(), 'main'])).toContain('Can not force-push to this branch');
    expect((await callChild(a, 'POST', `/projects/${projectId}/setting`, { ...setting, branchProtections: [] })).status).toBe(200);
    await git(work, ['push', '-q', '-f', remoteB.toString(), 'main']);
  });

  it('wakes B for a push to A, streams through A the log B writes, and stops on B a build cancelled through A', async () => {
    const marker = String(Date.now() % 1_000_000);
    const job = (name: string, n: number) => ({
      name,
      trigger: 'BranchUpdateTrigger' as const,
      // the second line waits for the test to create `go` in the job's workspace
      commands: [`echo ${name}-first`, 'while [ ! -e go ]; do sleep 0.1; done', `echo ${name}-second`, `sleep 300.${marker}${n}`],
    });
    const work = await makeWorkTree({ '.onedev-buildspec.yml': commandSpec(job('left', 1), job('right', 2)) });
    cleanup.push(() => fs.rm(work, { recursive: true, force: true }));
    const remoteA = new URL(`${a.url}/shared`);
    remoteA.username = ADMIN.name;
    remoteA.password = ADMIN.password;
    await git(work, ['push', '-q', '-f', remoteA.toString(), 'main']);
    // each process runs one job at a time, and B's loops tick once a minute: B runs one of the
    // two builds only because the push's announcement woke it
    const builds = await eventually(async () => {
      const list = (await callChild(a, 'GET', `/builds?query=${encodeURIComponent('"Status" is "Running"')}&offset=0&count=10`)).json as { id: number }[];
      return list.length === 2 ? list : null;
    }, 20_000);
    expect(builds).not.toBeNull();
    const logOf = async (id: number) => (await callChild(a, 'GET', `/builds/${id}/log`)).text;
    // where each build runs, and its job directory, read from its log once the first line is in
    const runner = async (id: number) => {
      const log = await eventually(async () => {
        const text = await logOf(id);
        return text.includes('-first') ? text : null;
      }, 20_000);
      return { place: log?.includes(jobDirs.b) ? 'b' : log?.includes(jobDirs.a) ? 'a' : null, jobDir: /job directory: ([^)]+)\)/.exec(log ?? '')?.[1] ?? null };
    };
    const runs = await Promise.all(builds!.map((build) => runner(build.id)));
    expect(runs.map((r) => r.place).sort()).toEqual(['a', 'b']);
    const onB = builds![runs.findIndex((r) => r.place === 'b')];

    // followed through A while B's job waits between its lines: the second line comes by announcement
    const response = await fetch(`${a.url}/~api/builds/${onB.id}/log?follow=true`, { headers: { authorization: basic(ADMIN.name, ADMIN.password) } });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const first = await reader.read();
    text += decoder.decode(first.value);
    expect(text).toContain('-first');
    expect(text).not.toContain('-second');
    for (const { jobDir } of runs) await fs.writeFile(path.join(jobDir!, 'workspace', 'go'), '');
    const deadline = Date.now() + 15_000;
    while (!text.includes('-second') && Date.now() < deadline) {
      const chunk = await Promise.race([reader.read(), new Promise<null>((resolve) => setTimeout(() => resolve(null), deadline - Date.now()))]);
      if (chunk === null || chunk.done) break;
      text += decoder.decode(chunk.value);
    }
    expect(text).toContain('-second');
    expect(await eventually(async () => processesWith(`300.${marker}`).length === 2 || null, 20_000)).toBe(true);

    // cancelled through A: B's scheduler, woken by the announcement, stops its job
    for (const build of builds!) expect((await callChild(a, 'DELETE', `/job-runs/${build.id}`)).status).toBe(200);
    expect(await waitGone(`300.${marker}`, 10_000)).toBe(true);
    await reader.cancel();
  }, 90_000);
});
