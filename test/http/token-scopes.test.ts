import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, givenRepo, givenUsers, grantRole, removeWorkTrees, type Repo, type TestUser } from '../helpers/fixtures.js';
import { ADMIN, basic, commitFiles, git, gitFails, gitUrl, startTestServer, type TestServer } from '../helpers/server.js';

/** Read-only and project-limited access tokens, their last use and lifetime bound (docs/compatibility.md#gitloom-differs-sessions-and-tokens). */
describe('fine-grained access tokens', () => {
  let server: TestServer;
  let carol: TestUser;
  let alpha: Repo;
  let beta: Repo;
  const adminAuth = basic(ADMIN.name, ADMIN.password);

  /** A new token of `user` made with `auth` (default: the user's password), with `body`'s limits. */
  const newToken = async (user: TestUser, body: Record<string, unknown>, auth = user.auth) => {
    const res = await server.call('POST', `/users/${user.id}/access-tokens`, { body, auth });
    expect(res.status, res.text).toBe(200);
    return res.text;
  };
  const bearer = (token: string) => `Bearer ${token}`;
  const tokenUser = (user: TestUser, token: string) => ({ name: user.name, password: token });

  beforeAll(async () => {
    server = await startTestServer();
    [carol] = await givenUsers(server, 'carol');
    alpha = await givenRepo(server, 'alpha');
    beta = await givenRepo(server, 'beta');
    for (const repo of [alpha, beta]) await grantRole(server, repo.id, carol.id, 'Code Writer');
  });
  afterAll(async () => {
    await server?.close();
    await removeWorkTrees();
  });

  it('a read-only token reads and fetches, and every change is 403 with its code', async () => {
    const token = await newToken(carol, { description: 'reader', readOnly: true });
    expect((await server.call('GET', `/projects/${alpha.id}`, { auth: bearer(token) })).status).toBe(200);
    const issue = { projectId: alpha.id, title: 'Written with a read-only token' };
    const refused = await server.call('POST', '/issues', { body: issue, auth: bearer(token) });
    expect(refused.status).toBe(403);
    expect(refused.json.code).toBe('GITLOOM_ERR_TOKEN_READ_ONLY');
    const issues = await server.call('GET', '/issues?offset=0&count=100', { auth: carol.auth });
    expect(issues.json.map((i: { title: string }) => i.title)).not.toContain(issue.title);
    // control: the same write with the password
    expect((await server.call('POST', '/issues', { body: issue, auth: carol.auth })).status).toBe(200);
    // running a job is a change even through a GET
    const trigger = (value: string) => server.call('GET', `/trigger-job?project=alpha&job=ci&branch=main&access-token=${value}`, { auth: null });
    const triggered = await trigger(token);
    expect(triggered.status).toBe(403);
    expect(triggered.json.code).toBe('GITLOOM_ERR_TOKEN_READ_ONLY');
    // control: a full token gets past the token check (to the missing build spec)
    expect((await trigger(await newToken(carol, {}))).status).toBe(400);

    const work = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-ro-'));
    try {
      await git(work, ['clone', '-q', gitUrl(server, 'alpha', tokenUser(carol, token)), '.']);
      await commitFiles(work, { 'x.txt': 'x\n' }, 'try');
      expect(await gitFails(work, ['push', '-q', 'origin', 'main'])).toMatch(/403/);
      // control: carol's password pushes
      await git(work, ['push', '-q', gitUrl(server, 'alpha', { name: carol.name, password: carol.password }), 'main']);
    } finally {
      await fs.rm(work, { recursive: true, force: true });
    }
  });

  it('a token limited to a project sees nothing else: 404 for the other, absent from listings', async () => {
    const token = await newToken(carol, { projectIds: [alpha.id] });
    expect((await server.call('GET', `/projects/${alpha.id}`, { auth: bearer(token) })).status).toBe(200);
    expect((await server.call('GET', `/projects/${beta.id}`, { auth: bearer(token) })).status).toBe(404);
    const listed = await server.call('GET', '/projects?offset=0&count=100', { auth: bearer(token) });
    expect(listed.json.map((p: { id: number }) => p.id)).toEqual([alpha.id]);
    // control: the same user's password sees both
    const all = await server.call('GET', '/projects?offset=0&count=100', { auth: carol.auth });
    expect(all.json.map((p: { id: number }) => p.id).sort()).toEqual([alpha.id, beta.id].sort());

    const work = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-limited-'));
    try {
      await git(work, ['clone', '-q', gitUrl(server, 'alpha', tokenUser(carol, token)), 'a']);
      expect(await gitFails(work, ['clone', '-q', gitUrl(server, 'beta', tokenUser(carol, token)), 'b'])).toMatch(/not found|404/i);
    } finally {
      await fs.rm(work, { recursive: true, force: true });
    }
  });

  it('a limited token carries no administrator rights, and a token it makes is at most as limited', async () => {
    const admin = { id: 1, name: ADMIN.name, password: ADMIN.password, auth: adminAuth };
    const limited = await newToken(admin, { projectIds: [alpha.id] }, adminAuth);
    expect((await server.call('GET', '/settings/security', { auth: bearer(limited) })).status).toBe(403);
    expect((await server.call('GET', `/projects/${beta.id}`, { auth: bearer(limited) })).status).toBe(404);
    // control: an unlimited token of the administrator administers
    const full = await newToken(admin, {}, adminAuth);
    expect((await server.call('GET', '/settings/security', { auth: bearer(full) })).status).toBe(200);

    const child = await newToken(carol, { projectIds: [alpha.id] });
    const grandchild = await newToken(carol, { description: 'made by a limited token' }, bearer(child));
    expect((await server.call('GET', `/projects/${beta.id}`, { auth: bearer(grandchild) })).status).toBe(404);
    const listing = await server.call('GET', `/users/${carol.id}/access-tokens`, { auth: carol.auth });
    const entry = listing.json.find((t: { description: string | null }) => t.description === 'made by a limited token');
    expect(entry.projectIds).toEqual([alpha.id]);
  });

  it('a token cannot be limited to a project its creator cannot see', async () => {
    const [dave] = await givenUsers(server, 'dave');
    const res = await server.call('POST', `/users/${dave.id}/access-tokens`, { body: { projectIds: [alpha.id] }, auth: dave.auth });
    expect(res.status).toBe(404);
    const listing = await server.call('GET', `/users/${dave.id}/access-tokens`, { auth: dave.auth });
    expect(listing.json).toEqual([]);
  });

  it('deleting its only project leaves a limited token reaching nothing', async () => {
    const gamma = await givenRepo(server, 'gamma');
    await grantRole(server, gamma.id, carol.id, 'Code Writer');
    const token = await newToken(carol, { projectIds: [gamma.id] });
    expect((await server.call('GET', '/projects?offset=0&count=100', { auth: bearer(token) })).json).toHaveLength(1);
    expect((await server.call('DELETE', `/projects/${gamma.id}`, { auth: adminAuth })).status).toBe(200);
    expect((await server.call('GET', '/projects?offset=0&count=100', { auth: bearer(token) })).json).toEqual([]);
    expect((await server.call('GET', `/projects/${alpha.id}`, { auth: bearer(token) })).status).toBe(404);
  });

  it('the listing shows each token’s limits and last use', async () => {
    const token = await newToken(carol, { description: 'tracked', readOnly: true });
    const entry = async () =>
      (await server.call('GET', `/users/${carol.id}/access-tokens`, { auth: carol.auth })).json.find(
        (t: { description: string }) => t.description === 'tracked',
      );
    expect(await entry()).toMatchObject({ readOnly: true, projectIds: null, lastUsedDate: null, lastUsedAddress: null });
    await server.call('GET', '/users/me', { auth: bearer(token) });
    const used = await eventually(async () => {
      const found = await entry();
      if (found.lastUsedDate === null) throw new Error('not recorded yet');
      return found;
    });
    expect(used.lastUsedAddress).toMatch(/127\.0\.0\.1|::1/);
  });

  it('the security setting bounds token lifetimes', async () => {
    const security = (await server.call('GET', '/settings/security', { auth: adminAuth })).json;
    expect(security).toMatchObject({ sessionTimeoutDays: 14, maxTokenLifetimeDays: null });
    expect((await server.call('POST', '/settings/security', { body: { maxTokenLifetimeDays: 2 }, auth: adminAuth })).status).toBe(200);
    try {
      const before = Date.now();
      await newToken(carol, { description: 'bounded' });
      const listing = await server.call('GET', `/users/${carol.id}/access-tokens`, { auth: carol.auth });
      const bounded = listing.json.find((t: { description: string }) => t.description === 'bounded');
      const expires = Date.parse(bounded.expireDate);
      expect(expires).toBeGreaterThan(before + 2 * 86_400_000 - 60_000);
      expect(expires).toBeLessThanOrEqual(Date.now() + 2 * 86_400_000);
      const tooLate = new Date(Date.now() + 5 * 86_400_000).toISOString();
      const refused = await server.call('POST', `/users/${carol.id}/access-tokens`, { body: { expireDate: tooLate }, auth: carol.auth });
      expect(refused.status).toBe(400);
      expect(refused.json.code).toBe('GITLOOM_ERR_TOKEN_LIFETIME');
      expect((await server.call('POST', '/settings/security', { body: { sessionTimeoutDays: 0 }, auth: adminAuth })).status).toBe(400);
    } finally {
      await server.call('POST', '/settings/security', { body: { maxTokenLifetimeDays: null }, auth: adminAuth });
    }
  });
});
