import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, givenRepo, grantRole, removeWorkTrees, type Repo } from '../helpers/fixtures.js';
import { commitFiles, git, gitUrl, makeWorkTree, startTestServer, type TestServer } from '../helpers/server.js';
import { createContext, systemActor } from '../../src/domain/context.js';
import { journaledRefChange, recoverRefIntents } from '../../src/domain/journal/ref-journal.js';
import { updateRefs } from '../../src/git/repository.js';
import { openRequest } from './pulls-fixtures.js';

/** The ref-change journal (docs/architecture.md#a-push and docs/architecture.md#the-ref-journal): exact lines, the right pusher, reacted to once. */
describe('ref-change journal', () => {
  let server: TestServer;
  let repo: Repo;

  beforeAll(async () => {
    server = await startTestServer({ GITLOOM_JOURNAL_RETRY_MS: '200' });
    repo = await givenRepo(server, 'journal', { files: { 'a.txt': 'a\n' } });
  });
  afterAll(async () => {
    await server.close();
    await removeWorkTrees();
  });

  const journal = (projectId: number) =>
    server.server.services.db.selectFrom('refJournal').selectAll().where('projectId', '=', projectId).orderBy('id').execute();

  /** Writes a journal row of `repo` directly (what a process leaves behind); returns its id. */
  const journalRow = async (row: { ref: string; oldHash: string | null; newHash: string; requestId?: number; date: number; appliedDate: number | null }) =>
    (
      await server.server.services.db
        .insertInto('refJournal')
        .values({
          projectId: repo.id,
          userId: 1,
          requestId: null,
          processedDate: null,
          leaseOwner: null,
          leaseExpires: null,
          retryDate: null,
          ...row,
        })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;

  it('stores the exact old/new/ref lines and the pusher before the push returns', async () => {
    const before = (await journal(repo.id)).length;
    const main = await repo.head('main');
    const feature = await repo.commitOn('feature', { 'f.txt': 'f\n' }, 'feature');
    // no waiting: the rows exist once git push returned
    const rows = (await journal(repo.id)).slice(before);
    expect(rows.map((r) => [r.ref, r.oldHash, r.newHash, r.userId])).toEqual([['refs/heads/feature', null, feature, 1]]);
    expect(rows[0].appliedDate).not.toBeNull();

    await git(repo.work, ['push', '-q', repo.remote, ':feature', `${main}:refs/tags/v1`]);
    const next = (await journal(repo.id)).slice(before + 1);
    expect(next.map((r) => [r.ref, r.oldHash, r.newHash])).toEqual([
      ['refs/heads/feature', feature, null],
      ['refs/tags/v1', null, main],
    ]);
    // each entry processed once, with one CODE_PUSH event
    const processed = await eventually(async () => (await journal(repo.id)).every((r) => r.processedDate !== null));
    expect(processed).toBe(true);
    const pushes = await server.server.services.db
      .selectFrom('outboxEvents')
      .select(['payload'])
      .where('type', '=', 'CODE_PUSH')
      .where('projectId', '=', repo.id)
      .execute();
    const refs = pushes.map((p) => JSON.parse(p.payload).body).map((b) => `${b.refName} ${b.oldCommitId} ${b.newCommitId}`);
    expect(refs.filter((r) => r.startsWith('refs/heads/feature') || r.startsWith('refs/tags/v1')).sort()).toEqual(
      [`refs/heads/feature ${feature} null`, `refs/heads/feature null ${feature}`, `refs/tags/v1 null ${main}`].sort(),
    );
  });

  it('attributes two overlapping pushes by different users each to its pusher', async () => {
    const [ann, bob] = [await server.createUser('ann'), await server.createUser('bob')];
    for (const user of [ann, bob]) await grantRole(server, repo.id, user.id, 'Code Writer');
    const before = (await journal(repo.id)).length;
    const pushers = [ann, bob].map(async (user) => {
      const work = await makeWorkTree({ 'a.txt': 'a\n' });
      await git(work, ['fetch', '-q', repo.remote, 'main']);
      await git(work, ['reset', '-q', '--hard', 'FETCH_HEAD']);
      const heads: string[] = [];
      for (let i = 0; i < 3; i++) heads.push(await commitFiles(work, { [`${user.name}-${i}.txt`]: `${i}\n` }, `${user.name} ${i}`));
      const remote = gitUrl(server, repo.path, user);
      return { user, work, heads, remote };
    });
    const ready = await Promise.all(pushers);
    // several rounds of simultaneous pushes, each user to their own branches
    await Promise.all(
      ready.map(async ({ user, work, heads, remote }) => {
        for (let i = 0; i < heads.length; i++)
          await git(work, ['push', '-q', remote, `${heads[i]}:refs/heads/${user.name}-${i}`, `${heads[i]}:refs/heads/${user.name}`]);
      }),
    );
    const rows = (await journal(repo.id)).slice(before);
    expect(rows).toHaveLength(12);
    for (const row of rows) {
      const owner = row.ref.slice('refs/heads/'.length).split('-')[0];
      expect(row.userId, row.ref).toBe(owner === 'ann' ? ann.id : bob.id);
    }
    for (const { user, heads } of ready) {
      const own = rows.filter((r) => r.ref === `refs/heads/${user.name}`);
      expect(own.map((r) => [r.oldHash, r.newHash])).toEqual([
        [null, heads[0]],
        [heads[0], heads[1]],
        [heads[1], heads[2]],
      ]);
    }
  });

  it('shows every push to a source branch as a pull request update, through the worker', async () => {
    await repo.commitOn('topic', { 't.txt': '1\n' }, 'topic 1');
    const res = await openRequest(server, { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'topic' });
    expect(res.status, res.text).toBe(200);
    const id = res.json as number;
    const heads: string[] = [];
    for (let i = 2; i <= 4; i++) heads.push(await repo.commitOn('topic', { 't.txt': `${i}\n` }, `topic ${i}`));
    const updates = async () => (await server.call('GET', `/pulls/${id}/updates`)).json as { headCommitHash: string }[];
    await eventually(async () => (await updates()).at(-1)?.headCommitHash === heads.at(-1));
    expect((await updates()).at(-1)?.headCommitHash).toBe(heads.at(-1));
    expect((await server.call('GET', `/pulls/${id}`)).json.status).toBe('OPEN');
  });

  it('checks each pull request a push affects once: its triggers follow the check, not a second one', async () => {
    await repo.commitOn('once', { 'o.txt': '1\n' }, 'once 1');
    const res = await openRequest(server, { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'once' });
    expect(res.status, res.text).toBe(200);
    const id = res.json as number;
    const { db, events } = server.server.services;
    // the check that opening started, and the journal entries of the pushes so far, are done
    await eventually(async () => (await db.selectFrom('refJournal').select('id').where('processedDate', 'is', null).execute()).length === 0);
    await events.idle();
    const checked: number[] = [];
    events.on('pullRequestChecked', ({ requestId }) => {
      checked.push(requestId);
    });
    const head = await repo.commitOn('once', { 'o.txt': '2\n' }, 'once 2');
    await eventually(async () => (await db.selectFrom('refJournal').select('id').where('processedDate', 'is', null).execute()).length === 0);
    await events.idle();
    const updates = (await server.call('GET', `/pulls/${id}/updates`)).json as { headCommitHash: string }[];
    expect(updates.at(-1)?.headCommitHash).toBe(head);
    expect(checked.filter((requestId) => requestId === id)).toEqual([id]);
  });

  it('retries an entry whose reactions failed, and finishes it once they succeed', async () => {
    const old = await repo.commitOn('flaky', { 'k.txt': '1\n' }, 'flaky 1');
    const res = await openRequest(server, { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'flaky' });
    expect(res.status, res.text).toBe(200);
    const id = res.json as number;
    // the check that opening started reads the repository: it must be done before the repository
    // goes away, or a read cut short by the move could see the branch gone (the preview waits for it)
    await server.call('GET', `/pulls/${id}/merge-preview`);
    const { db } = server.server.services;
    const bare = createContext(server.server.services, systemActor).repoPath(repo.id);
    // a commit moved onto the source branch behind the hooks' back, then the repository goes away
    const next = (await git(bare, ['commit-tree', `${old}^{tree}`, '-p', old, '-m', 'flaky 2'])).trim();
    await git(bare, ['update-ref', 'refs/heads/flaky', next, old]);
    await fs.rename(bare, `${bare}.away`);
    let restored = false;
    try {
      const now = Date.now();
      const entryId = await journalRow({ ref: 'refs/heads/flaky', oldHash: old, newHash: next, date: now, appliedDate: now });
      const entry = () => db.selectFrom('refJournal').selectAll().where('id', '=', entryId).executeTakeFirstOrThrow();
      await eventually(async () => (await entry()).attempts >= 2);
      expect((await entry()).attempts).toBeGreaterThanOrEqual(2);
      expect((await entry()).processedDate).toBeNull();
      expect((await server.call('GET', `/pulls/${id}`)).json.status).toBe('OPEN');
      await fs.rename(`${bare}.away`, bare);
      restored = true;
      await eventually(async () => (await entry()).processedDate !== null);
      const updates = (await server.call('GET', `/pulls/${id}/updates`)).json as { headCommitHash: string }[];
      expect(updates.at(-1)?.headCommitHash).toBe(next);
      expect((await entry()).attempts).toBeLessThan(5);
    } finally {
      if (!restored) await fs.rename(`${bare}.away`, bare);
    }
  });

  it('recovery drops a merge intent whose target never moved: the request stays open, nothing is recorded', async () => {
    const head = await repo.commitOn('undone', { 'u.txt': 'u\n' }, 'undone');
    const res = await openRequest(server, { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'undone' });
    expect(res.status, res.text).toBe(200);
    const requestId = res.json as number;
    const { db } = server.server.services;
    // what a process killed before its compare-and-swap leaves behind
    const id = await journalRow({
      ref: 'refs/heads/main',
      oldHash: await repo.head('main'),
      newHash: head,
      requestId,
      date: Date.now() - 60_000,
      appliedDate: null,
    });
    const log: string[] = [];
    await recoverRefIntents(createContext(server.server.services, systemActor), (message) => log.push(message));
    expect(await db.selectFrom('refJournal').select('id').where('id', '=', id).executeTakeFirst()).toBeUndefined();
    expect(log).toEqual([`Recovery: ref refs/heads/main of project ${repo.id} did not move; dropped journal intent ${id}`]);
    const pr = (await server.call('GET', `/pulls/${requestId}`)).json;
    expect(pr.status).toBe('OPEN');
    const changes = (await server.call('GET', `/pulls/${requestId}/changes`)).json as { data: { '@type': string } }[];
    expect(changes.some((c) => c.data['@type'] === 'PullRequestMergeData')).toBe(false);
  });

  it('recovery while the server runs leaves young intents and changes still under way alone', async () => {
    const { db } = server.server.services;
    const ctx = createContext(server.server.services, systemActor);
    const target = await repo.commitOn('pending', { 'p.txt': 'p\n' }, 'pending');
    const exists = async (id: number) => (await db.selectFrom('refJournal').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;

    // a young intent: its writer may still be moving the ref
    const young = await journalRow({ ref: 'refs/heads/never', oldHash: null, newHash: target, date: Date.now(), appliedDate: null });
    await recoverRefIntents(ctx, () => undefined);
    expect(await exists(young)).toBe(true);
    await db.deleteFrom('refJournal').where('id', '=', young).execute();

    // an old intent of a change this process is still making (its apply waits on a gate)
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let entered!: () => void;
    const inApply = new Promise<void>((resolve) => (entered = resolve));
    const past = { ...ctx, now: () => Date.now() - 60_000 };
    const change = journaledRefChange(past, repo.id, [{ ref: 'refs/heads/gated', oldHash: null, newHash: target }], { userId: 1 }, async () => {
      entered();
      await gate;
      await updateRefs(ctx.repoPath(repo.id), [{ ref: 'refs/heads/gated', newHash: target, expectedOld: null }]);
    });
    await inApply;
    // recovery runs meanwhile (on SQLite it waits for the change's transaction, on PostgreSQL it
    // skips the locked row): the change completes and recovery repairs nothing
    const log: string[] = [];
    const recovery = recoverRefIntents(ctx, (message) => log.push(message));
    await new Promise((resolve) => setTimeout(resolve, 100));
    open();
    await Promise.all([change, recovery]);
    expect(log).toEqual([]);
    const row = await db.selectFrom('refJournal').selectAll().where('ref', '=', 'refs/heads/gated').executeTakeFirstOrThrow();
    expect(row.appliedDate).not.toBeNull();
    expect(await repo.head('gated')).toBe(target);
  });
});
