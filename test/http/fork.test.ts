import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, git, gitUrl, makeWorkTree, startTestServer, ADMIN, type TestServer } from '../helpers/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server.close();
});

describe('forks', () => {
  it('clones the repository, accepts pushes, and merges a pull request from the fork into the origin', async () => {
    const originId = (await server.call('POST', '/projects', { body: { name: 'origin' } })).json;
    const work = await makeWorkTree({ 'README.md': '# origin\n' });
    await git(work, ['tag', 'v1']);
    await git(work, ['push', '-q', gitUrl(server, 'origin', ADMIN), 'main', 'main:develop', 'v1']);
    await server.call('POST', `/repositories/${originId}/default-branch`, { text: 'develop' });

    const contributor = await server.createUser('contributor');
    await server.call('POST', '/user-authorizations', { body: { projectId: originId, userId: contributor.id, roleId: 3 } });
    const created = await server.call('POST', '/projects', { body: { name: 'my-fork', forkedFromId: originId }, auth: contributor.auth });
    expect(created.status).toBe(403);
    await server.call('POST', '/groups', { body: { name: 'forkers', createRootProjects: true } });
    const groupId = (await server.call('GET', '/groups?name=forkers')).json[0].id;
    await server.call('POST', '/memberships', { body: { userId: contributor.id, groupId } });
    const forkId = (await server.call('POST', '/projects', { body: { name: 'my-fork', forkedFromId: originId }, auth: contributor.auth })).json;
    expect((await server.call('GET', `/projects/${forkId}`, { auth: contributor.auth })).json.forkedFromId).toBe(originId);
    const branches = (await server.call('GET', `/repositories/${forkId}/branches`, { auth: contributor.auth })).json;
    expect(branches).toEqual(['develop', 'main']);
    expect((await server.call('GET', `/repositories/${forkId}/default-branch`, { auth: contributor.auth })).text).toBe('develop');
    expect(await git(work, ['ls-remote', '--tags', gitUrl(server, 'my-fork', contributor)])).toContain('refs/tags/v1');
    expect((await server.call('GET', `/projects/${originId}/forks`, { auth: contributor.auth })).json.map((p: { id: number }) => p.id)).toEqual([forkId]);

    const head = await commitFiles(work, { 'feature.txt': 'from the fork\n' }, 'feature');
    await git(work, ['push', '-q', gitUrl(server, 'my-fork', contributor), 'main:feature']);
    const pr = await server.call('POST', '/pulls', {
      body: { targetProjectId: originId, sourceProjectId: forkId, targetBranch: 'main', sourceBranch: 'feature', title: 'From fork' },
      auth: contributor.auth,
    });
    expect(pr.status, pr.text).toBe(200);
    const merged = await server.call('POST', `/pulls/${pr.json}/merge`, { text: 'Merge fork work' });
    expect(merged.status, merged.text).toBe(200);
    const originMain = (await git(work, ['ls-remote', gitUrl(server, 'origin', ADMIN), 'refs/heads/main'])).split('\t')[0];
    await git(work, ['fetch', '-q', gitUrl(server, 'origin', ADMIN), 'main']);
    await git(work, ['merge-base', '--is-ancestor', head, originMain]);
    expect(originMain).not.toBe(head);
    expect((await server.call('GET', `/pulls/${pr.json}`)).json.status).toBe('MERGED');
  });

  it('refuses to fork a project the caller cannot read', async () => {
    const secretId = (await server.call('POST', '/projects', { body: { name: 'secret' } })).json;
    const outsider = await server.createUser('outsider');
    const groupId = (await server.call('POST', '/groups', { body: { name: 'makers', createRootProjects: true } })).json;
    await server.call('POST', '/memberships', { body: { userId: outsider.id, groupId } });
    const res = await server.call('POST', '/projects', { body: { name: 'stolen', forkedFromId: secretId }, auth: outsider.auth });
    expect(res.status).toBe(404);
    expect((await server.call('GET', '/projects?query=%22Name%22%20is%20%22stolen%22')).json).toEqual([]);
  });
});
