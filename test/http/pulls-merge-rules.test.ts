import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git, startTestServer, type TestServer } from '../helpers/server.js';
import { givenRepo, grantRole, removeWorkTrees, type Repo } from '../helpers/fixtures.js';

describe('checkMerge rules (docs/compatibility.md#pull-requests-merge-checks)', () => {
  let server: TestServer;
  let repo: Repo;

  beforeAll(async () => {
    server = await startTestServer();
    repo = await givenRepo(server, 'rules', { files: { 'a.txt': 'a\n' } });
  });
  afterAll(async () => {
    await server.close();
    await removeWorkTrees();
  });

  const db = () => server.server.services.db;

  async function open(branch: string, mergeStrategy = 'CREATE_MERGE_COMMIT'): Promise<number> {
    const res = await server.call('POST', '/pulls', {
      body: { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: branch, title: `Merge ${branch}`, mergeStrategy },
    });
    expect(res.status, res.text).toBe(200);
    await server.settled();
    return res.json as number;
  }

  async function setProtection(branchProtections: unknown[]): Promise<void> {
    const res = await server.call('POST', `/projects/${repo.id}/setting`, { body: { branchProtections } });
    expect(res.status, res.text).toBe(200);
  }

  /** Merging fails with 409 and `detail`; the request stays open and main does not move. */
  async function refused(id: number, detail: string, auth?: string): Promise<void> {
    const main = await repo.head('main');
    const res = await server.call('POST', `/pulls/${id}/merge`, { text: '', auth });
    expect(res.status, res.text).toBe(409);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.json.detail).toBe(detail);
    expect((await server.call('GET', `/pulls/${id}`)).json.status).toBe('OPEN');
    expect(await repo.head('main')).toBe(main);
  }

  it('refuses a request in error with its check error, and merges once the error is gone', async () => {
    await repo.commitOn('in-error', { 'b.txt': 'b\n' }, 'add b');
    const id = await open('in-error');
    const checkError = 'Error checking pull request: repository unavailable, check server log for details';
    await db().updateTable('pullRequests').set({ checkError }).where('id', '=', id).execute();
    await refused(id, `Pull request is in error: ${checkError}`);
    await db().updateTable('pullRequests').set({ checkError: null }).where('id', '=', id).execute();
    expect((await server.call('POST', `/pulls/${id}/merge`, { text: '' })).status).toBe(200);
  });

  it('refuses a merging user without a verified email', async () => {
    const user = await server.createUser('unverified');
    await grantRole(server, repo.id, user.id, 'Code Writer');
    await db().updateTable('emailAddresses').set({ verificationCode: 'pending-verification' }).where('ownerId', '=', user.id).execute();
    await repo.commitOn('by-unverified', { 'c.txt': 'c\n' }, 'add c');
    const id = await open('by-unverified');
    await refused(id, 'No verified email for git operations', user.auth);
    await db().updateTable('emailAddresses').set({ verificationCode: null }).where('ownerId', '=', user.id).execute();
    expect((await server.call('POST', `/pulls/${id}/merge`, { text: '', auth: user.auth })).status).toBe(200);
  });

  it('refuses merges into a branch requiring signatures (no keys: signatures cannot be verified)', async () => {
    await repo.commitOn('unsigned', { 'd.txt': 'd\n' }, 'add d');
    const id = await open('unsigned');
    await setProtection([{ branches: 'main', commitSignatureRequired: true }]);
    await refused(id, 'No valid signature for head commit');
    await setProtection([{ branches: 'other', commitSignatureRequired: true }]);
    expect((await server.call('POST', `/pulls/${id}/merge`, { text: '' })).status).toBe(200);
    await setProtection([]);
  });

  it("validates the messages of the request's commits, except for squash merges", async () => {
    await repo.commitOn('messages', { 'e.txt': 'e\n' }, 'feat: add e');
    await repo.commitOn('messages', { 'f.txt': 'f\n' }, 'add f without a type');
    const bad = (await git(repo.work, ['rev-parse', 'HEAD'])).trim();
    const id = await open('messages');
    await setProtection([{ branches: 'main', enforceConventionalCommits: true, commitTypes: ['feat', 'fix'] }]);
    const error = `Error validating commit message of ${bad.slice(0, 7)}: Line 1: Subject is expected of either a git revert message, or format: <type>[optional (scope)][!]: <description>`;
    await refused(id, error);
    expect((await server.call('POST', `/pulls/${id}/merge-strategy`, { text: 'REBASE_SOURCE_BRANCH_COMMITS' })).status).toBe(200);
    await refused(id, error);
    expect((await server.call('POST', `/pulls/${id}/merge-strategy`, { text: 'SQUASH_SOURCE_BRANCH_COMMITS' })).status).toBe(200);
    expect((await server.call('POST', `/pulls/${id}/merge`, { text: 'feat: add e and f' })).status).toBe(200);

    await repo.commitOn('typed', { 'g.txt': 'g\n' }, 'chore: add g');
    const typed = await open('typed');
    await refused(
      typed,
      `Error validating commit message of ${(await repo.head('typed')).slice(0, 7)}: Line 1: Unexpected type 'chore': Should be one of [feat,fix]`,
    );
    await setProtection([{ branches: 'main', enforceConventionalCommits: true }]);
    expect((await server.call('POST', `/pulls/${typed}/merge`, { text: '' })).status).toBe(200);
    await setProtection([]);
  });
});
