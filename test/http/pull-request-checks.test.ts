import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { eventually, givenRepo, removeWorkTrees, type Repo } from '../helpers/fixtures.js';
import { openRequest } from './pulls-fixtures.js';

/**
 * A push checks each pull request it affects once (docs/compatibility.md#pull-requests-background-check):
 * the journal's reaction checks the requests whose branches moved, and the build triggers
 * subscribe to the check rather than checking again.
 */
describe('pull request checks per push', () => {
  let server: TestServer;
  let repo: Repo;

  beforeAll(async () => {
    server = await startTestServer();
    repo = await givenRepo(server, 'checked', { files: { 'a.txt': 'a\n' } });
  });
  afterAll(async () => {
    await server.close();
    await removeWorkTrees();
  });

  const open = async (branch: string) => {
    await repo.commitOn(branch, { [`${branch}.txt`]: `${branch}\n` }, `Add ${branch}`);
    const res = await openRequest(server, { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: branch });
    expect(res.status, res.text).toBe(200);
    return res.json as number;
  };

  it('checks each affected request once, and no other', async () => {
    const first = await open('first');
    const second = await open('second');
    const untouched = await openRequest(server, { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'first', sourceBranch: 'second' });
    expect(untouched.status, untouched.text).toBe(200);
    // the checks that opening started are done before counting
    for (const id of [first, second, untouched.json as number]) {
      await eventually(async () => (await server.call('GET', `/pulls/${id}/merge-preview`)).json !== null);
    }
    await server.settled();

    const checks = new Map<number, number>();
    server.server.services.events.on('pullRequestChecked', ({ requestId }) => void checks.set(requestId, (checks.get(requestId) ?? 0) + 1));
    // main moves: both requests into main are affected; the one into `first` is not
    await repo.commitOn('main', { 'main.txt': 'moved\n' }, 'Move main');
    await eventually(async () => checks.size === 2);
    await server.settled();
    expect(Object.fromEntries(checks)).toEqual({ [first]: 1, [second]: 1 });

    // a push to one request's source branch checks that request, and the one targeting it
    checks.clear();
    await repo.commitOn('first', { 'first.txt': 'again\n' }, 'Update first');
    await eventually(async () => checks.size === 2);
    await server.settled();
    expect(Object.fromEntries(checks)).toEqual({ [first]: 1, [untouched.json as number]: 1 });
  });
});
