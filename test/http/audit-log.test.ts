import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORT_BATCH } from '../../src/domain/audit/audit-queries.js';
import { csrfTokenOf, cookiesOf, signInByFetch } from '../helpers/browser.js';
import { commandSpec, eventually, givenProject, givenRepo, removeWorkTrees, runJobOnCommit } from '../helpers/fixtures.js';
import { ADMIN, basic, git, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The audit log (docs/audit-log.md): a row for each audited change, written in the change's
 * transaction, with actor, address, target and summary — never a secret's value or a password;
 * the API (administrators; a project's administrators for its rows), its filters and paging,
 * the JSON-lines export and the retention.
 */

const run = promisify(execFile);

interface WireEvent {
  id: number;
  time: string;
  actorId: number | null;
  actorName: string;
  address: string | null;
  userAgent: string | null;
  action: string;
  targetType: string;
  targetId: string | null;
  targetName: string | null;
  projectId: number | null;
  summary: { before?: any; after?: any } | null;
  cursor: string;
}

describe('audit log', () => {
  let server: TestServer;
  const secrets: string[] = [];
  const home = { dir: '' };

  beforeAll(async () => {
    // mirrors may name a loopback remote
    server = await startTestServer({ GITLOOM_WEBHOOK_ALLOW_PRIVATE: 'true' });
    home.dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-audit-'));
  });
  afterAll(async () => {
    await server?.close();
    await removeWorkTrees();
    await fs.rm(home.dir, { recursive: true, force: true });
  });

  const events = async (query: Record<string, string> = {}, auth?: string): Promise<WireEvent[]> => {
    const res = await server.call('GET', `/audit-events?${new URLSearchParams(query)}`, { auth });
    expect(res.status, res.text).toBe(200);
    return res.json as WireEvent[];
  };
  const latest = async (action: string): Promise<WireEvent> => {
    const [row] = await events({ action, count: '1' });
    expect(row, `no ${action} row`).toBeDefined();
    return row;
  };

  it('records users, password changes, tokens, SSH keys, email addresses, groups, roles and memberships with actor, address and target', async () => {
    const password = 'first-Secret-pw1';
    secrets.push(password);
    const alice = await server.createUser('alice', password);
    let row = await latest('user.create');
    expect(row).toMatchObject({ actorId: 1, actorName: ADMIN.name, address: '127.0.0.1', targetType: 'user', targetId: String(alice.id), targetName: 'alice' });
    expect(row.summary?.after).toMatchObject({ name: 'alice', email: 'alice@example.com' });
    expect(Date.parse(row.time)).toBeGreaterThan(Date.now() - 60_000);

    expect((await server.call('POST', `/users/${alice.id}`, { body: { fullName: 'Alice A.' } })).status).toBe(200);
    row = await latest('user.update');
    expect(row.summary).toEqual({ before: { fullName: 'alice Full' }, after: { fullName: 'Alice A.' } });

    const changed = 'second-Secret-pw2';
    secrets.push(changed);
    expect((await server.call('POST', `/users/${alice.id}/password`, { text: changed, auth: alice.auth })).status).toBe(200);
    row = await latest('user.changePassword');
    expect(row).toMatchObject({ actorName: 'alice', targetName: 'alice', summary: null });
    const aliceAuth = basic('alice', changed);

    const token = await server.call('POST', `/users/${alice.id}/access-tokens`, {
      body: { description: 'ci' },
      auth: aliceAuth,
      headers: { 'user-agent': 'audit-test/1' },
    });
    expect(token.status).toBe(200);
    secrets.push(token.text);
    row = await latest('accessToken.create');
    expect(row).toMatchObject({ actorName: 'alice', userAgent: 'audit-test/1', targetType: 'accessToken', targetName: `alice/${token.text.slice(0, 4)}…` });
    expect(row.summary?.after).toEqual({
      owner: 'alice',
      prefix: `${token.text.slice(0, 4)}…`,
      description: 'ci',
      expireDate: null,
      readOnly: false,
      projectIds: null,
    });
    expect((await server.call('DELETE', `/users/${alice.id}/access-tokens/${token.text}`, { auth: aliceAuth })).status).toBe(200);
    expect(await latest('accessToken.delete')).toMatchObject({ actorName: 'alice', targetId: row.targetId });

    const keyFile = path.join(home.dir, 'id_ed25519');
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'alice@test', '-f', keyFile]);
    const key = await server.call('POST', `/users/${alice.id}/ssh-keys`, { text: await fs.readFile(`${keyFile}.pub`, 'utf8'), auth: aliceAuth });
    expect(key.status, key.text).toBe(200);
    row = await latest('sshKey.create');
    expect(row).toMatchObject({ targetType: 'sshKey', targetId: String(key.json), actorName: 'alice' });
    expect(row.targetName).toMatch(/^alice\/SHA256:/);
    expect((await server.call('DELETE', `/ssh-keys/${key.json}`, { auth: aliceAuth })).status).toBe(200);
    expect(await latest('sshKey.delete')).toMatchObject({ targetId: String(key.json) });

    // email addresses are managed on the pages
    const admin = await signInByFetch(server, ADMIN.name, ADMIN.password);
    const post = (url: string, fields: Record<string, string>) =>
      fetch(`${server.url}${url}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: admin.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: admin.csrfToken, ...fields }).toString(),
      });
    expect((await post(`/~administration/users/${alice.id}/email-addresses`, { value: 'alice@work.example' })).status).toBe(303);
    row = await latest('emailAddress.create');
    expect(row).toMatchObject({ targetName: 'alice/alice@work.example', summary: { after: { owner: 'alice', value: 'alice@work.example' } } });
    const addressId = row.targetId!;
    expect((await post(`/~administration/users/${alice.id}/email-addresses/primary`, { id: addressId })).status).toBe(303);
    expect((await latest('emailAddress.update')).summary).toEqual({ before: { primary: false }, after: { primary: true } });
    const old = ((await server.call('GET', `/users/${alice.id}/email-addresses`)).json as { id: number; value: string }[]).find(
      (e) => e.value === 'alice@example.com',
    )!;
    expect((await post(`/~administration/users/${alice.id}/email-addresses/delete`, { id: String(old.id) })).status).toBe(303);
    expect(await latest('emailAddress.delete')).toMatchObject({ targetName: 'alice/alice@example.com' });

    const group = await server.call('POST', '/groups', { body: { name: 'auditors' } });
    expect(await latest('group.create')).toMatchObject({ targetId: String(group.json), targetName: 'auditors' });
    expect((await server.call('POST', `/groups/${group.json}`, { body: { administrator: true } })).status).toBe(200);
    expect((await latest('group.update')).summary).toEqual({ before: { administrator: 0 }, after: { administrator: 1 } });
    const membership = await server.call('POST', '/memberships', { body: { userId: alice.id, groupId: group.json } });
    expect(await latest('membership.create')).toMatchObject({ targetId: String(membership.json), targetName: 'alice in auditors' });
    expect((await server.call('DELETE', `/memberships/${membership.json}`)).status).toBe(200);
    expect(await latest('membership.delete')).toMatchObject({ targetName: 'alice in auditors' });
    expect((await server.call('DELETE', `/groups/${group.json}`)).status).toBe(200);
    expect(await latest('group.delete')).toMatchObject({ targetName: 'auditors' });

    const role = await server.call('POST', '/roles', { body: { name: 'Auditor' } });
    expect(await latest('role.create')).toMatchObject({ targetId: String(role.json), targetName: 'Auditor' });
    expect((await server.call('DELETE', `/roles/${role.json}`)).status).toBe(200);
    expect(await latest('role.delete')).toMatchObject({ targetName: 'Auditor' });

    const bob = await server.createUser('bob');
    secrets.push(bob.password);
    expect((await server.call('DELETE', `/users/${bob.id}`)).status).toBe(200);
    expect(await latest('user.delete')).toMatchObject({ targetId: String(bob.id), targetName: 'bob' });
  });

  it('records web sign-ins, and failed sign-ins of the web page and of Basic credentials, naming the login tried', async () => {
    await signInByFetch(server, 'alice', 'second-Secret-pw2');
    expect(await latest('signIn.success')).toMatchObject({ actorName: 'alice', address: '127.0.0.1', targetType: 'user', targetName: 'alice' });

    const wrong = 'wrong-Secret-pw3';
    secrets.push(wrong);
    const form = await fetch(`${server.url}/~login`);
    const refused = await fetch(`${server.url}/~login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: cookiesOf(form), 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'web-browser/2' },
      body: new URLSearchParams({ _csrf: csrfTokenOf(await form.text()), name: 'alice', password: wrong }).toString(),
    });
    expect(refused.status).toBe(401);
    let row = await latest('signIn.failure');
    expect(row).toMatchObject({ actorId: null, actorName: 'alice', userAgent: 'web-browser/2', targetName: 'alice', summary: null });

    expect((await server.call('GET', '/users/me', { auth: basic('nobody-here', wrong) })).status).toBe(401);
    row = await latest('signIn.failure');
    expect(row).toMatchObject({ actorId: null, actorName: 'nobody-here', targetId: null, address: '127.0.0.1' });

    // a successful Basic sign-in (every git request sends one) is not a row
    const before = (await events({ action: 'signIn.success' })).length;
    expect((await server.call('GET', '/users/me', { auth: basic('alice', 'second-Secret-pw2') })).status).toBe(200);
    expect(await events({ action: 'signIn.success' })).toHaveLength(before);
  });

  it('records settings, executors, agent tokens, projects, authorizations, protections, job secrets (by name) and branch deletions', async () => {
    const security = (await server.call('GET', '/settings/security')).json;
    expect((await server.call('POST', '/settings/security', { body: { enableAnonymousAccess: true } })).status).toBe(200);
    expect((await latest('securitySetting.update')).summary).toMatchObject({ before: security, after: { ...security, enableAnonymousAccess: true } });
    expect((await server.call('POST', '/settings/security', { body: { enableAnonymousAccess: false } })).status).toBe(200);

    const registryPassword = 'registry-Secret-pw4';
    secrets.push(registryPassword);
    const executors = [
      {
        '@type': 'ServerDockerExecutor',
        name: 'docker',
        enabled: false,
        registryLogins: [{ registryUrl: 'registry.example.com', userName: 'ci', password: registryPassword }],
      },
    ];
    const set = await server.call('POST', '/settings/job-executors', { body: executors });
    expect(set.status, set.text).toBe(200);
    expect((await latest('jobExecutors.update')).summary?.after).toEqual([{ '@type': 'ServerDockerExecutor', name: 'docker', enabled: false }]);

    const agentToken = await server.call('POST', '/agent-tokens');
    expect(await latest('agentToken.create')).toMatchObject({ targetId: String(agentToken.json) });
    secrets.push((await server.call('GET', `/agent-tokens/${agentToken.json}`)).json.value);
    expect((await server.call('DELETE', `/agent-tokens/${agentToken.json}`)).status).toBe(200);
    expect(await latest('agentToken.delete')).toMatchObject({ targetId: String(agentToken.json) });

    const repo = await givenRepo(server, 'audited');
    expect(await latest('project.create')).toMatchObject({ targetName: 'audited', projectId: repo.id });
    expect((await server.call('POST', `/projects/${repo.id}`, { body: { description: 'now audited' } })).status).toBe(200);
    expect((await latest('project.update')).summary).toEqual({ before: { description: null }, after: { description: 'now audited' } });

    const carol = await server.createUser('carol');
    const grant = await server.call('POST', '/user-authorizations', { body: { projectId: repo.id, userId: carol.id, roleId: 1 } });
    let row = await latest('userAuthorization.create');
    expect(row).toMatchObject({ targetId: String(grant.json), targetName: 'carol on audited', projectId: repo.id });
    expect(row.summary?.after).toEqual({ project: 'audited', user: 'carol', role: 'Project Owner' });

    const team = await server.call('POST', '/groups', { body: { name: 'team' } });
    const groupGrant = await server.call('POST', '/group-authorizations', { body: { projectId: repo.id, groupId: team.json, roleId: 2 } });
    expect(groupGrant.status, groupGrant.text).toBe(200);
    expect((await server.call('POST', `/group-authorizations/${groupGrant.json}`, { body: { roleId: 3 } })).status).toBe(200);
    row = await latest('groupAuthorization.update');
    expect(row).toMatchObject({ targetName: 'team on audited', projectId: repo.id });
    expect(row.summary).toEqual({
      before: { project: 'audited', group: 'team', role: 'Code Writer' },
      after: { project: 'audited', group: 'team', role: 'Code Reader' },
    });

    const setting = (await server.call('GET', `/projects/${repo.id}/setting`)).json;
    const secretValue = 'job-Secret-value5';
    secrets.push(secretValue);
    const updated = await server.call('POST', `/projects/${repo.id}/setting`, {
      body: {
        ...setting,
        branchProtections: [{ branches: 'main', preventDeletion: true }],
        buildSetting: {
          ...setting.buildSetting,
          jobSecrets: [{ name: 'deploy', value: secretValue, authorizedBranches: 'main', authorization: null, archived: false }],
        },
      },
    });
    expect(updated.status, updated.text).toBe(200);
    row = await latest('branchProtections.update');
    expect(row).toMatchObject({ projectId: repo.id, targetName: 'audited:branchProtections' });
    expect(row.summary?.after[0]).toMatchObject({ branches: 'main', preventDeletion: true });
    row = await latest('jobSecret.create');
    expect(row).toMatchObject({ projectId: repo.id, targetName: 'audited:deploy', actorName: ADMIN.name });
    expect(row.summary?.after).toEqual({ name: 'deploy', authorizedBranches: 'main', authorization: null, archived: false });

    const changedValue = 'job-Secret-value6';
    secrets.push(changedValue);
    const again = (await server.call('GET', `/projects/${repo.id}/setting`)).json;
    const jobSecrets = [{ ...again.buildSetting.jobSecrets[0], value: changedValue }];
    expect(
      (await server.call('POST', `/projects/${repo.id}/setting`, { body: { ...again, buildSetting: { ...again.buildSetting, jobSecrets } } })).status,
    ).toBe(200);
    expect((await latest('jobSecret.update')).summary?.after).toMatchObject({ name: 'deploy', valueChanged: true });

    await repo.commitOn('feature', { 'a.txt': 'a\n' }, 'feature');
    expect((await server.call('DELETE', `/repositories/${repo.id}/branches/feature`)).status).toBe(200);
    row = await latest('branch.delete');
    expect(row).toMatchObject({ targetType: 'branch', targetName: 'feature', projectId: repo.id, actorName: ADMIN.name });
    expect(row.summary?.before.commit).toMatch(/^[0-9a-f]{40}$/);

    expect((await server.call('POST', `/repositories/${repo.id}/tags`, { body: { tagName: 'v1', revision: 'main' } })).status).toBe(200);
    expect((await server.call('DELETE', `/repositories/${repo.id}/tags/v1`)).status).toBe(200);
    expect(await latest('tag.delete')).toMatchObject({ targetType: 'tag', targetName: 'v1', projectId: repo.id });

    // a push deleting a branch: the pusher is the actor
    await repo.commitOn('pushed', { 'b.txt': 'b\n' }, 'pushed');
    await git(repo.work, ['push', '-q', repo.remote, ':pushed']);
    await server.settled();
    row = await latest('branch.delete');
    expect(row).toMatchObject({ targetName: 'pushed', projectId: repo.id, actorName: ADMIN.name, address: null });
    expect(row.summary?.before.via).toBe('push');

    const mirrorPassword = 'mirror-Secret-pw7';
    secrets.push(mirrorPassword);
    const mirror = await server.call('POST', `/projects/${repo.id}/mirrors`, {
      body: { direction: 'PUSH', url: 'http://127.0.0.1:9/nowhere.git', userName: 'bot', password: mirrorPassword, enabled: false },
    });
    expect(mirror.status, mirror.text).toBe(200);
    row = await latest('mirror.create');
    expect(row).toMatchObject({ targetId: String(mirror.json), projectId: repo.id });
    expect(row.summary?.after).toEqual({
      direction: 'PUSH',
      url: 'http://127.0.0.1:9/nowhere.git',
      userName: 'bot',
      hasPassword: true,
      intervalMinutes: null,
      enabled: false,
    });
    expect((await server.call('POST', `/projects/${repo.id}/mirrors/${mirror.json}`, { body: { password: null } })).status).toBe(200);
    expect((await latest('mirror.update')).summary).toEqual({ before: { hasPassword: true }, after: { hasPassword: false } });
    expect((await server.call('DELETE', `/projects/${repo.id}/mirrors/${mirror.json}`)).status).toBe(200);
    expect(await latest('mirror.delete')).toMatchObject({ targetId: String(mirror.json) });

    const built = await givenRepo(server, 'built', { files: { '.onedev-buildspec.yml': commandSpec({ name: 'CI', commands: ['true'] }) } });
    const run = await runJobOnCommit(server, { projectId: built.id, commitHash: await built.head('main'), jobName: 'CI' });
    expect(run.status, run.text).toBe(200);
    await eventually(async () => ['SUCCESSFUL', 'FAILED'].includes((await server.call('GET', `/builds/${run.json}`)).json.status));
    expect((await server.call('DELETE', `/builds/${run.json}`)).status).toBe(200);
    row = await latest('build.delete');
    expect(row).toMatchObject({ targetId: String(run.json), targetName: 'built#1', projectId: built.id });
    expect(row.summary?.before).toMatchObject({ jobName: 'CI', refName: 'refs/heads/main' });

    const doomed = await givenProject(server, { name: 'doomed' });
    expect((await server.call('DELETE', `/projects/${doomed}`)).status).toBe(200);
    expect(await latest('project.delete')).toMatchObject({ targetName: 'doomed', targetId: String(doomed) });
  });

  it('never holds a password, a token or a secret value', async () => {
    const res = await fetch(`${server.api}/audit-events/export`, { headers: { authorization: basic(ADMIN.name, ADMIN.password) } });
    const text = await res.text();
    expect(text.split('\n').length).toBeGreaterThan(30);
    expect(secrets.length).toBeGreaterThan(8);
    for (const secret of [...secrets, ADMIN.password]) expect(text).not.toContain(secret);
  });

  it('leaves no row when the change rolls back', async () => {
    const db = server.server.services.db;
    const dave = await server.createUser('dave');
    const project = await givenProject(server, { name: 'rolled-back' });
    const grant = (await server.call('POST', '/user-authorizations', { body: { projectId: project, userId: dave.id, roleId: 1 } })).json as number;
    // the deletion's audit row is written first; the database refuses the deletion after it
    const postgres = !!process.env.GITLOOM_TEST_DATABASE_URL;
    if (postgres) {
      await sql`create function refuse_delete() returns trigger language plpgsql as $$ begin raise exception 'refused'; end $$`.execute(db);
      await sql`create trigger refuse_delete before delete on user_authorizations for each row execute function refuse_delete()`.execute(db);
    } else {
      await sql`create trigger refuse_delete before delete on user_authorizations begin select raise(abort, 'refused'); end`.execute(db);
    }
    try {
      expect((await server.call('DELETE', `/user-authorizations/${grant}`)).status).toBe(500);
    } finally {
      await sql`drop trigger refuse_delete${sql.raw(postgres ? ' on user_authorizations' : '')}`.execute(db);
      if (postgres) await sql`drop function refuse_delete()`.execute(db);
    }
    expect((await server.call('GET', `/user-authorizations/${grant}`)).status).toBe(200);
    expect(await events({ action: 'userAuthorization.delete', targetType: 'userAuthorization' })).toEqual([]);
    // and the same deletion, allowed, leaves its row
    expect((await server.call('DELETE', `/user-authorizations/${grant}`)).status).toBe(200);
    expect(await latest('userAuthorization.delete')).toMatchObject({ targetId: String(grant), targetName: 'dave on rolled-back' });
  });

  it('answers administrators only; a project administrator reads the rows of that project', async () => {
    const erin = await server.createUser('erin');
    const frank = await server.createUser('frank');
    expect((await server.call('GET', '/audit-events', { auth: erin.auth })).status).toBe(403);
    expect((await server.call('GET', '/audit-events', { auth: null })).status).toBe(401);
    expect((await server.call('GET', '/audit-events/export', { auth: erin.auth })).status).toBe(403);
    expect((await server.call('GET', '/settings/audit-log', { auth: erin.auth })).status).toBe(403);

    const own = await givenProject(server, { name: 'erins' });
    const other = await givenProject(server, { name: 'not-erins' });
    expect((await server.call('POST', '/user-authorizations', { body: { projectId: own, userId: erin.id, roleId: 1 } })).status).toBe(200);
    expect((await server.call('POST', `/projects/${own}`, { body: { description: 'mine' }, auth: erin.auth })).status).toBe(200);
    expect((await server.call('POST', `/projects/${other}`, { body: { description: 'theirs' } })).status).toBe(200);
    const res = await server.call('GET', `/projects/${own}/audit-events`, { auth: erin.auth });
    expect(res.status).toBe(200);
    const rows = res.json as WireEvent[];
    expect(rows.map((r) => r.action)).toEqual(['project.update', 'userAuthorization.create', 'project.create']);
    expect(rows.every((r) => r.projectId === own)).toBe(true);
    expect((await server.call('GET', `/projects/${other}/audit-events`, { auth: erin.auth })).status).toBe(404);
    await server.call('POST', '/user-authorizations', { body: { projectId: own, userId: frank.id, roleId: 3 } });
    expect((await server.call('GET', `/projects/${own}/audit-events`, { auth: frank.auth })).status).toBe(403);
  });

  it('filters by actor, action, target type and time, and pages by offset and by keyset', async () => {
    const all = await events({ count: '100' });
    const times = all.map((r) => Date.parse(r.time));
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    const byActor = await events({ actor: 'ALICE' });
    expect(byActor.length).toBeGreaterThan(3);
    expect(byActor.every((r) => r.actorName === 'alice')).toBe(true);
    expect((await events({ action: 'user.*' })).every((r) => r.targetType === 'user')).toBe(true);
    expect((await events({ targetType: 'sshKey' })).map((r) => r.action)).toEqual(['sshKey.delete', 'sshKey.create']);
    expect(await events({ since: new Date(Date.now() + 60_000).toISOString() })).toEqual([]);
    expect(await events({ until: '2000-01-01T00:00:00Z' })).toEqual([]);
    expect((await events({ since: String(Date.now() - 3600_000) })).length).toBe(all.length);

    const first = await events({ count: '3' });
    const second = await events({ count: '3', before: first[2].cursor });
    const byOffset = await events({ count: '3', offset: '3' });
    expect(second).toEqual(byOffset);
    expect([...first, ...second].map((r) => r.id)).toEqual(all.slice(0, 6).map((r) => r.id));

    expect((await server.call('GET', '/audit-events?before=12x')).status).toBe(400);
    expect((await server.call('GET', '/audit-events?since=yesterday')).status).toBe(400);
    expect((await server.call('GET', '/audit-events?count=101')).status).toBe(400);
    expect((await server.call('GET', '/audit-events?colour=red')).status).toBe(400);
    expect((await server.call('GET', '/audit-events?actor=a%00b')).status).toBe(400);
    expect((await server.call('GET', '/audit-events?before=1.2147483648')).status).toBe(400);
    const refused = await server.call('GET', `/audit-events/export?action=${'x'.repeat(300)}`);
    expect(refused.status).toBe(400);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
  });

  it('exports every matching row as JSON lines, streamed in batches', async () => {
    const db = server.server.services.db;
    const now = Date.now();
    const count = EXPORT_BATCH * 2 + 7;
    const rows = Array.from({ length: count }, (_, i) => ({
      time: now - i,
      actorId: null,
      actorName: 'bulk',
      address: null,
      userAgent: null,
      action: 'bulk.test',
      targetType: 'bulk',
      targetId: String(i),
      targetName: null,
      projectId: null,
      summary: null,
    }));
    for (let i = 0; i < rows.length; i += 200)
      await db
        .insertInto('auditEvents')
        .values(rows.slice(i, i + 200))
        .execute();
    const res = await fetch(`${server.api}/audit-events/export?action=bulk.test`, { headers: { authorization: basic(ADMIN.name, ADMIN.password) } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    expect(res.headers.get('content-length')).toBeNull();
    const text = await res.text();
    expect(text.endsWith('\n')).toBe(true);
    const lines = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as WireEvent);
    expect(lines).toHaveLength(count);
    expect(lines.map((r) => r.targetId)).toEqual(rows.map((r) => r.targetId));
    expect(new Set(lines.map((r) => r.id)).size).toBe(count);
  });

  it('deletes the rows older than the retention: when it is set, and by the periodic job', async () => {
    const day = 24 * 60 * 60_000;
    const old = (targetId: string, daysAgo: number) => ({
      time: Date.now() - daysAgo * day,
      actorId: null,
      actorName: 'old',
      address: null,
      userAgent: null,
      action: 'old.test',
      targetType: 'old',
      targetId,
      targetName: null,
      projectId: null,
      summary: null,
    });
    await server.server.services.db
      .insertInto('auditEvents')
      .values([old('ten', 10), old('three', 3)])
      .execute();
    expect((await server.call('POST', '/settings/audit-log', { body: { retentionDays: -1 } })).status).toBe(400);
    expect((await server.call('POST', '/settings/audit-log', { body: { retentionDays: 5 } })).status).toBe(200);
    expect((await server.call('GET', '/settings/audit-log')).json).toEqual({ retentionDays: 5 });
    expect((await events({ action: 'old.test' })).map((r) => r.targetId)).toEqual(['three']);
    expect((await latest('auditSetting.update')).summary).toEqual({ before: { retentionDays: null }, after: { retentionDays: 5 } });

    await server.server.services.db.insertInto('auditEvents').values(old('six', 6)).execute();
    await server.restart();
    const left = await eventually(async () => {
      const ids = (await events({ action: 'old.test' })).map((r) => r.targetId);
      return ids.includes('six') ? null : ids;
    });
    expect(left).toEqual(['three']);

    // 0 keeps every row again
    expect((await server.call('POST', '/settings/audit-log', { body: { retentionDays: 0 } })).status).toBe(200);
    expect((await server.call('GET', '/settings/audit-log')).json).toEqual({ retentionDays: null });
  });
});
