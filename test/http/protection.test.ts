import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, commitFiles, git, gitFails, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let projectId: number;
let writer: Awaited<ReturnType<TestServer['createUser']>>;
let work: string;

async function remoteHead(ref: string): Promise<string> {
  return (await git(work, ['ls-remote', gitUrl(server, 'prot', ADMIN), ref])).split('\t')[0];
}

async function setProtection(branchProtections: unknown[], tagProtections: unknown[] = []): Promise<void> {
  const res = await server.call('POST', `/projects/${projectId}/setting`, { body: { branchProtections, tagProtections } });
  expect(res.status, res.text).toBe(200);
}

beforeAll(async () => {
  server = await startTestServer();
  projectId = (await server.call('POST', '/projects', { body: { name: 'prot' } })).json;
  writer = await server.createUser('writer');
  expect((await server.call('POST', '/user-authorizations', { body: { projectId, userId: writer.id, roleId: 2 } })).status).toBe(200);
  work = await makeWorkTree({ 'a.txt': 'one\n' });
  await git(work, ['remote', 'add', 'origin', gitUrl(server, 'prot', writer)]);
  await git(work, ['push', '-q', 'origin', 'main']);
  await git(work, ['tag', 'v1']);
  await git(work, ['push', '-q', 'origin', 'v1']);
});

afterAll(async () => {
  await server.close();
});

