import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, git, startTestServer, type TestServer } from '../helpers/server.js';
import { eventually, freshClone, givenRepo, removeWorkTrees, type Repo } from '../helpers/fixtures.js';
import { openRequest } from './pulls-fixtures.js';

/** Parents, author, committer and message of a commit in a clone. */
async function describeCommit(dir: string, rev: string) {
  const out = await git(dir, ['log', '-1', '--format=%P%x00%an <%ae>%x00%cn <%ce>%x00%B', rev]);
  const [parents, author, committer, message] = out.split('\0');
  return { parents: parents.split(' ').filter(Boolean), author, committer, message: message.replace(/\n+$/, '') };
}

describe('pull request merges (docs/compatibility.md#pull-requests-merge-strategies-and-preview)', () => {
  let server: TestServer;
  let repo: Repo;
  let admin: string;
  let submitter: { id: number; auth: string; name: string; password: string };

  beforeAll(async () => {
    server = await startTestServer();
    repo = await givenRepo(server, 'merges', { files: { 'a.txt': 'a\n', 'shared.txt': 'one\ntwo\nthree\n' } });
    const me = (await server.call('GET', '/users/1')).json;
    admin = `${me.fullName ?? me.name} <${ADMIN.email}>`;
    submitter = await server.createUser('sam');
    const readers = (await server.call('GET', `/roles?name=${encodeURIComponent('Code Writer')}`)).json;
    await server.call('POST', '/user-authorizations', { body: { projectId: repo.id, userId: submitter.id, roleId: readers[0].id } });
  });
  afterAll(async () => {
    await server.close();
    await removeWorkTrees();
  });

  async function open(branch: string, mergeStrategy: string, title = `Merge ${branch}`, auth?: string): Promise<number> {
    const res = await openRequest(
      server,
      { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: branch, title, mergeStrategy },
      auth,
    );
    expect(res.status, res.text).toBe(200);
    return res.json as number;
  }

  async function moveMain(file: string): Promise<string> {
    await repo.commitOn('main', { [file]: `${file}\n` }, `main: ${file}`);
    return repo.head('main');
  }

  it('CREATE_MERGE_COMMIT always makes a two-parent commit by the merging user', async () => {
    const head = await repo.commitOn('cmc', { 'b.txt': 'b\n' }, 'add b');
    const target = await repo.head('main');
    const id = await open('cmc', 'CREATE_MERGE_COMMIT');
    const res = await server.call('POST', `/pulls/${id}/merge`, { text: 'Merge cmc\n\nbody' });
    expect(res.status, res.text).toBe(200);
    const clone = await freshClone(server, 'merges');
    const commit = await describeCommit(clone, 'origin/main');
    expect(commit.parents).toEqual([target, head]);
    expect(commit.author).toBe(admin);
    expect(commit.committer).toBe(admin);
    expect(commit.message).toBe('Merge cmc\n\nbody');
    expect(await fs.readFile(path.join(clone, 'b.txt'), 'utf8')).toBe('b\n');
    const pr = (await server.call('GET', `/pulls/${id}`)).json;
    expect(pr).toMatchObject({ status: 'MERGED', lastActivity: { userId: 1, description: 'merged' } });
    const preview = (await server.call('GET', `/pulls/${id}/merge-preview`)).json;
    expect(preview.mergeCommitHash).toBe((await git(clone, ['rev-parse', 'origin/main'])).trim());
    const changes = (await server.call('GET', `/pulls/${id}/changes`)).json;
    expect(changes.at(-1)).toMatchObject({ userId: 1, data: { '@type': 'PullRequestMergeData', reason: null } });
  });

  it('an empty merge body gives "Merges pull request #N" and the title', async () => {
    await repo.commitOn('empty-msg', { 'c.txt': 'c\n' }, 'add c');
    await moveMain('m1.txt');
    const id = await open('empty-msg', 'CREATE_MERGE_COMMIT', 'Add the c file');
    const number = (await server.call('GET', `/pulls/${id}`)).json.number;
    expect((await server.call('POST', `/pulls/${id}/merge`, { text: '' })).status).toBe(200);
    const clone = await freshClone(server, 'merges');
    expect((await describeCommit(clone, 'origin/main')).message).toBe(`Merges pull request #${number}\n\nAdd the c file`);
  });

  it('CREATE_MERGE_COMMIT_IF_NECESSARY fast-forwards when possible, else merges', async () => {
    const head = await repo.commitOn('ff', { 'd.txt': 'd\n' }, 'add d');
    const id = await open('ff', 'CREATE_MERGE_COMMIT_IF_NECESSARY');
    const preview = (await server.call('GET', `/pulls/${id}/merge-preview`)).json;
    expect(preview.mergeCommitHash).toBe(head);
    expect((await server.call('POST', `/pulls/${id}/merge`, { text: 'ignored' })).status).toBe(200);
    expect(await repo.head('main')).toBe(head);

    const head2 = await repo.commitOn('ff2', { 'e.txt': 'e\n' }, 'add e');
    const target = await moveMain('m2.txt');
    const id2 = await open('ff2', 'CREATE_MERGE_COMMIT_IF_NECESSARY');
    expect((await server.call('POST', `/pulls/${id2}/merge`, { text: 'Merge ff2' })).status).toBe(200);
    const clone = await freshClone(server, 'merges');
    expect(await describeCommit(clone, 'origin/main')).toMatchObject({ parents: [target, head2], message: 'Merge ff2', committer: admin });
  });

  it('SQUASH_SOURCE_BRANCH_COMMITS makes one commit authored by the submitter', async () => {
    await repo.commitOn('squash', { 'f.txt': 'f1\n' }, 'f one');
    await repo.commitOn('squash', { 'f.txt': 'f2\n', 'g.txt': 'g\n' }, 'f two');
    const target = await moveMain('m3.txt');
    const id = await open('squash', 'SQUASH_SOURCE_BRANCH_COMMITS', 'Squash me', submitter.auth);
    const res = await server.call('POST', `/pulls/${id}/merge`, { text: 'Squashed f and g' });
    expect(res.status, res.text).toBe(200);
    const clone = await freshClone(server, 'merges');
    const commit = await describeCommit(clone, 'origin/main');
    expect(commit).toMatchObject({ parents: [target], author: 'sam Full <sam@example.com>', committer: admin, message: 'Squashed f and g' });
    expect(await fs.readFile(path.join(clone, 'f.txt'), 'utf8')).toBe('f2\n');
    expect(await fs.readFile(path.join(clone, 'g.txt'), 'utf8')).toBe('g\n');
    expect(await fs.readFile(path.join(clone, 'm3.txt'), 'utf8')).toBe('m3.txt\n');
  });

  it('REBASE_SOURCE_BRANCH_COMMITS replays non-merge commits, drops empty ones, keeps authors and messages', async () => {
    const env = { GIT_AUTHOR_NAME: 'Rita Rebase', GIT_AUTHOR_EMAIL: 'rita@example.com' };
    await git(repo.work, ['checkout', '-q', '-b', 'rebase', 'main']);
    await fs.writeFile(path.join(repo.work, 'h.txt'), 'h\n');
    await git(repo.work, ['add', '-A']);
    await git(repo.work, ['commit', '-q', '-m', 'add h\n\nwith a body'], env);
    await git(repo.work, ['checkout', '-q', '-b', 'side', 'main']);
    await fs.writeFile(path.join(repo.work, 'i.txt'), 'i\n');
    await git(repo.work, ['add', '-A']);
    await git(repo.work, ['commit', '-q', '-m', 'add i'], env);
    await git(repo.work, ['checkout', '-q', 'rebase']);
    await git(repo.work, ['merge', '-q', '--no-ff', '-m', 'merge side', 'side']);
    await fs.writeFile(path.join(repo.work, 'same.txt'), 'same\n');
    await git(repo.work, ['add', '-A']);
    await git(repo.work, ['commit', '-q', '-m', 'add same'], env);
    await git(repo.work, ['push', '-q', repo.remote, 'rebase']);
    await repo.commitOn('main', { 'same.txt': 'same\n' }, 'main adds same');
    const target = await repo.head('main');
    const id = await open('rebase', 'REBASE_SOURCE_BRANCH_COMMITS');
    expect((await server.call('POST', `/pulls/${id}/merge`, { text: 'ignored' })).status).toBe(200);
    const clone = await freshClone(server, 'merges');
    const log = (await git(clone, ['log', '--format=%H %P%x00%an <%ae>%x00%cn <%ce>%x00%s', `${target}..origin/main`])).trim().split('\n');
    expect(log).toHaveLength(2);
    const rows = log.map((line) => line.split('\0'));
    expect(rows.map((r) => r[3]).sort()).toEqual(['add h', 'add i']);
    for (const r of rows) {
      expect(r[0].split(' ')).toHaveLength(2);
      expect(r[1]).toBe('Rita Rebase <rita@example.com>');
      expect(r[2]).toBe(admin);
    }
    expect((await git(clone, ['rev-list', '--merges', `${target}..origin/main`])).trim()).toBe('');
    expect(await git(clone, ['log', '-1', '--format=%B', '--grep=^add h$', 'origin/main'])).toBe('add h\n\nwith a body\n\n');
    for (const f of ['h.txt', 'i.txt', 'same.txt']) await fs.access(path.join(clone, f));
  });

  it('conflicts: preview without merge commit, 409 on merge, "has merge conflicts" matches', async () => {
    await repo.commitOn('conflict', { 'shared.txt': 'one\nTWO from branch\nthree\n' }, 'branch edits shared');
    await repo.commitOn('main', { 'shared.txt': 'one\nTWO from main\nthree\n' }, 'main edits shared');
    const id = await open('conflict', 'CREATE_MERGE_COMMIT');
    const preview = await server.call('GET', `/pulls/${id}/merge-preview`);
    expect(preview.status).toBe(200);
    expect(preview.json.mergeCommitHash).toBeNull();
    const before = await repo.head('main');
    const res = await server.call('POST', `/pulls/${id}/merge`, { text: '' });
    expect(res.status).toBe(409);
    expect(res.json).toMatchObject({ detail: 'There are merge conflicts', code: 'GITLOOM_ERR_MERGE_CONFLICTS' });
    expect(await repo.head('main')).toBe(before);
    const found = (await server.call('GET', `/pulls?query=${encodeURIComponent('has merge conflicts')}`)).json.map((p: { id: number }) => p.id);
    expect(found).toContain(id);
  });

  it('a request merged twice at once: exactly one merge succeeds', async () => {
    await repo.commitOn('twice', { 'j.txt': 'j\n' }, 'add j');
    const id = await open('twice', 'CREATE_MERGE_COMMIT');
    const results = await Promise.all([0, 1, 2].map(() => server.call('POST', `/pulls/${id}/merge`, { text: 'once' })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    const clone = await freshClone(server, 'merges');
    expect((await git(clone, ['log', '--format=%s', '--grep=^once$', 'origin/main'])).trim().split('\n')).toHaveLength(1);
  });

  it('a settled preview whose target moved since: the merge starts over from the new target head', async () => {
    const head = await repo.commitOn('moved', { 'm.txt': 'm\n' }, 'add m');
    const id = await open('moved', 'CREATE_MERGE_COMMIT');
    const settled = (await server.call('GET', `/pulls/${id}/merge-preview`)).json;
    // main moves without the server hearing of it: the stored preview is stale but clean
    const moved = await repo.commitOn('side-of-main', { 'n.txt': 'n\n' }, 'main moves');
    const bare = path.join(server.dataDir, 'repos', `${repo.id}.git`);
    await git(bare, ['update-ref', 'refs/heads/main', moved, settled.targetHeadCommitHash]);
    const res = await server.call('POST', `/pulls/${id}/merge`, { text: 'after the move' });
    expect(res.status, res.text).toBe(200);
    const clone = await freshClone(server, 'merges');
    expect(await describeCommit(clone, 'origin/main')).toMatchObject({ parents: [moved, head], message: 'after the move' });
    expect((await server.call('GET', `/pulls/${id}/merge-preview`)).json.targetHeadCommitHash).toBe(moved);
  });

  it('a settled preview whose target moved into a conflict: 409 and nothing changes', async () => {
    await repo.commitOn('clash', { 'o.txt': 'from the request\n' }, 'request adds o');
    const id = await open('clash', 'CREATE_MERGE_COMMIT');
    const settled = (await server.call('GET', `/pulls/${id}/merge-preview`)).json;
    expect(settled.mergeCommitHash).not.toBeNull();
    const moved = await repo.commitOn('clash-on-main', { 'o.txt': 'from main\n' }, 'main adds o');
    const bare = path.join(server.dataDir, 'repos', `${repo.id}.git`);
    await git(bare, ['update-ref', 'refs/heads/main', moved, settled.targetHeadCommitHash]);
    const res = await server.call('POST', `/pulls/${id}/merge`, { text: 'clash' });
    expect(res.status, res.text).toBe(409);
    expect(res.json).toMatchObject({ code: 'GITLOOM_ERR_MERGE_CONFLICTS' });
    expect(await repo.head('main')).toBe(moved);
    expect((await server.call('GET', `/pulls/${id}`)).json.status).toBe('OPEN');
  });

  it('a push landing during the merge makes it fail with 409 and nothing changes', async () => {
    await repo.commitOn('racer', { 'k.txt': 'k\n' }, 'add k');
    const id = await open('racer', 'CREATE_MERGE_COMMIT');
    const pr = (await server.call('GET', `/pulls/${id}`)).json;
    await eventually(async () => (await server.call('GET', `/pulls/${id}/merge-preview`)).status === 200);
    // Two commits on a side branch; main is moved "behind the server's back" to the first (so the
    // preview is stale and the merge computes it), and the push of the second lands while the
    // merge runs: a reference-transaction hook fires when the merge writes refs/pulls/N/merge.
    const first = await repo.commitOn('pusher', { 'l.txt': 'l\n' }, 'pushed one');
    const second = await repo.commitOn('pusher', { 'l.txt': 'l2\n' }, 'pushed two');
    const bare = path.join(server.dataDir, 'repos', `${repo.id}.git`);
    const marker = path.join(server.dataDir, `race-${id}`);
    const hook = path.join(bare, 'hooks', 'reference-transaction');
    await fs.mkdir(path.dirname(hook), { recursive: true });
    await fs.writeFile(
      hook,
      [
        '#!/bin/sh',
        '[ "$1" = committed ] || exit 0',
        `grep -q " refs/pulls/${pr.number}/merge$" || exit 0`,
        `[ -e "${marker}" ] && exit 0`,
        `touch "${marker}"`,
        `git update-ref refs/heads/main ${second} ${first}`,
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    await git(bare, ['update-ref', 'refs/heads/main', first]);
    const res = await server.call('POST', `/pulls/${id}/merge`, { text: 'racing' });
    await fs.rm(hook);
    expect(res.status, res.text).toBe(409);
    expect(await repo.head('main')).toBe(second);
    expect((await server.call('GET', `/pulls/${id}`)).json.status).toBe('OPEN');
    expect((await server.call('GET', `/pulls/${id}/changes`)).json.some((c: { data: { '@type': string } }) => c.data['@type'] === 'PullRequestMergeData')).toBe(
      false,
    );
    const retry = await server.call('POST', `/pulls/${id}/merge`, { text: 'after the race' });
    expect(retry.status, retry.text).toBe(200);
  });
});