describe('branch protection on push', () => {
  it('refuses a forced push, leaves the ref unchanged and prints the reason', async () => {
    await setProtection([{ branches: 'main' }]);
    const before = await remoteHead('refs/heads/main');
    await git(work, ['commit', '-q', '--amend', '-m', 'rewritten']);
    const stderr = await gitFails(work, ['push', '-f', 'origin', 'main']);
    expect(stderr).toContain('Can not force-push to this branch');
    expect(stderr).toContain('pre-receive hook declined');
    expect(await remoteHead('refs/heads/main')).toBe(before);
    await git(work, ['reset', '-q', '--hard', before]);
  });

  it('lets a fast-forward push land on a protected branch', async () => {
    const next = await commitFiles(work, { 'b.txt': 'two\n' }, 'second');
    await git(work, ['push', '-q', 'origin', 'main']);
    expect(await remoteHead('refs/heads/main')).toBe(next);
  });

  it('refuses deletion and creation of protected branches', async () => {
    await setProtection([{ branches: 'main release/**' }]);
    expect(await gitFails(work, ['push', 'origin', ':main'])).toContain('Can not delete this branch');
    expect(await remoteHead('refs/heads/main')).not.toBe('');
    expect(await gitFails(work, ['push', 'origin', 'main:release/1.0'])).toContain('Can not create this branch');
    expect(await remoteHead('refs/heads/release/1.0')).toBe('');
    await git(work, ['push', '-q', 'origin', 'main:feature']);
    await git(work, ['push', '-q', 'origin', ':feature']);
  });

  it('refuses direct pushes where reviews or builds are required', async () => {
    await setProtection([{ branches: 'main', reviewRequirement: 'user(admin)' }]);
    await commitFiles(work, { 'c.txt': 'three\n' }, 'third');
    expect(await gitFails(work, ['push', 'origin', 'main'])).toContain('Review required for this change. Please submit pull request instead');
    await setProtection([{ branches: 'main', jobNames: ['ci'] }]);
    expect(await gitFails(work, ['push', 'origin', 'main'])).toContain('Build required for this change');
  });

  it('applies only to matching users and to enabled rules', async () => {
    await setProtection([{ branches: 'main', userMatch: 'anyone except user(writer)', reviewRequirement: 'user(admin)' }]);
    await git(work, ['push', '-q', 'origin', 'main']);
    await commitFiles(work, { 'd.txt': 'four\n' }, 'fourth');
    await setProtection([{ branches: 'main', enabled: false, reviewRequirement: 'user(admin)' }]);
    await git(work, ['push', '-q', 'origin', 'main']);
  });

  it('follows a group through a rename and keeps a referenced group from deletion', async () => {
    const groupId = (await server.call('POST', '/groups', { body: { name: 'Release-Team' } })).json;
    await server.call('POST', '/memberships', { body: { userId: writer.id, groupId } });
    await setProtection([{ branches: 'main', userMatch: 'group(release-team)', preventForcedPush: false, reviewRequirement: 'group(Release-Team):1' }]);
    await commitFiles(work, { 'g.txt': 'group\n' }, 'group change');
    expect(await gitFails(work, ['push', 'origin', 'main'])).toContain('Review required');
    expect((await server.call('POST', `/groups/${groupId}`, { body: { name: 'Releasers' } })).status).toBe(200);
    const rule = (await server.call('GET', `/projects/${projectId}/setting`)).json.branchProtections[0];
    expect(rule).toMatchObject({ userMatch: 'group(Releasers)', reviewRequirement: 'group(Releasers):1' });
    expect(await gitFails(work, ['push', 'origin', 'main'])).toContain('Review required');
    const refused = await server.call('DELETE', `/groups/${groupId}`);
    expect(refused.status).toBe(409);
    expect(refused.json.detail).toContain("protections of project 'prot'");
    await setProtection([]);
    expect((await server.call('DELETE', `/groups/${groupId}`)).status).toBe(200);
    await git(work, ['push', '-q', 'origin', 'main']);
  });

  it('follows a user through a rename and keeps a referenced user from deletion', async () => {
    const reviewer = await server.createUser('gatekeeper');
    await setProtection([{ branches: 'hotfix/**', reviewRequirement: 'user(gatekeeper)' }]);
    expect((await server.call('POST', `/users/${reviewer.id}`, { body: { name: 'warden' } })).status).toBe(200);
    expect((await server.call('GET', `/projects/${projectId}/setting`)).json.branchProtections[0].reviewRequirement).toBe('user(warden)');
    const refused = await server.call('DELETE', `/users/${reviewer.id}`);
    expect(refused.status).toBe(409);
    expect(refused.json.detail).toContain("protections of project 'prot'");
    await setProtection([]);
    expect((await server.call('DELETE', `/users/${reviewer.id}`)).status).toBe(200);
  });

  it('inherits protections from parent projects', async () => {
    const childId = (await server.call('POST', '/projects', { body: { name: 'child', parentId: projectId } })).json;
    await setProtection([{ branches: '**', preventCreation: false }]);
    const dir = await makeWorkTree({ 'x.txt': 'x\n' });
    await git(dir, ['remote', 'add', 'origin', gitUrl(server, 'prot/child', ADMIN)]);
    await git(dir, ['push', '-q', 'origin', 'main']);
    expect(await gitFails(dir, ['push', 'origin', ':main'])).toContain('Can not delete this branch');
    expect(childId).toBeGreaterThan(0);
  });

  it('protects tags', async () => {
    await setProtection([], [{ tags: 'v*' }]);
    expect(await gitFails(work, ['push', 'origin', ':refs/tags/v1'])).toContain('Can not delete this tag');
    await git(work, ['tag', 'v2']);
    expect(await gitFails(work, ['push', 'origin', 'v2'])).toContain('Can not create this tag');
    await git(work, ['tag', 'other']);
    await git(work, ['push', '-q', 'origin', 'other']);
  });

  it('reports the effective protection through the setting and validates it', async () => {
    const setting = (await server.call('GET', `/projects/${projectId}/setting`)).json;
    expect(setting.tagProtections[0]).toMatchObject({ tags: 'v*', enabled: true, preventUpdate: true, userMatch: 'anyone' });
    expect(setting.namedCommitQueries).toEqual([]);
    const bad = await server.call('POST', `/projects/${projectId}/setting`, { body: { branchProtections: [{ branches: 'x', enabled: 'yes' }] } });
    expect(bad.status).toBe(400);
    expect((await server.call('POST', `/projects/${projectId}/setting`, { body: { unknownPart: 1 } })).status).toBe(400);
  });

  it('does not answer the internal hook endpoint without the secret', async () => {
    const res = await fetch(`${server.url}/~internal/hooks/pre-receive`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gitloom-hook-secret': 'guess' },
      body: JSON.stringify({ projectId, userId: 1, updates: [], quarantine: {} }),
    });
    expect(res.status).toBe(404);
  });
});
